// The per-block scales of a float, codebook or block format (FORMATS.md), as a pass uses them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/number_format.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// What computes the scales of blocks that are not stored (FormatParams::on_demand): an element format's
// symmetric s of each block, one run of at most 8 values, from their largest magnitude.
struct FormatScaleRecipe {
    TensorView values;  // not owned, unless `owner` keeps them alive
    std::shared_ptr<const void> owner;
};

struct FormatParams {
    FormatId format = FormatId::Fp8E4M3;
    // Which block element i uses, as QuantParams: (i / block_stride) % block_count.
    std::int64_t block_stride = 1;
    std::int64_t block_count = 1;
    std::vector<float> scale;           // per block, as used: s; MX: X; NVFP4: sb * g; ggml: fp16(d)
    std::vector<float> offset;          // Q4_1: fp16(m) per block; empty otherwise
    std::vector<std::uint16_t> stored;  // block formats: the stored scale's bits (E8M0 byte, E4M3 sb, fp16 d)
    float global_scale = 1;             // NVFP4: g (1 otherwise)
    bool scaled = true;                 // false in cast mode: no scale is stored
    // ggml types with an importance-weighted quantizer, when the config gives importance: the weights, the
    // tensor's last axis, and each row's sum of squares (ggml_row_sum_squares) over the params' tensor.
    Importance importance;
    std::int64_t row_length = 0;
    std::shared_ptr<const std::vector<float>> row_sum_squares;
    // A row that keeps_blocks: every block's bytes as the params pass made them (null when they would take
    // more than kKeptBlockBytes; the pass then quantizes its blocks again). They are these values' blocks:
    // params of one tensor must not be applied to another's values.
    std::shared_ptr<const std::uint8_t[]> ggml_blocks;
    static constexpr std::int64_t kKeptBlockBytes = std::int64_t{256} << 20;

    // Set when the blocks are so many and so small that storing a float per block would cost more than their
    // values (groups of 1 on 16-bit input: 4 bytes of scale per 2-byte element), as QuantParams::recipe:
    // then `scale` is empty and each block's s is computed from its few values when asked.
    std::shared_ptr<const FormatScaleRecipe> recipe;

    std::int64_t block_of(std::int64_t flat) const { return (flat / block_stride) % block_count; }
    bool on_demand() const { return recipe != nullptr; }
    bool weighted() const { return importance != nullptr; }
    // Block `block`'s scale, stored or computed (reading the values under their guard).
    float scale_of(std::int64_t block) const;
    // As QuantParams: `owner` lives as long as these params and their copies. No-op when stored.
    void keep_values_alive(std::shared_ptr<const void> owner);
    // Computes and stores every block's scale and drops the recipe. No-op when stored.
    void store_scales();
};

}  // namespace qs
