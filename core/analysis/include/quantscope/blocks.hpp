// One block of a per-channel or per-group quantization on its own: its elements, and how many of them the
// block's own (s, z) clips. What a per-block view (the window's histograms) shows instead of the whole tensor.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The elements of block `block` (0 <= block < params.block_count) of an n-element array laid out as
// `params` says, in flat order.
std::vector<float> block_elements(const float* values, std::int64_t n, const QuantParams& params, std::int64_t block);
// The same read from a view in its stored type (decoded to float32, under the view's guard).
std::vector<float> block_elements(const TensorView& view, const QuantParams& params, std::int64_t block);
std::vector<std::int32_t> block_elements(const std::int32_t* codes, std::int64_t n, const QuantParams& params,
                                         std::int64_t block);

// How many of these values round outside [q_min, q_max] at (scale, zero_point): the metric `clipped`
// restricted to them (with a wrap, how many wrap).
std::int64_t count_clipped(const std::vector<float>& values, double scale, std::int32_t zero_point,
                           const QuantConfig& config);

// What a block stores beside its codes, as the format names it: int<N>'s scale s and zero point z, a ggml
// type's fp16 d and its min (k-quants' dmin, q4_1/q5_1's m) read from the block's bytes, another format's block
// scale alone. The window's summaries list these, so a q4_K block reads "d, dmin" and never a zero point of 0.
struct StoredPairNames {
    std::string scale, offset;  // "s" / "z", "d" / "dmin", "block scale X" / "" (nothing stored)
};
StoredPairNames stored_pair_names(const QuantConfig& config);
struct StoredPair {
    double scale = 0;
    std::optional<double> offset;  // empty where the format stores none
};
// Block `block`'s pair (0 <= block < params.block_count). A ggml block is quantized as the pass quantizes it
// (with the config's importance where the type takes it): its fields as stored.
StoredPair stored_pair(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t block);

// The values block `block`'s codes stand for, ascending and distinct, as a histogram draws its levels: a
// format's grid at the block's scale (float32), and for a ggml type each of its sub-blocks' grids at the
// sub-block's own scale and min (q4_K: d*sc*q - dmin*m), which is why a k-quant's levels are not one even
// comb. Empty for int<N> (its levels are s (q - z), q in [q_min, q_max]).
std::vector<double> block_levels(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                                 std::int64_t block);

// The bytes of the ggml block that starts at flat element `start` (a multiple of the type's block size), as
// the quantize pass writes them: the config's importance where the type takes it, with the weights of the
// block's columns and its row's sum of squares; or, for params with stored blocks, the block as stored.
// `bytes` holds at least the type's type_size.
void ggml_block_at(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t start,
                   std::uint8_t* bytes);

}  // namespace qs
