#include "gui/panels/presenter_view.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "gui/panels/figure_cover.hpp"
#include "gui/panels/metrics_panel.hpp"
#include "gui/widgets/heatmap.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {
namespace {

// Printed values are wider than tall: cells may stretch this far from square to make room for them.
constexpr float kPresenterCellAspect = 2.5f;

// The image size one panel gets with `columns` x `rows` panels in `size`.
ImVec2 PanelImage(const QuantView& view, ImVec2 size, int columns, int rows) {
    const float font = ImGui::GetFontSize();
    const float gap = std::round(font);
    const float title_h = std::round(ImGui::GetTextLineHeight() * 1.6f);
    const float col_w = (size.x - gap * static_cast<float>(columns - 1)) / static_cast<float>(columns);
    const float row_h = size.y / static_cast<float>(rows) - title_h;
    return HeatmapImageSize(view.data->rows(), view.data->cols(), ImVec2(col_w, std::max(row_h, 1.0f)),
                            HeatmapColorbarWidth(), FigureCellAspect(view.data->rows(), view.data->cols(), kPresenterCellAspect));
}

// The metrics strip's items: they wrap as wholes (ImGui's wrap would split "1.57297" at its dot); the
// per-block lists are items of their own, and one still wider than `width` is shortened at a word (the normal
// layout's metrics table has them whole).
std::vector<std::string> SummaryItems(const std::string& summary, float width) {
    std::vector<std::string> items;
    for (std::size_t at = 0; at < summary.size();) {
        std::size_t gap = summary.find("   ", at);
        const std::size_t list = summary.find(",  ", at);
        std::size_t next = gap == std::string::npos ? std::string::npos : summary.find_first_not_of(' ', gap);
        if (list != std::string::npos && list < gap) {
            gap = list;
            next = summary.find_first_not_of(' ', list + 1);
        }
        std::string item = summary.substr(at, gap == std::string::npos ? std::string::npos : gap - at);
        if (ImGui::CalcTextSize(item.c_str()).x > width) item = FitText(item, width);
        if (!item.empty()) items.push_back(item);
        if (next == std::string::npos) break;
        at = next;
    }
    return items;
}

// The metrics strip's height at `width`, at the current text size: exactly what DrawWrappedParts takes.
float MetricsHeight(const std::string& summary, float width) {
    return WrappedPartsHeight(SummaryItems(summary, width), width, nullptr);
}

// The presenter's note under the metrics strip while the cells are too small for their values (annotate is
// not off): as last drawn, the figure says.
bool ValuesHidden(const FigurePanelState& figure) {
    return figure.annotation_size <= 0.0f && figure.settings.annotate != AnnotateMode::Off;
}

std::string HiddenNote(const QuantView& view) {
    char note[160];
    std::snprintf(note, sizeof note, "values hidden: %lld x %lld cells are too small for their text; zoom in (wheel)",
                  static_cast<long long>(view.data->rows()), static_cast<long long>(view.data->cols()));
    return note;
}

const std::string& CachedSummary(PresenterViewState& st, const QuantView& view, const Covers& covers) {
    const bool same_covers = st.covers.panels == covers.panels && st.covers.code == covers.code;
    if (view.generation == 0 || st.generation != view.generation || st.font != ImGui::GetFont() || !same_covers) {
        st.summary = MetricsSummary(view, true, covers);  // R shows what the step covered
        st.covers = covers;
        st.generation = view.generation;
        st.font = ImGui::GetFont();
        ++st.builds;
    }
    return st.summary;
}

bool UsesGrid(const QuantView& view, const std::string& summary, ImVec2 size) {
    // The figure panel's own pipeline lines (two and a gap) and the metrics strip come off the height.
    const float strip = ImGui::GetTextLineHeightWithSpacing() * 2.0f + ImGui::GetFontSize() + MetricsHeight(summary, size.x);
    const ImVec2 figure(size.x, std::max(size.y - strip, 1.0f));
    const ImVec2 row = PanelImage(view, figure, 4, 1), grid = PanelImage(view, figure, 2, 2);
    return grid.x * grid.y > row.x * row.y;
}

}  // namespace

