// The heatmap widget every figure panel draws: a 2-D slice shown as ONE textured image (never a rectangle per
// cell), colormapped on the CPU and uploaded only when the data generation, the view or the color scale changes.
// It borrows the data (pointer + rows x cols, row-major) and owns only UI state: the texture, the reduced copy
// of what is on screen, and the drag in progress. Slices larger than the image are block-reduced to display
// resolution by qs::downsample (mean for values, max for errors so that one outlier stays visible).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <imgui.h>

#include "gui/widgets/colormap.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/platform/gl_texture.hpp"
#include "quantscope/downsample.hpp"

namespace qs::gui {

// The visible part of a slice in continuous cell coordinates: x runs along columns, y along rows (down), cell
// (r, c) covers [c, c + 1) x [r, r + 1). One view is shared by the four panels of a figure so that zoom and pan
// move them together. An empty view (x1 <= x0) means "the whole slice".
struct HeatmapView {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    bool empty() const { return !(x1 > x0) || !(y1 > y0); }
    void reset() { *this = HeatmapView{}; }
};
// Makes `view` a valid window of a rows x cols slice: the whole slice when empty, extents within
// [min(1, n), n] cells, inside the slice.
void ClampView(HeatmapView& view, std::int64_t rows, std::int64_t cols);
// True when the view shows the whole slice.
bool IsFullView(const HeatmapView& view, std::int64_t rows, std::int64_t cols);

// A borrowed row-major slice: exactly one of f32 / i32 / reduce is set; row stride = cols.
struct HeatmapState;
// A slice too large to hold as an array: its owner reduces any window to the texture's blocks itself (like
// downsample into `out`) and reads single cells (for printed values and tooltips).
struct HeatmapTiles {
    std::function<void(const CellWindow& window, std::int64_t fy, std::int64_t fx, Reduction reduction, float* out)>
        reduce;
    std::function<double(std::int64_t row, std::int64_t col)> value;
};
struct HeatmapSource {
    const float* f32 = nullptr;
    const std::int32_t* i32 = nullptr;
    const HeatmapTiles* tiles = nullptr;
    std::int64_t rows = 0, cols = 0;
    // Optional: this slice is derive_scale * x + derive_offset of the slice another heatmap of the same shape
    // shows (drawn earlier in the frame), e.g. dequantized values s (q - z) of the codes. A mean-reduced view
    // is then that map of the other's reduced copy (a mean commutes with an affine map) and skips a pass over
    // the data; values for printing and tooltips still come from f32 / i32.
    const HeatmapState* derive_from = nullptr;
    double derive_scale = 1.0, derive_offset = 0.0;

