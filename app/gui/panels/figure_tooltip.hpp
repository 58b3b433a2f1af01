// The tooltip over a figure cell: the element's index, its block's s and z, and its pipeline step by step.
#pragma once

#include <cstdint>

#include "gui/document/quant_view.hpp"
#include "gui/widgets/heatmap.hpp"

namespace qs::gui {

// `flat` is the element's index in the tensor; `hs` is the state of the heatmap it is hovered on (panel
// `panel`), which says whether a pixel there stands for several cells.
// `hide_pipeline`: a lesson covers what the pipeline would tell (covers.hpp): the element and r only.
void DrawTraceTooltip(const QuantView& qv, std::int64_t flat, const HeatmapState& hs, int panel, bool hide_pipeline = false);

}  // namespace qs::gui
