#include "gui/panels/importance_strip.hpp"

#include <algorithm>
#include <cmath>

#include "gui/widgets/colormap.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {

namespace {

float LargestWeight(const std::vector<float>& weights) {
    float top = 0.0f;
    for (float w : weights) top = std::max(top, w);
    return top;
}

}  // namespace

float ImportanceStripHeight(const QuantView& qv) {
    if (!qv.valid() || !qv.config->importance) return 0.0f;
    return std::round(ImGui::GetTextLineHeight() * 0.6f) + 2.0f;
}

std::string ImportanceScaleLabel(const std::vector<float>& weights) {
    return "importance 0 to " + FormatNumber(LargestWeight(weights)) + " (viridis)";
}

void DrawImportanceStrip(const std::vector<float>& weights, HeatmapView view, std::int64_t rows, std::int64_t cols,
                         ImVec2 image_min, ImVec2 image_max, float y0, float y1, float right, bool label) {
    if (weights.empty() || cols != static_cast<std::int64_t>(weights.size()) || !(image_max.x > image_min.x)) return;
    ClampView(view, rows, cols);
    const ColorLut& lut = GetColormapLut(Colormap::Viridis);
    const ColorNorm norm = ColorNorm::Linear(0.0, LargestWeight(weights));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const double width = image_max.x - image_min.x, per_px = (view.x1 - view.x0) / width;
    // One rectangle per screen column of pixels (columns narrower than a pixel: the one under its left edge).
    const int pixels = static_cast<int>(std::ceil(width));
    for (int px = 0; px < pixels; ++px) {
        const std::int64_t c = std::clamp<std::int64_t>(static_cast<std::int64_t>(view.x0 + (px + 0.5) * per_px), 0, cols - 1);
        const float x0 = image_min.x + static_cast<float>(px), x1 = std::min(x0 + 1.0f, image_max.x);
        dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), MapValue(lut, norm, weights[static_cast<std::size_t>(c)]));
    }
    if (ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(ImVec2(image_min.x, y0), ImVec2(image_max.x, y1))) {
        const double at = view.x0 + (ImGui::GetMousePos().x - image_min.x) * per_px;
        const std::int64_t c = std::clamp<std::int64_t>(static_cast<std::int64_t>(at), 0, cols - 1);
        ImGui::SetTooltip("column %lld: importance %s\n%s", static_cast<long long>(c),
                          FormatNumber(weights[static_cast<std::size_t>(c)]).c_str(), ImportanceScaleLabel(weights).c_str());
    }
    if (!label) return;
    const std::string text = FitText(ImportanceScaleLabel(weights), right - image_max.x - 4.0f);
    if (text.empty()) return;
    const float ty = std::round((y0 + y1) * 0.5f - ImGui::GetTextLineHeight() * 0.5f);
    dl->AddText(ImVec2(image_max.x + 4.0f, ty), ImGui::GetColorU32(ImGuiCol_TextDisabled), text.c_str());
}

}  // namespace qs::gui
