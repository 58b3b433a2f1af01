#include "gui/panels/histogram_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <imgui.h>

#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/format_traits.hpp"

namespace qs::gui {
namespace {

float BarHeight(double count, double max_count, bool log_scale, float h) {
    if (!(count > 0.0) || !(max_count > 0.0)) return 0.0f;
    const double f = log_scale ? std::log1p(count) / std::log1p(max_count) : count / max_count;
    return std::max(1.0f, static_cast<float>(std::min(f, 1.0)) * h);  // a single element still shows
}

constexpr int kFineBins = 8192;

// The values on show: one block's gathered elements (the whole tensor is read from its view).
struct ShownValues {
    const float* data;
    std::int64_t n;
};
ShownValues Shown(const HistogramPanelState& st) {
    return {st.block_values.data(), static_cast<std::int64_t>(st.block_values.size())};
}

// A whole tensor's fine histogram over its range: at once for a tensor in memory, in the background (a pass
// over the file) for a mapped one when the panel has its owner.
void CountFine(HistogramPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& owner,
               const TensorKey& key) {
    const double lo = st.data_min, hi = st.data_max;
    st.fine = Histogram{};
    st.fine_waiting = false;
    if (qv.tensor || !owner || owner.get() != qv.data || !qv.data->values.bit_counts.empty()) {
        // In memory, or a bf16/f16 file's bit patterns' counts (no pass over the file): at once.
        st.fine_task.cancel();
        st.fine = histogram(qv.data->view, qv.data->values.bit_counts, kFineBins, lo, hi);
        return;
    }
    st.fine_waiting = true;
    std::shared_ptr<const TensorData> data = owner;
    st.fine_task.start([data, key, lo, hi](Task<HistogramPanelState::FineCount>::Context& ctx) {
        PassControl control;
        control.cancel = &ctx.cancel_flag();
        control.progress = [&ctx](float f) { ctx.set_progress(f); };
        HistogramPanelState::FineCount out;
        out.key = key;
        out.fine = histogram(data->view, kFineBins, lo, hi, control);
        if (!ctx.cancelled()) ctx.publish(std::move(out));
    });
}

void TakeFine(HistogramPanelState& st) {
    if (std::optional<HistogramPanelState::FineCount> c = st.fine_task.take()) {
        if (st.fine_waiting && st.tensor_valid && c->key == st.tensor_key && st.values_block < 0) {
            st.fine = std::move(c->fine);
            st.fine_waiting = false;
            st.bars_valid = false;
        }
    }
}

// What depends on the values alone (the tensor, or block `block` of it; -1 for the whole tensor): their range
// and, when there are many, a fine histogram over it.
void UpdateValuesCache(HistogramPanelState& st, const QuantView& qv, std::int64_t block,
                       const std::shared_ptr<const TensorData>& owner) {
    const TensorKey key = TensorKeyOf(qv);
    const QuantParams& p = *qv.params;
    const std::int64_t stride = block < 0 ? 0 : p.block_stride, count = block < 0 ? 0 : p.block_count;
    if (st.tensor_valid && key == st.tensor_key && st.values_block == block && st.values_stride == stride &&
        st.values_count == count)
        return;
    st.values_block = block;
    st.values_stride = stride;
    st.values_count = count;
    st.tensor_key = key;
    st.tensor_valid = true;
    st.bars_valid = false;
    if (block < 0) {
        // The whole tensor's range is the document's (its first pass found it).
        std::vector<float>().swap(st.block_values);
        st.data_min = qv.data->values.lo;
        st.data_max = qv.data->values.hi;
        if (qv.data->numel() > kHistogramExactElements) CountFine(st, qv, owner, key);
        else st.fine = Histogram{}, st.fine_waiting = false;
        return;
    }
    st.fine_waiting = false;
    st.block_values = block_elements(qv.data->view, p, block);
    const ShownValues v = Shown(st);
    float a = 0, b = 0;
    value_range(v.data, v.n, a, b);
    st.data_min = a;
    st.data_max = b;
    if (v.n > kHistogramExactElements) st.fine = histogram(v.data, v.n, kFineBins, a, b);
    else st.fine = Histogram{};
}

// The bars of the values for display bins over [lo, hi]: counted exactly for a few values, resampled from the
// fine histogram for many (which then need no pass at all when s or z change).
void UpdateBars(HistogramPanelState& st, const QuantView& qv, int bins, double lo, double hi) {
    if (st.bars_valid && st.bins == bins && st.lo == lo && st.hi == hi) return;
    const std::int64_t n = st.values_block < 0 ? qv.data->numel() : static_cast<std::int64_t>(st.block_values.size());
    if (st.fine_waiting) {
        st.bars.clear();  // nothing to draw until the count is done
    } else if (n > kHistogramExactElements) {
        st.bars = rebin(st.fine, bins, lo, hi);
    } else {
        const Histogram h = st.values_block < 0 ? histogram(qv.data->view, bins, lo, hi)
                                                : histogram(st.block_values.data(), n, bins, lo, hi);
        st.bars.assign(h.counts.begin(), h.counts.end());
    }
    st.bars_max = st.bars.empty() ? 0.0 : *std::max_element(st.bars.begin(), st.bars.end());
    st.bins = bins;
    st.lo = lo;
    st.hi = hi;
    st.bars_valid = !st.fine_waiting;
}

void UpdateCodes(HistogramPanelState& st, const QuantView& qv, std::int64_t block) {
    const bool fresh = st.codes_valid && st.codes_generation == qv.generation && st.codes_block == block;
    if (fresh) return;
    std::int32_t code_lo = 0, code_hi = 0;
    code_range(*qv.config, code_lo, code_hi);
    std::vector<std::int64_t> c;
    if (block >= 0) {
        // One block's codes: a block is a slice of the tensor, counted exactly from its values.
        const std::vector<float>& values = st.block_values;  // the block on show, gathered from the view
        const std::vector<std::int32_t> codes = block_codes(values.data(), static_cast<std::int64_t>(values.size()),
                                                            *qv.params, *qv.config, block);
        c = code_counts(codes.data(), static_cast<std::int64_t>(codes.size()), code_lo, code_hi);
    } else {
        // The whole tensor's codes were counted in the recompute's pass, exactly.
        c = qv.overview->code_counts;
    }
    st.codes.resize(c.size());
    for (std::size_t i = 0; i < c.size(); ++i) st.codes[i] = static_cast<double>(c[i]);
    st.code_stride = 1;
    st.codes_generation = qv.generation;
    st.codes_block = block;
    st.codes_valid = true;
}

// Per-channel / group: the block on show, from the panel's pick or the followed element (-1: per tensor).
std::int64_t ShownBlock(HistogramPanelState& st, const QuantView& qv) {
    const QuantParams& p = *qv.params;
    if (p.block_count <= 1) return -1;
    if (st.follow_element != st.followed) {
        st.followed = st.follow_element;
        if (st.follow_element >= 0 && st.follow_element < qv.data->numel()) st.block = p.block_of(st.follow_element);
    }
    st.block = std::clamp<std::int64_t>(st.block, 0, p.block_count - 1);
    return st.block;
}

// The block picker: which block's values and grid are shown.
void DrawBlockPicker(HistogramPanelState& st, const QuantView& qv) {
    const QuantParams& p = *qv.params;
    const std::string kind = BlockKind(*qv.config);
    ImGui::TextUnformatted(kind.c_str());
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7.0f);
    long long pick = st.block;
    const long long step = 1, step_fast = std::max<long long>(1, p.block_count / 16);
    if (ImGui::InputScalar("##block", ImGuiDataType_S64, &pick, &step, &step_fast, "%lld"))
        st.block = std::clamp<std::int64_t>(pick, 0, p.block_count - 1);
    HelpTooltip("Each block has its own scale (and zero point or min): the values, the levels and the clipped count "
                "below are this block's. Click a cell of the figure to show its block.");
    ImGui::SameLine();
    ImGui::TextDisabled("of %lld: %s", static_cast<long long>(p.block_count), StoredPairText(qv, st.block).c_str());
}

}  // namespace

