#include "gui/widgets/heatmap.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <imgui_internal.h>  // SetItemUsingMouseWheel: keeps the wheel from scrolling the parent window

#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/fnv1a.hpp"

namespace qs::gui {
namespace {

ImU32 ToImU32(std::uint32_t rgba) { return static_cast<ImU32>(rgba); }  // same byte order (R low, A high)

// The texture: the window of cells the view needs, reduced by whole fy x fx blocks to at most one texel per
// screen pixel. Blocks are aligned to multiples of the block size in slice coordinates, so panning does not
// shift the block grid (which would make a reduced image shimmer), nor change the texels at the view's edges.
void UpdateTexture(HeatmapState& st, const HeatmapSource& src, std::uint64_t generation, const HeatmapStyle& style,
                   const HeatmapView& view, float img_w, float img_h) {
    const double cells_x_per_px = (view.x1 - view.x0) / std::max(1.0f, img_w);
    const double cells_y_per_px = (view.y1 - view.y0) / std::max(1.0f, img_h);
    // ceil, not round: every texel must cover at least one whole pixel, or nearest sampling would skip
    // texels (and with them the outlier a max-reduction kept).
    const std::int64_t fx = cells_x_per_px > 1.0 ? static_cast<std::int64_t>(std::ceil(cells_x_per_px - 1e-9)) : 1;
    const std::int64_t fy = cells_y_per_px > 1.0 ? static_cast<std::int64_t>(std::ceil(cells_y_per_px - 1e-9)) : 1;
    CellWindow w;
    w.col0 = (static_cast<std::int64_t>(std::floor(view.x0)) / fx) * fx;
    w.row0 = (static_cast<std::int64_t>(std::floor(view.y0)) / fy) * fy;
    // Whole blocks at the view's far edges too (the texture maps every texel as a whole block): a texel's colour
    // is its block's whatever part of it is in view, as the overview's blocks hold it.
    const auto block_end = [](double edge, std::int64_t f) { return (static_cast<std::int64_t>(std::ceil(edge)) + f - 1) / f * f; };
    const std::int64_t c1 = std::min<std::int64_t>(src.cols, block_end(view.x1, fx));
    const std::int64_t r1 = std::min<std::int64_t>(src.rows, block_end(view.y1, fy));
    w.cols = std::max<std::int64_t>(1, c1 - w.col0);
    w.rows = std::max<std::int64_t>(1, r1 - w.row0);

    // Two keys: what the reduced copy depends on (the data and the window), and what its colors depend on.
    // A new color scale over the same data (the original panel while s changes) only recolors the small copy.
    Fnv1a reduce_key;  // over the fields that decide the texture's content
    reduce_key.add(generation);
    reduce_key.add(src.f32);
    reduce_key.add(src.i32);
    reduce_key.add(src.tiles);
    reduce_key.add(src.rows);
    reduce_key.add(src.cols);
    reduce_key.add(w);
    reduce_key.add(fx);
    reduce_key.add(fy);
    reduce_key.add(style.reduction);
    // A derived view: the other heatmap's reduced copy of the same window, mapped (mean reduction only).
    const HeatmapState* base = src.derive_from;
    const bool derived = base && base->has_reduced && style.reduction == Reduction::Mean && base->window.row0 == w.row0 &&
                         base->window.col0 == w.col0 && base->window.rows == w.rows && base->window.cols == w.cols &&
                         base->fx == fx && base->fy == fy;
    if (derived) {
        reduce_key.add(base->reduced_key);
        reduce_key.add(src.derive_scale);
        reduce_key.add(src.derive_offset);
    }
    Fnv1a key = reduce_key;
    key.add(style.colormap);
    key.add(style.norm.lo);
    key.add(style.norm.hi);
    key.add(style.norm.center);
    key.add(style.norm.centered);
    // Layout fields are always recorded: the annotations and UVs read them even when the texture is current.
    st.window = w;
    st.fx = fx;
    st.fy = fy;
    st.tex_cols = reduced_extent(w.cols, fx);
    st.tex_rows = reduced_extent(w.rows, fy);
    if (st.texture.is_current(key.value())) return;

    const std::size_t n = static_cast<std::size_t>(st.tex_rows * st.tex_cols);
    if (!(st.has_reduced && st.reduced_key == reduce_key.value() && st.reduced.size() == n)) {
        st.reduced.resize(n);
        if (derived && base->reduced.size() == n) {
            for (std::size_t i = 0; i < n; ++i)
                st.reduced[i] = static_cast<float>(src.derive_scale * base->reduced[i] + src.derive_offset);
        } else if (src.tiles) {
            src.tiles->reduce(w, fy, fx, style.reduction, st.reduced.data());
        } else if (src.f32) {
            downsample(src.f32, src.cols, w, fy, fx, style.reduction, st.reduced.data());
        } else {
            downsample(src.i32, src.cols, w, fy, fx, style.reduction, st.reduced.data());
        }
        st.reduced_key = reduce_key.value();
        st.has_reduced = true;
        ++st.reductions;
    }
    st.rgba.resize(n);
    MapValues(GetColormapLut(style.colormap), style.norm, st.reduced.data(), static_cast<std::int64_t>(n), st.rgba.data());
    st.texture.upload_rgba(static_cast<int>(st.tex_cols), static_cast<int>(st.tex_rows), st.rgba.data(), key.value());
    ++st.uploads;
}

int ColorbarTickTarget(float bar_height) {
    return std::clamp(static_cast<int>(bar_height / (2.2f * ImGui::GetFontSize())), 2, 7);
}

}  // namespace

void FormatCell(char* buf, std::size_t n, double v, CellFormat format, int decimals) {
    const std::string text = format == CellFormat::Integer ? FormatInteger(v) : FormatFixed(v, decimals, kMaxCellDecimals);
    std::snprintf(buf, n, "%s", text.c_str());
}

// The bar is linear in the colormap's parameter t, from to_unit(bar_lo) to to_unit(bar_hi); with a centered
// norm the two sides have different value scales, so each side gets its own round ticks in proportion to the
// length it takes.
std::vector<BarTick> ColorbarTicks(const HeatmapStyle& style, float bar_height) {
    std::vector<BarTick> ticks;
    const double lo = style.bar_lo, hi = style.bar_hi;
    const double t_lo = style.norm.to_unit(lo), t_hi = style.norm.to_unit(hi);
    auto pos_of = [&](double v) {
        return t_hi > t_lo ? static_cast<float>((style.norm.to_unit(v) - t_lo) / (t_hi - t_lo)) : 0.5f;
    };
    auto add_range = [&](double a, double b, float share) {
        const int target = std::max(2, static_cast<int>(std::round(ColorbarTickTarget(bar_height) * share)));
        int decimals = 0;
        for (double v : NiceTicks(a, b, target, &decimals)) {
            bool dup = false;
            // The centre may come again from a side's ticks: equal within rounding, relative to the bar's span
            // (an absolute tolerance would merge every tick of a tiny range into one).
            for (const BarTick& t : ticks) dup = dup || std::fabs(t.value - v) <= 1e-9 * (hi - lo);
            if (!dup) ticks.push_back({v, pos_of(v), TickLabel(v, decimals)});
        }
    };
    const double c = style.norm.center;
    if (style.norm.centered && lo < c && c < hi) {
        // The neutral color's value (0, or the zero point z of codes) is always labelled.
        int decimals = 0;
        NiceTicks(lo, hi, ColorbarTickTarget(bar_height), &decimals);
        ticks.push_back({c, pos_of(c), TickLabel(c, c == std::floor(c) ? 0 : decimals)});
        const float below = pos_of(c);
        add_range(lo, c, below);
        add_range(c, hi, 1.0f - below);
    } else {
        add_range(lo, hi, 1.0f);
    }
    // Labels closer than a line of text collide: drop the later one (the center, added first on its side, stays).
    const float min_gap = ImGui::GetFontSize() * 1.3f / std::max(1.0f, bar_height);
    std::vector<BarTick> kept;
    std::sort(ticks.begin(), ticks.end(), [](const BarTick& a, const BarTick& b) { return a.pos < b.pos; });
    for (const BarTick& t : ticks) {
        if (!kept.empty() && t.pos - kept.back().pos < min_gap) {
            // Keep the zero of a centered bar rather than its neighbour.
            if (style.norm.centered && t.value == c) kept.back() = t;
            continue;
        }
        kept.push_back(t);
    }
    return kept;
}

namespace {

void DrawColorbar(ImDrawList* dl, const HeatmapStyle& style, ImVec2 bar_min, ImVec2 bar_max) {
    DrawColorbarGradient(dl, GetColormapLut(style.colormap), style.norm.to_unit(style.bar_lo),
                         style.norm.to_unit(style.bar_hi), bar_min, bar_max);
    DrawColorbarTicks(dl, ColorbarTicks(style, bar_max.y - bar_min.y), bar_min, bar_max);
}

struct VisibleCells {
    std::int64_t r0, r1, c0, c1;
};
VisibleCells Visible(const HeatmapSource& src, const HeatmapView& view) {
    return {std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(view.y0))),
            std::min<std::int64_t>(src.rows, static_cast<std::int64_t>(std::ceil(view.y1))),
            std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(view.x0))),
            std::min<std::int64_t>(src.cols, static_cast<std::int64_t>(std::ceil(view.x1)))};
}

