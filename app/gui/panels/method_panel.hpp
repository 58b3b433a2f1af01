// The layer lab's Method view (issue 24): what GPTQ, AWQ and rotation do to the shown layer's W. The GPTQ
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
#include <string>
#include <vector>

#include "gui/document/task.hpp"
#include "gui/widgets/heatmap.hpp"
#include "quantscope/gptq_stepper.hpp"

namespace qs::gui {

// The methods of the combo, in its order.
enum class MethodChoice : int { Rtn = 0, Gptq = 1, Awq = 2, Rotate = 3, RotateGptq = 4 };
const char* MethodLabel(MethodChoice method);   // "RTN", "GPTQ", ...

struct MethodPanelState {
    MethodChoice method = MethodChoice::Gptq;
    bool act_order = false;
    int block = 16;                     // "Next block" steps this many columns
    std::int64_t target = 0;            // columns the step-through is to have processed (the slider)

    // [Internal state]
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

// Blocks until the stepper for this layer is prepared and the slider's target reached (tests, screenshots).
void FinishMethod(MethodPanelState& state, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                  const QuantConfig& weights, std::uint64_t layer_generation);
bool MethodBusy(const MethodPanelState& state);

}  // namespace qs::gui
