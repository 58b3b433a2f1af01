// The Formats tab (issue 12, the cost ledger): `quantscope formats` for the document's tensor, i.e. every
// number format of FORMATS.md and int8 / int4 per tensor, per channel and in groups, with what each costs
// (bits per weight, bytes) and loses (MSE, SQNR, largest error), beside a chart of SQNR against bits per
// weight with the Pareto front drawn as a staircase and the current choice highlighted. Clicking a point or
// a row asks for its configuration (the app applies it as an undoable change).
// The rows are core's (format_table_row, pareto_front), computed a row at a time in the background when the
// tensor changes (not when the settings do: the table does not depend on them), mapped tensors included.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/quant_view.hpp"
#include "gui/document/task.hpp"
#include "gui/document/tensor_data.hpp"
#include "gui/panels/intents.hpp"
#include "quantscope/config.hpp"
#include "quantscope/format_table.hpp"

namespace qs::gui {

struct FormatsPanelState {
    // [Internal state]
    struct Table {
        std::vector<FormatRow> rows;       // in format_table_configs order, as far as computed
        std::vector<std::string> skipped;  // "fp16: <why>" for a configuration that failed on this tensor
        std::size_t total = 0;             // configurations in the table
        std::optional<float> amax;         // the values' largest magnitude once a row has read them
        double ms = 0;
    };
    Task<Table> task;
    Table shown;
    TensorKey tensor_key;  // what `shown` (and the running task) is for
    bool started = false;
    bool stopped = false;    // the user pressed Stop before the last row: Continue resumes
    bool suspended = false;  // the tab was left before the last row: resumes when it is shown again
    // Display: the rows of `shown` sorted by bits per weight, and the order the table's sort asks for.
    std::vector<FormatRow> sorted;
    std::vector<std::size_t> front;  // pareto_front(sorted)
    std::vector<std::size_t> order;  // indices into sorted, in the table's order
    int sort_column = 2;             // the table's sort (a column: 2 is bits per weight), as its headers set it
    bool sort_descending = false;
    int current = -1;                // the row of `sorted` equal to the document's config, or -1
    int hovered = -1;                // the row under the mouse (chart or table), or -1
    // Where the last frame drew things (screen coordinates, for tests): each row's point (indexed like
    // `sorted`; x < 0 where not drawn), the plot's frame and each table row's centre (indexed like `sorted`).
    std::vector<ImVec2> point;
    std::vector<ImVec2> row_center;
    std::vector<ImVec2> header_center;  // the table's headers, by column (Format, Granularity, Bits/w, ..., Max error)
    ImVec2 plot_min, plot_max;
};

// Contents only; fills the available region. `data` is the shared owner of view.data (the table reads it
// on a worker thread). A point or a row clicked asks for its configuration (what its numbers were computed
// with) as a checked PickConfigIntent.
void DrawFormatsPanel(FormatsPanelState& state, const QuantView& view, const std::shared_ptr<const TensorData>& data,
                      Intents& out);

bool FormatsBusy(const FormatsPanelState& state);
// The tab is hidden: stop computing (the rows so far are kept; the rest is computed when it is shown again).
void SuspendFormats(FormatsPanelState& state);
// Blocks until the whole table is computed and shown (tests, scripted screenshots).
void FinishFormats(FormatsPanelState& state, const QuantView& view, const std::shared_ptr<const TensorData>& data);

// "int4 group 32", "nvfp4 block 16", "fp8-e4m3": a row's format and granularity in a few words.
std::string FormatRowName(const FormatRow& row);

// What a row's tooltip says (in the table and on the chart): its numbers, whether it is on the Pareto front
// or which front row beats it, and what a click does. `i` indexes state.sorted.
std::string FormatRowTooltip(const FormatsPanelState& state, std::size_t i);

// The chart (formats_chart.cpp): SQNR (dB) against bits per weight for the rows of state.sorted, the front,
// the current choice (`current_bits`, `current_sqnr`: the document's own numbers, drawn even where no row
// has its settings; `current_label` names them in the ring's tooltip). Returns the row clicked, or -1; sets
// state.hovered when the mouse is over a point.
int DrawFormatsChart(FormatsPanelState& state, ImVec2 size, double current_bits, double current_sqnr,
                     const std::string& current_label);

}  // namespace qs::gui
