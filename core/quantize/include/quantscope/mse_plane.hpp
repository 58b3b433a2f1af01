// The (s, z) plane of a per-tensor quantization, shared by the MSE calibrator (calibrate.hpp), which searches
// it, and the window's landscape (landscape.hpp), which draws it: the grid of scales (log-spaced) and zero
// points around the lessons' choice, and the MSE at every point of it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/int_type.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// Grid sizes of the landscape's passes; the MSE search grids as the fine map does.
constexpr int kLandscapeCoarse = 16;
constexpr int kLandscapeFine = 64;
constexpr int kCurveCoarse = 32;
constexpr int kCurveFine = 128;

struct LandscapePoint {
    double scale = 1.0;
    std::int32_t zero_point = 0;
};

// n scales spaced evenly in log over about [lo, hi], one of them exactly `anchor` (lo <= anchor <= hi): the
// lessons' choice is then a cell of the grid, so "best on grid" is never worse than it.
std::vector<double> log_spaced_through(double lo, double hi, double anchor, int n);
// n integers (fewer when [q_lo, q_hi] has fewer) evenly spaced over about [lo, hi], one of them exactly
// `anchor`: the step covers [lo, hi] in n points, and the window then grows within [q_lo, q_hi] to n points.
std::vector<std::int32_t> int_spread_through(std::int64_t lo, std::int64_t hi, std::int64_t anchor, std::int64_t q_lo,
                                             std::int64_t q_hi, int n);
// The map's grid: n scales over [s/4, 4s] around both the min/max and the current scale (if any), zero points
// over a window of a quarter of the levels each side of both (the whole type when it has at most 64 levels);
// the min/max (s, z) is a grid point.
void landscape_grid(const IntType& dtype, const LandscapePoint& minmax, const LandscapePoint* current, int n,
                    std::vector<double>& scales, std::vector<std::int32_t>& zero_points);
// MSE over a grid of (scale, zero point) pairs for `n` values quantized per tensor: mse[zi * scales.size() + si].
// Sums of 4096-element chunks in float, then double; rows of scales in parallel. Stops early, returning false,
// when `cancel` becomes true; `progress` (if given) counts finished rows.
bool mse_grid(const float* values, std::int64_t n, const QuantConfig& config, const std::vector<double>& scales,
              const std::vector<std::int32_t>& zero_points, std::vector<double>& mse,
              const std::atomic<bool>* cancel = nullptr, std::atomic<int>* progress = nullptr);
// The same over a view in its stored type (e.g. a file's mapping), read once in blocks of 2^20 elements
// decoded under its guard, every block's chunks added to each (s, z)'s sum in order: the bits of mse_grid over
// the decoded values. `progress` (if given) is called with the fraction of the view done after each block;
// a cancel is seen between blocks.
bool mse_grid(const TensorView& view, const QuantConfig& config, const std::vector<double>& scales,
              const std::vector<std::int32_t>& zero_points, std::vector<double>& mse,
              const std::atomic<bool>* cancel, const std::function<void(float)>& progress);
// The same over every `stride`-th element of a tensor (1 = all of them).
bool mse_landscape(const Tensor& tensor, const QuantConfig& config, const std::vector<double>& scales,
                   const std::vector<std::int32_t>& zero_points, std::int64_t stride, std::vector<double>& mse,
                   const std::atomic<bool>* cancel = nullptr, std::atomic<int>* progress = nullptr);

}  // namespace qs
