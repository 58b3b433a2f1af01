// The MSE landscape: how the error of a per-tensor quantization depends on the choice of (s, z). Asymmetric
// and manual modes get a map over a grid of scales (log-spaced) and zero points; symmetric mode (z = 0) a
// curve of MSE against the clipping range alpha (s = alpha / q_max). The window draws it; the MSE calibrator
// searches the same grid (calibrate.hpp), so it never reports worse than the map's "best on grid".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/mse_plane.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The coarse pass reads every stride-th element, stride = ceil(n / kLandscapeCoarseSample).
constexpr std::int64_t kLandscapeCoarseSample = 65536;
// Tensors above this many elements get a middle pass: the fine grid on a sample of about this size.
constexpr std::int64_t kLandscapeMidSample = std::int64_t{1} << 20;

// One computed landscape (a pass of one request).
struct LandscapeResult {
    bool curve = false;    // symmetric: MSE against alpha; else the (s, z) map
    bool exact = false;    // every element evaluated (stride 1): the final figure
    std::int64_t stride = 1;
    // The map: mse[zi * scales.size() + si]; scales ascending, zero_points ascending.
    std::vector<double> scales;
    std::vector<std::int32_t> zero_points;
    // The curve: alphas ascending, with the scale each gives (zero point 0).
    std::vector<double> alphas;
    std::vector<double> mse;
    // The lessons' min/max choice for this tensor and dtype (per tensor, recompute_scale off).
    double minmax_scale = 1.0;
    std::int32_t minmax_zero_point = 0;
    double minmax_mse = 0;
    // The smallest MSE of the grid (or curve) and where it is.
    double best_scale = 1.0;
    std::int32_t best_zero_point = 0;
    double best_mse = 0;
    double mse_lo = 0, mse_hi = 0;  // smallest and largest MSE of the grid (color range)
    double ms = 0;                  // wall time of this pass
};

struct LandscapeRequest {
    QuantConfig config;  // dtype, rounding
    bool curve = false;  // symmetric: the curve; else the map
    bool has_current = false;
    LandscapePoint current;  // the (s, z) in use, kept inside the grid
    // A bf16/f16 view's bit patterns' counts (ValueOverview::bit_counts, 2^16 entries), if the caller has
    // them: compute_landscape then needs no pass over the view (else it counts them in one).
    const std::vector<std::int64_t>* bit_counts = nullptr;
};

// What a running computation reports to its caller (every member may be empty).
struct LandscapeCallbacks {
    const std::atomic<bool>* cancel = nullptr;            // polled between rows: true stops early
    std::function<void(float)> progress;                  // in [0, 1]
    std::function<void(LandscapeResult)> publish;         // each pass's result, coarse to fine

    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
    void set_progress(float p) const {
        if (progress) progress(p);
    }
    void deliver(LandscapeResult r) const {
        if (publish) publish(std::move(r));
    }
};

// Fills best_*, mse_lo and mse_hi from r.mse (the first of equal minima, in storage order).
void find_best(LandscapeResult& r);

// A request's passes, each published as it completes: the map (a coarse grid on a subsample, for tensors above
// 1M elements the fine grid on a 1M sample, then the exact fine grid) or the curve (coarse on a subsample,
// then exact). Returns false when cancelled.
bool compute_landscape(const Tensor& tensor, const LandscapeRequest& request, const LandscapeCallbacks& callbacks);
// The same passes over a view in its stored type (a tensor too large for a float32 copy): the samples gathered
// from the view, the exact pass reading it once (mse_grid above), each pass the numbers of the float32
// version. A bf16 or f16 view instead gets its exact pass alone, from its bit patterns' counts (request's
// bit_counts, else one counting pass): each point is a sum over the <= 65536 patterns that occur, each term
// (the quantizer's float32 error, squared in double) times its count, added in pattern order: a second for a
// 525 M-element tensor instead of half an hour, and the values of values_mse over the decoded elements up to
// the order of addition (~1e-15 relative; equal to the bit to the window's metrics, which add the same terms
// in the same order), where the float32 exact pass adds float32 chunk sums (~1e-7 relative).
bool compute_landscape(const TensorView& view, const LandscapeRequest& request, const LandscapeCallbacks& callbacks);

}  // namespace qs
