#include "gui/panels/figure_toolbar.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <imgui.h>

#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"

namespace qs::gui {
namespace {

const char* kAnnotateNames[] = {"auto", "on", "off"};
const char* kLayoutLabels[] = {"auto", "1x4", "2x2"};
const char* kZoomHint = "wheel: zoom, drag: pan, click: follow an element";

float CheckboxWidth(const char* label) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

// A combo `combo_w` wide with its label after it.
float LabelledWidth(float combo_w, const char* label) {
    return combo_w + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

// The layout combo fits its longest entry, "auto (1x4)", and its arrow.
float LayoutComboWidth() {
    return ImGui::CalcTextSize("auto (1x4)").x + ImGui::GetStyle().FramePadding.x * 2.0f + ImGui::GetFrameHeight();
}

// A combo's width: `em` font sizes, less where the line (`width`) is too narrow for it and its label.
float ComboWidth(float em, const char* label, float width) {
    const float font = ImGui::GetFontSize();
    const float room = width - ImGui::GetStyle().ItemInnerSpacing.x - ImGui::CalcTextSize(label).x;
    return std::floor(std::max(font * 3.0f, std::min(font * em, room)));
}

// The widths of the controls, in the order they are drawn.
std::vector<float> ItemWidths(const QuantView& qv, float width) {
    std::vector<float> w = {LabelledWidth(ComboWidth(7.0f, "Colormap", width), "Colormap"), CheckboxWidth("Lesson look"),
                            LabelledWidth(LayoutComboWidth(), "Layout"), CheckboxWidth("Shared range"),
                            LabelledWidth(ComboWidth(5.0f, "Values", width), "Values")};
    if (qv.data->rank() == 3) w.push_back(LabelledWidth(ComboWidth(8.0f, "Slice", width), "Slice"));
    w.push_back(ImGui::CalcTextSize("Reset zoom").x + ImGui::GetStyle().FramePadding.x * 2.0f);
    return w;
}

// Places items of these widths left to right in `width`, wrapping; returns the lines used and where the
// last line ends (x from the left edge).
int Flow(const std::vector<float>& widths, float width, std::vector<bool>* new_line, float* end_x) {
    const float spacing = ImGui::GetStyle().ItemSpacing.x;
    int lines = 1;
    float x = 0.0f;
    for (std::size_t i = 0; i < widths.size(); ++i) {
        const bool wrap = i > 0 && x + spacing + widths[i] > width;
        if (new_line) new_line->push_back(wrap);
        if (wrap) {
            ++lines;
            x = widths[i];
        } else {
            x += (i > 0 ? spacing : 0.0f) + widths[i];
        }
    }
    if (end_x) *end_x = x;
    return lines;
}

// The text that ends the toolbar, and whether it gets its own line.
std::string TailText(const FigurePanelState& st, const QuantView& qv, const std::string& note) {
    if (!note.empty()) return note;
    if (!IsFullView(st.view, qv.data->rows(), qv.data->cols())) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "rows %lld-%lld, cols %lld-%lld", static_cast<long long>(std::floor(st.view.y0)),
                      static_cast<long long>(std::ceil(st.view.y1)) - 1, static_cast<long long>(std::floor(st.view.x0)),
                      static_cast<long long>(std::ceil(st.view.x1)) - 1);
        return buf;
    }
    return kZoomHint;
}

bool TailOnOwnLine(const std::string& tail, const std::string& note, float end_x, float width) {
    const float room = width - end_x - ImGui::GetStyle().ItemSpacing.x;
    // A note must be read: it gets a line of its own rather than a "..." after two words.
    if (!note.empty()) return ImGui::CalcTextSize(tail.c_str()).x > room && room < ImGui::GetFontSize() * 12.0f;
    return false;  // the hint shrinks to "(?)" instead
}

}  // namespace

int FigureToolbarLines(const FigurePanelState& st, const QuantView& qv, float width, const std::string& note) {
    float end_x = 0.0f;
    const int lines = Flow(ItemWidths(qv, width), width, nullptr, &end_x);
    return lines + (TailOnOwnLine(TailText(st, qv, note), note, end_x, width) ? 1 : 0);
}

