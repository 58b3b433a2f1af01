// Text of every figure: numbers formatted one way, and typographic symbols that fall back to ASCII when the
// font lacks them (ImGui's built-in font has no arrows or minus sign).
#pragma once

#include "gui/widgets/palette.hpp"  // WarningColor, for the text drawn with it

#include <string>

#include <imgui.h>
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

// The window's number formats, one place for all of them:
// %.6g with a real minus sign when the font has one (readouts, legends, tooltips).
std::string FormatNumber(double v);
// A whole number (codes, counts), rounded.
std::string FormatInteger(double v);
// Fixed point with `decimals` decimals (cells, tick labels), never "-0.00" from rounding noise around zero;
// %.3g when more than `max_decimals` would be needed (a tiny or denormal range would print as 0.000000).
std::string FormatFixed(double v, int decimals, int max_decimals);
// An SQNR where it has no number (comparable_sqnr_db's infinities), one wording for every table, chart and
// tooltip: "exact" (+inf: no error at all) and "no signal" (-inf: an all-zero tensor with an error); "" when finite.
std::string SqnrWord(double comparable_db);
// An SQNR in a table or a tooltip: FormatFixed(db, 2, 4), with " dB" when `unit`, else SqnrWord.
std::string FormatSqnr(double comparable_db, bool unit = false);


// Draws text parts left to right at the cursor, wrapping to a new line at `width`. Parts after the first are
// joined by `separator` (dimmed; e.g. an arrow: the steps of a pipeline). Part `highlight` (none when < 0) is
// drawn in the warning color (a clipped value).
void DrawWrappedParts(const std::vector<std::string>& parts, float width, int highlight, const char* separator,
                      int gap_spaces = 2);
// The height DrawWrappedParts would take for these parts (what a layout reserves for them), drawing nothing.
float WrappedPartsHeight(const std::vector<std::string>& parts, float width, const char* separator, int gap_spaces = 2);

// Like ImGui::TextWrapped in the current text color, but breaks only at spaces: TextWrapped also breaks after
// '.', which splits a number ("2." / "85725").
void TextWrappedAtSpaces(const std::string& text);

// Text drawn straight into a draw list (a plot's label, a wrapped part) is no ImGui item: the window's content
// size does not grow with it, so a label cut at the window's edge, or a single word wider than its line, went
// unnoticed by --layout-report. DrawTextAt draws it and notes it as cut when it runs past the draw list's clip
// rectangle or past `right` (its line's end); CutTextWindows names the windows where that happened this frame.
void DrawTextAt(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text, float right = 3.0e38f);
std::vector<std::string> CutTextWindows();

}  // namespace qs::gui
