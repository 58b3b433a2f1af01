#include "gui/app/analysis_tabs.hpp"
#include "gui/widgets/widgets.hpp"

#include <imgui.h>

#include <exception>
#include <limits>
#include <string>

#include "gui/app/app_state.hpp"
#include "gui/app/main_window.hpp"
#include "gui/document/stopwatch.hpp"
#include "gui/panels/figure_cover.hpp"
#include "quantscope/layer_methods.hpp"

namespace qs::gui {
namespace {

AnalysisTabSpec Histograms() {
    AnalysisTabSpec t;
    t.title = "Histograms";
    t.word = "histograms";
    t.draw = [](AppState& app, Frame& frame, const QuantView& view) {
        app.histogram.follow_element = app.figure.selected;
        const Stopwatch clock;
        DrawHistogramPanel(app.histogram, view, app.doc.shown_data);
        frame.histogram_ms = clock.ms();
    };
    t.hidden = [](AppState& app) { SuspendHistogram(app.histogram); };
    t.beside_metrics = true;
    t.session = "histogram";
    t.fields = {BoolField("log_counts", [](auto& app) -> auto& { return app.histogram.log_counts; })};
    return t;
}

// Drawn (and computed, in the background) only while its tab is open.
AnalysisTabSpec Landscape() {
    AnalysisTabSpec t;
    t.title = "Error landscape";
    t.word = "landscape";
    t.draw = [](AppState& app, Frame&, const QuantView& view) {
        DrawLandscapePanel(app.landscape, view, app.doc.shown_data, app.intents);
    };
    // A hidden landscape stops computing (a big tensor's exact map is seconds of both cores).
    t.hidden = [](AppState& app) { SuspendLandscape(app.landscape); };
    return t;
}

AnalysisTabSpec Calibrators() {
    AnalysisTabSpec t;
    t.title = "Calibrators";
    t.word = "calibrators";
    t.draw = [](AppState& app, Frame&, const QuantView& view) {
        DrawCalibrationPanel(app.calibration, view, app.doc.shown_data, app.intents);
    };
    return t;
}

AnalysisTabSpec Compare() {
    AnalysisTabSpec t;
    t.title = "Compare";
    t.word = "compare";
    t.draw = [](AppState& app, Frame&, const QuantView& view) { DrawComparePanel(app.compare, view, app.doc.shown_data); };
    return t;
}

AnalysisTabSpec Bits() {
    AnalysisTabSpec t;
    t.title = "Bits";
    t.word = "bits";
    t.draw = [](AppState& app, Frame&, const QuantView& view) {
        const std::int64_t selected = app.figure.selected;
        DrawBitsPanel(app.bits, view, selected, selected >= 0 && FigureHidesPipeline(app.figure, selected), app.intents);
    };
    t.shows_quantization = false;  // hides the followed element's bits itself
    return t;
}

AnalysisTabSpec Formats() {
    AnalysisTabSpec t;
    t.title = "Formats";
    t.word = "formats";
    t.draw = [](AppState& app, Frame&, const QuantView& view) {
        DrawFormatsPanel(app.formats, view, app.doc.shown_data, app.intents);
    };
    t.hidden = [](AppState& app) { SuspendFormats(app.formats); };
    return t;
}

AnalysisTabSpec Model() {
    AnalysisTabSpec t;
    t.title = "Model";
    t.word = "model";
    t.draw = [](AppState& app, Frame&, const QuantView&) {
        // Swept when first shown, with the current settings (reading a whole checkpoint is not free).
        if (app.model.checkpoint && !app.model.started) StartModelSweep(app.model, app.doc.config);
        DrawModelPanel(app.model, app.doc.config, app.intents);
    };
    t.shows_quantization = false;  // a checkpoint's sweep, not the tensor on show
    return t;
}

// The layer lab in place of the figure and the analysis area (it draws W, the current tensor, itself).
AnalysisTabSpec Layer() {
    AnalysisTabSpec t;
    t.title = "Layer lab";
    t.word = "layer";
    t.draw = [](AppState& app, Frame&, const QuantView& view) {
        // The title and the button on one line: the short title where large text leaves the long one no room
        // beside the button (a line more above the maps on a projector), the button on the next where neither fits.
        const char* title = "Layer lab: the current tensor as W of y = x W^T";
        const ImGuiStyle& style = ImGui::GetStyle();
        const float button = ImGui::CalcTextSize("Back to the figure").x + style.FramePadding.x * 2.0f;
        if (ImGui::CalcTextSize(title).x + style.ItemSpacing.x + button > ImGui::GetContentRegionAvail().x) {
            ImGui::TextUnformatted("Layer lab: y = x W^T");
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", title);
        } else {
            ImGui::TextUnformatted(title);
        }
        SameLineOrWrap(button);
        if (ImGui::SmallButton("Back to the figure")) app.layer_view = false;
        DrawLayerPanel(app.layer, view, app.doc.shown_floats());
    };
    t.shown = &AppState::layer_view;
    t.menu = "Layer lab: from weight error to output error";
    // Whether the lab is shown and its Method view: the method, act-order, the GPTQ step-through's column
    // (clamped to W's columns when the stepper is ready, as the slider's value is) and AWQ's picked ratio. A lesson's layer step,
    // opened after these keys are read, sets them as the step does.
    t.session = "layer";
    SessionField method;
    method.key = "method";
    method.write = [](const AppState& app, const std::string& k, ViewSettings& v) {
        v.emplace_back(k, to_string(app.layer.method.method));
    };
    method.read = [](ViewRead& r, const std::string&, const std::string& value) {
        try {
            r.app.layer.method.method = parse_layer_method(value);
            return true;
        } catch (const std::exception&) {
            return false;
        }
    };
    SessionField column;
    column.key = "column";
    column.write = [](const AppState& app, const std::string& k, ViewSettings& v) {
        v.emplace_back(k, std::to_string(app.layer.method.target));
    };
    column.read = [](ViewRead& r, const std::string&, const std::string& value) {
        std::int64_t n = 0;
        if (!ParseInt(value, n) || n < 0 || n > std::numeric_limits<int>::max()) return false;  // the slider's int
        r.app.layer.method.target = n;
        return true;
    };
    // AWQ's ratio picked on its loss curve: an index of the curve's ratios (r = i / 20), -1 for the winner. Kept
    // as read until the first curve comes; one past the curve's ratios shows the winner.
    SessionField awq_pick;
    awq_pick.key = "awq_pick";
    awq_pick.write = [](const AppState& app, const std::string& k, ViewSettings& v) {
        v.emplace_back(k, std::to_string(app.layer.method.awq_pick));
    };
    awq_pick.read = [](ViewRead& r, const std::string&, const std::string& value) {
        std::int64_t n = 0;
        if (!ParseInt(value, n) || n < -1 || n >= kMaxAwqGrid) return false;
        HoldAwqPick(r.app.layer, static_cast<int>(n));
        return true;
    };
    t.fields = {BoolField("shown", [](auto& app) -> auto& { return app.layer_view; }),
                BoolField("method_view", [](auto& app) -> auto& { return app.layer.show_method; }), std::move(method),
                BoolField("act_order", [](auto& app) -> auto& { return app.layer.method.act_order; }), std::move(column),
                std::move(awq_pick)};
    return t;
}

}  // namespace

const std::vector<AnalysisTabSpec>& AnalysisTabs() {
    // One line a tab, in the tab bar's order; the views that replace the figure last.
    static const std::vector<AnalysisTabSpec> tabs = {
        Histograms(),
        Landscape(),
        Calibrators(),
        Compare(),
        Bits(),
        Formats(),
        Model(),
        Layer(),
    };
    return tabs;
}

int AnalysisTabIndex(const std::string& word) {
    const std::vector<AnalysisTabSpec>& tabs = AnalysisTabs();
    for (std::size_t i = 0; i < tabs.size(); ++i)
        if (word == tabs[i].word) return static_cast<int>(i);
    return -1;
}

std::string AnalysisTabWords() {
    const std::vector<AnalysisTabSpec>& tabs = AnalysisTabs();
    std::string out;
    for (std::size_t i = 0; i < tabs.size(); ++i)
        out += std::string(i == 0 ? "" : i + 1 == tabs.size() ? " or " : ", ") + tabs[i].word;
    return out;
}

}  // namespace qs::gui
