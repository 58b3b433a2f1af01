#include "gui/panels/figure_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "quantscope/histogram.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/quantize.hpp"
#include "gui/panels/figure_cover.hpp"
#include "gui/panels/block_strip.hpp"
#include "gui/panels/figure_styles.hpp"
#include "gui/panels/figure_pipeline.hpp"
#include "gui/panels/figure_toolbar.hpp"
#include "gui/panels/figure_tooltip.hpp"
#include "gui/panels/importance_strip.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"

namespace qs::gui {
namespace {

// A strip's image spans at least this share of its panel's long side (FigureCellAspect, NaturalHeatHeight).
constexpr double kStripShare = 0.3;

// One drawing's look, and the user's settings as it answers them (FigureLook's overrides applied).
struct Look {
    const FigureLook& look;
    FigurePanelSettings set;
    Look(const FigurePanelState& st, const FigureLook& l) : look(l), set(st.settings) {
        if (!l.toolbar) set.show_toolbar = false;
        if (l.force_pipeline) set.show_pipeline = true;
        if (l.hide_pipeline) set.show_pipeline = false;
        if (l.layout != FigureLayoutMode::Auto) set.layout = l.layout;
    }
};

struct FigureLayout {
    float toolbar_h = 0, title_h = 0, caption_h = 0, strip_h = 0, pipeline_h = 0, gap = 0, col_w = 0;
    float importance_h = 0;  // the importance strip at the bottom of the title row (part of title_h), 0: none
    float legend_h = 0;  // no caption rows (presenter mode): the colorbars' legend under the images
    int columns = 4;  // 4 in a row, or 2 x 2
    int rows = 1;
};

// An image's natural height over its width: the tensor's rows over columns, a strip's kStripShare at least,
// at most square.
float NaturalHeatRatio(const QuantView& qv) {
    const float ratio = static_cast<float>(qv.data->rows()) / static_cast<float>(std::max<std::int64_t>(qv.data->cols(), 1));
    return std::clamp(ratio, static_cast<float>(kStripShare), 1.0f);
}

// `caption_lines` under each image: what one pixel stands for (or that values are hidden), and the legend of
// a diverging colorbar.
FigureLayout ComputeLayout(const FigurePanelState& st, const Look& lk, const QuantView& qv, float width, int caption_lines = 1,
                           const std::string& note = {}, FigureLayoutMode mode = FigureLayoutMode::Auto) {
    FigureLayout l;
    const ImGuiStyle& style = ImGui::GetStyle();
    if (lk.set.show_toolbar) {
        const int lines = qv.valid() ? FigureToolbarLines(st, qv, width, note) : 1;
        l.toolbar_h = ImGui::GetFrameHeightWithSpacing() * static_cast<float>(lines) + style.ItemSpacing.y;
    }
    l.importance_h = ImportanceStripHeight(qv);
    l.title_h = std::round(ImGui::GetTextLineHeight() * 1.6f) + l.importance_h;
    l.caption_h = lk.look.captions ? std::round(ImGui::GetTextLineHeight() * (1.3f + 1.1f * static_cast<float>(caption_lines - 1)))
                              : 0.0f;
    l.strip_h = lk.look.block_strip && qv.valid() ? BlockStripHeight(qv) : 0.0f;
    l.pipeline_h = lk.set.show_pipeline ? std::round(ImGui::GetTextLineHeightWithSpacing() * 2.0f + ImGui::GetFontSize()) : 0.0f;
    if (lk.set.show_pipeline && st.selected >= 0) {
        // A selected element's steps at a projector's text size take more than two lines: room for all.
        const std::vector<std::string> parts = SelectedPipelineParts(st, qv, nullptr);
        if (!parts.empty())
            l.pipeline_h = std::max(l.pipeline_h, std::round(WrappedPartsHeight(parts, width, Symbols().arrow) + ImGui::GetFontSize()));
    }
    l.gap = std::round(ImGui::GetFontSize() * 1.0f);
    l.col_w = std::max(16.0f, std::floor((width - 3.0f * l.gap) / 4.0f));
    // Large text (a projector's font scale) or a narrow window: the colorbar labels would take most of a
    // quarter of the width and leave thumbnails.
    if (mode == FigureLayoutMode::Auto) mode = lk.set.layout;
    // So does a strip four in a row at such a size: its band (kStripShare of the image's width) would be thinner
    // than two lines of text.
    const float row_image_w = l.col_w - HeatmapColorbarWidth();
    const bool row_thumbnails = row_image_w < 0.4f * l.col_w || (qv.valid() && NaturalHeatRatio(qv) * row_image_w < 2.0f * ImGui::GetTextLineHeight());
    if (mode == FigureLayoutMode::Grid || (mode == FigureLayoutMode::Auto && row_thumbnails)) {
        l.columns = 2;
        l.rows = 2;
        l.col_w = std::max(16.0f, std::floor((width - l.gap) / 2.0f));
    }
    return l;
}

}  // namespace

namespace {

// The four panels' data for slice `st.slice`: the original, the codes, r' and the error.
std::array<HeatmapSource, 4> PanelSources(FigurePanelState& st, const QuantView& qv) {
    st.tiles.bind(qv, st.slice);
    std::array<HeatmapSource, 4> src;
    for (int i = 0; i < 4; ++i) {
        src[i].tiles = st.tiles.tiles(i);
        src[i].rows = qv.data->rows();
        src[i].cols = qv.data->cols();
    }
    if (qv.params->block_count == 1 && is_int_format(qv.config->format)) {
        // r' = s (q - z) element by element (float32 s and z, as the quantizer uses them): the dequantized
        // panel is the quantized panel's reduction mapped, not a second pass over 4 bytes an element.
        const double s = static_cast<float>(qv.params->scale[0]);
        const double z = static_cast<float>(qv.params->zero_point[0]);
        src[kDequantized].derive_from = &st.maps[kQuantized];
        src[kDequantized].derive_scale = s;
        src[kDequantized].derive_offset = -s * z;
    }
    return src;
}

// One colorbar width and one annotation size for the four panels: the images line up and the numbers read
// alike from panel to panel. Returns the annotation size (0: values hidden).
float ShareColorbarAndAnnotation(PanelStyles& ps, const std::array<HeatmapSource, 4>& src, const HeatmapView& view,
                                 ImVec2 panel, std::int64_t rows, std::int64_t cols, std::array<bool, 4>* printed = nullptr) {
    float cb_w = 0.0f;
    for (const HeatmapStyle& s : ps.styles) cb_w = std::max(cb_w, HeatmapColorbarWidth(s, panel.y));
    const ImVec2 img = HeatmapImageSize(rows, cols, panel, cb_w, ps.styles[0].max_cell_aspect);
    const ImVec2 cell_px(img.x / static_cast<float>(view.x1 - view.x0), img.y / static_cast<float>(view.y1 - view.y0));
    float ann = 0.0f;
    for (int i = 0; i < 4; ++i) {
        const float a = HeatmapAnnotationSize(src[i], ps.styles[i], view, cell_px);
        if (a > 0.0f) ann = ann > 0.0f ? std::min(ann, a) : a;
        if (printed) (*printed)[i] = a > 0.0f;
    }
    for (HeatmapStyle& s : ps.styles) {
        s.colorbar_width = cb_w;
        s.annotation_size = ann;
    }
    return ann;
}

// The line under an image: what one pixel stands for when the slice is reduced to fit (a grey square of
// averaged noise would read as "all zeros"), or that the values do not fit their cells at this text size.
// Shortened at a word with the whole line in a tooltip when the column is narrow.
void DrawCaptionLine(const std::string& text, const std::string& short_text, float center_x, float x, float col_w, float y) {
    std::string shown = ImGui::CalcTextSize(text.c_str()).x <= col_w ? text : FitText(short_text, col_w);
    const ImVec2 cs = ImGui::CalcTextSize(shown.c_str());
    const float cx = std::round(std::clamp(center_x - cs.x * 0.5f, x, std::max(x, x + col_w - cs.x)));
    ImGui::GetWindowDrawList()->AddText(ImVec2(cx, std::round(y)), ImGui::GetColorU32(ImGuiCol_TextDisabled), shown.c_str());
    if (shown != text && ImGui::IsMouseHoveringRect(ImVec2(cx, y), ImVec2(cx + cs.x, y + cs.y)) && ImGui::IsWindowHovered())
        ImGui::SetTooltip("%s", text.c_str());
}

std::string ReductionCaption(const HeatmapState& hs, int panel) {
    char cap[96];
    std::snprintf(cap, sizeof cap, "1 px = %s of %lld%s%lld cells", panel == kError ? "max" : "mean",
                  static_cast<long long>(hs.fy), Symbols().times, static_cast<long long>(hs.fx));
    return cap;
}

// The title centered over the image, like a matplotlib axes title; over the column if it is wider. A title
// wider than its column is shortened at a word with "..." (hover for all of it), never cut mid-word.
void DrawPanelTitle(const std::string& title, const HeatmapResult& r, float x, float col_w, float top, float title_h) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const std::string shown = FitText(title, col_w);
    const ImVec2 ts = ImGui::CalcTextSize(shown.c_str());
    float tx = (r.image_min.x + r.image_max.x) * 0.5f - ts.x * 0.5f;
    tx = std::round(std::clamp(tx, x, std::max(x, x + col_w - ts.x)));
    const float ty = std::round(top - title_h * 0.5f - ts.y * 0.5f - 1.0f);
    dl->AddText(ImVec2(tx, ty), ImGui::GetColorU32(ImGuiCol_Text), shown.c_str());
    if (shown != title && ImGui::IsMouseHoveringRect(ImVec2(tx, ty), ImVec2(tx + ts.x, ty + ts.y)) && ImGui::IsWindowHovered())
        ImGui::SetTooltip("%s", title.c_str());
}

}  // namespace