namespace {

// The shown block's grid (block -1: the whole tensor's one s and z). Levels use s as float32, as the
// quantizer does.
struct Grid {
    std::int64_t block = -1;
    double s = 1.0, z = 0.0;
    double rep_lo = 0.0, rep_hi = 0.0;  // s (q_min - z), s (q_max - z)
    std::vector<double> levels;         // a number format's values s * grid[code] (empty for int<N>)
    bool per_sub_block = false;         // ggml's: levels from the block's (sub-block) scales and mins, not s * grid
};

Grid ShownGrid(HistogramPanelState& st, const QuantView& qv) {
    Grid g;
    g.block = ShownBlock(st, qv);
    double s = 1;
    std::int32_t z = 0;
    qv.params->pair(g.block < 0 ? 0 : g.block, s, z);
    g.s = static_cast<float>(s);
    g.z = z;
    g.rep_lo = g.s * (qv.config->dtype.q_min() - g.z);
    g.rep_hi = g.s * (qv.config->dtype.q_max() - g.z);
    if (!is_int_format(qv.config->format)) {
        // The format's own grid: uneven for floats (dense near 0), NF4's 16 levels, a block's scale; a k-quant's
        // every sub-block's grid at its own scale and min.
        g.levels = block_levels(qv.data->view, *qv.params, *qv.config, g.block < 0 ? 0 : g.block);
        g.per_sub_block = format_traits(qv.config->format).ggml != nullptr;
        g.rep_lo = g.levels.front();
        g.rep_hi = g.levels.back();
    }
    return g;
}

// Brings the caches up to date for this frame (the values and codes of the shown block, the bars over [lo, hi],
// its clipped count) and returns [lo, hi]: the data and the representable range, padded. A too-small s shows
// data spilling past the orange lines, a too-large s the data squeezed into a few levels.
std::pair<double, double> UpdateShown(HistogramPanelState& st, const QuantView& qv, const Grid& g, float plot_w,
                                      const std::shared_ptr<const TensorData>& owner) {
    // A new generation on this draw and on the previous one: a slider is being dragged.
    const bool changed_now = qv.generation != st.last_generation;
    st.changing = changed_now && st.changed_last;
    st.changed_last = changed_now;
    st.last_generation = qv.generation;
    UpdateValuesCache(st, qv, g.block, owner);
    double lo = std::min(st.data_min, g.rep_lo), hi = std::max(st.data_max, g.rep_hi);
    if (!(hi > lo)) {
        lo -= 0.5;
        hi += 0.5;
    }
    const double pad = (hi - lo) * 0.03;
    lo -= pad;
    hi += pad;
    UpdateBars(st, qv, std::clamp(static_cast<int>(plot_w / 4.0f), 16, 400), lo, hi);
    UpdateCodes(st, qv, g.block);
    const Metrics& m = qv.metrics();
    if (g.block < 0) {
        st.shown_clipped = m.clipped;
        st.shown_count = m.count;
    } else if (st.shown_block != g.block || st.clipped_generation != qv.generation) {
        if (g.per_sub_block)  // ggml's block: its levels are the sub-blocks', not one s and z to clamp by
            st.shown_clipped = std::count_if(st.block_values.begin(), st.block_values.end(),
                                             [&](float v) { return v < g.rep_lo || v > g.rep_hi; });
        else
            st.shown_clipped = count_clipped(st.block_values, qv.params->scale_of(g.block), qv.params->zero_point_of(g.block), *qv.config);
        st.shown_count = static_cast<std::int64_t>(st.block_values.size());
    }
    st.shown_block = g.block;
    st.clipped_generation = qv.generation;
    st.rep_lo = g.rep_lo;
    st.rep_hi = g.rep_hi;
    return {lo, hi};
}

// Levels first, bars over them (red where a bin reaches past the range: its values get clamped), then the
// range lines. The grid is thinned to a line every 4 px at least; returns the stride.
std::int64_t DrawValueBars(ImDrawList* dl, const HistogramPanelState& st, const IntType& dt, const Grid& g,
                           const PlotAxis& ax, float y0, float y1) {
    dl->AddRectFilled(ImVec2(ax.p0, y0), ImVec2(ax.at(g.rep_lo), y1), palette::kOutsideShade);
    dl->AddRectFilled(ImVec2(ax.at(g.rep_hi), y0), ImVec2(ax.p1, y1), palette::kOutsideShade);
    std::int64_t stride = 1;
    const ImU32 level_col = ImGui::GetColorU32(ImGuiCol_Text, 0.22f);
    if (!g.levels.empty()) {
        // A format's levels where they are: a line at least 3 px from the last one drawn (fp16's 63488
        // values crowd near 0, which is the point: floats keep small values).
        float last_x = -1e9f;
        for (double v : g.levels) {
            if (v < ax.lo || v > ax.hi) continue;
            const float x = std::round(ax.at(v)) + 0.5f;
            if (x - last_x < 3.0f) continue;
            dl->AddLine(ImVec2(x, y0), ImVec2(x, y1), level_col);
            last_x = x;
        }
    } else {
        const double px_per_level = g.s * (ax.p1 - ax.p0) / (ax.hi - ax.lo);
        const double q_first = std::max<double>(dt.q_min(), std::ceil(ax.lo / g.s + g.z));
        const double q_last = std::min<double>(dt.q_max(), std::floor(ax.hi / g.s + g.z));
        if (px_per_level < 4.0) stride = static_cast<std::int64_t>(std::ceil(4.0 / px_per_level));
        const double visible_levels = std::max(0.0, q_last - q_first + 1.0);
        if (visible_levels / stride > 300.0) stride = static_cast<std::int64_t>(std::ceil(visible_levels / 300.0));
        for (double q = q_first; q <= q_last; q += 1.0) {
            if (static_cast<std::int64_t>(q - dt.q_min()) % stride != 0) continue;
            const float x = std::round(ax.at(g.s * (q - g.z))) + 0.5f;
            dl->AddLine(ImVec2(x, y0), ImVec2(x, y1), level_col);
        }
    }
    const double bw = (ax.hi - ax.lo) / static_cast<double>(st.bars.size());
    for (std::size_t b = 0; b < st.bars.size(); ++b) {
        const double b_lo = ax.lo + bw * static_cast<double>(b), b_hi = b_lo + bw;
        const float bh = BarHeight(st.bars[b], st.bars_max, st.log_counts, y1 - y0 - 2.0f);
        if (bh <= 0.0f) continue;
        const bool clipped = b_lo < g.rep_lo || b_hi > g.rep_hi;
        dl->AddRectFilled(ImVec2(ax.at(b_lo), y1 - bh), ImVec2(std::max(ax.at(b_hi) - 1.0f, ax.at(b_lo) + 1.0f), y1),
                          clipped ? palette::kClipped : palette::kInside);
    }
    for (double edge : {g.rep_lo, g.rep_hi}) {
        const float x = std::round(ax.at(edge));
        dl->AddLine(ImVec2(x, y0), ImVec2(x, y1), palette::kRange, 2.5f);
    }
    return stride;
}

// The range lines' labels above the bars, so that they never sit on them: each at its line (kept inside the
// plot), or where they would collide one after the other on a row, or where even that is wider than the plot
// (large text in a narrow column) one above the other, low then high. Returns the rows used (drawn when `dl`).
int DrawRangeLabels(ImDrawList* dl, const Grid& g, const PlotAxis& ax, float y) {
    const Sym sym = Symbols();
    const bool format = !g.levels.empty();
    const std::string lo_name = g.per_sub_block ? "lowest level = " : format ? "s * lowest = " : "s(q_min " + std::string(sym.minus) + " z) = ";
    const std::string hi_name = g.per_sub_block ? "highest level = " : format ? "s * largest = " : "s(q_max " + std::string(sym.minus) + " z) = ";
    const std::string l_lo = lo_name + FormatNumber(g.rep_lo), l_hi = hi_name + FormatNumber(g.rep_hi);
    const float wl = ImGui::CalcTextSize(l_lo.c_str()).x, wh = ImGui::CalcTextSize(l_hi.c_str()).x;
    auto inside = [&](float x, float w) { return std::max(ax.p0, std::min(x, ax.p1 - w)); };
    const float xl = inside(ax.at(g.rep_lo) - wl * 0.5f, wl), xh = inside(ax.at(g.rep_hi) - wh * 0.5f, wh);
    const float gap = ImGui::GetFontSize();
    if (xh >= xl + wl + gap) {
        if (dl) DrawTextAt(dl, ImVec2(xl, y), palette::kRange, l_lo, ax.p1);
        if (dl) DrawTextAt(dl, ImVec2(xh, y), palette::kRange, l_hi, ax.p1);
        return 1;
    }
    const std::string both = l_lo + "   " + l_hi;
    if (ImGui::CalcTextSize(both.c_str()).x <= ax.p1 - ax.p0) {
        if (dl) DrawTextAt(dl, ImVec2(ax.p0, y), palette::kRange, both, ax.p1);
        return 1;
    }
    if (dl) DrawTextAt(dl, ImVec2(ax.p0, y), palette::kRange, l_lo, ax.p1);
    if (dl) DrawTextAt(dl, ImVec2(inside(ax.p1 - wh, wh), y + ImGui::GetTextLineHeightWithSpacing()), palette::kRange, l_hi, ax.p1);
    return 2;
}

// ImGui::SameLine() when `text` still fits on the line, else a new line: a note after a count wraps as a whole
// instead of running past the panel's edge at a large text size.
void SameLineIfRoom(const char* text) {
    ImGui::SameLine();
    if (ImGui::CalcTextSize(text).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
}

// One bar per code when they are at least 2 px wide; otherwise codes share a pixel column (summed). The end
// codes are red when values were clamped there.
void DrawCodeBars(ImDrawList* dl, const HistogramPanelState& st, std::int64_t levels, float x0, float x1, float y0,
                  float y1) {
    levels = std::min<std::int64_t>(levels, static_cast<std::int64_t>(st.codes.size()));  // never past the counts
    if (levels < 1) return;
    const std::int64_t columns = std::min<std::int64_t>(levels, static_cast<std::int64_t>((x1 - x0) / 2.0f));
    std::vector<double> col_counts(static_cast<std::size_t>(std::max<std::int64_t>(columns, 1)), 0.0);
    for (std::int64_t i = 0; i < levels; ++i)
        col_counts[static_cast<std::size_t>(i * columns / levels)] += st.codes[static_cast<std::size_t>(i)];
    const double col_max = *std::max_element(col_counts.begin(), col_counts.end());
    for (std::int64_t k = 0; k < columns; ++k) {
        const float bh = BarHeight(col_counts[static_cast<std::size_t>(k)], col_max, st.log_counts, y1 - y0 - 2.0f);
        if (bh <= 0.0f) continue;
        const float xa = x0 + (x1 - x0) * k / columns;
        const float xb = x0 + (x1 - x0) * (k + 1) / columns;
        const bool edge = (k == 0 || k == columns - 1) && st.shown_clipped > 0;
        dl->AddRectFilled(ImVec2(xa, y1 - bh), ImVec2(std::max(xa + 1.0f, xb - (xb - xa > 3.0f ? 1.0f : 0.0f)), y1),
                          edge ? palette::kClipped : palette::kInside);
    }
}

int TickTarget(float plot_w) { return std::max(2, static_cast<int>(plot_w / (ImGui::GetFontSize() * 6.0f))); }

// ---- values against the grid: title, labels row, plot, ticks and the clipped count under it.
void DrawValuesSection(HistogramPanelState& st, const QuantView& qv, const Grid& g, const PlotAxis& ax, float width,
                       float plot_h) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float text_h = ImGui::GetTextLineHeightWithSpacing();
    // Wrapped at spaces: at a large text size the title is wider than the panel.
    if (g.block < 0)
        TextWrappedAtSpaces(g.levels.empty() ? "Original values and the quantization levels s (q - z)"
                                             : "Original values and the format's values s * grid");
    else TextWrappedAtSpaces("The values of " + BlockKind(*qv.config) + " " + std::to_string(g.block) + " and " +
                             (g.per_sub_block ? std::string("the values its codes stand for (Bits shows how)")
                                              : std::string("its levels ") + (g.levels.empty() ? "s (q - z)" : "s * grid")));
    const float label_y = ImGui::GetCursorScreenPos().y;
    ImGui::Dummy(ImVec2(width, text_h * static_cast<float>(DrawRangeLabels(nullptr, g, ax, label_y))));
    const float y0 = ImGui::GetCursorScreenPos().y, y1 = y0 + plot_h;
    const std::int64_t stride = DrawValueBars(dl, st, qv.config->dtype, g, ax, y0, y1);
    DrawRangeLabels(dl, g, ax, label_y);
    dl->AddRect(ImVec2(ax.p0, y0), ImVec2(ax.p1, y1 + 1.0f), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksBelow(dl, ax, y1 + 1.0f, TickTarget(ax.p1 - ax.p0), ax.p0 - ImGui::GetFontSize(), ax.p1 + ImGui::GetFontSize());
    ImGui::Dummy(ImVec2(width, plot_h + text_h + 4.0f));

    char buf[256];
    std::snprintf(buf, sizeof buf, "%s: %lld of %lld (%.2f%%)%s", g.per_sub_block && g.block >= 0 ? "past the outer levels" : "clipped",
                  static_cast<long long>(st.shown_clipped),
                  static_cast<long long>(st.shown_count),
                  st.shown_count ? 100.0 * st.shown_clipped / static_cast<double>(st.shown_count) : 0.0,
                  g.block < 0 ? "" : " in this block");
    ImGui::TextColored(st.shown_clipped ? ImGui::ColorConvertU32ToFloat4(palette::kClipped)
                                        : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled),
                       "%s", buf);
    if (stride > 1) {
        std::snprintf(buf, sizeof buf, "   grid: every %lld%s level", static_cast<long long>(stride),
                      stride == 2 ? "nd" : stride == 3 ? "rd" : "th");
        SameLineIfRoom(buf);
        ImGui::TextDisabled("%s", buf);
    }
}

// ---- codes: how many levels are used, the bars per code and the zero point's line.
void DrawCodesSection(const HistogramPanelState& st, const QuantView& qv, const Grid& g, float x0, float x1, float width,
                      float plot_h) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    std::int32_t code_lo = 0, code_hi = 0;
    code_range(*qv.config, code_lo, code_hi);
    const bool format = !is_int_format(qv.config->format);
    const float text_h = ImGui::GetTextLineHeightWithSpacing();
    // The count of levels is the quantizer's own (exact even while the bars are estimated from a sample).
    if (ShowsStoredValues(qv)) {  // a Model-tab row against B's plain values: nothing to count
        TextWrappedAtSpaces("Codes: none. B stores " + StoredTypeName(*qv.params->stored) +
                            " values, not codes: its values are the dequantized panel.");
        return;
    }
    const std::int64_t levels_used = g.block < 0 ? qv.metrics().levels_used
                                                 : std::count_if(st.codes.begin(), st.codes.end(), [](double c) { return c > 0.0; });
    if (g.block < 0 && qv.overview->blocks_only)  // a drag's step: the whole tensor's codes are counted where it rests
        ImGui::TextDisabled("Codes: counted when the slider rests (the bars: the last count)");
    else
        ImGui::Text("Codes: %lld of %lld levels used%s", static_cast<long long>(levels_used),
                    static_cast<long long>(qv.metrics().levels_total), g.block < 0 ? "" : " in this block");
    if (format) {
        SameLineIfRoom("  (codes are bit patterns / indices)");
        ImGui::TextDisabled("  (codes are bit patterns / indices)");
    }
    if (st.code_stride > 1) {
        char note[96];
        std::snprintf(note, sizeof note, "  bars: 1 element in %lld while s, z change", static_cast<long long>(st.code_stride));
        SameLineIfRoom(note);
        ImGui::TextDisabled("%s", note);
    }
    const float z_label_y = ImGui::GetCursorScreenPos().y;
    ImGui::Dummy(ImVec2(width, text_h));
    const float c0 = ImGui::GetCursorScreenPos().y, c1 = c0 + plot_h;
    const PlotAxis cax{code_lo - 0.5, code_hi + 0.5, x0, x1};
    DrawCodeBars(dl, st, std::int64_t{code_hi} - code_lo + 1, x0, x1, c0, c1);
    if (!format) {  // a format has no zero point
        const float xz = std::round(cax.at(g.z)) + 0.5f;
        dl->AddLine(ImVec2(xz, c0), ImVec2(xz, c1), palette::kRange, 1.5f);
        const std::string lz = "z = " + FormatNumber(g.z);
        const float wz = ImGui::CalcTextSize(lz.c_str()).x;
        DrawTextAt(dl, ImVec2(std::max(x0, std::min(xz - wz * 0.5f, x1 - wz)), z_label_y), palette::kRange, lz);
    }
    dl->AddRect(ImVec2(x0, c0), ImVec2(x1, c1 + 1.0f), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksBelow(dl, cax, c1 + 1.0f, TickTarget(x1 - x0), x0 - ImGui::GetFontSize(), x1 + ImGui::GetFontSize());
    ImGui::Dummy(ImVec2(width, plot_h + text_h + 4.0f));
}

}  // namespace

