// Text of every figure: numbers formatted one way, and typographic symbols that fall back to ASCII when the
// font lacks them (ImGui's built-in font has no arrows or minus sign).
#pragma once

#include "gui/widgets/palette.hpp"  // WarningColor, for the text drawn with it

#include <string>
#include <vector>

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

// `text` as it is when it fits in `width` pixels at the current font; else cut after the last whole word that
// leaves room for "...", so a label is shortened, never cut mid-word (a single long word is cut where it must).
std::string FitText(const std::string& text, float width);

// %.6g with a real minus sign when the font has one.
std::string FormatNumber(double v);


// Draws text parts left to right at the cursor, wrapping to a new line at `width`. Parts after the first are
// joined by `separator` (dimmed; e.g. an arrow: the steps of a pipeline). Part `highlight` (none when < 0) is
// drawn in the warning color (a clipped value).
void DrawWrappedParts(const std::vector<std::string>& parts, float width, int highlight, const char* separator,
                      int gap_spaces = 2);

// Like ImGui::TextWrapped in the current text color, but breaks only at spaces: TextWrapped also breaks after
// '.', which splits a number ("2." / "85725").
void TextWrappedAtSpaces(const std::string& text);

}  // namespace qs::gui
