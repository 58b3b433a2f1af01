#include "gui/panels/figure_cover.hpp"

#include <algorithm>
#include <cfloat>

#include "gui/widgets/palette.hpp"

namespace qs::gui {
namespace {

// `text` centred in [a, b], at most the box's height (a single "?" in a small cell).
void CenteredText(ImDrawList* dl, ImVec2 a, ImVec2 b, const char* text, float max_size) {
    ImFont* font = ImGui::GetFont();
    const float size = std::min(max_size, (b.y - a.y) * 0.8f);
    if (size < 4.0f) return;
    const ImVec2 ts = font->CalcTextSizeA(size, b.x - a.x, 0.0f, text);
    dl->AddText(font, size, ImVec2(a.x + (b.x - a.x - ts.x) * 0.5f, a.y + (b.y - a.y - ts.y) * 0.5f),
                palette::kCoverText, text);
}

}  // namespace

void DrawFigureNote(const HeatmapResult& r, ImVec2 column_max, const std::string& text, const std::string& short_text) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    // Half a line beyond the image, as a cover: the colorbar's tick labels would be codes.
    const ImVec2 a(r.image_min.x, r.image_min.y - font * 0.5f), b(std::max(column_max.x, r.image_max.x), r.image_max.y + font * 0.5f);
    if (b.x - a.x < font || b.y - a.y < font) return;
    dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_WindowBg));
    dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Border));
    const float wrap = std::max(font, b.x - a.x - font);
    // The whole text where it fits, else the short one (a thin panel: a 1-D tensor), clipped to the box.
    const std::string& shown = ImGui::GetFont()->CalcTextSizeA(font, FLT_MAX, wrap, text.c_str()).y <= b.y - a.y ? text : short_text;
    const ImVec2 ts = ImGui::GetFont()->CalcTextSizeA(font, FLT_MAX, wrap, shown.c_str());
    dl->PushClipRect(a, b, true);
    dl->AddText(ImGui::GetFont(), font, ImVec2(a.x + std::max(0.0f, (b.x - a.x - ts.x) * 0.5f), a.y + std::max(0.0f, (b.y - a.y - ts.y) * 0.5f)),
                ImGui::GetColorU32(ImGuiCol_Text), shown.c_str(), nullptr, wrap);
    dl->PopClipRect();
}

bool FigureCovers(const FigurePanelState& st, int panel, std::int64_t flat) {
    if (panel < 0 || panel > 3) return false;
    return st.covered[static_cast<std::size_t>(panel)] || (flat >= 0 && flat == st.covered_code && panel != kOriginal);
}

Covers FigureCoversOf(const FigurePanelState& st) {
    Covers c;
    c.panels = st.covered;
    c.code = st.covered_code;
    return c;
}

bool FigureHidesPipeline(const FigurePanelState& st, std::int64_t flat) { return FigureCoversOf(st).hides_pipeline(flat); }

bool FigureCoversAnything(const FigurePanelState& st) { return FigureCoversOf(st).any(); }

void DrawFigureCover(const FigurePanelState& st, int panel, const HeatmapResult& r, const HeatmapView& view,
                     std::int64_t cols, std::int64_t slice_offset, ImVec2 column_max) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float font = ImGui::GetFontSize();
    if (st.covered[static_cast<std::size_t>(panel)]) {
        // Up to half a line above the image: the colorbar's top tick label would tell the largest code.
        const ImVec2 a(r.image_min.x, r.image_min.y - font * 0.5f), b(std::max(column_max.x, r.image_max.x), r.image_max.y + font * 0.5f);
        dl->AddRectFilled(a, b, palette::kCover);
        const ImVec2 mid(a.x, (a.y + b.y) * 0.5f);
        CenteredText(dl, a, ImVec2(b.x, mid.y + font), "?", font * 4.0f);
        CenteredText(dl, ImVec2(a.x, mid.y + font), b, "predict, then R", font);
        return;
    }
    if (st.covered_code < 0 || panel == kOriginal || cols < 1 || view.empty()) return;
    const std::int64_t local = st.covered_code - slice_offset;
    if (local < 0) return;
    const double row = static_cast<double>(local / cols), col = static_cast<double>(local % cols);
    if (row < view.y0 || row + 1 > view.y1 + 1e-9 || col < view.x0 || col + 1 > view.x1 + 1e-9) return;
    const float cw = (r.image_max.x - r.image_min.x) / static_cast<float>(view.x1 - view.x0);
    const float ch = (r.image_max.y - r.image_min.y) / static_cast<float>(view.y1 - view.y0);
    const ImVec2 a(r.image_min.x + static_cast<float>(col - view.x0) * cw, r.image_min.y + static_cast<float>(row - view.y0) * ch);
    const ImVec2 b(a.x + cw, a.y + ch);
    dl->AddRectFilled(a, b, palette::kCover);
    CenteredText(dl, a, b, "?", font * 2.0f);
}

}  // namespace qs::gui
