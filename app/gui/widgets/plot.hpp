// The plot kit: what every plot of the window and of the headless figures is drawn with. Axes (linear or
// log) with their ticks and tick labels, colorbar gradients and ticks, markers and legends; colors come from
// palette.hpp. A panel computes what to plot and lays it out; how a tick or a marker looks is decided here.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/widgets/colormap.hpp"

namespace qs::gui {

// ------------------------------------------------------------------------------------------------ ticks

// Round ticks (steps of 1, 2 or 5 times a power of ten) covering [lo, hi], about `target` of them. Sets
// *decimals to the decimals their labels need (e.g. 1 for a step of 0.5). A zero-width range gives its one
// value; non-finite ends give none.
std::vector<double> NiceTicks(double lo, double hi, int target, int* decimals);
// Ticks of a log axis over [lo, hi] (both > 0): 1, 2 and 5 times powers of ten, or powers of ten only (every
// k-th) when those are more than about `target`; the two ends when no such value falls inside.
std::vector<double> LogTicks(double lo, double hi, int target);

// A linear tick's label: `decimals` decimals, "%.2g" from 1e5 on, "%.3g" when more than 6 decimals would be
// needed (a tiny range), never "-0" (rounding noise around zero).
std::string TickLabel(double v, int decimals);
// A log tick's label, short: "0.002", "5e-5", "3e+6" as "3e6", with the font's minus sign.
std::string LogTickLabel(double v);

// ------------------------------------------------------------------------------------------------- axes

// Values lo..hi drawn from screen position p0 to p1 (x left to right; for a vertical axis y bottom to top,
// so p0 > p1), linearly or in log (both ends > 0).
struct PlotAxis {
    double lo = 0.0, hi = 1.0;
    float p0 = 0.0f, p1 = 1.0f;
    bool log = false;
    float at(double v) const;
};

// Tick marks down from height y under a horizontal axis and their labels centred below them, kept between
// label_min_x and label_max_x (a label cut at the window's edge could read "0.008" for "-0.008"). About
// `target` ticks.
void DrawTicksBelow(ImDrawList* dl, const PlotAxis& axis, float y, int target, float label_min_x, float label_max_x);
// Tick marks left of x beside a vertical axis and their labels right-aligned before them; `integers_only`
// drops fractional ticks (an axis of zero points). With grid_to_x > x, faint grid lines run across to it.
void DrawTicksLeft(ImDrawList* dl, const PlotAxis& axis, float x, int target, bool integers_only, float grid_to_x = 0.0f);

// ------------------------------------------------------------------------------------------- colorbars

// A vertical colorbar's gradient: the colormap's parameter t from t_lo at the bottom to t_hi at the top (t in
// [0, 1]; outside is clamped), with a border.
void DrawColorbarGradient(ImDrawList* dl, const ColorLut& lut, double t_lo, double t_hi, ImVec2 bar_min, ImVec2 bar_max);

struct BarTick {
    double value = 0.0;
    float pos = 0.0f;  // 0 = bottom of the bar, 1 = top
    std::string label;
};
// Tick marks right of the bar and their labels.
void DrawColorbarTicks(ImDrawList* dl, const std::vector<BarTick>& ticks, ImVec2 bar_min, ImVec2 bar_max);
// The ticks of a log colorbar over [lo, hi] (both > 0) for a bar `bar_height` pixels tall, no two labels
// closer than a line of text.
std::vector<BarTick> LogColorbarTicks(double lo, double hi, float bar_height);
// The width a colorbar takes beside a plot: gap, bar, tick and the widest of `labels`.
float ColorbarWidth(float widest_label);

// ------------------------------------------------------------------------------------------ bar charts

// One bar per value over [x0, x1) (left to right by index), from `baseline` to the value on `y_axis`, in
// `color`; `highlight` (none when < 0) in the selection color. Where values outnumber the pixel columns, each
// column stands for its values: solid from the baseline to the one nearest it, `span_color` up to the farthest.
void DrawBars(ImDrawList* dl, const std::vector<double>& values, const PlotAxis& y_axis, double baseline, float x0,
              float x1, ImU32 color, ImU32 span_color, std::int64_t highlight);
// The values a pixel x of such a chart stands for: [first, last] (first > last: none).
void BarsAt(std::size_t count, float x0, float x1, float x, std::int64_t& first, std::int64_t& last);

// A checkpoint's tensors as bars in file order (the Model tab's SQNR per tensor, and its comparison of two
// checkpoints): an item's bar rises from 0 to its value on a left axis up to the largest value (at least 1);
// an item without a value (nothing lost: as good as it gets) reaches the top, a failed one is a red foot.
// The chart is an invisible button of `size` (ticks inside it on the left); returns the item under the mouse,
// or -1, for the caller's tooltip.
struct TensorBar {
    bool failed = false;
    std::optional<double> value;
    ImU32 color = 0;
};
int DrawTensorBars(const char* id, std::size_t count, const std::function<TensorBar(std::size_t)>& bar, ImVec2 size);

// ------------------------------------------------------------------------------------ markers, legends

// Circle is a ring (what lies beneath stays visible: the current point); Dot and Square are filled.
enum class MarkerShape { Circle, Diamond, Triangle, Square, Dot };
// A marker of `radius` pixels with a dark outline, so it stays visible on any color beneath.
void DrawMarker(ImDrawList* dl, ImVec2 centre, MarkerShape shape, ImU32 fill, float radius);

// ------------------------------------------------------------------------------------------------ lines

// The staircase through `points` (screen positions in increasing x): from each point level to the next one's
// x, then up (or down) to it, and from the last point level on to x_end (a Pareto front: the best y any
// point offers for a budget of at most x).
void DrawStepLine(ImDrawList* dl, const std::vector<ImVec2>& points, ImU32 color, float thickness, float x_end);

// One line of a legend: a marker and its text, or text alone (dim: an indented detail; warn: the warning color).
struct LegendEntry {
    bool has_marker = false;
    MarkerShape shape = MarkerShape::Circle;
    ImU32 color = 0;
    std::string text;
    bool dim = false;
    bool warn = false;
};
LegendEntry MarkerEntry(MarkerShape shape, ImU32 color, std::string text);
LegendEntry TextEntry(std::string text, bool dim, bool warn = false);
float LegendWidth(const std::vector<LegendEntry>& entries);
// The entries top-down from `at` (screen position), as ImGui items.
void DrawLegend(const std::vector<LegendEntry>& entries, ImVec2 at);
// The entries left to right from `at` into `dl`, wrapping to a new line before `width` is exceeded (no ImGui
// items: it takes no part in the layout). Returns the height drawn (lines times the text line height).
float DrawLegendRow(ImDrawList* dl, const std::vector<LegendEntry>& entries, ImVec2 at, float width);
// The height DrawLegendRow will take for `entries` in `width`.
float LegendRowHeight(const std::vector<LegendEntry>& entries, float width);

}  // namespace qs::gui
