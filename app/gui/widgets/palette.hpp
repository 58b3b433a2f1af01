// The window's one palette: every color that carries a meaning (the quantization range, clipping, better and
// worse, the current and the best point) is named here once, so the same meaning has the same color in every
// panel and in the headless figures. Colors that depend on the theme are functions (call inside a frame).
#pragma once

#include <imgui.h>

namespace qs::gui {

// True when the current ImGui style has a light window background (the PNG export, --lesson-look).
bool IsLightTheme();

namespace palette {

// The representable range [s (q_min - z), s (q_max - z)] and the lessons' min/max (s, z): one orange.
constexpr ImU32 kRange = IM_COL32(215, 110, 0, 255);
// Values inside the range, and the ones that clip.
constexpr ImU32 kInside = IM_COL32(70, 110, 170, 255);
constexpr ImU32 kClipped = IM_COL32(205, 55, 35, 255);
constexpr ImU32 kOutsideShade = IM_COL32(220, 60, 40, 38);  // the background outside the range
// Points of a plot: where the user is, and the best one found; an outline that keeps them visible.
constexpr ImU32 kCurrent = IM_COL32(230, 30, 60, 255);
constexpr ImU32 kBest = IM_COL32(255, 255, 255, 255);
constexpr ImU32 kOutline = IM_COL32(0, 0, 0, 255);
constexpr ImU32 kCurve = IM_COL32(40, 90, 170, 255);
constexpr ImU32 kHoverCell = IM_COL32(255, 255, 255, 255);  // the cell under the mouse
constexpr ImU32 kSelected = IM_COL32(255, 214, 0, 255);      // the followed element, inside a kOutline frame
// Per-channel / group blocks on a heatmap: their outlines, and the light shade over every other one.
constexpr ImU32 kBlockOutline = IM_COL32(20, 20, 20, 190);
constexpr ImU32 kBlockTint = IM_COL32(0, 0, 0, 26);
// Bars of a per-block chart (the blocks' s and z), and the lighter span min..max where one pixel column
// stands for many blocks.
constexpr ImU32 kBlockBar = IM_COL32(70, 110, 170, 255);
constexpr ImU32 kBlockBarSpan = IM_COL32(70, 110, 170, 110);
// A translucent green behind what is best (a table row, a metric that beats the other column).
constexpr ImU32 kBetterRowLight = IM_COL32(120, 200, 120, 90);
constexpr ImU32 kBetterRowDark = IM_COL32(60, 160, 80, 90);
// The Formats chart: a point per format, colored by its kind (the shapes differ too), and the Pareto front's
// staircase in kCurve.
constexpr ImU32 kFormatInt = IM_COL32(150, 150, 160, 255);
constexpr ImU32 kFormatFloat = IM_COL32(30, 160, 130, 255);
constexpr ImU32 kFormatCodebook = IM_COL32(160, 90, 190, 255);
constexpr ImU32 kFormatBlock = IM_COL32(225, 170, 40, 255);
// What a lesson covers until it is revealed ("predict, then reveal"), and the "?" on it.
constexpr ImU32 kCover = IM_COL32(208, 210, 216, 255);
constexpr ImU32 kCoverText = IM_COL32(70, 72, 84, 255);
// Behind the one-line error banner at the top of the window (white text on it in either theme).
constexpr ImU32 kErrorBanner = IM_COL32(115, 26, 26, 255);
// The Bits view's boxes, one colour per field of a code (the usual float-converter colours: sign blue,
// exponent green, mantissa red), an integer code, the other codes that share its packed byte, and the
// dark digits and outlines on them (readable in either theme: the fills are light).
constexpr ImU32 kBitSign = IM_COL32(140, 180, 240, 255);
constexpr ImU32 kBitExponent = IM_COL32(140, 210, 140, 255);
constexpr ImU32 kBitMantissa = IM_COL32(240, 150, 140, 255);
constexpr ImU32 kBitCode = IM_COL32(200, 170, 235, 255);
constexpr ImU32 kBitOtherCode = IM_COL32(205, 205, 205, 255);
constexpr ImU32 kBitDigit = IM_COL32(20, 20, 24, 255);
constexpr ImU32 kBitOutline = IM_COL32(40, 40, 48, 255);

}  // namespace palette

// Text of a better / worse number, readable on the current theme.
ImVec4 BetterTextColor();
ImVec4 WorseTextColor();
// The row background behind the best entry, for the current theme.
ImU32 BetterRowColor();
// A warning (clipping, overflow): darker on a light background, lighter on a dark one.
ImU32 WarningColor();

}  // namespace qs::gui
