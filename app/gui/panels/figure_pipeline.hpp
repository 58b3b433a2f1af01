// The selected element's pipeline printed under the figure's images (a wide slice leaves the rest of the
// panel empty), and its parts, which the figure's layout measures to reserve every line they wrap to.
#pragma once

#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "gui/panels/figure_panel.hpp"

namespace qs::gui {

// The selected element's heading and pipeline steps (`highlight`: the clamp step of a clipped element, else
// -1); empty without a selection, or while a lesson covers its code.
std::vector<std::string> SelectedPipelineParts(const FigurePanelState& st, const QuantView& qv, int* highlight);

// The pipeline at (x, y), `width` wide: the hint to click a cell, "predict its code" while a lesson covers
// it, or the steps of the selected element.
void DrawFigurePipeline(const FigurePanelState& st, const QuantView& qv, float x, float y, float width);

}  // namespace qs::gui