namespace {

// Everything a frame of the figure decides before drawing: the layout, the panels' styles and data, and the
// one size their values are printed at.
struct FigureFrame {
    FigureLayout l;
    float heat_h = 0.0f;
    PanelStyles ps;
    std::array<HeatmapSource, 4> src;
    float annotation = 0.0f;
    bool legends = false;  // a diverging colorbar that gets its one-line legend
    std::string note;      // the toolbar's "values hidden" note (empty: none)
    FigureLayoutMode mode = FigureLayoutMode::Auto;  // Auto: the settings' layout
    std::array<bool, 4> printed{true, true, true, true};  // FontSize rule: which panels print their values
    int printed_count() const { return static_cast<int>(std::count(printed.begin(), printed.end(), true)); }
};

// Whether panel i's values (i < 0: any panel's) are hidden because they do not fit at the text size.
bool ValuesHidden(const Look& lk, const FigureFrame& f, int i = -1) {
    if (lk.set.annotate == AnnotateMode::Off || lk.look.annotation_rule != AnnotationRule::FontSize) return false;
    if (f.annotation <= 0.0f) return true;
    return i < 0 ? f.printed_count() < 4 : !f.printed[static_cast<std::size_t>(i)];
}

// "values hidden: 64x64 cells are too small for this text size; zoom in (wheel) or F5: presenter", or which
// panels hide them when the others print theirs (a code fits a cell where "-184.00" does not).
std::string HiddenNote(const QuantView& qv, const FigureFrame& f, bool long_form) {
    const std::string n = FormatInteger(static_cast<double>(qv.data->rows())) + Symbols().times +
                          FormatInteger(static_cast<double>(qv.data->cols()));
    std::string where = "values hidden";
    if (f.annotation > 0.0f) {
        const char* names[4] = {"original", "quantized", "dequantized", "error"};
        where.clear();
        for (int i = 0; i < 4; ++i)
            if (!f.printed[static_cast<std::size_t>(i)]) where += std::string(where.empty() ? "" : ", ") + names[i];
        where += " values hidden";
    }
    return long_form ? where + ": " + n + " cells are too narrow for this text size; zoom in (wheel) or F5: presenter"
                     : where + ": " + n + " cells, zoom in or F5";
}

// The panels' height, styles and printed size for the frame's layout.
void FillFrame(FigurePanelState& st, const Look& lk, const QuantView& qv, ImVec2 size, FigureFrame& f) {
    const std::int64_t rows = qv.data->rows(), cols = qv.data->cols();
    const FigureLayout& l = f.l;
    f.heat_h = std::max(16.0f, (size.y - l.toolbar_h - l.pipeline_h - l.strip_h - l.legend_h) / static_cast<float>(l.rows) -
                                   l.title_h - l.caption_h);
    f.src = PanelSources(st, qv);
    const ImVec2 panel(l.col_w, f.heat_h);
    if (lk.look.annotation_rule == AnnotationRule::Fill) {
        // Lesson look: white panels only while their printed values are readable (the heatmap's Auto rule).
        const float est_img_w =
            HeatmapImageSize(rows, cols, panel, HeatmapColorbarWidth(), FigureCellAspect(rows, cols, lk.look.max_cell_aspect)).x;
        const float est_cell_px = est_img_w / static_cast<float>(st.view.x1 - st.view.x0);
        f.ps = MakeStyles(st, lk.look, qv, est_cell_px >= 28.0f && lk.set.annotate != AnnotateMode::Off);
        f.annotation = ShareColorbarAndAnnotation(f.ps, f.src, st.view, panel, rows, cols);
    } else {
        // White panels exactly when the values are printed on them.
        f.ps = MakeStyles(st, lk.look, qv, lk.set.annotate != AnnotateMode::Off);
        f.annotation = ShareColorbarAndAnnotation(f.ps, f.src, st.view, panel, rows, cols, &f.printed);
        if (f.annotation <= 0.0f && lk.set.lesson_look) {
            f.ps = MakeStyles(st, lk.look, qv, false);
            f.annotation = ShareColorbarAndAnnotation(f.ps, f.src, st.view, panel, rows, cols, &f.printed);
        }
    }
    // An image that its width (or its cells' stretch) keeps shorter than the room: the row is as tall as the image,
    // so the grid's rows follow each other and what is under the images follows them (a 4 x 32 tensor's 2 x 2
    // grid on a projector left a band under each row: the room is the height shared out, the image kept to its
    // cells' stretch).
    const HeatmapStyle& s0 = f.ps.styles[0];
    const float image_h = HeatmapImageSize(rows, cols, panel, s0.colorbar_width, s0.max_cell_aspect).y;
    // (Under a pixel is the image's size rounded down, no band: an exported figure keeps its bytes.)
    if (image_h + 1.0f <= f.heat_h) f.heat_h = std::max(16.0f, image_h);
}

FigureFrame PrepareFigure(FigurePanelState& st, const Look& lk, const QuantView& qv, ImVec2 size, int caption_lines,
                          const std::string& note = {}, FigureLayoutMode mode = FigureLayoutMode::Auto) {
    FigureFrame f;
    f.note = note;
    f.mode = mode;
    f.l = ComputeLayout(st, lk, qv, size.x, caption_lines, note, mode);
    FillFrame(st, lk, qv, size, f);
    if (lk.look.colorbar_legends && lk.look.captions)
        for (const HeatmapStyle& s : f.ps.styles) f.legends = f.legends || HasCenteredLegend(s);
    if (lk.look.colorbar_legends && !lk.look.captions) {
        // No caption rows to put a legend under each bar: one legend for all of them under the images, on
        // screen (a class cannot hover a tooltip). Its room comes off the images, so the values' size knows it.
        const std::vector<std::string> parts = ColorbarLegendParts(f.ps, st.covered);
        if (!parts.empty()) {
            f.l.legend_h = std::round(WrappedPartsHeight(parts, size.x, nullptr));
            FillFrame(st, lk, qv, size, f);
        }
    }
    return f;
}

// The frame to draw: one caption line, or two where a legend and a reduction / hidden-values line both want one;
// with a toolbar, the note that values are hidden ends it (on a line of its own if it must). Each step only
// takes room, so values hidden at the first stay hidden: no layout hides values that another would print.
// In the window, Auto takes the row or the grid by which prints values in more panels (then by the colorbar rule).
FigureFrame PrepareFigure(FigurePanelState& st, const Look& lk, const QuantView& qv, ImVec2 size) {
    FigureFrame f = PrepareFigure(st, lk, qv, size, 1);
    if (lk.look.annotation_rule == AnnotationRule::FontSize && lk.set.layout == FigureLayoutMode::Auto &&
        lk.set.annotate != AnnotateMode::Off) {
        const FigureLayoutMode other = f.l.columns == 2 ? FigureLayoutMode::Row : FigureLayoutMode::Grid;
        FigureFrame g = PrepareFigure(st, lk, qv, size, 1, {}, other);
        const int fp = f.annotation > 0.0f ? f.printed_count() : 0, gp = g.annotation > 0.0f ? g.printed_count() : 0;
        if (gp > fp) f = std::move(g);
    }
    const bool hidden = ValuesHidden(lk, f);
    std::string note;
    if (hidden && lk.set.show_toolbar) {
        note = HiddenNote(qv, f, true);
        if (ImGui::CalcTextSize(note.c_str()).x > size.x) note = HiddenNote(qv, f, false);
    }
    bool reduced = false;
    for (const HeatmapState& m : st.maps) reduced = reduced || m.fx > 1 || m.fy > 1;
    const bool two_lines = f.legends && (reduced || (hidden && !lk.set.show_toolbar));
    if (!two_lines && note.empty()) return f;
    return PrepareFigure(st, lk, qv, size, two_lines ? 2 : 1, note, f.mode);
}

void PrepareState(FigurePanelState& st, const QuantView& qv) {
    const TensorData& t = *qv.data;
    st.slice = std::clamp<int>(st.slice, 0, static_cast<int>(t.slices()) - 1);
    if (st.selected >= t.numel()) st.selected = -1;
    ClampView(st.view, t.rows(), t.cols());
    UpdateRanges(st, qv);
}

// The captions under panel i: line one says what a pixel is or that the values are hidden; the legend of a
// diverging colorbar goes on the next line (or the first when that is free).
void DrawCaptions(const FigurePanelState& st, const Look& lk, const QuantView& qv, const FigureFrame& f, int i,
                  const HeatmapResult& r, float x) {
    const float line_h = ImGui::GetTextLineHeight() * 1.1f;
    float y = r.image_max.y + f.l.caption_h * 0.15f / (f.l.caption_h > ImGui::GetTextLineHeight() * 2.0f ? 2.0f : 1.0f);
    const float center = (r.image_min.x + r.image_max.x) * 0.5f;
    const HeatmapState& hs = st.maps[i];
    if (hs.fx > 1 || hs.fy > 1) {
        const std::string cap = ReductionCaption(hs, i);
        DrawCaptionLine(cap, cap, center, x, f.l.col_w, y);
        y += line_h;
    } else if (ValuesHidden(lk, f, i) && !lk.set.show_toolbar) {
        DrawCaptionLine(HiddenNote(qv, f, true), HiddenNote(qv, f, false), center, x, f.l.col_w, y);
        y += line_h;
    }
    const HeatmapStyle& s = f.ps.styles[i];
    if (f.legends && HasCenteredLegend(s) && !FigureCovers(st, i, -1) && y + line_h <= r.image_max.y + f.l.caption_h + 1.0f) {
        const float bar_center = std::min(r.image_max.x + s.colorbar_width * 0.5f, x + f.l.col_w);
        DrawCaptionLine(CenteredLegend(s, i, false), CenteredLegend(s, i, true), std::max(center, bar_center - f.l.col_w * 0.25f),
                        x, f.l.col_w, y);
    }
}

}  // namespace