bool PresenterUsesGrid(const QuantView& view, ImVec2 size) {
    return view.valid() && UsesGrid(view, MetricsSummary(view, true), size);
}

namespace {

// Up to this many cells a side no slice is reduced, so no caption row is needed under the images.
constexpr std::int64_t kCaptionlessCells = 256;
// Printed values below this size are not worth a projector; the UI text shrinks before the values would.
constexpr float kPresenterMinValuePx = 11.0f;
// The steps the titles, colorbars, trace and metrics may shrink by to give a big tensor's cells room, down to
// kMinChromePx: at font scale 3 a 16 x 16 tensor's values fit a 1280 x 720 screen only with smaller titles.
constexpr float kChromeScales[] = {1.0f, 0.85f, 0.72f, 0.6f, 0.5f, 0.42f, 0.35f, 0.3f, 0.25f};
constexpr float kMinChromePx = 13.0f;

struct PresenterChoice {
    float scale = 1.0f;
    FigureLook look;  // the figure's look for a projector, with the layout chosen
    float score = 0.0f;
};

// The figure's look for a projector: cells that stretch for their values, big text in a cell with a small
// margin (a projector's rows are few), no toolbar, the followed element's pipeline always. The caption row says
// what a pixel stands for: only a big tensor, reduced to fit, needs it (the colorbars' legends are then in their
// tooltips: a projector's rows are better spent on the values).
FigureLook PresenterLook(const QuantView& view, bool trace) {
    FigureLook look;
    look.max_cell_aspect = kPresenterCellAspect;
    look.annotation_height_share = 0.7f;
    look.annotation_rule = AnnotationRule::Fill;
    look.annotation_min_px = kPresenterMinValuePx;
    look.toolbar = false;
    look.force_pipeline = trace;
    look.hide_pipeline = !trace;
    look.captions = view.data->rows() > kCaptionlessCells || view.data->cols() > kCaptionlessCells;
    return look;
}

// The text scale and layout that print the values biggest while the text around them stays as big as it
// can: the largest min(value size, text size); a tie keeps the larger text. Score 0: the values fit nowhere.
PresenterChoice ChoosePresenterLayout(FigurePanelState& figure, const QuantView& view, const std::string& summary,
                                      ImVec2 size, float max_scale, bool trace) {
    const float font = ImGui::GetFontSize();
    const FigureLook presenter = PresenterLook(view, trace);
    PresenterChoice best;
    best.scale = std::min(1.0f, max_scale);
    best.look = presenter;
    best.look.captions = true;  // where no layout prints the values, the caption rows stay
    best.look.layout = UsesGrid(view, summary, size) ? FigureLayoutMode::Grid : FigureLayoutMode::Row;
    // Where no layout prints the values (a 4 x 256 row): the largest text at which the figure's titles, strip
    // and trace leave its images room, in the layout with the bigger images, and at which the images keep at
    // least half the largest area any text size gives them: else, at a projector's font, the chrome of a 2 x 2
    // grid left no room and four in a row made a strip's bands a few pixels each.
    PresenterChoice smallest;
    smallest.scale = best.scale;
    struct Fitting {
        PresenterChoice choice;
        float area;
    };
    // Largest text first; at most one per scale and layout (a fixed array: this runs every frame).
    std::array<Fitting, std::size(kChromeScales) * 2> fitting;
    std::size_t fitted = 0;
    for (float scale : kChromeScales) {
        if (scale > max_scale + 1e-3f) continue;  // text no larger than the caller's (a slide's tab under the figure)
        if (scale < 1.0f && font * scale < kMinChromePx) break;
        ImGui::SetWindowFontScale(scale);
        const ImVec2 area(size.x, std::max(size.y - MetricsHeight(summary, size.x), 1.0f));
        for (FigureLayoutMode layout : {FigureLayoutMode::Grid, FigureLayoutMode::Row}) {
            FigureLook look = presenter;
            look.layout = layout;
            const float ann = FigureAnnotationSize(figure, view, area, look);
            const float score = ann >= kPresenterMinValuePx ? std::min(ann, font * scale) : 0.0f;
            if (score > best.score * 1.1f + 0.5f) best = PresenterChoice{scale, look, score};
            look.captions = true;  // as best's: the values are not printed, so the caption says why
            const FigureFit fit = FigureFitIn(figure, view, area, look);
            if (layout == FigureLayoutMode::Grid || fit.heat_room > 0.0f) smallest = PresenterChoice{scale, look, 0.0f};
            if (fit.heat_room >= 16.0f && fit.image.x * fit.image.y > 0.0f)
                fitting[fitted++] = Fitting{PresenterChoice{scale, look, 0.0f}, fit.image.x * fit.image.y};
        }
    }
    ImGui::SetWindowFontScale(1.0f);
    if (best.score <= 0.0f && fitted > 0) {
        float most = 0.0f;
        for (std::size_t i = 0; i < fitted; ++i) most = std::max(most, fitting[i].area);
        const Fitting* pick = nullptr;
        for (std::size_t i = 0; i < fitted; ++i) {
            const Fitting& f = fitting[i];
            if (pick && f.choice.scale != pick->choice.scale) break;  // the largest text that qualifies
            if (f.area >= 0.5f * most && (!pick || f.area > pick->area)) pick = &f;
        }
        return pick->choice;
    }
    // Room for nothing at any text size (a short area): the smallest text, which overflows least.
    if (best.score <= 0.0f) return smallest;
    return best;
}

}  // namespace

