#include "gui/panels/formats_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <utility>

#include <imgui.h>

#include "gui/document/stopwatch.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"

namespace qs::gui {
namespace {

// The table's columns (also the sort's column ids).
enum Column : int { kColFormat, kColGranularity, kColBits, kColBytes, kColMse, kColSqnr, kColMaxError, kColumns };

constexpr const char* kHeaders[kColumns] = {"Format", "Granularity", "Bits/w", "Bytes", "MSE", "SQNR dB", "Max error"};

std::string GranularityText(const FormatRow& r) {
    return r.granularity + (r.group_size ? " " + FormatInteger(static_cast<double>(*r.group_size)) : "");
}

// What row `r` shows in column `c`; `dim` set where it is no number (an SQNR without error or signal).
std::string CellText(const FormatRow& r, int c, bool* dim = nullptr) {
    if (dim) *dim = false;
    if (!r.error.empty() && (c == kColMse || c == kColSqnr || c == kColMaxError)) {  // r' overflowed float32
        if (dim) *dim = true;
        return c == kColMse ? "overflow" : c == kColSqnr ? "-" : "inf";
    }
    switch (c) {
        case kColFormat: return r.format;
        case kColGranularity: return GranularityText(r);
        case kColBits: return FormatFixed(r.bits_per_weight, 4, 4);
        case kColBytes: return FormatInteger(static_cast<double>(r.bytes));
        case kColMse: return FormatNumber(r.metrics.mse);
        case kColSqnr:
            if (dim) *dim = !r.metrics.sqnr_db;
            return FormatSqnr(comparable_sqnr_db(r));
        case kColMaxError: return FormatNumber(r.metrics.max_abs_error);
        default: return "";
    }
}

// Each column as wide as its widest text (the header with room for its sort arrow), not auto-fit: a table
// first drawn while its tab appears measures nothing. Without rows yet, a typical row's widths.
std::vector<float> ColumnWidths(const std::vector<FormatRow>& rows) {
    std::vector<float> w(kColumns);
    for (int c = 0; c < kColumns; ++c) w[static_cast<std::size_t>(c)] = ImGui::CalcTextSize(kHeaders[c]).x + ImGui::GetFontSize();
    FormatRow typical;
    typical.format = "mxfp8-e4m3";
    typical.granularity = "channel";
    typical.bits_per_weight = 16;
    typical.bytes = 123456789;
    typical.metrics.mse = typical.metrics.max_abs_error = 0.000123456;
    typical.metrics.sqnr_db = 100;
    auto fit = [&](const FormatRow& r) {
        for (int c = 0; c < kColumns; ++c)
            w[static_cast<std::size_t>(c)] = std::max(w[static_cast<std::size_t>(c)], ImGui::CalcTextSize(CellText(r, c).c_str()).x);
    };
    if (rows.empty()) fit(typical);
    for (const FormatRow& r : rows) fit(r);
    return w;
}

// The table's natural width: its columns, their padding and borders, and the vertical scrollbar.
float TableWidth(const std::vector<float>& widths) {
    const ImGuiStyle& style = ImGui::GetStyle();
    float w = style.ScrollbarSize + 2.0f;
    for (float c : widths) w += c + style.CellPadding.x * 2.0f + 1.0f;
    return std::ceil(w);
}

// Computes the table's rows from `first` on (the ones before are `done`), publishing the rows so far after
// each one: a row of a large mapped tensor takes seconds, the table fills in while the user watches.
void Start(FormatsPanelState& st, const std::shared_ptr<const TensorData>& data, FormatsPanelState::Table done) {
    st.started = true;
    st.stopped = st.suspended = false;
    std::shared_ptr<const TensorData> d = data;
    st.task.start([d, done = std::move(done)](Task<FormatsPanelState::Table>::Context& ctx) mutable {
        const Stopwatch clock;
        const double ms_before = done.ms;
        const std::vector<QuantConfig> configs = format_table_configs(d->shape());
        FormatsPanelState::Table table = std::move(done);
        table.total = configs.size();
        const std::size_t first = table.rows.size() + table.skipped.size();
        for (std::size_t i = first; i < configs.size() && !ctx.cancelled(); ++i) {
            ctx.set_progress(static_cast<float>(i) / static_cast<float>(configs.size()));
            try {
                table.rows.push_back(format_table_row(d->view, configs[i], table.amax));
            } catch (const std::exception& e) {
                // One format failing on this tensor (e.g. r' beyond float32) leaves the others standing.
                table.skipped.push_back(dtype_name(configs[i]) + ": " + error_text(e));
            }
            table.ms = ms_before + clock.ms();
            if (!ctx.cancelled()) ctx.publish(table);
        }
    }, "formats");
}

bool Complete(const FormatsPanelState& st) {
    return st.started && st.shown.total > 0 && st.shown.rows.size() + st.shown.skipped.size() >= st.shown.total;
}

// The value a row is sorted by in column `col` (text columns sort by their own function).
double SortKey(const FormatRow& r, int col) {
    switch (col) {
        case kColBits: return r.bits_per_weight;
        case kColBytes: return static_cast<double>(r.bytes);
        case kColMse: return r.metrics.mse;
        case kColSqnr: return comparable_sqnr_db(r);
        case kColMaxError: return r.metrics.max_abs_error;
        default: return 0.0;
    }
}

// state.sorted, .front and .current from the shown rows and the document's settings; .order from the sort the
// table's headers asked for last (state.sort_column, by bits per weight at first).
void UpdateDisplay(FormatsPanelState& st, const QuantConfig& current) {
    st.sorted = st.shown.rows;
    sort_by_bits(st.sorted);
    st.front = pareto_front(st.sorted);
    st.current = -1;
    for (std::size_t i = 0; i < st.sorted.size(); ++i)
        if (st.sorted[i].config == current) st.current = static_cast<int>(i);
    st.order.resize(st.sorted.size());
    for (std::size_t i = 0; i < st.order.size(); ++i) st.order[i] = i;
    const int col = st.sort_column;
    std::stable_sort(st.order.begin(), st.order.end(), [&](std::size_t a, std::size_t b) {
        const FormatRow &ra = st.sorted[a], &rb = st.sorted[b];
        int c = 0;
        if (col == kColFormat) c = ra.format.compare(rb.format);
        else if (col == kColGranularity) c = FormatRowName(ra).compare(FormatRowName(rb));
        else c = SortKey(ra, col) < SortKey(rb, col) ? -1 : SortKey(rb, col) < SortKey(ra, col) ? 1 : 0;
        return st.sort_descending ? c > 0 : c < 0;
    });
}

// "int8 asymmetric per tensor, minmax", "fp8-e4m3 symmetric, group 32", "nvfp4": the ring's tooltip.
std::string SettingsSummary(const QuantConfig& c) {
    std::string s = dtype_name(c);
    if (format_traits(c.format).own_blocks()) return s;  // its own recipe
    s += std::string(" ") + to_string(c.mode);
    if (c.mode == Mode::Manual) return s;
    if (c.granularity == Granularity::Channel) s += ", channel axis " + FormatInteger(c.axis);
    else if (c.granularity == Granularity::Group) s += ", group " + FormatInteger(static_cast<double>(c.group_size));
    else s += " per tensor";
    if (is_int_format(c.format)) s += ", " + calibration_label(c);
    return s;
}

// The status line: progress with Stop while computing, Continue after a stop, the time once complete.
void DrawStatus(FormatsPanelState& st, const std::shared_ptr<const TensorData>& data) {
    const std::size_t done = st.shown.rows.size() + st.shown.skipped.size();
    const std::size_t total = st.shown.total ? st.shown.total : format_table_configs(data->shape()).size();
    char buf[96];
    if (st.task.running()) {
        std::snprintf(buf, sizeof buf, "%s of %s formats", FormatInteger(static_cast<double>(done)).c_str(),
                      FormatInteger(static_cast<double>(total)).c_str());
        ImGui::ProgressBar(total ? static_cast<float>(done) / static_cast<float>(total) : 0.0f,
                           ImVec2(ImGui::GetFontSize() * 12.0f, 0.0f), buf);
        ImGui::SameLine();
        if (ImGui::SmallButton("Stop")) {
            st.task.cancel();
            st.stopped = true;
        }
    } else if (!Complete(st) && st.stopped) {
        ImGui::TextDisabled("stopped after %s of %s formats", FormatInteger(static_cast<double>(done)).c_str(),
                            FormatInteger(static_cast<double>(total)).c_str());
        ImGui::SameLine();
        if (ImGui::SmallButton("Continue")) Start(st, data, st.shown);
    } else if (Complete(st)) {
        ImGui::TextDisabled("%s formats in %s s", FormatInteger(static_cast<double>(total)).c_str(),
                            FormatFixed(st.shown.ms / 1000.0, 2, 4).c_str());
    }
    if (!st.task.error().empty()) {
        ImGui::SameLine();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.task.error().c_str());
    }
}

void RowCells(const FormatRow& r) {
    for (int c = kColGranularity; c < kColumns; ++c) {
        ImGui::TableNextColumn();
        bool dim = false;
        const std::string text = CellText(r, c, &dim);
        if (dim) ImGui::TextDisabled("%s", text.c_str());
        else ImGui::TextUnformatted(text.c_str());
        if (!r.error.empty() && c == kColMse && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.error.c_str());
    }
}

// The table; returns the row clicked (an index into state.sorted) or -1. `highlight`: the row whose point
// the mouse was over on the chart last frame.
int DrawTable(FormatsPanelState& st, const QuantConfig& current, const std::vector<float>& widths, ImVec2 size, int highlight) {
    int clicked = -1;
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                  ImGuiTableFlags_Sortable;
    if (!ImGui::BeginTable("##formats", kColumns, flags, size)) return clicked;
    ImGui::TableSetupScrollFreeze(1, 1);
    for (int c = 0; c < kColumns; ++c)
        ImGui::TableSetupColumn(kHeaders[c], ImGuiTableColumnFlags_WidthFixed | (c == kColBits ? ImGuiTableColumnFlags_DefaultSort : 0),
                                widths[static_cast<std::size_t>(c)]);
    // The header row by hand (what TableHeadersRow does), to know where each header is (tests click them).
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    st.header_center.assign(kColumns, ImVec2(-1.0f, -1.0f));
    for (int c = 0; c < kColumns; ++c) {
        if (!ImGui::TableSetColumnIndex(c)) continue;
        ImGui::PushID(c);
        ImGui::TableHeader(kHeaders[c]);
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        st.header_center[static_cast<std::size_t>(c)] = ImVec2((a.x + b.x) * 0.5f, (a.y + b.y) * 0.5f);
        ImGui::PopID();
    }
    // A click on a header changes the sort: the rows are ordered again for this frame.
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsCount > 0 && specs->SpecsDirty) {
        st.sort_column = specs->Specs[0].ColumnIndex;
        st.sort_descending = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
        specs->SpecsDirty = false;
        UpdateDisplay(st, current);
    }
    st.row_center.assign(st.sorted.size(), ImVec2(-1.0f, -1.0f));
    for (std::size_t i : st.order) {
        const FormatRow& r = st.sorted[i];
        const bool is_current = static_cast<int>(i) == st.current;
        ImGui::PushID(static_cast<int>(i));
        ImGui::TableNextRow();
        if (static_cast<int>(i) == highlight) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, ImGui::GetColorU32(ImGuiCol_HeaderHovered));
        ImGui::TableNextColumn();
        // The whole row is one selectable (the current one selected): a click switches to it, and its point
        // on the chart lights up on hover.
        if (ImGui::Selectable(r.format.c_str(), is_current, ImGuiSelectableFlags_SpanAllColumns)) clicked = static_cast<int>(i);
        if (ImGui::IsItemHovered()) {
            st.hovered = static_cast<int>(i);
            ImGui::SetTooltip("%s", FormatRowTooltip(st, i).c_str());
        }
        const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
        st.row_center[i] = ImVec2(a.x + ImGui::GetFontSize(), (a.y + b.y) * 0.5f);
        RowCells(r);
        ImGui::PopID();
    }
    ImGui::EndTable();
    return clicked;
}

}  // namespace

