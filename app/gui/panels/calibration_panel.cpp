#include "gui/panels/calibration_panel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "gui/document/stopwatch.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {
namespace {


// The config fields compare_calibrators depends on (manual mode compares the asymmetric calibrators).
QuantConfig Inputs(const QuantConfig& c) {
    QuantConfig k;
    k.dtype = c.dtype;
    k.mode = c.mode == Mode::Manual ? Mode::Asymmetric : c.mode;
    k.granularity = c.granularity;
    k.axis = c.granularity == Granularity::Channel ? c.axis : 0;
    k.group_size = c.granularity == Granularity::Group ? c.group_size : 0;
    k.rounding = c.rounding;
    return k;
}

bool SameInputs(const QuantConfig& a, const QuantConfig& b) {
    return a.dtype == b.dtype && a.mode == b.mode && a.granularity == b.granularity && a.axis == b.axis &&
           a.group_size == b.group_size && a.rounding == b.rounding;
}

void Start(CalibrationPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data) {
    st.inputs = Inputs(*qv.config);
    st.tensor_key = TensorKeyOf(qv);
    st.started = true;
    st.pending = false;
    ++st.requests;
    QuantConfig base = *qv.config;
    if (base.mode == Mode::Manual) {
        base.mode = Mode::Asymmetric;
        base.granularity = Granularity::Tensor;
    }
    std::shared_ptr<const TensorData> owner = data;
    st.task.start([owner, base](Task<CalibrationPanelState::Table>::Context& ctx) {
        const Stopwatch clock;
        CalibrationPanelState::Table table;
        if (owner->floats) {
            table.rows = compare_calibrators(*owner->floats, base);
        } else {  // a mapped tensor: passes over its file in its stored type (bf16/f16: from its bit patterns)
            PassControl control;
            control.cancel = &ctx.cancel_flag();
            control.progress = [&ctx](float f) { ctx.set_progress(f); };
            const std::vector<std::int64_t>* bits = owner->values.bit_counts.empty() ? nullptr : &owner->values.bit_counts;
            table.rows = compare_calibrators(owner->view, base, control, bits);
        }
        for (CalibrationRow& row : table.rows) row.params.keep_values_alive(owner);
        table.ms = clock.ms();
        if (!ctx.cancelled()) ctx.publish(std::move(table));
    });
}

// Rows in display order: each calibrator followed by its "recompute s" twin (asymmetric) unless that changed
// nothing (the same (s, z): a duplicate row), else as given.
std::vector<int> DisplayOrder(const std::vector<CalibrationRow>& rows) {
    std::vector<int> order;
    const int n = static_cast<int>(rows.size());
    if (n % 2 == 0 && n >= 2 && !rows[0].config.recompute_scale && rows[n / 2].config.recompute_scale) {
        for (int i = 0; i < n / 2; ++i) {
            order.push_back(i);
            if (!rows[static_cast<std::size_t>(i + n / 2)].same_as_twin) order.push_back(i + n / 2);
        }
    } else {
        for (int i = 0; i < n; ++i) order.push_back(i);
    }
    return order;
}

const CalibrationRow* Twin(const std::vector<CalibrationRow>& rows, int i) {
    const int n = static_cast<int>(rows.size());
    if (n % 2 != 0 || n < 2 || rows[0].config.recompute_scale || !rows[n / 2].config.recompute_scale) return nullptr;
    return &rows[static_cast<std::size_t>(i < n / 2 ? i + n / 2 : i - n / 2)];
}

// A row whose "recompute s" twin is hidden (the same numbers) stands for both settings.
bool IsCurrent(const CalibrationRow& row, const CalibrationRow* twin, const QuantConfig& c) {
    if (c.mode == Mode::Manual) return false;
    const QuantConfig& r = row.config;
    if (r.calibration != c.calibration) return false;
    if (r.calibration == Calibration::Percentile && std::fabs(r.percentile - c.percentile) > 1e-9) return false;
    const bool stands_for_both = twin && twin->same_as_twin;
    if (r.mode == Mode::Asymmetric && r.recompute_scale != c.recompute_scale && !stands_for_both) return false;
    return true;
}

std::string Percent(std::int64_t part, std::int64_t whole) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return buf;
}

std::string BlocksLabel(const QuantConfig& c, std::size_t blocks) {
    return std::string(c.granularity == Granularity::Group ? "per-group: " : "per-channel: ") + std::to_string(blocks);
}

