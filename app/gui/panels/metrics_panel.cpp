#include "gui/panels/metrics_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/format_traits.hpp"

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

// The first few blocks' scales and offsets (int<N>'s z, a ggml type's dmin or m) as stored, each list ending
// with how many blocks there are. One pass: a ggml block's pair is read from the block quantized again.
struct FirstPairs {
    std::string scales, offsets;
};
FirstPairs FirstFew(const QuantView& view) {
    const QuantParams& p = *view.params;
    FirstPairs text;
    const std::int64_t shown = std::min<std::int64_t>(p.block_count, 4);
    for (std::int64_t i = 0; i < shown; ++i) {
        const StoredPair pair = stored_pair(view.data->view, p, *view.config, i);
        const std::string sep = i ? ", " : "";
        text.scales += sep + Num(pair.scale);
        text.offsets += sep + Num(pair.offset.value_or(0.0));
    }
    if (p.block_count > shown) {
        const std::string more = ", ... (" + std::to_string(p.block_count) + " blocks)";
        text.scales += more;
        text.offsets += more;
    }
    return text;
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
                text = SqnrWord(comparable_sqnr_db(m));  // undefined: no error, or no signal
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
            if (m.levels_total == 0) {  // B's plain values (a Model-tab row): no codes
                text = "none: no codes";
                return false;
            }
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

namespace {

// One line of the panel: the metric's name and its value(s) as printed.
struct MetricLine {
    std::string name;
    const char* help = nullptr;
    std::string yours, computed;  // computed: manual mode's second column
    int winner = -1;              // 1: yours, 2: computed is the better (manual mode), -1: neither
    bool wrap = false;            // a per-block list: wraps at its commas
    bool computed_dim = false;    // "(formula)": the pair itself is not part of the view
};

// The covered kind of metric row `i` (kRows): the error metrics tell the error panel, clipping and levels the codes.
Secret SecretOfRow(int i) { return i >= 6 ? Secret::Codes : Secret::Error; }

std::vector<MetricLine> MetricLines(const QuantView& view, bool manual, const Covers& covers) {
    const Metrics& m = view.metrics();
    std::vector<MetricLine> lines;
    for (int i = 0; i < static_cast<int>(sizeof kRows / sizeof kRows[0]); ++i) {
        MetricLine l;
        l.name = kRows[i].name;
        l.help = kRows[i].help;
        double a = 0, b = 0;
        const bool ha = MetricValue(m, i, a, l.yours);
        if (manual) {
            const bool hb = MetricValue(*view.computed_metrics, i, b, l.computed);
            // Highlight the strictly better side; a tie highlights neither.
            if (ha && hb && kRows[i].better != Better::None && a != b)
                l.winner = (kRows[i].better == Better::Lower ? a < b : a > b) ? 1 : 2;
        }
        if (covers.hides(SecretOfRow(i))) {
            l.yours = CoveredText();
            if (manual) l.computed = CoveredText();
            l.winner = -1;
        }
        lines.push_back(l);
        if (i == 0 && view.importance_mse) {  // weighted by importance: the error the quantizer minimised, beside MSE
            MetricLine w;
            w.name = "weighted MSE";
            w.help = "importance-weighted MSE: per row sum w (r - r')^2 / sum w, w the column's importance, averaged over the rows "
                     "(importance_weighted_mse, as llama.cpp weighs by an imatrix)";
            w.yours = covers.hides(Secret::Error) ? CoveredText() : Num(*view.importance_mse);
            if (manual) w.computed = "";
            lines.push_back(w);
        }
    }
    // Parameters: manual shows the user's pair; the computed pair is not part of the view, only its metrics.
    const StoredPairNames names = stored_pair_names(*view.config);
    const bool is_int = is_int_format(view.config->format);
    const bool covered_pair = covers.hides(Secret::Codes) && view.config->mode != Mode::Manual;
    const FirstPairs pairs = covered_pair ? FirstPairs{} : FirstFew(view);
    for (bool scales : {true, false}) {
        if (!scales && names.offset.empty()) continue;  // the format stores no offset: no line of zeros
        MetricLine l;
        l.name = is_int ? (scales ? "scale s" : "zero point z") : scales ? names.scale : names.offset;
        // A pair typed by hand (manual mode) is the lesson's given; a computed one is part of the answer.
        l.yours = covered_pair ? CoveredText() : scales ? pairs.scales : pairs.offsets;
        l.wrap = true;
        if (manual) l.computed = "(formula)";
        l.computed_dim = true;
        lines.push_back(l);
    }
    // The cost ledger (FORMATS.md): element bits plus the stored scales and zero points.
    FormatCost cost = quantization_cost(*view.config, m.count, view.params->block_count);
    if (ShowsStoredValues(view)) {  // B's plain values: its type's bits, nothing else stored
        const GgmlTypeInfo& type = *view.params->stored->type;
        cost.bits_per_weight = 8.0 * type.type_size;
        cost.bytes = m.count * type.type_size;
    }
    MetricLine bits;
    bits.name = "bits / weight";
    bits.help = "the code's bits plus every stored scale (and zero point) spread over the elements";
    bits.yours = FormatNumber(cost.bits_per_weight);
    lines.push_back(bits);
    MetricLine bytes;
    bytes.name = "bytes";
    bytes.yours = FormatInteger(static_cast<double>(cost.bytes)) + " (float32: " + FormatInteger(4.0 * static_cast<double>(m.count)) + ")";
    lines.push_back(bytes);
    return lines;
}

// The width a cell's text needs: all of it, or its widest word when it wraps.
float NeededWidth(const std::string& text, bool wrap) {
    if (!wrap) return ImGui::CalcTextSize(text.c_str()).x;
    float widest = 0.0f;
    for (std::size_t at = 0; at <= text.size();) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        widest = std::max(widest, ImGui::CalcTextSize(text.substr(at, end - at).c_str()).x);
        at = end + 1;
    }
    return widest;
}

// Whether the table's columns can each hold their widest cell in the width available (a narrow column at a
// projector's text size cannot: the cells would be cut at the column's border).
bool TableFits(const std::vector<MetricLine>& lines, bool manual, const char* const headers[3]) {
    float cols[3] = {ImGui::CalcTextSize(headers[0]).x, ImGui::CalcTextSize(headers[1]).x,
                     manual ? ImGui::CalcTextSize(headers[2]).x : 0.0f};
    for (const MetricLine& l : lines) {
        cols[0] = std::max(cols[0], ImGui::CalcTextSize(l.name.c_str()).x);
        cols[1] = std::max(cols[1], NeededWidth(l.yours, l.wrap));
        if (manual) cols[2] = std::max(cols[2], NeededWidth(l.computed, false));
    }
    const ImGuiStyle& style = ImGui::GetStyle();
    const int n = manual ? 3 : 2;
    // Stretch columns share the width in proportion 1 : 1.4 (: 1.4): each must get its own widest cell.
    const float weights[3] = {1.0f, 1.4f, 1.4f};
    const float total_weight = manual ? 3.8f : 2.4f;
    const float room = ImGui::GetContentRegionAvail().x - static_cast<float>(n) * (style.CellPadding.x * 2.0f + 1.0f) - 2.0f;
    for (int i = 0; i < n; ++i)
        if (cols[i] > room * weights[i] / total_weight) return false;
    return true;
}

void DrawMetricsTable(const std::vector<MetricLine>& lines, bool manual, const char* const headers[3]) {
    const int columns = manual ? 3 : 2;
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_SizingStretchProp;
    if (!ImGui::BeginTable("##metrics", columns, flags)) return;
    ImGui::TableSetupColumn(headers[0], ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn(headers[1], ImGuiTableColumnFlags_WidthStretch, 1.4f);
    if (manual) ImGui::TableSetupColumn(headers[2], ImGuiTableColumnFlags_WidthStretch, 1.4f);
    ImGui::TableHeadersRow();
    const ImU32 better_bg = BetterRowColor();
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const MetricLine& l = lines[i];
        ImGui::PushID(static_cast<int>(i));
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(l.name.c_str());
        if (l.help && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.help);
        ImGui::TableNextColumn();
        if (l.winner == 1) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, better_bg);
        if (l.wrap) TextWrappedAtSpaces(l.yours);  // per-block lists wrap in their cell, not cut
        else ImGui::TextUnformatted(l.yours.c_str());
        if (manual) {
            ImGui::TableNextColumn();
            if (l.winner == 2) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, better_bg);
            if (l.computed_dim) ImGui::TextDisabled("%s", l.computed.c_str());
            else ImGui::TextUnformatted(l.computed.c_str());
        }
        ImGui::PopID();
    }
    ImGui::EndTable();
}

