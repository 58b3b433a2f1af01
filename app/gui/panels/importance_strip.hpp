// The importance vector (QuantConfig::importance, one weight per column) as a strip of colour above each heatmap's
// columns, aligned with them through the zoom: the student sees which columns ggml's weighted quantizer protects.
// One colour scale (viridis, 0 to the largest weight), named beside the strip and in its tooltip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/quant_view.hpp"
#include "gui/widgets/heatmap.hpp"

namespace qs::gui {

// The strip's height (six tenths of a line and a gap), 0 when the config on show weighs by no importance.
float ImportanceStripHeight(const QuantView& qv);

// "importance 0 to 2.5 (viridis)": the scale's label.
std::string ImportanceScaleLabel(const std::vector<float>& weights);

// Draws the strip over [image_min.x, image_max.x) at [y0, y1) for the columns `view` shows (clamped to the slice
// of `cols` columns), and the scale's label from image_max.x to `right` when `label`. Hovering a column tells its
// weight.
void DrawImportanceStrip(const std::vector<float>& weights, HeatmapView view, std::int64_t rows, std::int64_t cols,
                         ImVec2 image_min, ImVec2 image_max, float y0, float y1, float right, bool label);

}  // namespace qs::gui
