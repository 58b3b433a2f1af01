// "Predict, then reveal": what a lesson step (or the R key) covers on the figure until it is revealed, a whole
// panel or one cell's code (with its r' and error, which would give the code away).
#pragma once

#include <cstdint>
#include <string>

#include <imgui.h>

#include "gui/panels/covers.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/widgets/heatmap.hpp"

namespace qs::gui {

// What the figure covers, as every drawer of a number asks it (covers.hpp).
Covers FigureCoversOf(const FigurePanelState& st);
// Whether element `flat` of `panel` is covered (the panel, or the covered cell outside the original).
bool FigureCovers(const FigurePanelState& st, int panel, std::int64_t flat);
// Whether the followed element's pipeline would give away something covered.
bool FigureHidesPipeline(const FigurePanelState& st, std::int64_t flat);
bool FigureCoversAnything(const FigurePanelState& st);

// Draws the covers of `panel` over the heatmap just drawn (`r`: its image; `column_max`: the bottom right of its
// column, colorbar included), for the slice starting at flat index `slice_offset` with `cols` columns.
// A panel with nothing to show drawn over with `text` (centred, wrapped to the panel; `short_text` where the panel
// is too low for it), e.g. the quantized panel of a Model-tab row against a B that stores plain values: no codes.
void DrawFigureNote(const HeatmapResult& r, ImVec2 column_max, const std::string& text, const std::string& short_text);

void DrawFigureCover(const FigurePanelState& st, int panel, const HeatmapResult& r, const HeatmapView& view,
                     std::int64_t cols, std::int64_t slice_offset, ImVec2 column_max);

}  // namespace qs::gui
