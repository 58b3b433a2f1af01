// The figure's options above its titles (colormap, lesson look, layout, shared range, values, slice, zoom),
// flowing onto a second line where the window is too narrow for one (a projector's large text), and the hint
// or note that ends it: how to zoom, the zoomed rows and columns, or that the values are hidden.
#pragma once

#include <string>

#include "gui/document/quant_view.hpp"
#include "gui/panels/figure_panel.hpp"

namespace qs::gui {

// How many lines the toolbar takes in `width` at the current font, with `note` (see below).
int FigureToolbarLines(const FigurePanelState& state, const QuantView& view, float width, const std::string& note);

// Draws it at the cursor in `width`. `note` (may be empty) replaces the zoom hint, in the warning color.
void DrawFigureToolbar(FigurePanelState& state, const QuantView& view, float width, const std::string& note);

}  // namespace qs::gui