bool HistogramBusy(const HistogramPanelState& st) { return st.fine_task.busy(); }

void SuspendHistogram(HistogramPanelState& st) {
    if (!st.fine_waiting) return;
    st.fine_task.cancel();
    st.fine_waiting = false;
    st.tensor_valid = false;  // UpdateValuesCache: count again when drawn
}

void FinishHistogram(HistogramPanelState& st) {
    st.fine_task.wait();
    TakeFine(st);
}

void DrawHistogramPanel(HistogramPanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data) {
    ImGui::PushID(&st);
    if (!qv.valid()) {
        ImGui::TextDisabled("No result yet.");
        ImGui::PopID();
        return;
    }
    TakeFine(st);
    const Grid g = ShownGrid(st, qv);
    ImGui::Checkbox("log counts", &st.log_counts);
    ImGui::SameLine();
    if (g.block >= 0) DrawBlockPicker(st, qv);
    else ImGui::TextDisabled("%s", StoredPairText(qv, 0).c_str());
    if (st.fine_waiting) {  // the values of a mapped tensor are being counted (the previous frame started it)
        ImGui::SameLine();
        ImGui::TextDisabled("   counting %s values from the file: %.0f%%", FormatInteger(qv.data->numel()).c_str(),
                            100.0 * st.fine_task.progress());
    }

    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float width = std::max(120.0f, avail.x);
    const float total_h = std::max(12.0f * font, avail.y);
    const float text_h = ImGui::GetTextLineHeightWithSpacing();
    const float plot1_h = std::floor((total_h - 8.6f * text_h) * 0.6f);
    const float plot2_h = std::floor((total_h - 8.6f * text_h) * 0.4f);
    const float plot_x0 = ImGui::GetCursorScreenPos().x + font * 0.5f;
    const float plot_x1 = ImGui::GetCursorScreenPos().x + width - font * 0.5f;
    const auto [lo, hi] = UpdateShown(st, qv, g, plot_x1 - plot_x0, data);
    DrawValuesSection(st, qv, g, PlotAxis{lo, hi, plot_x0, plot_x1}, width, plot1_h);
    DrawCodesSection(st, qv, g, plot_x0, plot_x1, width, plot2_h);
    ImGui::PopID();
}

}  // namespace qs::gui
