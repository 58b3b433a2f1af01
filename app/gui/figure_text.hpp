// Text shared by the figure's tooltip, its pipeline line and the metrics panel: the steps of the formula for one
// element, and typographic symbols that fall back to ASCII when the font lacks them (ImGui's built-in font has
// no arrows or minus sign).
#pragma once

#include <string>
#include <vector>

#include "quant_view.hpp"

namespace qs::gui {

struct Sym {
    const char* arrow;  // "→" or "->"
    const char* minus;  // "−" or "-"
    const char* prime;  // "′" or "'"
    const char* times;  // "×" or "x"
    const char* dash;   // "—" or "-"  (an undefined value)
    const char* alpha;  // "α" or "alpha"
};
// The symbols the current font can draw (call inside a frame).
Sym Symbols();

// %.6g with a real minus sign when the font has one.
std::string FormatNumber(double v);

// The pipeline of one element, one step a line:
//   r = 728.6 | r / s + z = 728.6 / 3.57882 + (-77) = 126.586 | round(126.586) = 127 |
//   q = clamp(127, -128, 127) = 127 | r' = s (q - z) = 730.08 | |r - r'| = 1.48
std::vector<std::string> PipelineLines(const QuantView& view, const ElementTrace& trace);

// Draws text parts left to right at the cursor, wrapping to a new line at `width`. Parts after the first are
// joined by `separator` (dimmed; e.g. an arrow: the steps of a pipeline). Part `highlight` (none when < 0) is
// drawn in the warning color (a clipped value).
void DrawWrappedParts(const std::vector<std::string>& parts, float width, int highlight, const char* separator);

// The color of a warning (clipping, overflow) in the current theme.
unsigned int WarningColor();

}  // namespace qs::gui
