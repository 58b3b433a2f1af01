// Calibrators: how each block's range is chosen before the lessons' formulas turn it into (s, z).
//   minmax        the lessons' r_min, r_max (symmetric: max|r|)
//   percentile:P  clip the tails: the P-th and (100-P)-th percentiles (symmetric: the P-th of |r|),
//                 linear interpolation as numpy.percentile, found by selection (no full sort)
//   mse           the clipping range that minimises the block's MSE: the min/max range shrunk by a factor
//                 c in [0.05, 1] (around 0 when it contains 0, so 0 stays exact; else around its centre),
//                 never worse than minmax, and the MSE of the answer is exact. Linear in the block's size
//                 with a small constant, whatever the block count: factors whose range provably clips the
//                 block's extremes by more than min/max's whole error are skipped (a small block searches
//                 only near c = 1); a block of up to 1024 values is minimised exactly along that row (the
//                 error is a quadratic in s between two code changes), a bigger one by a grid of 64 factors
//                 and a golden-section search on a histogram of itself (count, sum and sum of squares per
//                 bin), measuring only the finalists exactly.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

struct ValueRange {
    double lo = 0, hi = 0;  // symmetric modes use hi as max|r| (lo = -hi)
};

// The exact MSE of quantizing `n` values with (s, z) under `config` (dtype, rounding; clamp), in double.
double values_mse(const float* values, std::int64_t n, double scale, std::int32_t zero_point, const QuantConfig& config);

// (s, z) for a range under config.mode (asymmetric: with config.recompute_scale; symmetric: hi = max|r|).
void params_from_range(const ValueRange& range, const QuantConfig& config, double& scale, std::int32_t& zero_point);

// The range of one block under the minmax or percentile calibrator. `values` may be reordered (percentile
// selects in place).
ValueRange calibrate_block(std::vector<float>& values, const QuantConfig& config);

// (s, z) of one block of n >= 1 values under the mse calibrator. `parallel`: its evaluations may use every
// core (one block per tensor); otherwise everything runs on the calling thread.
void mse_params(const float* values, std::int64_t n, const QuantConfig& config, bool parallel, double& scale,
                std::int32_t& zero_point);

// The elements of block `block` under `params`' layout, in flat order.
void gather_block(const Tensor& tensor, const QuantParams& params, std::int64_t block, std::vector<float>& out);

// Fills params.scale / zero_point of every block (layout already set) with config's percentile or mse
// calibrator, blocks in parallel.
void calibrated_params(const Tensor& tensor, const QuantConfig& config, QuantParams& params);

// Every calibrator side by side for the GUI's table: the same config with minmax, percentile 99.9 and
// 99.99, and mse; each with and without recompute_scale when the mode is asymmetric.
struct CalibrationRow {
    QuantConfig config;
    QuantParams params;
    Metrics metrics;
};
std::vector<CalibrationRow> compare_calibrators(const Tensor& tensor, const QuantConfig& base);

// MSE over a grid of (scale, zero point) pairs for a per-tensor quantization: mse[zi * scales.size() + si].
// Evaluates every `stride`-th element (1 = all of them; sums of 4096-element chunks in float, then double). Stops early, returning false, when `cancel` becomes true;
// `progress` (if given) counts finished rows.
bool mse_landscape(const Tensor& tensor, const QuantConfig& config, const std::vector<double>& scales,
                   const std::vector<std::int32_t>& zero_points, std::int64_t stride, std::vector<double>& mse,
                   const std::atomic<bool>* cancel = nullptr, std::atomic<int>* progress = nullptr);

}  // namespace qs
