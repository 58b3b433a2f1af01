// The lessons' figure (their helper `plot_quantization_errors`): four heatmaps side by side, "Original Tensor",
// "<N>-bit Linear Quantized Tensor", "Dequantized Tensor", "Quantization Error Tensor", each with its colorbar,
// sharing one zoom/pan view and one selected element whose whole pipeline is printed below them.
// DrawFigurePanel is "contents only": it draws into whatever window is current, so the GUI window and the
// headless PNG (app/figure_png.hpp, through platform/offscreen_renderer.hpp) are the same code.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <imgui.h>

#include "gui/widgets/colormap.hpp"
#include "gui/widgets/heatmap.hpp"
#include "gui/document/quant_view.hpp"
#include "gui/panels/block_strip.hpp"
#include "gui/panels/figure_tiles.hpp"

namespace qs::gui {

enum class FigureLayoutMode : int { Auto = 0, Row = 1, Grid = 2 };
const char* FigureLayoutName(FigureLayoutMode mode);  // "auto", "row", "grid"
bool ParseFigureLayout(const char* text, FigureLayoutMode& out);

// What a user chooses and may want back next session: plain values only, no pointers or GL objects.
struct FigurePanelSettings {
    Colormap colormap = Colormap::Coolwarm;
    // The lessons' helper look: original and error panels white with printed values (no colorbar there),
    // quantized and dequantized in coolwarm, codes over [q_min, q_max].
    bool lesson_look = false;
    // Original and dequantized use one color range, so equal colors mean equal values across the two.
    bool shared_range = true;
    AnnotateMode annotate = AnnotateMode::Auto;
    bool show_pipeline = true;  // the selected element's pipeline below the heatmaps
    bool show_toolbar = true;   // the row of figure options above the titles (off in exported PNGs)
    // Four panels in a row, as a 2 x 2 grid (twice the width each: a projector's large text, a 3 x 3 tensor
    // whose printed values need big cells), or Auto: the grid where a row would leave the images narrower
    // than their colorbars (the toolbar says which one Auto took).
    FigureLayoutMode layout = FigureLayoutMode::Auto;
};

// One (key, value) pair per field: ("colormap", "coolwarm"), ("lesson_look", "0"), ... as settings.ini and a
// session's view keep them.
std::vector<std::pair<std::string, std::string>> FigurePanelSettingPairs(const FigurePanelSettings& settings);
// Applies one pair as written above (and the older "grid" = 0 / 1 as layout auto / grid); returns false for an unknown key or a bad value (the
// settings are then unchanged), so that an old or hand-edited settings file cannot break the panel.
bool ApplyFigurePanelSetting(FigurePanelSettings& settings, const char* key, const char* value);

// How far the figure's cells may stretch from square unless a presenter asks for more.
constexpr float kDefaultCellAspect = 1.5f;
// How far cells may stretch on a tensor of `rows` x `cols`: `base`, or more for a strip (a few rows of many
// columns, or the reverse), whose image then spans at least 0.3 of its panel's long side (the room the panel's
// natural height gives it) instead of a line a few pixels thick. A 4 x 256 weight row is a band of stretched
// cells, as the lessons' figures draw it.
float FigureCellAspect(std::int64_t rows, std::int64_t cols, float base);

// How one drawing of the figure is laid out, chosen by whoever draws it (the window, presenter mode, the
// exported PNG) and passed with each call: nobody changes the figure's state to get a look of their own, so
// the user's settings stay the user's.
struct FigureLook {
    float max_cell_aspect = kDefaultCellAspect;  // how far cells may stretch from square
    float annotation_height_share = 0.42f;        // Fill: a printed value at most this share of a cell's height
    // How printed values are sized (heatmap.hpp): the window prints them at its font size or says they are
    // hidden; the exported figure and presenter mode let them fill big cells.
    AnnotationRule annotation_rule = AnnotationRule::FontSize;
    float annotation_min_px = 0.0f;  // Fill only: the smallest printed size (0: the heatmap's floor)
    bool captions = true;            // a caption row ("1 px = mean of ...") under each image
    // Decorations of the window that an exported figure leaves out (the render goldens pin its pixels):
    // per-channel / group blocks outlined and alternately tinted, and the strip of their s and z under the
    // images; the one-line legend under a diverging colorbar.
    bool block_outlines = true;
    bool block_strip = true;
    bool colorbar_legends = true;
    // This drawing's answers to the user's settings, which it leaves as they are: no toolbar (false), the
    // selected element's pipeline always (true), and a layout other than the settings' (not Auto).
    bool toolbar = true;
    bool force_pipeline = false;
    bool hide_pipeline = false;  // no pipeline whatever the settings (a slide whose Bits tab shows the element)
    FigureLayoutMode layout = FigureLayoutMode::Auto;
};

enum FigureHeatmap : int { kOriginal = 0, kQuantized = 1, kDequantized = 2, kError = 3 };

struct FigurePanelState {
    FigurePanelSettings settings;
    int slice = 0;                  // rank-3 tensors: which shape[0] slice is shown
    HeatmapView view;               // shared by the four heatmaps
    std::int64_t selected = -1;     // flat index of the selected element, -1: none
    // Font the in-cell values are drawn with (baked large; style.hpp); nullptr: the current font.
    ImFont* annotation_font = nullptr;