float FigureAnnotationSize(FigurePanelState& st, const QuantView& qv, ImVec2 size, const FigureLook& look) {
    if (!qv.valid()) return 0.0f;
    PrepareState(st, qv);
    return PrepareFigure(st, Look(st, look), qv, size, 1).annotation;
}

FigureFit FigureFitIn(FigurePanelState& st, const QuantView& qv, ImVec2 size, const FigureLook& look) {
    FigureFit fit;
    if (!qv.valid()) return fit;
    PrepareState(st, qv);
    const FigureFrame f = PrepareFigure(st, Look(st, look), qv, size, 1);
    const FigureLayout& l = f.l;
    fit.heat_room = (size.y - l.toolbar_h - l.pipeline_h - l.strip_h - l.legend_h) / static_cast<float>(l.rows) - l.title_h -
                    l.caption_h;
    fit.image = HeatmapImageSize(qv.data->rows(), qv.data->cols(), ImVec2(l.col_w, f.heat_h), HeatmapColorbarWidth(),
                                 FigureCellAspect(qv.data->rows(), qv.data->cols(), look.max_cell_aspect));
    return fit;
}

float FigureCellAspect(std::int64_t rows, std::int64_t cols, float base) {
    const double r = static_cast<double>(std::max<std::int64_t>(rows, 1)), c = static_cast<double>(std::max<std::int64_t>(cols, 1));
    return std::max(base, static_cast<float>(kStripShare * std::max(r / c, c / r)));
}