// The range of every block's s (scales) or z, and the first few.
void PerBlockTooltip(const QuantParams& p, bool scales) {
    if (!ImGui::IsItemHovered()) return;
    double s_min, s_max;
    std::int32_t z_min, z_max;
    p.ranges(s_min, s_max, z_min, z_max);
    const double lo = scales ? s_min : z_min, hi = scales ? s_max : z_max;
    ImGui::BeginTooltip();
    ImGui::Text("%s values of %s, from %s to %s", FormatInteger(p.block_count).c_str(), scales ? "s" : "z",
                FormatNumber(lo).c_str(), FormatNumber(hi).c_str());
    std::string first;
    for (std::int64_t i = 0; i < std::min<std::int64_t>(p.block_count, 6); ++i)
        first += (i ? ", " : "") + FormatNumber(scales ? p.scale_of(i) : static_cast<double>(p.zero_point_of(i)));
    ImGui::TextDisabled("first: %s%s", first.c_str(), p.block_count > 6 ? ", ..." : "");
    ImGui::EndTooltip();
}

}  // namespace

std::string CalibratorName(const QuantConfig& c) {
    switch (c.calibration) {
        case Calibration::MinMax: return c.mode == Mode::Symmetric ? "max|r| (lessons)" : "min/max (lessons)";
        case Calibration::Percentile: {
            char buf[48];
            std::snprintf(buf, sizeof buf, "percentile %g", c.percentile);
            return buf;
        }
        case Calibration::Mse: return "MSE search";
    }
    return "";
}

bool ZeroPointClamped(const CalibrationRow& row, const CalibrationRow* twin) {
    if (!twin || row.config.mode != Mode::Asymmetric || row.config.recompute_scale) return false;
    const IntType& dt = row.config.dtype;
    for (std::size_t b = 0; b < row.params.zero_point.size() && b < twin->params.scale.size(); ++b) {
        const std::int32_t z = row.params.zero_point[b];
        if ((z == dt.q_min() || z == dt.q_max()) && row.params.scale[b] != twin->params.scale[b]) return true;
    }
    return false;
}

bool CalibrationBusy(const CalibrationPanelState& st) { return st.task.running() || st.pending; }

void FinishCalibration(CalibrationPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data) {
    for (int guard = 0; guard < 3; ++guard) {
        st.task.wait();
        if (std::optional<CalibrationPanelState::Table> t = st.task.take()) {
            st.shown = std::move(*t);
            st.has_shown = true;
        }
        if (!st.pending) break;
        Start(st, qv, data);
    }
}

namespace {

// Starts a table for new settings or a new tensor and takes a finished one. compare_calibrators cannot stop
// half-way: while it runs, a change only marks the table as pending, so at most one runs at a time; the stale
// table is dropped when the new one starts. Returns whether the table on show is stale.
bool RefreshTable(CalibrationPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data) {
    const bool changed = !st.started || st.tensor_key != TensorKeyOf(qv) || !SameInputs(st.inputs, Inputs(*qv.config));
    if (changed) {
        if (st.task.running()) st.pending = true;
        else Start(st, qv, data);
    }
    if (std::optional<CalibrationPanelState::Table> t = st.task.take()) {
        st.shown = std::move(*t);
        st.has_shown = true;
    }
    if (st.pending && !st.task.running()) Start(st, qv, data);
    return st.task.running() || st.pending;
}

// The heading: what the table compares, then its progress, its error or how long it took.
void DrawCalibrationHeading(const CalibrationPanelState& st, const QuantView& qv, bool stale) {
    const IntType& dt = qv.config->dtype;
    ImGui::Text("Calibrators for %s %s, %s granularity", dt.name().c_str(),
                to_string(qv.config->mode == Mode::Manual ? Mode::Asymmetric : qv.config->mode),
                to_string(qv.config->granularity));
    ImGui::SameLine();
    if (stale) {
        if (!qv.tensor)  // a mapped tensor: several passes over its file per row
            ImGui::TextDisabled("  computing on the file's %s values: %.0f%%%s", FormatInteger(qv.data->numel()).c_str(),
                                100.0 * st.task.progress(), st.has_shown ? " (the table below is for the previous settings)" : "");
        else
            ImGui::TextDisabled("  computing%s", st.has_shown ? " (the table below is for the previous settings)" : "...");
    } else if (!st.task.error().empty()) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "  %s", st.task.error().c_str());
    } else if (st.has_shown) {
        if (st.shown.ms < 1.0) ImGui::TextDisabled("  < 1 ms");
        else ImGui::TextDisabled("  %.0f ms", st.shown.ms);
    }
}

// The first row whose zero point was clamped and clips more than its "recompute s" twin: the note under the
// table quotes it (min/max, the lessons' own, when it is one).
struct ClampNote {
    bool any = false;
    std::string name;
    double clip = 0, twin_clip = 0;
};