void DrawFigureToolbar(FigurePanelState& st, const QuantView& qv, float width, const std::string& note) {
    FigurePanelSettings& set = st.settings;
    std::vector<bool> wrap;
    float end_x = 0.0f;
    Flow(ItemWidths(qv, width), width, &wrap, &end_x);
    std::size_t item = 0;
    auto next = [&] {
        if (item > 0 && !wrap[item]) ImGui::SameLine();
        ++item;
    };
    next();
    ImGui::BeginDisabled(set.lesson_look);
    ImGui::SetNextItemWidth(ComboWidth(7.0f, "Colormap", width));
    if (ImGui::BeginCombo("Colormap", ColormapName(set.colormap))) {
        for (int i = 0; i < kColormapCount; ++i) {
            const Colormap m = static_cast<Colormap>(i);
            if (m == Colormap::White) continue;  // only meaningful with printed values: that is the lesson look
            if (ImGui::Selectable(ColormapName(m), m == set.colormap)) set.colormap = m;
        }
        ImGui::EndCombo();
    }
    ImGui::EndDisabled();
    next();
    ImGui::Checkbox("Lesson look", &set.lesson_look);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The lessons' plot_quantization_errors: original and error white with printed values,\n"
                          "quantized and dequantized in coolwarm.");
    next();
    ImGui::SetNextItemWidth(LayoutComboWidth());
    // Auto names what it chose, so the combo never says one layout while the panels show the other.
    const std::string auto_label = std::string("auto (") + (st.used_grid ? "2x2" : "1x4") + ")";
    const int mode = static_cast<int>(set.layout);
    if (ImGui::BeginCombo("Layout", mode == 0 ? auto_label.c_str() : kLayoutLabels[mode])) {
        for (int i = 0; i < 3; ++i)
            if (ImGui::Selectable(i == 0 ? auto_label.c_str() : kLayoutLabels[i], i == mode)) set.layout = static_cast<FigureLayoutMode>(i);
        ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("1x4: the four panels in a row; 2x2: a grid, twice the width each (a projector's large text);\n"
                          "auto: the grid when a row would leave the images narrower than their colorbars.");
    next();
    ImGui::Checkbox("Shared range", &set.shared_range);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Original and dequantized use one color scale: same color, same value.");
    next();
    ImGui::SetNextItemWidth(ComboWidth(5.0f, "Values", width));
    int ann = static_cast<int>(set.annotate);
    if (ImGui::Combo("Values", &ann, kAnnotateNames, 3)) set.annotate = static_cast<AnnotateMode>(ann);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("auto: the values at the text size where they fit their cells; on: shrunk to fit; off: none");
    if (qv.data->rank() == 3) {
        next();
        ImGui::SetNextItemWidth(ComboWidth(8.0f, "Slice", width));
        SafeSliderInt("Slice", &st.slice, 0, qv.data->slices() - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Index along axis 0 (of %lld)", static_cast<long long>(qv.data->slices()));
    }
    next();
    const bool full = IsFullView(st.view, qv.data->rows(), qv.data->cols());
    ImGui::BeginDisabled(full);
    if (ImGui::Button("Reset zoom")) st.view.reset();
    ImGui::EndDisabled();

    const std::string tail = TailText(st, qv, note);
    if (!TailOnOwnLine(tail, note, end_x, width)) ImGui::SameLine();
    const float avail = ImGui::GetContentRegionAvail().x;
    if (!note.empty()) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(WarningColor()));
    else ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (ImGui::CalcTextSize(tail.c_str()).x <= avail) {
        ImGui::TextUnformatted(tail.c_str());
    } else if (!note.empty()) {
        ImGui::TextUnformatted(FitText(tail, avail).c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tail.c_str());
    } else {
        // The hint only where it fits on the line; otherwise a "(?)" that shows it on hover.
        ImGui::TextUnformatted("(?)");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tail.c_str());
    }
    ImGui::PopStyleColor();
}

}  // namespace qs::gui