namespace {

// The heatmaps' height for square-ish cells at this layout's column width.
float NaturalHeatHeight(const FigureLayout& l, const QuantView& qv) {
    return (l.col_w - HeatmapColorbarWidth()) * (qv.valid() ? NaturalHeatRatio(qv) : 1.0f);
}

}  // namespace

float FigurePanelMinHeight(FigurePanelState& st, const QuantView& qv, float width, const FigureLook& look) {
    const FigureLayout l = ComputeLayout(st, Look(st, look), qv, width);
    const float shrink = std::max(0.0f, NaturalHeatHeight(l, qv) - 3.0f * ImGui::GetTextLineHeightWithSpacing());
    return FigurePanelHeight(st, qv, width, look) - static_cast<float>(l.rows) * shrink;
}

float FigurePanelHeight(FigurePanelState& st, const QuantView& qv, float width, const FigureLook& look) {
    const Look lk(st, look);
    const FigureLayout l = ComputeLayout(st, lk, qv, width);
    const float base = l.toolbar_h + static_cast<float>(l.rows) * (l.title_h + NaturalHeatHeight(l, qv) + l.caption_h) + l.strip_h +
                       l.pipeline_h;
    if (!qv.valid()) return std::ceil(base);
    // What the frame at that height adds: the toolbar's line saying values are hidden, a caption's second line
    // (a diverging colorbar's legend under a reduction caption). Nothing for an exported figure.
    PrepareState(st, qv);
    const FigureLayout& t = PrepareFigure(st, lk, qv, ImVec2(width, base)).l;
    const float extra = (t.toolbar_h - l.toolbar_h) + static_cast<float>(t.rows) * (t.caption_h - l.caption_h) + t.legend_h;
    return std::ceil(base + std::max(0.0f, extra));
}

