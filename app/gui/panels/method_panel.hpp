// The layer lab's Method view (issue 24): what GPTQ, AWQ and rotation do to the shown layer's W. A bar chart
// compares the output SQNR (and MSE) of every method at the current quantizer, computed in the background
// (core's run_method, cancellable). AWQ shows its loss against the ratio with the winner marked, the input
// channels' mean |x| as a strip above W's columns and the chosen scales, and a click on the curve shows the
// quantization at that ratio instead (core's run_method at it, in the background; the winner stays marked and a
// button, or a click on the winner, goes back to it); rotate shows W and W H on one colour
// scale with their histograms and the outlier ratio max/std before and after (or why it cannot run: in must be 2^k). The GPTQ
// step-through quantizes one column a step (core's GptqStepper): W as it was, W now (the processed columns
// marked, those still to come as compensated so far) and the accumulated compensation W now - W on one colour
// scale, so the error is seen to flow to the columns not yet quantized; the processing order under act-order;
// each column's numbers (U[j, j], e, its error before and after compensation) in a tooltip. The panel owns no
// math: the stepper is prepared in the background and stepped on the UI thread (a step is out x in
// multiply-adds).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui/document/task.hpp"
#include "gui/widgets/heatmap.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/gptq_stepper.hpp"

namespace qs::gui {

// A method as the window names it: "RTN", "GPTQ", "AWQ", "rotate", "rotate+GPTQ".
const char* MethodLabel(LayerMethod method);

struct MethodPanelState {
    LayerMethod method = LayerMethod::Gptq;
    bool covered = false;               // the output SQNRs covered until a lesson's R (students predict first)
    bool act_order = false;
    int block = 16;                     // "Next block" steps this many columns
    std::int64_t target = 0;            // columns the step-through is to have processed (the slider)
    int awq_pick = -1;                  // the ratio clicked on AWQ's curve (an index of its losses); -1: the winner

    // [Internal state]
    // Every method's result on the shown layer (one slot per LayerMethod, in its order).
    struct Comparison {
        std::string key;
        std::array<std::shared_ptr<const MethodResult>, 5> results;
        std::array<std::string, 5> errors;  // what the core refused for that method
        std::vector<float> rotated;         // W H [out, in] (empty when in is not 2^k)
        Histogram hist_w, hist_rotated;     // W's and W H's values over one range
        std::uint64_t layer_generation = 0;
    };
    Task<Comparison> compare_task;
    Comparison comparison;
    std::string compare_key;
    ImVec2 awq_plot_min, awq_plot_max;  // where that curve's plot was last drawn (a click there picks)
    // AWQ at the picked ratio (run_method with awq_ratio), in the background; shown while its key is awq_key.
    struct AwqPicked {
        std::string key;
        int pick = -1;
        std::shared_ptr<const MethodResult> result;
        std::string error_text;             // what the core refused
    };
    Task<AwqPicked> awq_task;
    std::string awq_key;                // the layer and the pick of the running (or last) request
    // A pick read (a session's) while the curve of this layer generation was shown: kept through the first curve
    // of a later layer (the session's), not reset to that curve's winner as another layer's pick is.
    std::optional<std::uint64_t> awq_pick_after;
    AwqPicked awq_picked;
    std::array<HeatmapState, 2> method_maps;  // RTN, AWQ, rotate: W (or W H) and what the method made of it
    HeatmapView method_view;
    std::uint64_t method_generation = 0;
    struct Prepared {
        std::string key;
        std::shared_ptr<GptqStepper> stepper;
        std::string error_text;         // what the core refused (no stepper then)
    };
    Task<Prepared> prepare_task;
    std::string requested_key;
    Prepared prepared;                  // the stepper on show (stepped on the UI thread)
    std::vector<float> original, current, compensation;  // float32 copies for the heatmaps
    std::uint64_t generation = 0;
    std::array<HeatmapState, 3> maps;
    HeatmapView view;                   // the three maps zoom and pan together
    double last_step_ms = 0;            // the last frame's stepping, per column (the bench's number)
};

// The layer's W [out, in] and inputs x [tokens, in] (shared: the preparation may outlive the frame), W's
// quantizer and `layer_generation` (changes whenever x, W or the quantizer do). Fills the available region.
void DrawMethodPanel(MethodPanelState& state, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                     const QuantConfig& weights, std::uint64_t layer_generation);

// The parts in method_views.cpp: every method's run on the layer in the background (when out of date), the
// comparison chart of their output SQNR, and the RTN / AWQ / rotate views (W beside what the method made of
// it, AWQ's loss curve and strips, rotation's outlier ratio).
void RequestComparison(MethodPanelState& state, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                       const QuantConfig& weights, std::uint64_t layer_generation);
// Takes a finished comparison (a new layer's resets AWQ's pick to its winner).
void TakeComparison(MethodPanelState& state);
// AWQ at the picked ratio, when one is picked on the shown layer's curve and not computed yet; takes a result.
void RequestAwqPick(MethodPanelState& state, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                    const QuantConfig& weights, std::uint64_t layer_generation);
// The chart of the comparison as last taken (DrawMethodPanel takes it once a frame, before drawing).
void DrawMethodComparison(MethodPanelState& state, ImVec2 size);
void DrawMethodView(MethodPanelState& state, const Tensor& w, ImVec2 size);

// Blocks until the stepper for this layer is prepared and the slider's target reached (tests, screenshots).
void FinishMethod(MethodPanelState& state, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                  const QuantConfig& weights, std::uint64_t layer_generation);
bool MethodBusy(const MethodPanelState& state);

// The Method view's maps of W's values: coolwarm centred on 0 over the range of all of `arrays` (so that W
// and what a method made of it share one scale).
HeatmapStyle SharedValueStyle(const std::vector<const std::vector<float>*>& arrays);

}  // namespace qs::gui
