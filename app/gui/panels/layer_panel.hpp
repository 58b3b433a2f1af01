// The layer lab (issue 13, SPEC "Layer"): the current tensor as the weights W [out, in] of y = x W^T, inputs x
// generated with outlier channels, and what the quantization does to the output. Heatmaps of x (outlier
// channels show as columns), W, the reference y, the quantized y and the output error; the metrics of weights,
// inputs and output side by side; controls for the activations (none / int8 / int4, per tensor / per token),
// LLM.int8()'s outlier threshold (split columns marked on x and W) and SmoothQuant's alpha, with the output MSE
// against alpha computed in the background so the sweet spot shows. Hovering an output cell lists the input
// channels that contribute most to its error. The numbers come from core/layer layer.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "gui/document/task.hpp"
#include "gui/panels/method_panel.hpp"
#include "gui/widgets/heatmap.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_inputs.hpp"
#include "quantscope/lesson.hpp"

namespace qs::gui {

// The lab's settings (what a lesson step or the controls set).
struct LayerSettings {
    LayerInputSpec inputs{InputDistribution::Normal, 16, 0, 2, 20.0};
    int activation_bits = 8;  // 0: none (W-only)
    ActGranularity act_granularity = ActGranularity::Tensor;
    Mode act_mode = Mode::Symmetric;
    bool split = false;
    double threshold = 6.0;
    bool smooth = false;
    double alpha = 0.5;

    friend bool operator==(const LayerSettings& a, const LayerSettings& b) {
        return a.inputs.distribution == b.inputs.distribution && a.inputs.tokens == b.inputs.tokens &&
               a.inputs.seed == b.inputs.seed && a.inputs.outlier_channels == b.inputs.outlier_channels &&
               a.inputs.outlier_scale == b.inputs.outlier_scale && a.activation_bits == b.activation_bits &&
               a.act_granularity == b.act_granularity && a.act_mode == b.act_mode && a.split == b.split &&
               a.threshold == b.threshold && a.smooth == b.smooth && a.alpha == b.alpha;
    }
    friend bool operator!=(const LayerSettings& a, const LayerSettings& b) { return !(a == b); }
};

// A lesson step's layer as the lab's settings (a threshold or alpha it does not give is switched off).
LayerSettings LayerSettingsFromLesson(const LessonLayer& layer);

// The layer configuration of the settings with W quantized as `weights`.
LayerConfig MakeLayerConfig(const LayerSettings& settings, const QuantConfig& weights);

struct LayerPanelState {
    LayerSettings settings;
    bool show_method = false;  // the Method view (GPTQ, AWQ, rotation on W) instead of the outputs
    MethodPanelState method;

    // [Internal state]
    struct Computed {
        LayerSettings settings;
        QuantConfig weights;
        TensorKey tensor;
        std::shared_ptr<const Tensor> x, w;
        LayerResult result;
        std::vector<float> error;  // |y - reference|
        std::string error_text;    // what the core refused (nothing else is set then)
        // The heatmaps' colour ranges, each with 0 (the maps are centred on it): found once with the result,
        // on the worker, not by every frame (a 4096 x 4096 W took 0.2 s a frame to scan).
        struct Range {
            double lo = 0, hi = 0;
        };
        Range x_range, w_range, y_range, error_range;  // y: y' and the reference together
    };
    Task<Computed> task;
    Computed shown;
    bool has_shown = false;
    std::uint64_t generation = 0;  // bumped whenever `shown` changes: the heatmaps' texture key
    LayerSettings requested;
    QuantConfig requested_weights;
    TensorKey requested_tensor;
    bool started = false;

    struct Curve {
        std::string key;
        std::vector<double> alphas, mse;
        double plain_mse = 0;  // the same layer without smoothing
        std::int64_t rows = 0, sampled_rows = 0;  // W's output rows and those the curve used (fewer: a large layer)
    };
    Task<Curve> curve_task;
    Curve curve;               // the output MSE against alpha for the shown inputs and settings
    std::string curve_key;     // what the running (or last) curve was for
    std::array<HeatmapState, 5> maps;
    HeatmapView view_x, view_w, view_out;  // the three outputs zoom and pan together
    float table_h = 0;         // the metrics table and its line as last drawn (0: not yet)
};

// Contents only; fills the available region. `tensor` is the shared owner of view.tensor (W).
void DrawLayerPanel(LayerPanelState& state, const QuantView& view, const std::shared_ptr<const Tensor>& tensor);

// The panel's two parts (layer_panel_draw.cpp), at the cursor: the five heatmaps with the hover on an output
// cell, and the metrics table with the alpha curve.
void DrawLayerMaps(LayerPanelState& state, ImVec2 size);
void DrawLayerSide(LayerPanelState& state, ImVec2 size);
// The least height DrawLayerMaps draws its maps in, and the height the metrics table with its line under it
// takes at the top of DrawLayerSide (as last drawn, else as the style gives it): what a layout needs to keep the
// table whole on screen.
float LayerMapsMinHeight();
float LayerTableHeight(const LayerPanelState& state);

// A lesson step's method: the Method view on it (its output SQNRs covered until revealed, so students predict
// first), or the outputs view when the step gives none.
void ApplyLessonMethod(LayerPanelState& state, const LessonLayer& layer);
// AWQ's ratio `pick` (an index of the curve's ratios, -1 the winner) as a session sets it: kept until the curve
// of the next layer run comes, whatever curve is shown now (another tensor's, before the session's).
void HoldAwqPick(LayerPanelState& state, int pick);

// The layer, its alpha curve or the Method view is computing.
bool LayerBusy(const LayerPanelState& state);

// Blocks until the layer and its alpha curve are computed and shown (tests, scripted screenshots).
void FinishLayer(LayerPanelState& state);

}  // namespace qs::gui
