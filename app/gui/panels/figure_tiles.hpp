// Where the figure's four heatmaps get their cells (issue 10): the document holds no full-size results, only
// the quantization's overview (one pass at the resolution the textures show: the blocks they ask for, see
// asked_blocks) and the tensor's values overview (kOverviewCells blocks at most; exact below). A texture whose
// blocks the overviews hold is reduced from them. One finer than the tensor's own grid allows (zoomed in far
// enough to tell cells apart on a tensor above kOverviewCells cells) and of at most kExactWindowCells cells is
// computed at full resolution on demand by core's quantize_window, once for the four panels, and reduced
// exactly as a full array would be; larger windows are reduced from the overview's blocks. A texture whose blocks
// the document's overview does not tile (a figure of another size than the window's, the frame between a zoom
// and the document's recompute) is reduced from an overview computed here at its blocks when the tensor is small
// enough for the UI thread (kSyncElements), else from the overlapping blocks. Printed values and tooltips are
// always exact: a cell outside the computed window is read from an exact overview or traced alone.
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

    // The blocks (fy x fx cells a texel) of the quantization's textures reduced since the last call, as the
    // greatest common divisor of each side (0 x 0: none): the document's overview at those blocks makes every
    // one of them a whole number of its blocks. Clears them.
    void take_asked_blocks(std::int64_t& fy, std::int64_t& fx);

    // How many full-resolution windows were computed (tests check that zooming computes, panning within does not).
    std::uint64_t windows_computed() const { return windows_computed_; }
    const WindowResults& last_window() const { return window_; }

private:
    void reduce(int kind, const CellWindow& w, std::int64_t fy, std::int64_t fx, Reduction reduction, float* out);
    double value(int kind, std::int64_t row, std::int64_t col) const;
    bool window_holds(const CellWindow& w) const;
    const QuantOverview& overview_for(std::int64_t fy, std::int64_t fx);
    // The original's values overview, else the quantization's `o`: its grid, its blocks of the bound slice.
    const OverviewGrid& grid_of(int kind, const QuantOverview& o) const;
    const float* overview_blocks(int kind, const QuantOverview& o) const;
    void reduce_overview(int kind, const QuantOverview& o, const CellWindow& w, std::int64_t fy, std::int64_t fx,
                         Reduction reduction, float* out) const;

    QuantView view_;
    std::int64_t slice_ = 0;
    std::array<HeatmapTiles, 4> tiles_;
    WindowResults window_;
    bool has_window_ = false;
    std::uint64_t window_generation_ = 0;
    std::uint64_t windows_computed_ = 0;
    std::int64_t asked_fy_ = 0, asked_fx_ = 0;
    QuantOverview own_;  // overview_for's own, when the document's blocks do not tile a texture's
    std::uint64_t own_key_ = 0;
    bool has_own_ = false;
};

}  // namespace qs::gui