// Auto prints only what a class can read from the back of the room; On goes down to small print.
float MinAnnotationSize(AnnotateMode mode) {
    return mode == AnnotateMode::Auto ? std::max(11.0f, 0.7f * ImGui::GetFontSize()) : 7.0f;
}

// Returns how many cells were printed.
std::int64_t DrawAnnotations(ImDrawList* dl, const HeatmapState& st, const HeatmapSource& src, const HeatmapStyle& style,
                             const HeatmapView& view, ImVec2 img_min, float cw, float ch) {
    if (st.fx != 1 || st.fy != 1) return 0;
    float size = HeatmapAnnotationSize(src, style, view, ImVec2(cw, ch));
    if (size <= 0.0f) return 0;
    if (style.annotation_size > 0.0f) size = std::min(size, style.annotation_size);
    size = std::floor(size);
    if (size < HeatmapAnnotationFloor(style)) return 0;
    ImFont* font = style.annotation_font ? style.annotation_font : ImGui::GetFont();
    const VisibleCells v = Visible(src, view);
    char buf[48];
    for (std::int64_t r = v.r0; r < v.r1; ++r) {
        for (std::int64_t c = v.c0; c < v.c1; ++c) {
            FormatCell(buf, sizeof buf, src.at(r, c), style.format, style.decimals);
            const ImVec2 ts = font->CalcTextSizeA(size, FLT_MAX, 0.0f, buf);
            const float cx = img_min.x + static_cast<float>((c + 0.5 - view.x0) * cw);
            const float cy = img_min.y + static_cast<float>((r + 0.5 - view.y0) * ch);
            const std::size_t ti = static_cast<std::size_t>((r - st.window.row0) * st.tex_cols + (c - st.window.col0));
            const std::uint32_t bg = ti < st.rgba.size() ? st.rgba[ti] : PackRgba(255, 255, 255);
            dl->AddText(font, size, ImVec2(std::round(cx - ts.x * 0.5f), std::round(cy - ts.y * 0.5f)),
                        ToImU32(TextColorFor(bg)), buf);
        }
    }
    return (v.r1 - v.r0) * (v.c1 - v.c0);
}