// Too narrow for the table: each metric's name (dimmed, as a heading), then its value(s) below it, wrapped at
// spaces and not indented (a narrow column at a large text size has no room to spare); the better of the two
// pairs' values in the better text colour.
void DrawMetricsStacked(const std::vector<MetricLine>& lines, bool manual) {
    for (const MetricLine& l : lines) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces(l.name);
        ImGui::PopStyleColor();
        if (l.help && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.help);
        const auto value = [&](const std::string& head, const std::string& text, bool better, bool dim) {
            if (better) ImGui::PushStyleColor(ImGuiCol_Text, BetterTextColor());
            else if (dim) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            TextWrappedAtSpaces(manual ? head + ": " + text : text);
            if (better || dim) ImGui::PopStyleColor();
        };
        value("yours", l.yours, l.winner == 1, false);  // short: the table's headers would take a line each
        if (manual) value("computed", l.computed, l.winner == 2, l.computed_dim);
        ImGui::Spacing();
    }
}

}  // namespace

void DrawMetricsPanel(const QuantView& view, const Covers& covers) {
    if (!view.valid()) {
        ImGui::TextDisabled("No result yet.");
        return;
    }
    const bool manual = view.config->mode == Mode::Manual && view.computed_metrics != nullptr;
    const char* const headers[3] = {"metric", manual ? "your s, z" : "value", "computed s, z"};
    const std::vector<MetricLine> lines = MetricLines(view, manual, covers);
    // A slider being dragged on a large tensor: the heatmaps follow every step, the metrics (a sum over every
    // element in quantize's order) the step where the drag rests; until then the last ones, greyed.
    const bool settling = view.overview->blocks_only;
    if (settling) {
        ImGui::TextDisabled("metrics follow when the slider rests");
        ImGui::BeginDisabled();
    }
    if (TableFits(lines, manual, headers)) DrawMetricsTable(lines, manual, headers);
    else DrawMetricsStacked(lines, manual);
    if (settling) ImGui::EndDisabled();
    if (manual) {  // wrapped: a narrow column at a large text size would cut it
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces("Green: the better of the two for that metric.");
        ImGui::PopStyleColor();
    }
}

