// The figure's colors and printed formats (internal to the figure panel): the value ranges kept per tensor and
// per result, and the four heatmaps' styles made from them and the settings.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/widgets/heatmap.hpp"

namespace qs::gui {

struct PanelStyles {
    std::array<HeatmapStyle, 4> styles;
};

// Refreshes the state's color ranges: the original's per tensor, the dequantized and error per generation.
void UpdateRanges(FigurePanelState& st, const QuantView& qv);

// The four panels' styles for a drawing with `look`. `white_readable`: the lesson look may draw original and
// error white (their values are printed).
PanelStyles MakeStyles(const FigurePanelState& st, const FigureLook& look, const QuantView& qv, bool white_readable);

// A diverging colorbar with a centre (0, or z for codes) stretches each side to its own extreme: the ticks of
// the two sides are not evenly spaced, and its legend says why ("centred on 0: each side scaled to its extreme").
bool HasCenteredLegend(const HeatmapStyle& s);
std::string CenteredLegend(const HeatmapStyle& s, int panel, bool short_form);
// The same said once for all four colorbars, for a figure without caption rows (presenter mode): which panels'
// bars are centred where, as parts to wrap at ("original and dequantized bars centred on 0;", ...). Empty when
// no bar is centred. A `covered` panel's bar (a lesson's "predict, then R") is left out: its centre is z.
std::vector<std::string> ColorbarLegendParts(const PanelStyles& ps, const std::array<bool, 4>& covered = {});

}  // namespace qs::gui