// Rectangle of a cell on screen, grown to a minimum size so that a selected cell of a zoomed-out 4096 x 4096
// tensor is still a visible mark.
void CellRect(const HeatmapView& view, ImVec2 img_min, float cw, float ch, HeatmapCell cell, float min_px,
              ImVec2& a, ImVec2& b) {
    a = ImVec2(img_min.x + static_cast<float>((cell.col - view.x0) * cw),
               img_min.y + static_cast<float>((cell.row - view.y0) * ch));
    b = ImVec2(a.x + cw, a.y + ch);
    const ImVec2 c((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f);
    const float hw = std::max(cw, min_px) * 0.5f, hh = std::max(ch, min_px) * 0.5f;
    a = ImVec2(std::round(c.x - hw), std::round(c.y - hh));
    b = ImVec2(std::round(c.x + hw), std::round(c.y + hh));
}

}  // namespace

void ClampView(HeatmapView& v, std::int64_t rows, std::int64_t cols) {
    const double R = static_cast<double>(std::max<std::int64_t>(rows, 1));
    const double C = static_cast<double>(std::max<std::int64_t>(cols, 1));
    if (v.empty() || !std::isfinite(v.x0 + v.x1 + v.y0 + v.y1)) {
        v = HeatmapView{0.0, 0.0, C, R};
        return;
    }
    auto clamp_axis = [](double& lo, double& hi, double n) {
        double ext = std::clamp(hi - lo, std::min(1.0, n), n);
        double center = (lo + hi) * 0.5;
        lo = std::clamp(center - ext * 0.5, 0.0, n - ext);
        hi = lo + ext;
    };
    clamp_axis(v.x0, v.x1, C);
    clamp_axis(v.y0, v.y1, R);
}

