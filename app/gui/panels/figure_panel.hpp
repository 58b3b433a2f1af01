// The lessons' figure (their helper `plot_quantization_errors`): four heatmaps side by side, "Original Tensor",
// "<N>-bit Linear Quantized Tensor", "Dequantized Tensor", "Quantization Error Tensor", each with its colorbar,
// sharing one zoom/pan view and one selected element whose whole pipeline is printed below them.
// DrawFigurePanel is "contents only": it draws into whatever window is current, so the GUI window and the
// headless PNG (offscreen.hpp) are the same code.
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

namespace qs::gui {

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
    // Four panels as a 2 x 2 grid instead of a row: twice the width each, for a projector's large text
    // or a 3 x 3 tensor whose printed values need big cells. (A row too narrow for its colorbars switches
    // to the grid by itself.)
    bool grid = false;
};

// One (key, value) pair per field: ("colormap", "coolwarm"), ("lesson_look", "0"), ... as settings.ini and a
// session's view keep them.
std::vector<std::pair<std::string, std::string>> FigurePanelSettingPairs(const FigurePanelSettings& settings);
// Applies one pair as written above; returns false for an unknown key or a bad value (the
// settings are then unchanged), so that an old or hand-edited settings file cannot break the panel.
bool ApplyFigurePanelSetting(FigurePanelSettings& settings, const char* key, const char* value);

// How far the figure's cells may stretch from square unless a presenter asks for more.
constexpr float kDefaultCellAspect = 1.5f;

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
    // Layout knobs a presenter turns (not settings: they last while it draws): how far cells may stretch from
    // square, and whether a row of caption ("1 px = mean of ...") is kept under each image.
    float max_cell_aspect = kDefaultCellAspect;
    static constexpr float kDefaultAnnotationShare = 0.42f;
    float annotation_height_share = kDefaultAnnotationShare;  // a presenter lets printed values fill more of a cell
    bool captions = true;
    // A lesson's "predict, then reveal" (figure_cover.hpp): panels covered (by FigureHeatmap), and one cell whose
    // code, r' and error are covered, until R reveals them; the tooltip and the pipeline keep the secret too.
    std::array<bool, 4> covered{};
    std::int64_t covered_code = -1;  // flat index, -1: none
    // [Out] the size the cell values were printed at last frame (one size for the four panels); 0: hidden,
    // because they do not fit at the current text size (or annotate is off).
    float annotation_size = 0.0f;
};

// Draws the figure in a `size` rectangle at the cursor (size.y <= 0: the height FigurePanelHeight gives).
// Hover a cell for its pipeline in a tooltip; click to select it (outlined in all four panels).
void DrawFigurePanel(FigurePanelState& state, const QuantView& view, ImVec2 size);

// A height that gives square-ish heatmaps for this width, with titles, toolbar and pipeline, for the current
// font: what the PNG export uses.
float FigurePanelHeight(const FigurePanelState& state, const QuantView& view, float width);

}  // namespace qs::gui
