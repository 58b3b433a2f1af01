// The numbers of the current quantization: error metrics, clipping, levels used, s and z. In manual mode a
// second column gives the same metrics for the computed (formula) s and z, the better value highlighted, so
// a student sees whether their hand-picked pair beats the lessons' formula.
#pragma once

#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "gui/panels/covers.hpp"

namespace qs::gui {

// A table (contents only; draw inside any window).
// `covers`: what a lesson step keeps covered until R (covers.hpp) shows "? (R)" in place of its number.
void DrawMetricsPanel(const QuantView& view, const Covers& covers = {});

// One line: "int8 asymmetric, s = 3.57882, z = -77 | MSE 1.573 | RMSE ... | SQNR ... dB | clipped 0 | levels 9/256".
// with_cost: also the bits per weight (presenter mode's cost ledger; the PNG caption stays as it was).
std::string MetricsSummary(const QuantView& view, bool with_cost = false, const Covers& covers = {});
// The same line's items (the settings and pairs, then one per metric), which MetricsSummary joins.
std::vector<std::string> MetricsSummaryItems(const QuantView& view, bool with_cost = false, const Covers& covers = {});
// Draws MetricsSummary wrapped to the available width (the PNG export's caption).
void DrawMetricsLine(const QuantView& view);

}  // namespace qs::gui