    // [Internal state]
    std::array<HeatmapState, 4> maps;
    FigureTiles tiles;              // the cells the four heatmaps read (overview or full-resolution window)
    BlockStripCache strip_cache;    // the block strip's charts, made once per quantization
    // Color ranges over the whole tensor (not the slice, so that slices compare). The original's range (and
    // where its extremes are) is kept per tensor; the dequantized range is redone per generation.
    TensorKey tensor_key;
    std::uint64_t tensor_gen = 0;   // bumped when tensor_key changes: the original heatmap's texture key
    bool orig_valid = false;
    std::int64_t orig_argmin = 0, orig_argmax = 0;
    std::uint64_t ranges_generation = 0;
    bool ranges_valid = false;
    double orig_lo = 0, orig_hi = 0, deq_lo = 0, deq_hi = 0, err_hi = 0;
    // Where the last frame put each heatmap's image (screen coordinates): for tests and exported layouts.
    std::array<ImVec2, 4> image_min{}, image_max{};
    // A lesson's "predict, then reveal" (figure_cover.hpp): panels covered (by FigureHeatmap), and one cell whose
    // code, r' and error are covered, until R reveals them; the tooltip and the pipeline keep the secret too.
    std::array<bool, 4> covered{};
    std::int64_t covered_code = -1;  // flat index, -1: none

    // [Out] the size the cell values were printed at last frame (one size for the four panels); 0: hidden,
    // because they do not fit at the current text size (or annotate is off).
    float annotation_size = 0.0f;
    // [Out] per panel, last frame: the cells whose value was printed, of those in view (a test of "every value
    // that fits is printed"), and whether the row / grid decision gave the grid.
    std::array<std::int64_t, 4> annotated_cells{}, visible_cells{};
    bool used_grid = false;
    // [Out] the height the last frame's drawing took from the top of its rectangle: its images' rows packed
    // (an image shorter than its row's room, a wide tensor's cells stretched as far as they may, leaves no band
    // between the rows), then its legend, strip and pipeline lines. The rest of the rectangle is empty.
    float used_height = 0.0f;
    // [Out] the colorbars' one legend under the images last frame, when there are no caption rows to give each
    // bar its own (presenter mode); empty: none drawn.
    std::string colorbar_legend;
    // [Out] a click in the block strip this frame: the block to show (the app points the histogram at it).
    std::int64_t clicked_block = -1;
};

// Draws the figure in a `size` rectangle at the cursor (size.y <= 0: the height FigurePanelHeight gives), laid
// out as `look` says. Hover a cell for its pipeline in a tooltip; click to select it (outlined in all four panels).
void DrawFigurePanel(FigurePanelState& state, const QuantView& view, ImVec2 size, const FigureLook& look = {});

// The size the cell values would be printed at if the figure were drawn now in `size` with `look` (0: hidden),
// for a caller choosing between layouts or text sizes (presenter mode). Draws nothing.
float FigureAnnotationSize(FigurePanelState& state, const QuantView& view, ImVec2 size, const FigureLook& look = {});
// How the figure fits `size` with `look`: the height each heatmap row gets once the titles, captions, strip and
// trace are placed (< 16 px: they overflow, and the images are drawn at 16 px below them) and one panel's image.
struct FigureFit {
    float heat_room = 0.0f;
    ImVec2 image{0.0f, 0.0f};
};
FigureFit FigureFitIn(FigurePanelState& state, const QuantView& view, ImVec2 size, const FigureLook& look = {});

// A height that gives square-ish heatmaps for this width, with titles, toolbar and pipeline, for the current
// font: what the PNG export uses.
float FigurePanelHeight(FigurePanelState& state, const QuantView& view, float width, const FigureLook& look = {});
// The least height that leaves the heatmaps about three lines of text tall beside the toolbar, titles,
// captions, block strip and the selected element's pipeline (less would draw them over what follows).
float FigurePanelMinHeight(FigurePanelState& state, const QuantView& view, float width, const FigureLook& look = {});

}  // namespace qs::gui