std::string FormatRowTooltip(const FormatsPanelState& st, std::size_t i) {
    const FormatRow& r = st.sorted[i];
    const double q = comparable_sqnr_db(r);
    const std::string sqnr = FormatSqnr(q, true);
    std::string out = FormatRowName(r) + "\n" + FormatFixed(r.bits_per_weight, 4, 4) + " bits per weight, " +
                      FormatInteger(static_cast<double>(r.bytes)) + " bytes\nSQNR " + sqnr + ", MSE " +
                      FormatNumber(r.metrics.mse) + "\n";
    // Why a row is off the front: the cheapest front row that costs no more and loses no more.
    const bool on_front = std::find(st.front.begin(), st.front.end(), i) != st.front.end();
    if (const std::optional<std::size_t> f = pareto_dominator(st.sorted, st.front, i)) {
        const FormatRow& b = st.sorted[*f];
        out += "beaten by " + FormatRowName(b) + " (" + FormatFixed(b.bits_per_weight, 4, 4) + " bits, " +
               FormatFixed(comparable_sqnr_db(b), 2, 4) + " dB)\n";
    }
    if (on_front) out += "on the Pareto front: nothing cheaper is as good\n";
    out += static_cast<int>(i) == st.current ? "(the current choice)" : "click: use it";
    return out;
}

