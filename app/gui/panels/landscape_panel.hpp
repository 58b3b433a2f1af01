// The MSE landscape: how the error of a per-tensor quantization depends on the choice of (s, z). Asymmetric and
// manual modes get a map over a grid of scales (log-spaced, x) and zero points (y), colored by log10(MSE) in
// viridis (dark = small error), with markers for the current (s, z), the lessons' min/max choice and the best
// grid point; a click on a cell asks the app for that (s, z) in manual mode. Symmetric mode (z = 0) gets a curve
// of MSE against the clipping range alpha (s = alpha / q_max) instead. The numbers come from the core
// (qs::mse_landscape, qs::values_mse, qs::params_from_range, qs::compute_params) on a background thread: a
// coarse pass on a subsample first (and for tensors above 1M elements the 64 x 64 grid on a 1M sample), then
// the exact 64 x 64 grid (128 points for the curve); the grid stays
// put while the current point moves inside it, so a click lands where it was aimed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/task.hpp"
#include "gui/platform/gl_texture.hpp"
#include "gui/document/quant_view.hpp"
#include "quantscope/config.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

// Grid sizes of the two passes.
constexpr int kLandscapeCoarse = 16;
constexpr int kLandscapeFine = 64;
constexpr int kCurveCoarse = 32;
constexpr int kCurveFine = 128;
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

struct LandscapeClick {
    bool requested = false;  // the user clicked a cell (a point of the curve) this frame
    double scale = 1.0;
    std::int32_t zero_point = 0;
};

struct LandscapePanelState {
    // [Internal state]
    Task<LandscapeResult> task;
    LandscapeResult shown;        // the finest result so far of the current request
    bool has_shown = false;
    // What the running (or last) request was started for.
    TensorKey tensor_key;
    IntType dtype{};
    Rounding rounding = Rounding::HalfEven;
    bool curve = false;
    bool started = false;
    std::uint64_t requests = 0;   // how many requests were started (tests)
    GlTexture texture;
    std::uint64_t texture_key = 0;
    // Where the last frame drew the map or the curve's plot area (screen coordinates): for tests.
    ImVec2 plot_min{}, plot_max{};
};

// Contents only: fills the available width (height: the region left, at least a few lines). `tensor` is the
// shared owner of view.tensor (the background work keeps it alive). Returns the (s, z) a click asked for.
LandscapeClick DrawLandscapePanel(LandscapePanelState& state, const QuantView& view,
                                  const std::shared_ptr<const Tensor>& tensor);

// Stops a running request (e.g. when the panel's tab is hidden, so that a big tensor's exact map does not keep
// the cores busy); the next draw starts it again. What is shown stays.
void SuspendLandscape(LandscapePanelState& state);
// True while a pass is still running (the panel shows a progress line).
bool LandscapeBusy(const LandscapePanelState& state);
// Blocks until the current request is complete and shows its final pass (tests, scripted screenshots).
void FinishLandscape(LandscapePanelState& state);

}  // namespace qs::gui
