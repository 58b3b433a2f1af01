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
//                 bin), measuring only the finalists exactly. A whole tensor in asymmetric mode also searches
//                 the landscape's (s, z) plane (mse_plane.hpp: its grid, the best cells measured exactly, the
//                 rows around the best refined in s), so it is never worse than the window's "best on grid"
//                 (exactly so up to 16384 values, which are gridded as the map is; above, on a histogram).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/mse_plane.hpp"  // mse_landscape, next to the calibrators that search its plane
#include "quantscope/params.hpp"
#include "quantscope/pass_control.hpp"
#include "quantscope/tensor_view.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

struct ValueRange {
    double lo = 0, hi = 0;  // symmetric modes use hi as max|r| (lo = -hi)
};

// The exact MSE of quantizing `n` values with (s, z) under `config` (dtype, rounding; clamp), in double.
double values_mse(const float* values, std::int64_t n, double scale, std::int32_t zero_point, const QuantConfig& config);

// The same over a whole view in its stored type, read in pieces under its guard on every core: the bits of
// values_mse over its decoded values. Cancelled (control): stops early with a meaningless result.
double values_mse(const TensorView& view, double scale, std::int32_t zero_point, const QuantConfig& config,
                  const PassControl& control = {});

// (s, z) for a range under config.mode (asymmetric: with config.recompute_scale; symmetric: hi = max|r|).
void params_from_range(const ValueRange& range, const QuantConfig& config, double& scale, std::int32_t& zero_point);

// The range of one block under the minmax or percentile calibrator. `values` may be reordered (percentile
// selects in place).
ValueRange calibrate_block(std::vector<float>& values, const QuantConfig& config);

// (s, z) of one block of n >= 1 values under the mse calibrator. `whole_tensor`: the block is the tensor (its
// evaluations may use every core, and in asymmetric mode it also searches the window's (s, z) plane, so it
// is never worse than the landscape's "best on grid"); otherwise everything runs on the calling thread.
void mse_params(const float* values, std::int64_t n, const QuantConfig& config, bool whole_tensor, double& scale,
                std::int32_t& zero_point);

// mse_params of a whole tensor (whole_tensor = true) read from a view in its stored type, without a float32
// copy: the same search on the same histograms and exact measurements (a pass each, about a dozen passes in
// all), so the same (s, z) as mse_params over the decoded values.
void mse_params(const TensorView& view, const QuantConfig& config, double& scale, std::int32_t& zero_point,
                const PassControl& control = {});

// The percentile calibrator's range of a whole view (config.percentile, config.mode), found exactly without
// a float32 copy: a radix selection over the values' order-preserving 32-bit keys, one pass counting the top 16
// bits, one more counting the low 16 bits within the few top bins that hold the ranks (none for bf16, whose
// low bits are 0). The same numbers as calibrate_block over the decoded values.
ValueRange percentile_range(const TensorView& view, const QuantConfig& config, const PassControl& control = {});
// The smallest and largest value of a view (numel >= 1), in one parallel pass: where the MSE search starts,
// and the range of histogram(view, bins).
void value_range(const TensorView& view, float& lo, float& hi);

// The elements of block `block` under `params`' layout, in flat order.
void gather_block(const Tensor& tensor, const QuantParams& params, std::int64_t block, std::vector<float>& out);

// Fills params.scale / zero_point of every block (layout already set) with config's percentile or mse
// calibrator, blocks in parallel.
void calibrated_params(const Tensor& tensor, const QuantConfig& config, QuantParams& params);
// The same reading a view in its stored type: the whole tensor by the streaming calibrators above, blocks
// gathered a few at a time (never a float32 copy of the tensor); the same (s, z) as over the decoded values.
// A whole bf16/f16 tensor (percentile, mse) is calibrated from its bit patterns' counts after one counting
// pass: the percentile exactly, the MSE search on a histogram and measurements from the patterns (the same
// (s, z) but where two candidates tie within the ~1e-13 by which the order of addition moves their sums).
void calibrated_params(const TensorView& view, const QuantConfig& config, QuantParams& params,
                       const PassControl& control = {});

// Every calibrator side by side for the GUI's table: the same config with minmax, percentile 99.9 and
// 99.99, and mse; each with and without recompute_scale when the mode is asymmetric (all rows without it
// first, then their twins in the same order).
struct CalibrationRow {
    QuantConfig config;
    QuantParams params;
    Metrics metrics;
    // A recompute_scale row whose (s, z) are its twin's in every block: "recompute s" changed nothing, and
    // a table shows the twin alone.
    bool same_as_twin = false;
};
std::vector<CalibrationRow> compare_calibrators(const Tensor& tensor, const QuantConfig& base);
// The same rows of a view in its stored type (a mapped tensor): compute_params and quantize_view per row,
// each a few passes (the MSE rows about a dozen), the same numbers as over the decoded values. Progress
// counts rows; a cancel stops between (and within the MSE search of) rows and returns what is done.
// A bf16/f16 view per tensor (int, clamp) instead gets every row from its bit patterns' counts
// (`bit_counts`, ValueOverview's, else one counting pass): no other pass, the params those of the decoded
// values (the MSE search's up to ties within ~1e-13), the metrics quantize's and the window's to the bit.
std::vector<CalibrationRow> compare_calibrators(const TensorView& view, const QuantConfig& base,
                                                const PassControl& control = {},
                                                const std::vector<std::int64_t>* bit_counts = nullptr);

}  // namespace qs