bool IsFullView(const HeatmapView& v, std::int64_t rows, std::int64_t cols) {
    return v.empty() || (v.x0 <= 0.0 && v.y0 <= 0.0 && v.x1 >= static_cast<double>(cols) &&
                         v.y1 >= static_cast<double>(rows));
}

float HeatmapAnnotationFloor(const HeatmapStyle& style) {
    if (style.annotation_rule == AnnotationRule::FontSize) {
        // Auto: the text size, or in a big cell down to half of it (HeatmapAnnotationSize).
        const float font_px = ImGui::GetFontSize();
        return style.annotate == AnnotateMode::On ? std::min(7.0f, font_px) : std::min(font_px, std::max(11.0f, 0.5f * font_px));
    }
    return style.annotation_min_px > 0.0f ? style.annotation_min_px : MinAnnotationSize(style.annotate);
}

float HeatmapAnnotationSize(const HeatmapSource& src, const HeatmapStyle& style, const HeatmapView& view,
                            ImVec2 cell_px) {
    if (style.annotate == AnnotateMode::Off || !src.valid() || view.empty()) return 0.0f;
    // One cell per texel at most: a block-reduced view shows means, not the values one would print.
    if (cell_px.x < 1.0f || cell_px.y < 1.0f) return 0.0f;
    const bool fill = style.annotation_rule == AnnotationRule::Fill;
    const float min_size = HeatmapAnnotationFloor(style);
    if (fill && style.annotation_min_px <= 0.0f) {
        const float min_cell_w = style.annotate == AnnotateMode::Auto ? 28.0f : 14.0f;
        if (cell_px.x < min_cell_w) return 0.0f;
    }
    if (cell_px.y < min_size) return 0.0f;
    ImFont* font = style.annotation_font ? style.annotation_font : ImGui::GetFont();
    const float base = font->FontSize;
    // One size for the whole panel, set by its widest label, so the numbers read as a table.
    const VisibleCells v = Visible(src, view);
    float widest = 0.0f;
    char buf[48];
    for (std::int64_t r = v.r0; r < v.r1; ++r) {
        for (std::int64_t c = v.c0; c < v.c1; ++c) {
            FormatCell(buf, sizeof buf, src.at(r, c), style.format, style.decimals);
            widest = std::max(widest, font->CalcTextSizeA(base, FLT_MAX, 0.0f, buf).x);
        }
    }
    if (widest <= 0.0f) return 0.0f;
    if (fill) {
        // Never beyond the baked size (it would blur); a big cell of a 3 x 3 tensor gets big numbers.
        const float size = std::min({base, cell_px.y * style.annotation_height_share, base * (cell_px.x * 0.86f) / widest});
        return size >= min_size ? size : 0.0f;
    }
    // FontSize: the text around the figure's size, when a cell holds it with a small margin each side.
    const float font_px = ImGui::GetFontSize();
    const float fit = std::min((cell_px.y - 2.0f) / 1.1f, base * (cell_px.x - std::max(4.0f, 0.25f * font_px)) / widest);
    const float size = std::min(font_px, fit);
    if (style.annotate != AnnotateMode::Auto) return size >= min_size ? size : 0.0f;
    if (size >= font_px) return size;
    // A big cell (a line and a half of text tall) whose widest value does not fit at a large text size (font
    // scale 2 on a small screen: the lesson's 3x3 cells are 75 px): the largest size that fits, down to half the
    // text size (at least the presenter's smallest), so a class sees the numbers without zooming or F5.
    const bool big_cell = cell_px.y >= 1.5f * font_px;
    return big_cell && size >= min_size ? size : 0.0f;
}