    bool valid() const { return (f32 != nullptr) + (i32 != nullptr) + (tiles != nullptr) == 1 && rows > 0 && cols > 0; }
    double at(std::int64_t row, std::int64_t col) const {
        if (tiles) return tiles->value(row, col);
        const std::int64_t i = row * cols + col;
        return f32 ? static_cast<double>(f32[i]) : static_cast<double>(i32[i]);
    }
};

enum class AnnotateMode : int { Auto = 0, On = 1, Off = 2 };
enum class CellFormat { Real, Integer };  // ".2f" for values, "%d" for codes
enum class ColorbarMode { Show, Reserve, None };  // Reserve: keep the space (panels stay aligned), draw nothing
// How big printed values are. FontSize (the window): at the current font size when they fit a cell at it, in
// a big cell (1.5 lines tall) at the largest size that fits down to half the text size, else not at all (the
// panel then says so); Annotate On shrinks them to fit, down to small print. Fill (exported
// figures, presenter mode): as large as a cell allows, up to the baked annotation font, down to
// `annotation_min_px` (0: the Auto/On floor).
enum class AnnotationRule { FontSize, Fill };

constexpr int kMaxCellDecimals = 5;

// The per-channel / per-group blocks of the slice a heatmap shows (QuantParams' layout): cell (r, c) belongs to
// block ((offset + r * cols + c) / stride) % count. count <= 1: one block, nothing drawn.
struct BlockGrid {
    std::int64_t offset = 0;  // flat index of the slice's first cell
    std::int64_t stride = 0, count = 0;
    bool active() const { return count > 1 && stride > 0; }
    std::int64_t block_at(std::int64_t cols, std::int64_t row, std::int64_t col) const {
        return ((offset + row * cols + col) / stride) % count;
    }
};

struct HeatmapStyle {
    Colormap colormap = Colormap::Coolwarm;
    ColorNorm norm;                        // value -> [0, 1] of the colormap
    double bar_lo = 0.0, bar_hi = 1.0;     // the value range the colorbar shows (within or equal to norm)
    ColorbarMode colorbar = ColorbarMode::Show;
    Reduction reduction = Reduction::Mean;
    CellFormat format = CellFormat::Real;
    int decimals = 2;                      // of printed reals (the lessons' ".2f"); above kMaxCellDecimals: "%.3g"
    AnnotateMode annotate = AnnotateMode::Auto;
    // Font of the in-cell values, baked large and drawn at a size that fits the cells; nullptr: current font.
    ImFont* annotation_font = nullptr;
    // > 0: print values at most this large (a figure passes one size to its four panels so they read alike).
    float annotation_size = 0.0f;
    // > 0: the width reserved right of the image for the colorbar (a figure passes its panels' maximum so
    // their images line up); 0: this panel's own HeatmapColorbarWidth.
    float colorbar_width = 0.0f;
    float max_cell_aspect = 1.5f;  // how far a cell may stretch from square to use its panel (HeatmapImageSize)
    float annotation_height_share = 0.42f;  // Fill: the printed value's height at most this share of the cell's
    AnnotationRule annotation_rule = AnnotationRule::Fill;
    float annotation_min_px = 0.0f;  // Fill: the smallest printed size; 0: the Auto / On floor
    BlockGrid blocks;  // outlined, every other one lightly tinted, where they are a few pixels apart
};

struct HeatmapCell {
    std::int64_t row = -1, col = -1;
    bool valid() const { return row >= 0 && col >= 0; }
    friend bool operator==(const HeatmapCell& a, const HeatmapCell& b) { return a.row == b.row && a.col == b.col; }
};

struct HeatmapResult {
    HeatmapCell hovered;   // the cell under the mouse (valid only while hovering the image)
    HeatmapCell clicked;   // a click (press and release without dragging) on this cell, this frame
    bool view_changed = false;
    ImVec2 image_min{}, image_max{};  // screen rectangle of the image
    std::int64_t annotated = 0;       // cells whose value was printed this frame
    std::int64_t visible = 0;         // cells (whole or partly) in the view
};

// Internal state of one heatmap; keep one per panel (it holds a GL texture: move-only).
struct HeatmapState {
    GlTexture texture;
    std::vector<float> reduced;        // the window at texture resolution
    std::vector<std::uint32_t> rgba;   // its colors, what was uploaded
    CellWindow window;                 // cells the texture covers (whole blocks of fy x fx)
    std::int64_t fy = 1, fx = 1;       // block size of the reduction
    std::int64_t tex_rows = 0, tex_cols = 0;
    std::uint64_t uploads = 0;         // how many times the texture was rebuilt (tests check it stays put)
    std::uint64_t reductions = 0;      // how many times `reduced` was recomputed from the source
    std::uint64_t reduced_key = 0;     // what `reduced` holds (data, window, reduction); see has_reduced
    bool has_reduced = false;
    // Pan in progress.
    bool dragging = false;
    HeatmapView drag_start_view;
};

// A cell's printed value the way the lessons' figure does: "%.2f", or `decimals` decimals up to
// kMaxCellDecimals and "%.3g" beyond (a tiny tensor's values are not 0.00000); codes as integers. A tiny
// negative that rounds to zero prints without its sign.
void FormatCell(char* buf, std::size_t n, double v, CellFormat format, int decimals);

// The ticks of the colorbar of `style` for a bar `bar_height` pixels tall, in the current font: round values
// over [bar_lo, bar_hi] (always the neutral centre of a centred norm), none closer than a line of text.
std::vector<BarTick> ColorbarTicks(const HeatmapStyle& style, float bar_height);

// The width the colorbar and its tick labels take to the right of the image for `style`'s range and a bar
// `bar_height` pixels tall, in the current font (0 for ColorbarMode::None).
float HeatmapColorbarWidth(const HeatmapStyle& style, float bar_height);
// A typical colorbar width (labels like "-000.00"), for layouts computed before the ranges are known.
float HeatmapColorbarWidth();

// Size of the image a rows x cols slice gets in a `size` rectangle with `colorbar_width` taken off: cells are
// square when possible and stretched at most 3:2 to use the space (a 128 x 256 slice fills more of a square
// panel, while a 1 x 9 vector stays a strip of cells instead of a wall of tall bars; `max_aspect` lets a
// presenter stretch them further for wide printed values). Whole pixels.
ImVec2 HeatmapImageSize(std::int64_t rows, std::int64_t cols, ImVec2 size, float colorbar_width, float max_aspect = 1.5f);

// The size (pixels) at which every visible cell's printed value is drawn in a cell of `cell_px` pixels by
// `style.annotation_rule` (FontSize: the current font size; Fill: the largest that fits), or 0 when values are
// not printed (Off, reduced view, cells too small for them at the rule's smallest size).
float HeatmapAnnotationSize(const HeatmapSource& source, const HeatmapStyle& style, const HeatmapView& view,
                            ImVec2 cell_px);

// Draws the heatmap into a `size` rectangle at the cursor (image centered, colorbar at its right) and advances
// the cursor. `id` must be unique within the window. `generation` keys the texture: a counter
// that changes whenever the data behind `source` does (QuantView::generation; for the original values a
// tensor generation, which a new s or z leaves alone: the reduced copy is then only recolored).
// Mouse: wheel zooms around the cursor, left-drag pans, click selects a cell, double-click resets the view.
// `selected` (may be invalid) is outlined.
// Outlines the blocks of `grid` over a rows x cols slice's image (view `view`, cw x ch pixels a cell, inside
// the current clip rectangle) and tints every other block lightly. Only where neighbouring outlines are a few
// pixels apart: a zoomed-out tensor of thousands of channels gets none rather than a grey wash.
void DrawBlockGrid(ImDrawList* dl, const BlockGrid& grid, std::int64_t rows, std::int64_t cols, const HeatmapView& view,
                   ImVec2 img_min, ImVec2 img_max, float cw, float ch);

// The smallest size values are printed at under `style` (pixels): below it they are hidden.
float HeatmapAnnotationFloor(const HeatmapStyle& style);

HeatmapResult DrawHeatmap(const char* id, HeatmapState& state, const HeatmapSource& source, std::uint64_t generation,
                          const HeatmapStyle& style, HeatmapView& view, HeatmapCell selected, ImVec2 size);


}  // namespace qs::gui