namespace {

// The four panels' titles as the lessons name them, and what a column too narrow for them shows instead
// (overlapping titles read as neither). The full title is also the heatmap's ImGui id.
struct PanelTitles {
    std::string full[4];
    std::string shown[4];
};

PanelTitles MakePanelTitles(const QuantView& qv, float col_w) {
    const bool int_type = is_int_format(qv.config->format);
    const std::string bits = std::to_string(qv.config->dtype.bits);
    const std::string format = format_name(qv.config->format);
    PanelTitles t{{"Original Tensor", int_type ? bits + "-bit Linear Quantized Tensor" : format + " Codes", "Dequantized Tensor",
                   "Quantization Error Tensor"},
                  {"Original", int_type ? bits + "-bit quantized" : format, "Dequantized", "Error"}};
    if (ShowsStoredValues(qv)) {
        // A Model-tab row against B's plain values: A, B (no codes), B's values, A - B.
        const std::string type = StoredTypeName(*qv.params->stored);
        t = PanelTitles{{"Original Tensor (A)", "B: " + type + " values, no codes", "B's " + type + " Values",
                         "Error |A - B|"},
                        {"A", "no codes", "B", "|A - B|"}};
    }
    bool short_needed = false;  // all four alike
    for (const std::string& title : t.full) short_needed |= ImGui::CalcTextSize(title.c_str()).x > col_w;
    if (!short_needed)
        for (int i = 0; i < 4; ++i) t.shown[i] = t.full[i];
    return t;
}

// Draws the four heatmaps with their covers, captions and titles; a click selects (or clears) an element,
// a hover shows its trace.
void DrawFigureHeatmaps(FigurePanelState& st, const Look& lk, const QuantView& qv, const FigureFrame& f, ImVec2 origin) {
    const FigureLayout& l = f.l;
    const std::int64_t cols = qv.data->cols(), slice_n = qv.data->rows() * cols;
    const std::int64_t off = static_cast<std::int64_t>(st.slice) * slice_n;
    const float heat_top = origin.y + l.toolbar_h + l.title_h;
    const float row_step = l.title_h + f.heat_h + l.caption_h;
    const PanelTitles titles = MakePanelTitles(qv, l.col_w);
    HeatmapCell selected;
    if (st.selected >= 0 && st.selected / slice_n == st.slice) {
        selected = HeatmapCell{(st.selected % slice_n) / cols, st.selected % cols};
    }
    std::int64_t hovered_flat = -1;
    int hovered_panel = -1;
    for (int i = 0; i < 4; ++i) {
        const float x = std::floor(origin.x + static_cast<float>(i % l.columns) * (l.col_w + l.gap));
        const float top = heat_top + static_cast<float>(i / l.columns) * row_step;
        ImGui::SetCursorScreenPos(ImVec2(x, top));
        // The original's data change only with the tensor: a new s or z recolors it at most.
        const std::uint64_t data_gen = i == kOriginal ? st.tensor_gen : qv.generation;
        const HeatmapResult r = DrawHeatmap(titles.full[i].c_str(), st.maps[i], f.src[i], data_gen, f.ps.styles[i], st.view,
                                            selected, ImVec2(l.col_w, f.heat_h));
        st.image_min[i] = r.image_min;
        st.image_max[i] = r.image_max;
        DrawFigureCover(st, i, r, st.view, cols, off, ImVec2(x + l.col_w, r.image_max.y));
        if (i == kQuantized && ShowsStoredValues(qv))
            DrawFigureNote(r, ImVec2(x + l.col_w, r.image_max.y),
                           "B stores " + StoredTypeName(*qv.params->stored) + " values, not codes: no quantized tensor to "
                           "show. Its values are the dequantized panel, |A - B| the error.",
                           "B: no codes");
        st.annotated_cells[i] = r.annotated;
        st.visible_cells[i] = r.visible;
        if (lk.look.captions) DrawCaptions(st, lk, qv, f, i, r, x);
        // The legend also on the colorbar itself.
        const HeatmapStyle& hs = f.ps.styles[i];
        if (lk.look.colorbar_legends && HasCenteredLegend(hs) && !FigureCovers(st, i, -1) && ImGui::IsWindowHovered() &&
            ImGui::IsMouseHoveringRect(ImVec2(r.image_max.x, r.image_min.y), ImVec2(r.image_max.x + hs.colorbar_width, r.image_max.y)))
            ImGui::SetTooltip("%s", CenteredLegend(hs, i, false).c_str());
        DrawPanelTitle(titles.shown[i], r, x, l.col_w, top - l.importance_h, l.title_h - l.importance_h);
        if (l.importance_h > 0.0f)
            DrawImportanceStrip(*qv.config->importance, st.view, qv.data->rows(), cols, r.image_min, r.image_max,
                                top - l.importance_h, top - 2.0f, x + l.col_w, i == 0);
        if (r.hovered.valid()) {
            hovered_flat = off + r.hovered.row * cols + r.hovered.col;
            hovered_panel = i;
        }
        if (r.clicked.valid()) {
            const std::int64_t flat = off + r.clicked.row * cols + r.clicked.col;
            st.selected = (flat == st.selected) ? -1 : flat;  // clicking the selection again clears it
        }
    }
    if (hovered_flat >= 0 && !ImGui::IsMouseDragging(ImGuiMouseButton_Left) && !FigureCovers(st, hovered_panel, hovered_flat)) {
        DrawTraceTooltip(qv, hovered_flat, st.maps[hovered_panel], hovered_panel, FigureHidesPipeline(st, hovered_flat));
    }
}

// No caption rows: the colorbars' one legend under the images, at `at`; st.colorbar_legend keeps its text.
void DrawColorbarLegendLine(FigurePanelState& st, const FigureFrame& f, ImVec2 at, float width) {
    const std::vector<std::string> parts = ColorbarLegendParts(f.ps, st.covered);  // (none when a style lost its bar)
    ImGui::SetCursorScreenPos(at);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    DrawWrappedParts(parts, width, -1, nullptr);
    ImGui::PopStyleColor();
    for (const std::string& p : parts) st.colorbar_legend += (st.colorbar_legend.empty() ? "" : " ") + p;
}

// A block clicked on the strip: select its first element, so the pipeline, the outline and the histogram
// go with it.
void FollowBlock(FigurePanelState& st, const QuantView& qv, std::int64_t block) {
    const TensorData& t = *qv.data;
    const std::int64_t slice_n = t.rows() * t.cols();
    const QuantParams& p = *qv.params;
    st.clicked_block = block;
    if (p.block_stride * p.block_count < t.numel()) {
        // Channels repeat along the tensor: the block's first element in the slice on show.
        const std::int64_t first = static_cast<std::int64_t>(st.slice) * slice_n, b0 = p.block_of(first);
        st.selected = first + ((block - b0 + p.block_count) % p.block_count) * p.block_stride;
    } else {
        st.selected = block * p.block_stride;
    }
    st.selected = std::clamp<std::int64_t>(st.selected, 0, t.numel() - 1);
    st.slice = static_cast<int>(st.selected / slice_n);
}

}  // namespace