// The header row. Widths from the widest text each column can hold, not from auto-fit: a table first drawn
// while its tab is appearing (e.g. selected by --tab) measures nothing and would keep one-letter columns.
void SetupCalibratorColumns() {
    ImGui::TableSetupScrollFreeze(0, 1);
    const float pad = ImGui::GetStyle().CellPadding.x * 2.0f;
    auto column = [&](const char* header, const char* widest) {
        ImGui::TableSetupColumn(header, ImGuiTableColumnFlags_WidthFixed,
                                std::max(ImGui::CalcTextSize(header).x, ImGui::CalcTextSize(widest).x) + pad);
    };
    column("Calibrator", "min/max (lessons)  (current)");
    column("recompute s", "yes");
    column("scale s", "0.000123456789");
    column("zero point z", "-32768  clamped");
    column("MSE", "0.000123456  best");
    column("SQNR (dB)", "100.00");
    column("clipped", "100.00%");
    column("levels used", "65536 / 65536");
    column("", "Apply");
    ImGui::TableHeadersRow();
}

// The row's s and z cells: one number each, or how many blocks with every block's in a tooltip. `dt`: the
// settings' type (the table may be for the previous settings while a new one computes).
void DrawScaleAndZeroCells(const CalibrationRow& row, bool clamped, const IntType& dt) {
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    if (row.params.block_count == 1) {
        ImGui::TextUnformatted(FormatNumber(row.params.scale_of(0)).c_str());
    } else {
        ImGui::TextUnformatted(BlocksLabel(row.config, static_cast<std::size_t>(row.params.block_count)).c_str());
        PerBlockTooltip(row.params, true);
    }
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    const ImVec4 warn = ImGui::ColorConvertU32ToFloat4(WarningColor());
    if (row.params.block_count == 1) {
        const std::int32_t z = row.params.zero_point_of(0);
        if (clamped) ImGui::TextColored(warn, "%s  clamped", FormatNumber(z).c_str());
        else ImGui::TextUnformatted(FormatNumber(z).c_str());
    } else {
        const std::string blocks = BlocksLabel(row.config, static_cast<std::size_t>(row.params.block_count));
        if (clamped) ImGui::TextColored(warn, "%s, some clamped", blocks.c_str());
        else ImGui::TextUnformatted(blocks.c_str());
        PerBlockTooltip(row.params, false);
    }
    if (clamped && ImGui::IsItemHovered())
        ImGui::SetTooltip("z = q_min %s r_min / s fell outside [%d, %d] and was clamped;\n"
                          "the lessons keep s, so the range shifts and its far end is clipped.",
                          Symbols().minus, dt.q_min(), dt.q_max());
}

// The clipped share; clipping that its twin avoids is the lessons' flaw at work, noted in `note`.
void DrawClippedCell(const CalibrationRow& row, const CalibrationRow* twin, bool clamped, ClampNote& note) {
    const Metrics& m = row.metrics;
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    const std::string clip = Percent(m.clipped, m.count);
    if (clamped && twin && m.clipped > twin->metrics.clipped) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", clip.c_str());
        if (!note.any) {
            note.name = CalibratorName(row.config);
            note.clip = m.count ? 100.0 * m.clipped / static_cast<double>(m.count) : 0.0;
            note.twin_clip = twin->metrics.count ? 100.0 * twin->metrics.clipped / static_cast<double>(twin->metrics.count) : 0.0;
        }
        note.any = true;
    } else if (m.clipped > 0) {
        ImGui::TextUnformatted(clip.c_str());
    } else {
        ImGui::TextDisabled("0");
    }
}

