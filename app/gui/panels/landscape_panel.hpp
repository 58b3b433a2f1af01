// The MSE landscape: how the error of a per-tensor quantization depends on the choice of (s, z). Asymmetric and
// manual modes get a map over a grid of scales (log-spaced, x) and zero points (y), colored by log10(MSE) in
// viridis (dark = small error), with markers for the current (s, z), the lessons' min/max choice and the best
// grid point; a click on a cell asks the app for that (s, z) in manual mode. Symmetric mode (z = 0) gets a curve
// of MSE against the clipping range alpha (s = alpha / q_max) instead. The numbers come from the core
// (qs::compute_landscape: its grid, passes and best point) on a background thread: a
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
#include "gui/panels/intents.hpp"
#include "quantscope/config.hpp"
#include "quantscope/landscape.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

// The numerics live in the core (quantscope/landscape.hpp); the panel only draws them.
using qs::kCurveCoarse;
using qs::kCurveFine;
using qs::kLandscapeCoarse;
using qs::kLandscapeFine;
using qs::LandscapeResult;

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

// Contents only: fills the available width (height: the region left, at least a few lines). `data` is the
// shared owner of view.data (the background work keeps it alive). A click on a cell (a point of the curve) asks
// for its (s, z) as a PickManualIntent. A
// tensor read from its file's mapping gets the same passes on its stored type: the sampled maps in about a
// second, the exact one after minutes for a billion elements (the status line says how long is left).
void DrawLandscapePanel(LandscapePanelState& state, const QuantView& view, const std::shared_ptr<const TensorData>& data,
                        Intents& out);

// Stops a running request (e.g. when the panel's tab is hidden, so that a big tensor's exact map does not keep
// the cores busy); the next draw starts it again. What is shown stays.
void SuspendLandscape(LandscapePanelState& state);
// True while a pass is still running (the panel shows a progress line).
bool LandscapeBusy(const LandscapePanelState& state);
// Blocks until the current request is complete and shows its final pass (tests, scripted screenshots).
void FinishLandscape(LandscapePanelState& state);

}  // namespace qs::gui