void DrawFigurePanel(FigurePanelState& st, const QuantView& qv, ImVec2 size, const FigureLook& look) {
    ImGui::PushID(&st);
    st.clicked_block = -1;
    if (!qv.valid()) {
        ImGui::TextDisabled("Nothing to show yet: load or generate a tensor.");
        ImGui::PopID();
        return;
    }
    if (size.x <= 0.0f) size.x = ImGui::GetContentRegionAvail().x;
    if (size.y <= 0.0f) size.y = FigurePanelHeight(st, qv, size.x, look);
    PrepareState(st, qv);

    const Look lk(st, look);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const FigureFrame f = PrepareFigure(st, lk, qv, size);
    const FigureLayout& l = f.l;
    st.used_grid = l.columns == 2;
    if (lk.set.show_toolbar) DrawFigureToolbar(st, qv, size.x, f.note);
    const Look now(st, look);  // what the toolbar just changed shows from here on
    st.annotation_size = f.annotation;
    DrawFigureHeatmaps(st, now, qv, f, origin);

    float images_bottom = origin.y + l.toolbar_h + l.title_h;
    for (const ImVec2& m : st.image_max) images_bottom = std::max(images_bottom, m.y);
    float below = images_bottom + l.caption_h + ImGui::GetFontSize() * 0.2f;
    st.colorbar_legend.clear();
    if (l.legend_h > 0.0f) {
        DrawColorbarLegendLine(st, f, ImVec2(origin.x, below), size.x);
        below += l.legend_h;
    }
    if (l.strip_h > 0.0f) {
        ImGui::SetCursorScreenPos(ImVec2(origin.x, below));
        const std::int64_t highlight = st.selected >= 0 ? qv.params->block_of(st.selected) : -1;
        const std::int64_t block = DrawBlockStrip(st.strip_cache, qv, highlight, ImVec2(size.x, l.strip_h - ImGui::GetFontSize() * 0.3f));
        if (block >= 0) FollowBlock(st, qv, block);
        below += l.strip_h;
    }
    if (now.set.show_pipeline) {
        DrawFigurePipeline(st, qv, origin.x, below, size.x);
        below += l.pipeline_h;
    }
    st.used_height = std::min(size.y, std::ceil(below - origin.y));
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
    ImGui::PopID();
}

}  // namespace qs::gui