// Row i of the table; its Apply button (disabled while the table is stale) asks for the row's settings.
void DrawCalibratorRow(CalibrationPanelState& st, const QuantView& qv, int i, bool stale, ClampNote& note,
                       Intents& out) {
    const std::vector<CalibrationRow>& rows = st.shown.rows;
    const CalibrationRow& row = rows[static_cast<std::size_t>(i)];
    const CalibrationRow* twin = Twin(rows, i);
    const bool clamped = ZeroPointClamped(row, twin);
    const Metrics& m = row.metrics;
    const Sym sym = Symbols();
    ImGui::PushID(i);
    ImGui::TableNextRow();
    if (i == st.best_row) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, BetterRowColor());
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(CalibratorName(row.config).c_str());
    if (IsCurrent(row, twin, *qv.config)) {
        ImGui::SameLine();
        ImGui::TextDisabled("(current)");
    }
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    if (row.config.mode == Mode::Asymmetric)
        ImGui::TextUnformatted(twin && twin->same_as_twin ? "no effect" : row.config.recompute_scale ? "yes" : "no");
    else ImGui::TextDisabled("%s", sym.dash);
    DrawScaleAndZeroCells(row, clamped, qv.config->dtype);
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    if (i == st.best_row) ImGui::Text("%s  best", FormatNumber(m.mse).c_str());
    else ImGui::TextUnformatted(FormatNumber(m.mse).c_str());
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    if (m.sqnr_db) ImGui::TextUnformatted(FormatSqnr(*m.sqnr_db).c_str());
    else ImGui::TextDisabled("%s", SqnrWord(comparable_sqnr_db(m)).c_str());
    DrawClippedCell(row, twin, clamped, note);
    ImGui::TableNextColumn();
    ImGui::AlignTextToFramePadding();
    ImGui::Text("%lld / %lld", static_cast<long long>(m.levels_used), static_cast<long long>(m.levels_total));
    ImGui::TableNextColumn();
    ImGui::BeginDisabled(stale);
    if (ImGui::SmallButton("Apply")) out.push(PickConfigIntent{row.config});
    ImGui::EndDisabled();
    st.apply_row.push_back(i);
    st.apply_center.push_back(ImVec2((ImGui::GetItemRectMin().x + ImGui::GetItemRectMax().x) * 0.5f,
                                     (ImGui::GetItemRectMin().y + ImGui::GetItemRectMax().y) * 0.5f));
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Use %s%s for the figure", CalibratorName(row.config).c_str(),
                          row.config.recompute_scale ? " with recompute s" : "");
    ImGui::PopID();
}

// The table at its natural height when the rows fit above the note; else scrolling, with a frozen header.
void DrawCalibratorTable(CalibrationPanelState& st, const QuantView& qv, bool stale, ClampNote& note,
                         Intents& out) {
    const std::vector<CalibrationRow>& rows = st.shown.rows;
    const float cell_pad = ImGui::GetStyle().CellPadding.y * 2.0f;
    const float row_h = ImGui::GetFrameHeight() + cell_pad;
    const float natural_h = row_h * static_cast<float>(rows.size()) + ImGui::GetTextLineHeight() + cell_pad + 2.0f;
    const float room = ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing() * 2.4f;
    ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_RowBg |
                            ImGuiTableFlags_SizingFixedFit;
    if (room < natural_h) flags |= ImGuiTableFlags_ScrollY;
    const float table_h = room < natural_h ? std::max(room, row_h * 3.0f) : 0.0f;
    st.apply_row.clear();
    st.apply_center.clear();
    if (!ImGui::BeginTable("##calibrators", 9, flags, ImVec2(0.0f, table_h))) return;
    SetupCalibratorColumns();
    for (int i : DisplayOrder(rows)) DrawCalibratorRow(st, qv, i, stale, note, out);
    ImGui::EndTable();
}

}  // namespace

void DrawCalibrationPanel(CalibrationPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data,
                          Intents& out) {
    ImGui::PushID(&st);
    if (!qv.valid() || !data || data.get() != qv.data) {
        ImGui::TextDisabled("No result yet.");
        ImGui::PopID();
        return;
    }
    const bool stale = RefreshTable(st, qv, data);
    DrawCalibrationHeading(st, qv, stale);
    if (!st.has_shown) {
        ImGui::PopID();
        return;
    }
    const std::vector<CalibrationRow>& rows = st.shown.rows;
    st.best_row = -1;
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (st.best_row < 0 || rows[i].metrics.mse < rows[static_cast<std::size_t>(st.best_row)].metrics.mse)
            st.best_row = static_cast<int>(i);
    ClampNote note;
    DrawCalibratorTable(st, qv, stale, note, out);
    const IntType& dt = qv.config->dtype;
    if (note.any) {
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + ImGui::GetContentRegionAvail().x);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()),
                           "Clamped z: the lessons' formula moved z to the end of [%d, %d] but kept s, so the range "
                           "shifts and its far end is cut off (%s: %.2f%% of the values clipped). \"recompute s\" "
                           "rescales for the clamped z and keeps all of [r_min, r_max] (%.2f%% clipped).",
                           dt.q_min(), dt.q_max(), note.name.c_str(), note.clip, note.twin_clip);
        ImGui::PopTextWrapPos();
    } else {
        ImGui::TextDisabled("Green row: the smallest MSE. Percentiles clip the tails on purpose; the MSE search trades "
                            "clipping for finer steps.");
    }
    ImGui::PopID();
}

}  // namespace qs::gui