std::string FormatRowName(const FormatRow& r) {
    if (r.granularity == "tensor") return r.format + (is_int_format(r.config.format) ? " per tensor" : "");
    return r.format + " " + GranularityText(r);
}

// Also finished with rows not yet taken: a screenshot must wait for the frame that shows the last row.
bool FormatsBusy(const FormatsPanelState& st) { return st.task.busy(); }

void SuspendFormats(FormatsPanelState& st) {
    if (!st.task.running()) return;
    st.task.cancel();
    st.suspended = true;
}

void FinishFormats(FormatsPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data) {
    if (!st.started || st.tensor_key != TensorKeyOf(qv)) {
        st.tensor_key = TensorKeyOf(qv);
        st.shown = FormatsPanelState::Table{};
        Start(st, data, {});
    }
    st.task.wait();
    if (std::optional<FormatsPanelState::Table> t = st.task.take()) st.shown = std::move(*t);
}

void DrawFormatsPanel(FormatsPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data,
                      Intents& out) {
    ImGui::PushID(&st);
    if (!qv.valid() || !data || data.get() != qv.data) {
        ImGui::TextDisabled("No result yet.");
        ImGui::PopID();
        return;
    }
    // A new tensor starts a new table; the settings do not (every row has its own).
    const TensorKey key = TensorKeyOf(qv);
    if (!st.started || st.tensor_key != key) {
        st.tensor_key = key;
        st.shown = FormatsPanelState::Table{};
        Start(st, data, {});
    } else if (st.suspended && !st.task.running()) {
        Start(st, data, st.shown);
    }
    if (std::optional<FormatsPanelState::Table> t = st.task.take()) st.shown = std::move(*t);

    UpdateDisplay(st, *qv.config);
    const int hovered_before = st.hovered;  // what the chart or the table had under the mouse last frame
    st.hovered = -1;
    // The title gives way to the status (a progress bar and Stop: about 16 characters' width).
    const std::string title = FitText("Every format on this tensor: what it costs, what it loses",
                                      ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 16.0f);
    ImGui::TextUnformatted(title.c_str());
    ImGui::SameLine();
    DrawStatus(st, data);
    ImGui::PushStyleColor(ImGuiCol_Text, WarningColor());
    for (const std::string& s : st.shown.skipped) TextWrappedAtSpaces("no row: " + s);
    ImGui::PopStyleColor();

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    // Side by side: the table at its natural width but at most 60% (it scrolls sideways then), the chart in
    // the rest. Where that would leave the chart too narrow (large text), the chart goes below the table.
    const std::vector<float> widths = ColumnWidths(st.shown.rows);
    const float h = std::max(avail.y, font * 8.0f);
    const float table_w = std::min(TableWidth(widths), std::floor(avail.x * 0.6f));
    const bool side = avail.x - table_w >= font * 18.0f;
    const ImVec2 table_size = side ? ImVec2(table_w, h) : ImVec2(avail.x, std::max(font * 6.0f, std::floor(h * 0.45f)));
    const int row_click = DrawTable(st, *qv.config, widths, table_size, hovered_before);
    if (side) ImGui::SameLine();
    const ImVec2 chart_size = side ? ImVec2(ImGui::GetContentRegionAvail().x, h)
                                   : ImVec2(avail.x, std::max(font * 12.0f, h - table_size.y - ImGui::GetStyle().ItemSpacing.y));
    const double bits = quantization_cost(*qv.config, qv.metrics().count, qv.params->block_count).bits_per_weight;
    FormatRow current_row;
    current_row.metrics = qv.metrics();
    const int point_click = DrawFormatsChart(st, chart_size, bits, comparable_sqnr_db(current_row), SettingsSummary(*qv.config));
    const int chosen = point_click >= 0 ? point_click : row_click;
    if (chosen >= 0) out.push(PickConfigIntent{st.sorted[static_cast<std::size_t>(chosen)].config, true});
    ImGui::PopID();
}

}  // namespace qs::gui
