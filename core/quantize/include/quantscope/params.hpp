// Scale and zero point: one pair per tensor, channel or group (SPEC "Choosing scale s and zero point z").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/pass_control.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

struct StoredBlocks;  // stored_blocks.hpp

// What computes the (s, z) of blocks that are not stored (QuantParams::on_demand).
struct BlockPairRecipe {
    TensorView values;  // not owned, unless `owner` keeps them alive (QuantParams::keep_values_alive)
    std::shared_ptr<const void> owner;
    QuantConfig config;
    double scale_min = 1, scale_max = 1;  // over all blocks, found when the params were computed
    std::int32_t zero_point_min = 0, zero_point_max = 0;
};

struct QuantParams {
    // One pair per block (s finite and >= the smallest normal float32, z in [q_min, q_max]); both empty when
    // the pairs are computed on demand.
    std::vector<double> scale;
    std::vector<std::int32_t> zero_point;
    // Which block element i (flat, row-major) uses: (i / block_stride) % block_count.
    //   tensor:          stride = numel,                    count = 1
    //   channel axis A:  stride = product of dims after A,  count = shape[A]
    //   group size G:    stride = G,                        count = numel / G
    std::int64_t block_stride = 1;
    std::int64_t block_count = 1;

    // Set when the blocks are so many and so small that storing their pairs would cost more than their values
    // (12 bytes a block: groups of 1 or 2 of a large tensor, a 1-D tensor per channel): then nothing is stored
    // and each block's pair is computed from its few values when asked, by the quantize pass among others.
    std::shared_ptr<const BlockPairRecipe> recipe;
    // Set when the quantization was made before, elsewhere (stored_blocks.hpp: another file's ggml blocks of a
    // tensor of this shape): every pass, trace and view then reads r', the codes and the scales from those
    // blocks instead of quantizing the values, whose only part is r in |r - r'|. Made by stored_params, and used
    // with stored_config's format (whose codes the window counts).
    std::shared_ptr<const StoredBlocks> stored;

    std::int64_t block_of(std::int64_t flat) const { return (flat / block_stride) % block_count; }
    bool on_demand() const { return recipe != nullptr; }
    // Block `block`'s pair, stored or computed (reading the values under their guard).
    void pair(std::int64_t block, double& scale, std::int32_t& zero_point) const;
    double scale_of(std::int64_t block) const;
    std::int32_t zero_point_of(std::int64_t block) const;
    // Params computed on demand read their values whenever a pair is asked for: `owner` (e.g. the shared
    // tensor they were computed from) then lives as long as these params and their copies. No-op when stored.
    void keep_values_alive(std::shared_ptr<const void> owner);
    // Computes and stores every pair and drops the recipe: for a caller whose values do not outlive the
    // params, or that indexes scale[] and zero_point[] directly. No-op when stored.
    void store_pairs();
    // The smallest and largest s and z over all blocks.
    void ranges(double& scale_min, double& scale_max, std::int32_t& zero_point_min, std::int32_t& zero_point_max) const;
};

// The asymmetric rule of the lessons for one block's range, in double:
//   s = (r_max - r_min) / (q_max - q_min); z = q_min - r_min / s, clamped to [q_min, q_max] or else rounded
//   half to even. A degenerate range is widened to include 0; all zeros gives s = 1, z = code nearest 0.
//   recompute_scale: when z had to be clamped, s is recomputed for the clamped z so [r_min, r_max] stays
//   representable (the lessons keep the old s, and an all-positive block loses its top).
void asymmetric_params(double r_min, double r_max, const IntType& dtype, double& scale, std::int32_t& zero_point,
                       bool recompute_scale = false);
// Symmetric (absmax): s = max|r| / q_max, z = 0; all zeros gives s = 1. Signed types only.
void symmetric_params(double abs_max, const IntType& dtype, double& scale, std::int32_t& zero_point);

// One lesson's naive recipe, torch.round(r / r.abs().max() * 255).to(torch.int8), as a scale with z = 0:
// s = max|r| / 255 (1 for an all-zero tensor). With int8 and no clamp, the maximum lands on 255 = -1.
double naive_max_scale(const Tensor& tensor);
double naive_max_scale(double abs_max);  // the same from max|r|

// Computes the block layout and (s, z) of every block for `config` (manual: the given pair), or the recipe
// that computes them on demand (QuantParams::recipe: the tensor must then outlive the params). Checks the
// config against the shape and that every value is finite (qs::Error naming the first bad index), in the
// same parallel min/max pass that gives the blocks' ranges.
QuantParams compute_params(const Tensor& tensor, const QuantConfig& config);

struct TensorRange {
    float min = 0, max = 0;
};
// The same reading the view in its stored type, chunk by chunk (the percentile and mse calibrators decode
// them without a float32 copy too); `whole` (if given) receives the smallest and largest value.
// A percentile or mse calibrator on a whole tensor reads it several times (calibrate.hpp): `control` may
// cancel it (the params are then meaningless) and hears its progress.
QuantParams compute_params(const TensorView& view, const QuantConfig& config, TensorRange* whole = nullptr,
                           const PassControl& control = {});

// Every block's smallest and largest value under a layout: what min/max calibration's (s, z) come from. A
// window that recomputes the same layout's pairs many times (the bits slider, asymmetric to symmetric) reads
// the tensor for them once and then derives each set of pairs without a pass.
struct BlockRanges {
    std::int64_t block_stride = 1, block_count = 1;  // QuantParams' layout
    std::vector<float> lo, hi;                        // per block
};
// The ranges of `config`'s blocks in one pass (checking every value is finite, as compute_params), or null
// where compute_params would not take its pairs from stored per-block ranges (manual mode, a calibrator, a
// number format, or pairs computed on demand).
std::shared_ptr<const BlockRanges> block_ranges_for(const TensorView& view, const QuantConfig& config);
// Whether `ranges` are those of `config`'s layout on `shape` under min/max calibration.
bool ranges_fit(const BlockRanges& ranges, const Shape& shape, const QuantConfig& config);
// compute_params' result for a config that ranges_fit, with no pass over the values: the same pairs to the bit.
QuantParams params_from_ranges(const BlockRanges& ranges, const Shape& shape, const QuantConfig& config);

// The block layout alone (no statistics), e.g. for manual parameters.
void set_block_layout(const Shape& shape, const QuantConfig& config, QuantParams& params);

}  // namespace qs