ImVec2 HeatmapImageSize(std::int64_t rows, std::int64_t cols, ImVec2 size, float colorbar_width, float max_aspect) {
    const float avail_w = std::max(4.0f, size.x - colorbar_width);
    const float avail_h = std::max(4.0f, size.y);
    const double cell_w = avail_w / static_cast<double>(std::max<std::int64_t>(cols, 1));
    const double cell_h = avail_h / static_cast<double>(std::max<std::int64_t>(rows, 1));
    const double sq = std::min(cell_w, cell_h);
    return ImVec2(std::max(1.0f, std::floor(static_cast<float>(std::min(cell_w, max_aspect * sq) * cols))),
                  std::max(1.0f, std::floor(static_cast<float>(std::min(cell_h, max_aspect * sq) * rows))));
}

float HeatmapColorbarWidth(const HeatmapStyle& style, float bar_height) {
    if (style.colorbar == ColorbarMode::None) return 0.0f;
    float widest = 0.0f;
    for (const BarTick& t : ColorbarTicks(style, bar_height)) widest = std::max(widest, ImGui::CalcTextSize(t.label.c_str()).x);
    return ColorbarWidth(widest);
}

float HeatmapColorbarWidth() {
    // The label width is that of a long tick so every panel reserves the same.
    return ColorbarWidth(ImGui::CalcTextSize("-000.00").x);
}

namespace {

// Where the image is on screen.
struct ImageRect {
    ImVec2 min, max;
    float w = 0.0f, h = 0.0f;
};

// The cell of the slice under screen point p, clamped to the slice. `view_w` and `view_h`: the view's size
// before this frame's zoom or pan, with the view's corner as it is now.
HeatmapCell CellUnder(const ImageRect& img, const HeatmapView& view, double view_w, double view_h,
                      const HeatmapSource& src, ImVec2 p) {
    const double cx = view.x0 + (p.x - img.min.x) / img.w * view_w;
    const double cy = view.y0 + (p.y - img.min.y) / img.h * view_h;
    return HeatmapCell{std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(cy)), 0, src.rows - 1),
                       std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(cx)), 0, src.cols - 1)};
}

