// The steps of the formula for one element, shared by the figure's tooltip, its pipeline line and the PNG.
#pragma once

#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"

namespace qs::gui {

// The pipeline of one element, one step a line:
//   r = 728.6 | r / s + z = 728.6 / 3.57882 + (-77) = 126.586 | round(126.586) = 127 |
//   q = clamp(127, -128, 127) = 127 | r' = s (q - z) = 730.08 | |r - r'| = 1.48
std::vector<std::string> PipelineLines(const QuantView& view, const ElementTrace& trace);

}  // namespace qs::gui
