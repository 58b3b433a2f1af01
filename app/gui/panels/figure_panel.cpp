#include "gui/panels/figure_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "quantscope/histogram.hpp"
#include "quantscope/quantize.hpp"
#include "gui/panels/figure_cover.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"

namespace qs::gui {
namespace {

const char* kAnnotateNames[] = {"auto", "on", "off"};

void MinMax(const float* v, std::int64_t n, double& lo, double& hi) {
    float a = 0, b = 0;
    value_range(v, n, a, b);
    lo = a;
    hi = b;
}

void UpdateRanges(FigurePanelState& st, const QuantView& qv) {
    const std::int64_t n = qv.tensor->numel();
    const TensorKey key = TensorKeyOf(qv);
    if (!st.orig_valid || key != st.tensor_key) {
        const float* v = qv.tensor->values.data();
        MinMax(v, n, st.orig_lo, st.orig_hi);
        st.orig_argmin = std::find(v, v + n, static_cast<float>(st.orig_lo)) - v;
        st.orig_argmax = std::find(v, v + n, static_cast<float>(st.orig_hi)) - v;
        st.tensor_key = key;
        ++st.tensor_gen;
        st.orig_valid = true;
        st.ranges_valid = false;
    }
    if (st.ranges_valid && st.ranges_generation == qv.generation) return;
    if (qv.params->block_count == 1 && qv.config->overflow == Overflow::Clamp) {
        // One (s, z) with the clamp: r -> r' is non-decreasing (a float division, round and clamp all are), so
        // the smallest and largest r' are those of the smallest and largest r, exactly as the quantizer made them.
        st.deq_lo = trace_element(*qv.tensor, *qv.params, *qv.config, st.orig_argmin).dequantized;
        st.deq_hi = trace_element(*qv.tensor, *qv.params, *qv.config, st.orig_argmax).dequantized;
    } else {
        MinMax(qv.result->dequantized.data(), n, st.deq_lo, st.deq_hi);
    }
    st.err_hi = qv.result->metrics.max_abs_error;
    st.ranges_generation = qv.generation;
    st.ranges_valid = true;
}

// Value range -> colormap normalisation. A diverging map over data of both signs is centered on 0 (two
// slopes): neutral means zero, blue negative, red positive, and the extremes get the full colors. Data of one
// sign uses the whole map over its range (as seaborn does), or a block of values around 100 would be one flat
// red.
void SetValueScale(HeatmapStyle& s, Colormap map, double lo, double hi) {
    s.colormap = map;
    s.bar_lo = lo;
    s.bar_hi = hi;
    s.norm = IsDiverging(map) && lo < 0.0 && hi > 0.0 ? ColorNorm::Centered(lo, hi, 0.0) : ColorNorm::Linear(lo, hi);
}

// Decimals for printed reals: the lessons' 2, or enough for two significant digits of the largest magnitude
// (errors of a randn tensor are ~0.01: ".2f" would print a wall of "0.01" and "0.00"). At most 5, then
// kMaxCellDecimals + 1, which prints in "%.3g".
int DecimalsFor(double max_abs) {
    if (!(max_abs > 0.0) || max_abs >= 0.1) return 2;
    return std::min(kMaxCellDecimals + 1, std::max(2, 1 - static_cast<int>(std::floor(std::log10(max_abs)))));
}

struct PanelStyles {
    std::array<HeatmapStyle, 4> styles;
};

PanelStyles MakeStyles(const FigurePanelState& st, const QuantView& qv, bool white_readable) {
    const FigurePanelSettings& set = st.settings;
    const IntType& dt = qv.config->dtype;
    const double qmin = dt.q_min(), qmax = dt.q_max();
    double olo = st.orig_lo, ohi = st.orig_hi, dlo = st.deq_lo, dhi = st.deq_hi;
    if (set.shared_range) {
        olo = dlo = std::min(st.orig_lo, st.deq_lo);
        ohi = dhi = std::max(st.orig_hi, st.deq_hi);
    }
    PanelStyles p;
    for (HeatmapStyle& s : p.styles) {
        s.max_cell_aspect = st.max_cell_aspect;
        s.annotation_height_share = st.annotation_height_share;
        s.annotate = set.annotate;
        s.annotation_font = st.annotation_font;
    }
    HeatmapStyle& o = p.styles[kOriginal];
    HeatmapStyle& q = p.styles[kQuantized];
    HeatmapStyle& d = p.styles[kDequantized];
    HeatmapStyle& e = p.styles[kError];
    q.format = CellFormat::Integer;
    e.reduction = Reduction::Max;  // an outlier's error must survive zooming out

    if (set.lesson_look) {
        // The helper's figure. It draws original and error white with printed values; white carries no
        // information once the cells are too small to print, so then those two fall back to coolwarm.
        if (white_readable) {
            o.colormap = e.colormap = Colormap::White;
            o.colorbar = e.colorbar = ColorbarMode::Reserve;
            if (o.annotate == AnnotateMode::Off) o.annotate = e.annotate = AnnotateMode::Auto;
        } else {
            SetValueScale(o, Colormap::Coolwarm, olo, ohi);
            e.colormap = Colormap::Coolwarm;
            e.norm = ColorNorm::Centered(0.0, st.err_hi, 0.0);
            e.bar_lo = 0.0;
            e.bar_hi = st.err_hi;
        }
        q.colormap = Colormap::Coolwarm;
        q.norm = ColorNorm::Linear(qmin, qmax);
        q.bar_lo = qmin;
        q.bar_hi = qmax;
        // The helper leaves vmin=0, vmax=1 here (every value above 1 saturates red); the original's range is
        // what the figure means to show, so use that.
        SetValueScale(d, Colormap::Coolwarm, dlo, dhi);
        return p;
    }

    const Colormap map = set.colormap;
    o.decimals = d.decimals = DecimalsFor(std::max(std::fabs(olo), std::fabs(ohi)));
    e.decimals = DecimalsFor(st.err_hi);
    SetValueScale(o, map, olo, ohi);
    SetValueScale(d, map, dlo, dhi);
    q.colormap = map;
    q.bar_lo = qmin;
    q.bar_hi = qmax;
    q.norm = ColorNorm::Linear(qmin, qmax);
    if (IsDiverging(map) && qv.params->zero_point.size() == 1) {
        // Code z stands for the real 0: make it the neutral color, so that a code has the color of the value
        // it stands for in the original panel.
        q.norm = ColorNorm::Centered(qmin, qmax, qv.params->zero_point[0]);
    }
    // Error >= 0: with a diverging map 0 is the neutral middle and the largest error the full red.
    e.colormap = map;
    e.norm = IsDiverging(map) ? ColorNorm::Centered(0.0, st.err_hi, 0.0) : ColorNorm::Linear(0.0, st.err_hi);
    e.bar_lo = 0.0;
    e.bar_hi = st.err_hi;
    return p;
}

void DrawToolbar(FigurePanelState& st, const QuantView& qv) {
    FigurePanelSettings& set = st.settings;
    const float font = ImGui::GetFontSize();
    ImGui::BeginDisabled(set.lesson_look);
    ImGui::SetNextItemWidth(font * 7.0f);
    if (ImGui::BeginCombo("Colormap", ColormapName(set.colormap))) {
        for (int i = 0; i < kColormapCount; ++i) {
            const Colormap m = static_cast<Colormap>(i);
            if (m == Colormap::White) continue;  // only meaningful with printed values: that is the lesson look
            if (ImGui::Selectable(ColormapName(m), m == set.colormap)) set.colormap = m;
        }
        ImGui::EndCombo();
    }
    ImGui::EndDisabled();
    ImGui::SameLine();
    ImGui::Checkbox("Lesson look", &set.lesson_look);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("The lessons' plot_quantization_errors: original and error white with printed values,\n"
                          "quantized and dequantized in coolwarm.");
    ImGui::SameLine();
    ImGui::Checkbox("2x2", &set.grid);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The four panels as a 2 x 2 grid: bigger heatmaps, e.g. on a projector.");
    ImGui::SameLine();
    ImGui::Checkbox("Shared range", &set.shared_range);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Original and dequantized use one color scale: same color, same value.");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5.0f);
    int ann = static_cast<int>(set.annotate);
    if (ImGui::Combo("Values", &ann, kAnnotateNames, 3)) set.annotate = static_cast<AnnotateMode>(ann);
    if (qv.tensor->rank() == 3) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(font * 8.0f);
        SafeSliderInt("Slice", &st.slice, 0, qv.tensor->slices() - 1, "%d", ImGuiSliderFlags_AlwaysClamp);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("Index along axis 0 (of %lld)", static_cast<long long>(qv.tensor->slices()));
    }
    ImGui::SameLine();
    const bool full = IsFullView(st.view, qv.tensor->rows(), qv.tensor->cols());
    ImGui::BeginDisabled(full);
    if (ImGui::Button("Reset zoom")) st.view.reset();
    ImGui::EndDisabled();
    if (!full) {
        ImGui::SameLine();
        ImGui::TextDisabled("rows %lld-%lld, cols %lld-%lld", static_cast<long long>(std::floor(st.view.y0)),
                            static_cast<long long>(std::ceil(st.view.y1)) - 1, static_cast<long long>(std::floor(st.view.x0)),
                            static_cast<long long>(std::ceil(st.view.x1)) - 1);
    } else {
        // The hint only where it fits on the line; otherwise a "(?)" that shows it on hover.
        const char* hint = "wheel: zoom, drag: pan, click: follow an element";
        ImGui::SameLine();
        if (ImGui::GetContentRegionAvail().x >= ImGui::CalcTextSize(hint).x) {
            ImGui::TextDisabled("%s", hint);
        } else {
            ImGui::TextDisabled("(?)");
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", hint);
        }
    }
}

void DrawTraceTooltip(const QuantView& qv, std::int64_t flat, const HeatmapState& hs, int panel) {
    const ElementTrace t = trace_element(*qv.tensor, *qv.params, *qv.config, flat);
    const Sym sym = Symbols();
    ImGui::BeginTooltip();
    ImGui::Text("Element %s", index_to_string(qv.tensor->shape, flat).c_str());
    if (qv.params->block_count > 1) ImGui::TextDisabled("block %lld of %lld", static_cast<long long>(t.block),
                                                        static_cast<long long>(qv.params->block_count));
    ImGui::Separator();
    const std::vector<std::string> lines = PipelineLines(qv, t);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        // Line 3 is the clamp: the step a clipped element goes wrong in.
        if (i == 3 && t.clipped) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", lines[i].c_str());
        else ImGui::TextUnformatted(lines[i].c_str());
    }
    if (hs.fx > 1 || hs.fy > 1) {
        ImGui::Separator();
        ImGui::TextDisabled("each pixel of this panel shows the %s of %lld %s %lld cells", 
                            panel == kError ? "max" : "mean", static_cast<long long>(hs.fy), sym.times,
                            static_cast<long long>(hs.fx));
    }
    ImGui::EndTooltip();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> FigurePanelSettingPairs(const FigurePanelSettings& s) {
    auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
    return {{"colormap", ColormapName(s.colormap)},
            {"lesson_look", flag(s.lesson_look)},
            {"shared_range", flag(s.shared_range)},
            {"annotate", kAnnotateNames[static_cast<int>(s.annotate)]},
            {"show_pipeline", flag(s.show_pipeline)},
            {"show_toolbar", flag(s.show_toolbar)},
            {"grid", flag(s.grid)}};
}

bool ApplyFigurePanelSetting(FigurePanelSettings& s, const char* key, const char* value) {
    auto parse_bool = [&](bool& out) {
        if (std::strcmp(value, "1") == 0 || std::strcmp(value, "true") == 0) out = true;
        else if (std::strcmp(value, "0") == 0 || std::strcmp(value, "false") == 0) out = false;
        else return false;
        return true;
    };
    if (std::strcmp(key, "colormap") == 0) {
        Colormap m;
        if (!ParseColormap(value, m) || m == Colormap::White) return false;
        s.colormap = m;
        return true;
    }
    if (std::strcmp(key, "annotate") == 0) {
        for (int i = 0; i < 3; ++i) {
            if (std::strcmp(value, kAnnotateNames[i]) == 0) {
                s.annotate = static_cast<AnnotateMode>(i);
                return true;
            }
        }
        return false;
    }
    if (std::strcmp(key, "lesson_look") == 0) return parse_bool(s.lesson_look);
    if (std::strcmp(key, "shared_range") == 0) return parse_bool(s.shared_range);
    if (std::strcmp(key, "show_pipeline") == 0) return parse_bool(s.show_pipeline);
    if (std::strcmp(key, "show_toolbar") == 0) return parse_bool(s.show_toolbar);
    if (std::strcmp(key, "grid") == 0) return parse_bool(s.grid);
    return false;
}

namespace {

struct FigureLayout {
    float toolbar_h = 0, title_h = 0, caption_h = 0, pipeline_h = 0, gap = 0, col_w = 0;
    int columns = 4;  // 4 in a row, or 2 x 2 where a row would leave the images narrower than their colorbars
    int rows = 1;
};

FigureLayout ComputeLayout(const FigurePanelState& st, float width) {
    FigureLayout l;
    const ImGuiStyle& style = ImGui::GetStyle();
    l.toolbar_h = st.settings.show_toolbar ? ImGui::GetFrameHeightWithSpacing() + style.ItemSpacing.y : 0.0f;
    l.title_h = std::round(ImGui::GetTextLineHeight() * 1.6f);
    // Under each image: what one pixel stands for when the slice is reduced to fit.
    l.caption_h = st.captions ? std::round(ImGui::GetTextLineHeight() * 1.3f) : 0.0f;
    l.pipeline_h = st.settings.show_pipeline ? std::round(ImGui::GetTextLineHeightWithSpacing() * 2.0f + ImGui::GetFontSize()) : 0.0f;
    l.gap = std::round(ImGui::GetFontSize() * 1.0f);
    l.col_w = std::max(16.0f, std::floor((width - 3.0f * l.gap) / 4.0f));
    // Large text (a projector's font scale) or a narrow window: the colorbar labels would take most of a
    // quarter of the width and leave thumbnails.
    if (st.settings.grid || l.col_w - HeatmapColorbarWidth() < 0.4f * l.col_w) {
        l.columns = 2;
        l.rows = 2;
        l.col_w = std::max(16.0f, std::floor((width - l.gap) / 2.0f));
    }
    return l;
}

}  // namespace

float FigurePanelHeight(const FigurePanelState& st, const QuantView& qv, float width) {
    const FigureLayout l = ComputeLayout(st, width);
    float ratio = 1.0f;
    if (qv.valid()) {
        ratio = static_cast<float>(qv.tensor->rows()) / static_cast<float>(qv.tensor->cols());
        ratio = std::clamp(ratio, 0.3f, 1.0f);
    }
    const float heat_w = l.col_w - HeatmapColorbarWidth();
    return std::ceil(l.toolbar_h + static_cast<float>(l.rows) * (l.title_h + heat_w * ratio + l.caption_h) +
                     l.pipeline_h);
}

namespace {

// The four panels' data for slice `st.slice`: the original, the codes, r' and the error.
std::array<HeatmapSource, 4> PanelSources(FigurePanelState& st, const QuantView& qv) {
    const Tensor& t = *qv.tensor;
    const std::int64_t off = static_cast<std::int64_t>(st.slice) * t.rows() * t.cols();
    std::array<HeatmapSource, 4> src;
    src[kOriginal].f32 = t.values.data() + off;
    src[kQuantized].i32 = qv.result->codes.data() + off;
    src[kDequantized].f32 = qv.result->dequantized.data() + off;
    src[kError].f32 = qv.result->error.data() + off;
    for (HeatmapSource& s : src) {
        s.rows = t.rows();
        s.cols = t.cols();
    }
    if (qv.params->block_count == 1) {
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
                                 ImVec2 panel, std::int64_t rows, std::int64_t cols) {
    float cb_w = 0.0f;
    for (const HeatmapStyle& s : ps.styles) cb_w = std::max(cb_w, HeatmapColorbarWidth(s, panel.y));
    const ImVec2 img = HeatmapImageSize(rows, cols, panel, cb_w, ps.styles[0].max_cell_aspect);
    const ImVec2 cell_px(img.x / static_cast<float>(view.x1 - view.x0), img.y / static_cast<float>(view.y1 - view.y0));
    float ann = 0.0f;
    for (int i = 0; i < 4; ++i) {
        const float a = HeatmapAnnotationSize(src[i], ps.styles[i], view, cell_px);
        if (a > 0.0f) ann = ann > 0.0f ? std::min(ann, a) : a;
    }
    for (HeatmapStyle& s : ps.styles) {
        s.colorbar_width = cb_w;
        s.annotation_size = ann;
    }
    return ann;
}

// A zoomed-out big tensor is averaged (the error: maximised) to screen resolution; say so under the image, or
// a grey square of averaged noise reads as "all zeros".
void DrawReductionCaption(const HeatmapState& hs, int panel, const HeatmapResult& r, float x, float col_w, float caption_h) {
    if (hs.fx <= 1 && hs.fy <= 1) return;
    char cap[96];
    std::snprintf(cap, sizeof cap, "1 px = %s of %lld%s%lld cells", panel == kError ? "max" : "mean",
                  static_cast<long long>(hs.fy), Symbols().times, static_cast<long long>(hs.fx));
    const ImVec2 cs = ImGui::CalcTextSize(cap);
    const float cx = std::clamp((r.image_min.x + r.image_max.x - cs.x) * 0.5f, x, std::max(x, x + col_w - cs.x));
    ImGui::GetWindowDrawList()->AddText(ImVec2(std::round(cx), std::round(r.image_max.y + caption_h * 0.15f)),
                                        ImGui::GetColorU32(ImGuiCol_TextDisabled), cap);
}

// The title centered over the image, like a matplotlib axes title; over the column if it is wider, and
// clipped to its column: even a short title must not run into the next one.
void DrawPanelTitle(const char* title, const HeatmapResult& r, float x, float col_w, float top, float title_h) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 ts = ImGui::CalcTextSize(title);
    float tx = (r.image_min.x + r.image_max.x) * 0.5f - ts.x * 0.5f;
    tx = std::clamp(tx, x, std::max(x, x + col_w - ts.x));
    const float ty = std::round(top - title_h * 0.5f - ts.y * 0.5f - 1.0f);
    dl->PushClipRect(ImVec2(x, ty), ImVec2(x + col_w, ty + ts.y + 2.0f), true);
    dl->AddText(ImVec2(std::round(tx), ty), ImGui::GetColorU32(ImGuiCol_Text), title);
    dl->PopClipRect();
}

// The selected element's pipeline right under the images (a wide slice leaves the rest of the panel empty).
void DrawPipeline(const FigurePanelState& st, const QuantView& qv, float x, float y, float width) {
    ImGui::SetCursorScreenPos(ImVec2(x, y));
    if (st.selected < 0) {
        const Sym y = Symbols();
        const std::string hint = std::string("Click a cell to follow one element through r ") + y.arrow + " r/s + z " +
                                 y.arrow + " round " + y.arrow + " clamp " + y.arrow + " s(q " + y.minus + " z) " + y.arrow +
                                 " |r " + y.minus + " r'|.";
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::PushTextWrapPos(x + width);
        TextWrappedAtSpaces(hint);  // large text on a projector: the hint wraps instead of running off the panel
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
        return;
    }
    if (FigureHidesPipeline(st, st.selected)) {  // the pipeline would print what is being guessed
        ImGui::PushTextWrapPos(x + width);
        TextWrappedAtSpaces("Selected " + index_to_string(qv.tensor->shape, st.selected) + ": predict its code, then press R.");
        ImGui::PopTextWrapPos();
        return;
    }
    const Tensor& t = *qv.tensor;
    const ElementTrace tr = trace_element(t, *qv.params, *qv.config, st.selected);
    std::string head = "Selected " + index_to_string(t.shape, st.selected);
    if (qv.params->block_count > 1) head += "  (block " + std::to_string(tr.block) + ")";
    head += ":";
    std::vector<std::string> parts{head};
    for (const std::string& s : PipelineLines(qv, tr)) parts.push_back(s);
    DrawWrappedParts(parts, width, tr.clipped ? 4 : -1, Symbols().arrow);
}

}  // namespace

void DrawFigurePanel(FigurePanelState& st, const QuantView& qv, ImVec2 size) {
    ImGui::PushID(&st);
    if (!qv.valid()) {
        ImGui::TextDisabled("Nothing to show yet: load or generate a tensor.");
        ImGui::PopID();
        return;
    }
    if (size.x <= 0.0f) size.x = ImGui::GetContentRegionAvail().x;
    if (size.y <= 0.0f) size.y = FigurePanelHeight(st, qv, size.x);
    const Tensor& t = *qv.tensor;
    const std::int64_t rows = t.rows(), cols = t.cols(), slice_n = rows * cols;
    st.slice = std::clamp<int>(st.slice, 0, static_cast<int>(t.slices()) - 1);
    if (st.selected >= t.numel()) st.selected = -1;
    ClampView(st.view, rows, cols);
    UpdateRanges(st, qv);

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const FigureLayout l = ComputeLayout(st, size.x);
    if (st.settings.show_toolbar) DrawToolbar(st, qv);

    const float heat_top = origin.y + l.toolbar_h + l.title_h;
    const float heat_h = std::max(
        16.0f, (size.y - l.toolbar_h - l.pipeline_h) / static_cast<float>(l.rows) - l.title_h - l.caption_h);
    const float row_step = l.title_h + heat_h + l.caption_h;
    // Lesson look: white panels only while their printed values are readable (the heatmap's Auto rule).
    const float est_img_w = HeatmapImageSize(rows, cols, ImVec2(l.col_w, heat_h), HeatmapColorbarWidth(), st.max_cell_aspect).x;
    const float est_cell_px = est_img_w / static_cast<float>(st.view.x1 - st.view.x0);
    PanelStyles ps = MakeStyles(st, qv, est_cell_px >= 28.0f && st.settings.annotate != AnnotateMode::Off);
    const std::int64_t off = static_cast<std::int64_t>(st.slice) * slice_n;
    const std::array<HeatmapSource, 4> src = PanelSources(st, qv);
    const std::string titles[4] = {"Original Tensor", std::to_string(qv.config->dtype.bits) + "-bit Linear Quantized Tensor",
                                   "Dequantized Tensor", "Quantization Error Tensor"};
    // What a column too narrow for the lessons' titles shows instead (overlapping titles read as neither).
    const std::string short_titles[4] = {"Original", std::to_string(qv.config->dtype.bits) + "-bit quantized",
                                         "Dequantized", "Error"};
    bool short_titles_needed = false;  // all four alike
    for (const std::string& title : titles) short_titles_needed |= ImGui::CalcTextSize(title.c_str()).x > l.col_w;
    st.annotation_size = ShareColorbarAndAnnotation(ps, src, st.view, ImVec2(l.col_w, heat_h), rows, cols);

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
        const HeatmapResult r = DrawHeatmap(titles[i].c_str(), st.maps[i], src[i], data_gen, ps.styles[i], st.view,
                                            selected, ImVec2(l.col_w, heat_h));
        st.image_min[i] = r.image_min;
        st.image_max[i] = r.image_max;
        DrawFigureCover(st, i, r, st.view, cols, off, ImVec2(x + l.col_w, r.image_max.y));
        DrawReductionCaption(st.maps[i], i, r, x, l.col_w, l.caption_h);
        DrawPanelTitle(short_titles_needed ? short_titles[i].c_str() : titles[i].c_str(), r, x, l.col_w, top, l.title_h);
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
        DrawTraceTooltip(qv, hovered_flat, st.maps[hovered_panel], hovered_panel);
    }
    if (st.settings.show_pipeline) {
        float images_bottom = heat_top;
        for (const ImVec2& m : st.image_max) images_bottom = std::max(images_bottom, m.y);
        DrawPipeline(st, qv, origin.x, images_bottom + l.caption_h + ImGui::GetFontSize() * 0.2f, size.x);
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
    ImGui::PopID();
}

}  // namespace qs::gui
