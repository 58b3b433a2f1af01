#include "gui/panels/metrics_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/format_quantize.hpp"

namespace qs::gui {
namespace {

enum class Better { Lower, Higher, None };

struct Row {
    const char* name;
    const char* help;
    Better better;
};

std::string Num(double v) { return FormatNumber(v); }

std::string Percent(std::int64_t part, std::int64_t whole) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
    return buf;
}

// The first few blocks' s (or z), stored or computed on demand, and how many blocks there are.
std::string FirstFew(const QuantParams& p, bool scales) {
    std::string s;
    const std::int64_t shown = std::min<std::int64_t>(p.block_count, 4);
    for (std::int64_t i = 0; i < shown; ++i) {
        if (i) s += ", ";
        s += Num(scales ? p.scale_of(i) : static_cast<double>(p.zero_point_of(i)));
    }
    if (p.block_count > shown) s += ", ... (" + std::to_string(p.block_count) + " blocks)";
    return s;
}

// Value of metric `i` (index into the rows below) as a number to compare, and as text.
bool MetricValue(const Metrics& m, int i, double& value, std::string& text) {
    switch (i) {
        case 0: value = m.mse; text = Num(m.mse); return true;
        case 1: value = m.rmse; text = Num(m.rmse); return true;
        case 2: value = m.mae; text = Num(m.mae); return true;
        case 3: value = m.max_abs_error; text = Num(m.max_abs_error); return true;
        case 4: value = m.l2_error; text = Num(m.l2_error); return true;
        case 5:
            if (!m.sqnr_db) {
                text = Symbols().dash;  // undefined: no signal or no noise
                return false;
            }
            value = *m.sqnr_db;
            text = Num(*m.sqnr_db);
            return true;
        case 6:
            value = static_cast<double>(m.clipped);
            text = std::to_string(m.clipped) + "  (" + Percent(m.clipped, m.count) + ")";
            return true;
        case 7:
            value = static_cast<double>(m.levels_used);
            text = std::to_string(m.levels_used) + " of " + std::to_string(m.levels_total);
            return true;
    }
    return false;
}

const Row kRows[] = {
    {"MSE", "mean (r - r')^2: what the lessons print", Better::Lower},
    {"RMSE", "sqrt(MSE), in the units of the tensor", Better::Lower},
    {"MAE", "mean |r - r'|", Better::Lower},
    {"max |r - r'|", "the largest error of any element (the error heatmap's top color)", Better::Lower},
    {"L2 error", "||r - r'||, the lesson's torch.norm", Better::Lower},
    {"SQNR (dB)", "10 log10(sum r^2 / sum (r - r')^2); undefined when either sum is 0", Better::Higher},
    {"clipped", "elements whose r/s + z fell outside [q_min, q_max] and were clamped", Better::Lower},
    {"levels used", "distinct codes among all the type's codes", Better::None},
};

}  // namespace

void DrawMetricsPanel(const QuantView& view) {
    if (!view.valid()) {
        ImGui::TextDisabled("No result yet.");
        return;
    }
    const Metrics& m = view.metrics();
    const Metrics* computed = view.computed_metrics;
    const bool manual = view.config->mode == Mode::Manual && computed != nullptr;
    const int columns = manual ? 3 : 2;
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("##metrics", columns, flags)) return;
    ImGui::TableSetupColumn("metric", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn(manual ? "your s, z" : "value", ImGuiTableColumnFlags_WidthStretch, 1.4f);
    if (manual) ImGui::TableSetupColumn("computed s, z", ImGuiTableColumnFlags_WidthStretch, 1.4f);
    ImGui::TableHeadersRow();

    const ImU32 better_bg = BetterRowColor();
    for (int i = 0; i < static_cast<int>(sizeof kRows / sizeof kRows[0]); ++i) {
        ImGui::PushID(i);
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(kRows[i].name);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", kRows[i].help);
        double a = 0, b = 0;
        std::string ta, tb;
        const bool ha = MetricValue(m, i, a, ta);
        ImGui::TableNextColumn();
        if (manual) {
            const bool hb = MetricValue(*computed, i, b, tb);
            // Highlight the strictly better side; a tie highlights neither.
            int winner = -1;
            if (ha && hb && kRows[i].better != Better::None && a != b) {
                const bool a_wins = kRows[i].better == Better::Lower ? a < b : a > b;
                winner = a_wins ? 1 : 2;
            }
            if (winner == 1) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, better_bg);
            ImGui::TextUnformatted(ta.c_str());
            ImGui::TableNextColumn();
            if (winner == 2) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, better_bg);
            ImGui::TextUnformatted(tb.c_str());
        } else {
            ImGui::TextUnformatted(ta.c_str());
        }
        ImGui::PopID();
    }
    // Parameters: manual shows the user's pair; the computed pair is not part of the view, only its metrics.
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("scale s");
    ImGui::TableNextColumn();
    TextWrappedAtSpaces(FirstFew(*view.params, true));  // per-block lists wrap in their cell, not cut
    if (manual) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("(formula)");
    }
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("zero point z");
    ImGui::TableNextColumn();
    TextWrappedAtSpaces(FirstFew(*view.params, false));
    if (manual) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("(formula)");
    }
    // The cost ledger (FORMATS.md): element bits plus the stored scales and zero points.
    const FormatCost cost = quantization_cost(*view.config, m.count, view.params->block_count);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("bits / weight");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("the code's bits plus every stored scale (and zero point) spread over the elements");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(FormatNumber(cost.bits_per_weight).c_str());
    if (manual) ImGui::TableNextColumn();
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted("bytes");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted((FormatInteger(static_cast<double>(cost.bytes)) + " (float32: " + FormatInteger(4.0 * static_cast<double>(m.count)) + ")").c_str());
    if (manual) ImGui::TableNextColumn();
    ImGui::EndTable();
    if (manual) ImGui::TextDisabled("Green: the better of the two for that metric.");
}

std::string MetricsSummary(const QuantView& view, bool with_cost) {
    if (!view.valid()) return "";
    const Metrics& m = view.metrics();
    const QuantConfig& c = *view.config;
    std::string s = dtype_name(c) + " " + to_string(c.mode);
    if (c.granularity != Granularity::Tensor) s += std::string(" per ") + to_string(c.granularity);
    s += ",  s = " + FirstFew(*view.params, true) + ",  z = " + FirstFew(*view.params, false);
    s += "     MSE " + Num(m.mse) + "   max |e| " + Num(m.max_abs_error) + "   L2 " + Num(m.l2_error);
    s += "   SQNR " + (m.sqnr_db ? Num(*m.sqnr_db) + " dB" : std::string(Symbols().dash));
    s += "   clipped " + std::to_string(m.clipped) + "   levels " + std::to_string(m.levels_used) + "/" +
         std::to_string(m.levels_total);
    if (with_cost) {
        const FormatCost cost = quantization_cost(c, m.count, view.params->block_count);
        s += "   " + FormatNumber(cost.bits_per_weight) + " bits/weight";
    }
    return s;
}

void DrawMetricsLine(const QuantView& view) {
    const std::string s = MetricsSummary(view);
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(s.c_str());
    ImGui::PopTextWrapPos();
}

}  // namespace qs::gui