std::vector<std::string> MetricsSummaryItems(const QuantView& view, bool with_cost, const Covers& covers) {
    if (!view.valid()) return {};
    const Metrics& m = view.metrics();
    const QuantConfig& c = *view.config;
    // A block format (ggml's, MX, NVFP4) chooses its own scales: no mode or granularity to name.
    const bool own_blocks = format_traits(c.format).own_blocks();
    const bool values = ShowsStoredValues(view);  // a Model-tab row against B's plain values
    std::string head = values ? "B's " + StoredTypeName(*view.params->stored) + " values" : dtype_name(c);
    if (!own_blocks && !values) head += std::string(" ") + to_string(c.mode);
    if (!own_blocks && c.granularity != Granularity::Tensor) head += std::string(" per ") + to_string(c.granularity);
    const bool codes = covers.hides(Secret::Codes), error = covers.hides(Secret::Error);
    const bool pair = codes && c.mode != Mode::Manual;  // a pair typed by hand is the lesson's given
    const StoredPairNames names = stored_pair_names(c);
    const FirstPairs pairs = pair ? FirstPairs{} : FirstFew(view);
    head += ",  " + names.scale + " = " + (pair ? CoveredText() : pairs.scales);
    if (!names.offset.empty()) head += ",  " + names.offset + " = " + (pair ? CoveredText() : pairs.offsets);
    std::vector<std::string> items{head};
    if (error) {
        items.push_back(std::string("MSE, max |e|, L2, SQNR: ") + CoveredText());
    } else if (view.overview->blocks_only) {  // a drag's step: the metrics follow when it rests
        items.push_back("MSE, max |e|, L2, SQNR: ...");
    } else {
        items.push_back("MSE " + Num(m.mse));
        if (view.importance_mse) items.push_back("weighted MSE " + Num(*view.importance_mse));
        items.push_back("max |e| " + Num(m.max_abs_error));
        items.push_back("L2 " + Num(m.l2_error));
        items.push_back("SQNR " + (m.sqnr_db ? Num(*m.sqnr_db) + " dB" : SqnrWord(comparable_sqnr_db(m))));
    }
    if (codes) {
        items.push_back(std::string("clipped, levels ") + CoveredText());
    } else if (view.overview->blocks_only) {  // counted by the whole pass where the drag rests
        items.push_back("clipped, levels: ...");
    } else {
        items.push_back("clipped " + std::to_string(m.clipped));
        items.push_back(m.levels_total == 0 ? std::string("no codes")
                                            : "levels " + std::to_string(m.levels_used) + "/" + std::to_string(m.levels_total));
    }
    if (with_cost) {
        const FormatCost cost = quantization_cost(c, m.count, view.params->block_count);
        items.push_back(FormatNumber(values ? 8.0 * view.params->stored->type->type_size : cost.bits_per_weight) + " bits/weight");
    }
    return items;
}

std::string MetricsSummary(const QuantView& view, bool with_cost, const Covers& covers) {
    const std::vector<std::string> items = MetricsSummaryItems(view, with_cost, covers);
    std::string s;
    for (std::size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i == 1 ? "     " : "   ") + items[i];
    return s;
}

void DrawMetricsLine(const QuantView& view) {
    // Item by item, each whole: ImGui's own wrapping also breaks after a '.', which cut a number in two
    // ("L2 10." / "2898"), and breaking at any space splits "max |e|".
    DrawWrappedParts(MetricsSummaryItems(view), ImGui::GetContentRegionAvail().x, -1, nullptr, 3);
}

}  // namespace qs::gui