float PresenterMinHeight(PresenterViewState& state, FigurePanelState& figure, const QuantView& view, float width, float scale,
                         bool trace) {
    if (!view.valid()) return 0.0f;
    const std::string& summary = CachedSummary(state, view, FigureCoversOf(figure));
    ImGui::SetWindowFontScale(scale);
    FigureLook look = PresenterLook(view, trace);
    look.captions = true;  // as the layout's choice keeps them where the values are not printed
    float least = 0.0f;
    for (FigureLayoutMode layout : {FigureLayoutMode::Grid, FigureLayoutMode::Row}) {
        look.layout = layout;
        const float h = FigurePanelMinHeight(figure, view, width, look);
        least = layout == FigureLayoutMode::Grid ? h : std::min(least, h);
    }
    least += MetricsHeight(summary, width);
    ImGui::SetWindowFontScale(1.0f);
    return least;
}

void DrawPresenterView(PresenterViewState& state, FigurePanelState& figure, const QuantView& view, ImVec2 size, float max_scale,
                       bool trace) {
    if (!view.valid()) {
        ImGui::TextDisabled("Nothing to show yet: load or generate a tensor (F5 leaves presenter mode).");
        return;
    }
    const std::string& summary = CachedSummary(state, view, FigureCoversOf(figure));
    const PresenterChoice choice = ChoosePresenterLayout(figure, view, summary, size, max_scale, trace);
    ImGui::SetWindowFontScale(choice.scale);
    const float figure_h = std::max(size.y - MetricsHeight(summary, size.x), 1.0f);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    DrawFigurePanel(figure, view, ImVec2(size.x, figure_h), choice.look);
    state.text_scale = choice.scale;
    // The metrics strip right under what the figure drew (its images may be shorter than the room: a wide
    // tensor's cells stretch only so far), the slide's empty room under it all.
    ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + std::min(figure.used_height, figure_h)));
    const std::vector<std::string> items = SummaryItems(summary, size.x);
    DrawWrappedParts(items, size.x, -1, nullptr);
    if (trace && ValuesHidden(figure)) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces(HiddenNote(view));
        ImGui::PopStyleColor();
    }
    // The caller's layout goes on where it did when the strip ended the whole `size` (the figure's item and the
    // strip's each end with the item spacing): a slide's tab under it stays where it was.
    const float spacing = ImGui::GetStyle().ItemSpacing.y;
    const float end = origin.y + size.y + 2.0f * spacing;
    if (ImGui::GetCursorScreenPos().y < end) {
        ImGui::SetCursorScreenPos(ImVec2(origin.x, ImGui::GetCursorScreenPos().y));
        ImGui::Dummy(ImVec2(1.0f, end - ImGui::GetCursorScreenPos().y - spacing));
    }
    ImGui::SetWindowFontScale(1.0f);
}

}  // namespace qs::gui
