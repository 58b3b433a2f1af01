// Where the figure's four heatmaps get their cells (issue 10): the document holds no full-size results, only
// the quantization's overview (one pass, about screen resolution). A tensor of at most kOverviewCells cells has
// an exact overview (its blocks are the cells): every window is reduced from it. Otherwise a window of at most
// kExactWindowCells cells (zoomed in far enough to tell cells apart) is computed at full resolution on demand
// by core's quantize_window, once for the four panels, and reduced exactly as a full array would be; larger
// windows are reduced from the overview's blocks. Printed values and tooltips are always exact: a cell outside
// the computed window is read from an exact overview or traced alone.
#pragma once

#include <array>
#include <cstdint>

#include "gui/document/quant_view.hpp"
#include "gui/widgets/heatmap.hpp"
#include "quantscope/overview.hpp"

namespace qs::gui {

constexpr std::int64_t kExactWindowCells = std::int64_t{1} << 20;

class FigureTiles {
public:
    enum Kind { Original = 0, Codes = 1, Dequantized = 2, Error = 3 };

    // Once a frame before drawing: the view and slice the heatmaps show. The sources it hands out point into
    // this object (which must stay put until they are drawn).
    void bind(const QuantView& view, std::int64_t slice);
    const HeatmapTiles* tiles(int kind) const { return &tiles_[static_cast<std::size_t>(kind)]; }

    // How many full-resolution windows were computed (tests check that zooming computes, panning within does not).
    std::uint64_t windows_computed() const { return windows_computed_; }
    const WindowResults& last_window() const { return window_; }

private:
    void reduce(int kind, const CellWindow& w, std::int64_t fy, std::int64_t fx, Reduction reduction, float* out);
    double value(int kind, std::int64_t row, std::int64_t col) const;
    bool window_holds(const CellWindow& w) const;
    const float* overview_blocks(int kind) const;  // the overview's blocks of one kind in the bound slice
    void reduce_overview(const float* blocks, const CellWindow& w, std::int64_t fy, std::int64_t fx,
                         Reduction reduction, float* out) const;

    QuantView view_;
    std::int64_t slice_ = 0;
    std::array<HeatmapTiles, 4> tiles_;
    WindowResults window_;
    bool has_window_ = false;
    std::uint64_t window_generation_ = 0;
    std::uint64_t windows_computed_ = 0;
};

}  // namespace qs::gui