// The mouse on the image: the wheel zooms around the cursor, a double click resets, a drag pans, a click
// (a press and release without a drag) selects; `res` gets the clicked and hovered cells.
void HandleHeatmapMouse(HeatmapState& st, const HeatmapSource& src, HeatmapView& view, const ImageRect& img,
                        HeatmapResult& res) {
    ImGui::SetCursorScreenPos(img.min);
    ImGui::InvisibleButton("##image", ImVec2(img.w, img.h), ImGuiButtonFlags_MouseButtonLeft);
    const bool hovered = ImGui::IsItemHovered();
    ImGuiIO& io = ImGui::GetIO();
    const double view_w = view.x1 - view.x0, view_h = view.y1 - view.y0;
    if (hovered) {
        ImGui::SetItemUsingMouseWheel();
        if (io.MouseWheel != 0.0f) {
            // Zoom around the cursor: the cell under it stays under it.
            const double cx = view.x0 + (io.MousePos.x - img.min.x) / img.w * view_w;
            const double cy = view.y0 + (io.MousePos.y - img.min.y) / img.h * view_h;
            const double f = std::pow(0.8, static_cast<double>(io.MouseWheel));
            const double fx = (cx - view.x0) / view_w, fy = (cy - view.y0) / view_h;
            const double nw = std::clamp(view_w * f, std::min(1.0, double(src.cols)), double(src.cols));
            const double nh = std::clamp(view_h * f, std::min(1.0, double(src.rows)), double(src.rows));
            view.x0 = cx - fx * nw;
            view.x1 = view.x0 + nw;
            view.y0 = cy - fy * nh;
            view.y1 = view.y0 + nh;
            ClampView(view, src.rows, src.cols);
            res.view_changed = true;
        }
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
            view.reset();
            ClampView(view, src.rows, src.cols);
            res.view_changed = true;
        }
    }
    if (ImGui::IsItemActivated()) {
        st.dragging = false;
        st.drag_start_view = view;
    }
    if (ImGui::IsItemActive()) {
        const ImVec2 d = ImGui::GetMouseDragDelta(ImGuiMouseButton_Left);
        if (!st.dragging && (d.x * d.x + d.y * d.y) > io.MouseDragThreshold * io.MouseDragThreshold) st.dragging = true;
        if (st.dragging) {
            const HeatmapView& s0 = st.drag_start_view;
            const double dx = -d.x / img.w * (s0.x1 - s0.x0), dy = -d.y / img.h * (s0.y1 - s0.y0);
            view = HeatmapView{s0.x0 + dx, s0.y0 + dy, s0.x1 + dx, s0.y1 + dy};
            ClampView(view, src.rows, src.cols);
            res.view_changed = true;
        }
    }
    if (ImGui::IsItemDeactivated()) {
        if (!st.dragging && hovered) res.clicked = CellUnder(img, view, view_w, view_h, src, io.MousePos);
        st.dragging = false;
    }
    if (hovered) res.hovered = CellUnder(img, view, view_w, view_h, src, io.MousePos);
}

// What is drawn over the image, clipped to it: the blocks' grid, the printed values, the hovered cell's and
// the selection's outlines. Fills res.annotated and res.visible.
void DrawImageOverlays(ImDrawList* dl, HeatmapState& st, const HeatmapSource& src, const HeatmapStyle& style,
                       const HeatmapView& view, const ImageRect& img, HeatmapCell selected, HeatmapResult& res) {
    const float cw = static_cast<float>(img.w / (view.x1 - view.x0));
    const float ch = static_cast<float>(img.h / (view.y1 - view.y0));
    dl->PushClipRect(img.min, img.max, true);
    DrawBlockGrid(dl, style.blocks, src.rows, src.cols, view, img.min, img.max, cw, ch);
    res.annotated = DrawAnnotations(dl, st, src, style, view, img.min, cw, ch);
    const VisibleCells vis = Visible(src, view);
    res.visible = (vis.r1 - vis.r0) * (vis.c1 - vis.c0);
    if (res.hovered.valid() && cw >= 6.0f && ch >= 6.0f) {
        ImVec2 a, b;
        CellRect(view, img.min, cw, ch, res.hovered, 0.0f, a, b);
        dl->AddRect(a, b, palette::kHoverCell, 0.0f, 0, 1.5f);
    }
    if (selected.valid() && selected.row < src.rows && selected.col < src.cols) {
        ImVec2 a, b;
        CellRect(view, img.min, cw, ch, selected, 10.0f, a, b);
        // Dark outer and bright inner outline: visible on red, blue, white and viridis cells alike.
        dl->AddRect(a, b, palette::kOutline, 0.0f, 0, 4.0f);
        dl->AddRect(ImVec2(a.x + 1.5f, a.y + 1.5f), ImVec2(b.x - 1.5f, b.y - 1.5f), palette::kSelected, 0.0f, 0, 2.0f);
    }
    dl->PopClipRect();
}

}  // namespace

