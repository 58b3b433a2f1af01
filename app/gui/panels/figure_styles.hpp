// The figure's colors and printed formats (internal to the figure panel): the value ranges kept per tensor and
// per result, and the four heatmaps' styles made from them and the settings.
#pragma once

#include <array>

#include "gui/document/quant_view.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/widgets/heatmap.hpp"

namespace qs::gui {

struct PanelStyles {
    std::array<HeatmapStyle, 4> styles;
};

// Refreshes the state's color ranges: the original's per tensor, the dequantized and error per generation.
void UpdateRanges(FigurePanelState& st, const QuantView& qv);

// The four panels' styles. `white_readable`: the lesson look may draw original and error white (their
// values are printed).
PanelStyles MakeStyles(const FigurePanelState& st, const QuantView& qv, bool white_readable);

}  // namespace qs::gui