HeatmapResult DrawHeatmap(const char* id, HeatmapState& st, const HeatmapSource& src, std::uint64_t generation,
                          const HeatmapStyle& style, HeatmapView& view, HeatmapCell selected, ImVec2 size) {
    HeatmapResult res;
    ImGui::PushID(id);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    size.x = std::max(size.x, 8.0f);
    size.y = std::max(size.y, 8.0f);

    if (!src.valid()) {
        ImGui::Dummy(size);
        dl->AddText(ImVec2(origin.x + 4, origin.y + 4), ImGui::GetColorU32(ImGuiCol_TextDisabled), "no data");
        ImGui::PopID();
        return res;
    }
    ClampView(view, src.rows, src.cols);

    // Image rectangle: fixed by the whole slice's shape (zoom changes what it shows, not where it is).
    const float cb_w = style.colorbar == ColorbarMode::None ? 0.0f
                       : style.colorbar_width > 0.0f ? style.colorbar_width
                                                     : HeatmapColorbarWidth(style, size.y);
    const ImVec2 img_size = HeatmapImageSize(src.rows, src.cols, size, cb_w, style.max_cell_aspect);
    ImageRect img;
    img.w = img_size.x;
    img.h = img_size.y;
    const float group_w = img.w + cb_w;
    img.min = ImVec2(std::floor(origin.x + (size.x - group_w) * 0.5f), std::floor(origin.y));
    img.max = ImVec2(img.min.x + img.w, img.min.y + img.h);
    res.image_min = img.min;
    res.image_max = img.max;

    HandleHeatmapMouse(st, src, view, img, res);

    UpdateTexture(st, src, generation, style, view, img.w, img.h);
    const double span_u = static_cast<double>(st.tex_cols * st.fx);
    const double span_v = static_cast<double>(st.tex_rows * st.fy);
    const ImVec2 uv0(static_cast<float>((view.x0 - st.window.col0) / span_u),
                     static_cast<float>((view.y0 - st.window.row0) / span_v));
    const ImVec2 uv1(static_cast<float>((view.x1 - st.window.col0) / span_u),
                     static_cast<float>((view.y1 - st.window.row0) / span_v));
    dl->AddImage(st.texture.id(), img.min, img.max, uv0, uv1);
    DrawImageOverlays(dl, st, src, style, view, img, selected, res);
    dl->AddRect(ImVec2(img.min.x - 1, img.min.y - 1), ImVec2(img.max.x + 1, img.max.y + 1),
                ImGui::GetColorU32(ImGuiCol_Border));

    if (style.colorbar == ColorbarMode::Show) {
        const float font = ImGui::GetFontSize();
        const ImVec2 bar_min(img.max.x + std::round(font * 0.5f), img.min.y);
        const ImVec2 bar_max(bar_min.x + std::round(font * 0.9f), img.max.y);
        DrawColorbar(dl, style, bar_min, bar_max);
    }

    // Leave the cursor below the whole rectangle, like any other widget of that size.
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
    ImGui::PopID();
    return res;
}

}  // namespace qs::gui
