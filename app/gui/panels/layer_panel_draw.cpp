// The layer lab's drawing: five heatmaps, the metrics side by side and the MSE against SmoothQuant's alpha.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/panels/layer_panel.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"

namespace qs::gui {
namespace {

// How many input channels the hover lists.
constexpr std::size_t kTopChannels = 5;

HeatmapStyle ValueStyle(const LayerPanelState::Computed::Range& range) {
    const double lo = range.lo, hi = range.hi;
    HeatmapStyle style;
    style.colormap = Colormap::Coolwarm;
    style.norm = ColorNorm::Centered(lo, hi, 0.0);
    style.bar_lo = lo;
    style.bar_hi = hi;
    style.max_cell_aspect = 4.0f;  // a few tokens of many channels still fill their panel
    return style;
}

HeatmapStyle ErrorStyle(const LayerPanelState::Computed::Range& range) {
    const double hi = range.hi;
    HeatmapStyle style;
    style.colormap = Colormap::Coolwarm;
    style.norm = ColorNorm::Centered(0.0, hi, 0.0);
    style.bar_lo = 0.0;
    style.bar_hi = hi;
    style.reduction = Reduction::Max;  // one bad output stays visible zoomed out
    style.max_cell_aspect = 4.0f;
    return style;
}

void Title(const std::string& text, ImVec2 at, float width) {
    ImGui::GetWindowDrawList()->AddText(at, ImGui::GetColorU32(ImGuiCol_Text), FitText(text, width).c_str());
}

// The split (outlier) columns marked over a heatmap of `cols` columns: a frame around each visible column.
void MarkColumns(const std::vector<std::int64_t>& columns, const HeatmapView& view, std::int64_t cols, const HeatmapResult& r) {
    if (columns.empty()) return;
    const double x0 = view.empty() ? 0.0 : view.x0, x1 = view.empty() ? static_cast<double>(cols) : view.x1;
    const float w = r.image_max.x - r.image_min.x;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (std::int64_t k : columns) {
        if (k + 1 <= x0 || k >= x1) continue;
        const float a = r.image_min.x + static_cast<float>((std::max<double>(k, x0) - x0) / (x1 - x0)) * w;
        const float b = r.image_min.x + static_cast<float>((std::min<double>(k + 1, x1) - x0) / (x1 - x0)) * w;
        dl->AddRect(ImVec2(std::floor(a), r.image_min.y - 3), ImVec2(std::ceil(b), r.image_max.y + 3), palette::kRange, 0.0f, 0,
                    2.0f);
    }
}

// Output cell (t, o): its values and the input channels that put most error into it.
void OutputTooltip(const LayerPanelState::Computed& c, std::int64_t t, std::int64_t o) {
    const LayerResult& r = c.result;
    const auto i = static_cast<std::size_t>(t * r.out + o);
    const Sym sym = Symbols();
    ImGui::BeginTooltip();
    ImGui::Text("token %lld, output %lld: y = %s, y%s = %s, error %s", static_cast<long long>(t), static_cast<long long>(o),
                FormatNumber(r.reference[i]).c_str(), sym.prime, FormatNumber(r.y[i]).c_str(),
                FormatNumber(static_cast<double>(r.y[i]) - r.reference[i]).c_str());
    ImGui::TextDisabled("y = %s_k x[t, k] W[o, k]; the channels adding most error, x%s W%s %s x W:", "sum", sym.prime, sym.prime,
                        sym.minus);
    for (const ChannelContribution& e : channel_contributions(r, *c.x, *c.w, t, o, kTopChannels)) {
        const auto xi = static_cast<std::size_t>(t * r.in + e.channel), wi = static_cast<std::size_t>(o * r.in + e.channel);
        const bool split = std::binary_search(r.outlier_columns.begin(), r.outlier_columns.end(), e.channel);
        ImGui::Text("  k = %lld: x = %s, W = %s, error %s%s", static_cast<long long>(e.channel),
                    FormatNumber(c.x->values[xi]).c_str(), FormatNumber(c.w->values[wi]).c_str(),
                    FormatNumber(e.error).c_str(), split ? "  (split: float)" : "");
    }
    ImGui::EndTooltip();
}

}  // namespace

void DrawLayerMaps(LayerPanelState& st, ImVec2 size) {
    const LayerPanelState::Computed& c = st.shown;
    const LayerResult& r = c.result;
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    const float gap = std::round(font * 0.8f);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float cell_w = std::floor((size.x - 2 * gap) / 3.0f), cell_h = std::floor((size.y - 2 * line - gap) / 2.0f);
    if (cell_w < font * 4 || cell_h < font * 3) return;  // LayerMapsMinHeight
    const HeatmapStyle x_style = ValueStyle(c.x_range);
    const HeatmapStyle w_style = ValueStyle(c.w_range);
    const HeatmapStyle y_style = ValueStyle(c.y_range);
    const HeatmapStyle e_style = ErrorStyle(c.error_range);
    struct Map {
        const char* id;
        const float* data;
        std::int64_t rows, cols;
        const HeatmapStyle* style;
        HeatmapView* view;
        std::string title;
        int col, row;
    };
    const std::string dims = " [" + std::to_string(r.tokens) + " x ";
    const std::string w_title = c.settings.activation_bits > 0 && !r.smooth_factors.empty() ? "W (before smoothing)" : "W";
    char emax[64];
    std::snprintf(emax, sizeof emax, ", max %s", FormatNumber(r.output.max_abs_error).c_str());
    const Map maps[5] = {
        {"##x", c.x->values.data(), r.tokens, r.in, &x_style, &st.view_x, "x: inputs" + dims + std::to_string(r.in) + "]", 0, 0},
        {"##w", c.w->values.data(), r.out, r.in, &w_style, &st.view_w,
         w_title + ": weights [" + std::to_string(r.out) + " x " + std::to_string(r.in) + "]", 0, 1},
        {"##yref", r.reference.data(), r.tokens, r.out, &y_style, &st.view_out, "y = x W^T in float64" + dims + std::to_string(r.out) + "]", 1, 0},
        {"##yq", r.y.data(), r.tokens, r.out, &y_style, &st.view_out, "y' quantized", 2, 0},
        {"##err", c.error.data(), r.tokens, r.out, &e_style, &st.view_out, std::string("|y' - y|") + emax, 1, 1},
    };
    for (int i = 0; i < 5; ++i) {
        const Map& m = maps[i];
        const ImVec2 at(origin.x + m.col * (cell_w + gap), origin.y + m.row * (cell_h + line + gap));
        Title(m.title, at, cell_w);
        ImGui::SetCursorScreenPos(ImVec2(at.x, at.y + line));
        HeatmapSource src;
        src.f32 = m.data;
        src.rows = m.rows;
        src.cols = m.cols;
        const HeatmapResult hr =
            DrawHeatmap(m.id, st.maps[static_cast<std::size_t>(i)], src, st.generation, *m.style, *m.view, HeatmapCell{}, ImVec2(cell_w, cell_h));
        if (i < 2) MarkColumns(r.outlier_columns, *m.view, r.in, hr);
        if (i >= 2 && hr.hovered.valid()) OutputTooltip(c, hr.hovered.row, hr.hovered.col);
    }
    if (!r.outlier_columns.empty()) {
        const ImVec2 at(origin.x + 2 * (cell_w + gap), origin.y + cell_h + line + gap);
        ImGui::SetCursorScreenPos(at);
        // ImGui wraps at a window x: a screen x would wrap past the cell by the scrolled child's own offset.
        ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + cell_w);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(palette::kRange), "%zu split columns (framed on x and W) stay float32",
                           r.outlier_columns.size());
        ImGui::PopTextWrapPos();
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
}

namespace {

// A number of the metrics table with `digits` significant digits (6: FormatNumber's).
std::string TableNumber(double v, int digits) {
    if (digits >= 6) return FormatNumber(v);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    std::string s = buf;
    if (!s.empty() && s[0] == '-') s = std::string(Symbols().minus) + s.substr(1);
    return s;
}

// The metrics table's cells: [row][col], a row per metric (name first), a column per operand; empty: a dash.
std::vector<std::array<std::string, 4>> MetricsCells(const LayerResult& r, int digits) {
    const Metrics* cols[3] = {&r.weights.metrics, r.inputs ? &r.inputs->metrics : nullptr, &r.output};
    const char* names[] = {"MSE", "SQNR (dB)", "max |e|", "clipped"};
    std::vector<std::array<std::string, 4>> rows(4);
    for (int row = 0; row < 4; ++row) {
        rows[static_cast<std::size_t>(row)][0] = names[row];
        for (int col = 0; col < 3; ++col) {
            const Metrics* m = cols[col];
            if (!m || m->count == 0 || (row == 3 && col == 2) || (row == 1 && !m->sqnr_db)) continue;
            const double v = row == 0 ? m->mse : row == 1 ? *m->sqnr_db : row == 2 ? m->max_abs_error : static_cast<double>(m->clipped);
            rows[static_cast<std::size_t>(row)][static_cast<std::size_t>(col + 1)] = row == 3 ? FormatInteger(v) : TableNumber(v, digits);
        }
    }
    return rows;
}

constexpr const char* kOperands[4] = {"", "weights W", "inputs x", "output y"};

// Whether the table's columns, each as wide as its widest cell, fit `width` (with their padding and borders).
bool MetricsFit(const std::vector<std::array<std::string, 4>>& rows, float width) {
    const ImGuiStyle& style = ImGui::GetStyle();
    float total = 2.0f + 4.0f * (style.CellPadding.x * 2.0f + 1.0f);
    for (std::size_t col = 0; col < 4; ++col) {
        float w = ImGui::CalcTextSize(kOperands[col]).x;
        for (const auto& row : rows) w = std::max(w, ImGui::CalcTextSize(row[col].empty() ? Symbols().dash : row[col].c_str()).x);
        total += w;
    }
    return total <= width;
}

// The weights', inputs' and output's metrics side by side. Where the columns do not fit the width (a projector's
// font), the numbers take fewer digits (4, then 3) rather than being cut at a column's border; where even that
// does not fit, one wrapped line per operand.
void MetricsTable(const LayerPanelState::Computed& c, float width) {
    const LayerResult& r = c.result;
    std::vector<std::array<std::string, 4>> rows;
    int digits = 6;
    for (; digits >= 3; digits -= digits == 6 ? 2 : 1) {
        rows = MetricsCells(r, digits);
        if (MetricsFit(rows, width)) break;
    }
    if (digits < 3) {  // wrapped to what is left of the line (the side is at the panel's right or alone on it)
        for (std::size_t col = 1; col < 4; ++col) {
            std::string line = std::string(kOperands[col]) + ":";
            for (const auto& row : rows) line += " " + row[0] + " " + (row[col].empty() ? Symbols().dash : row[col]) + (&row == &rows.back() ? "" : ",");
            TextWrappedAtSpaces(line);
        }
    } else {
        const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_RowBg |
                                      ImGuiTableFlags_SizingFixedFit;
        if (!ImGui::BeginTable("##layer-metrics", 4, flags)) return;
        for (const char* operand : kOperands) ImGui::TableSetupColumn(operand);
        ImGui::TableHeadersRow();
        for (const auto& row : rows) {
            ImGui::TableNextRow();
            for (std::size_t col = 0; col < 4; ++col) {
                ImGui::TableNextColumn();
                if (row[col].empty()) ImGui::TextDisabled("%s", Symbols().dash);
                else ImGui::TextUnformatted(row[col].c_str());
            }
        }
        ImGui::EndTable();
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    TextWrappedAtSpaces(std::string("product: ") + to_string(r.path) + (r.path == LayerPath::Integer ? " (integer sums, scaled once)" : ""));
    ImGui::PopStyleColor();
}

// The output MSE against alpha (log axis): the current alpha, the best one and the MSE without smoothing.
void AlphaPlot(LayerPanelState& st, ImVec2 size) {
    const LayerPanelState::Curve& cv = st.curve;
    if (st.shown.settings.activation_bits == 0) {
        ImGui::TextWrapped("Quantize the activations to see SmoothQuant's alpha at work.");
        return;
    }
    if (cv.mse.empty() || cv.key != st.curve_key) {
        ImGui::TextDisabled("computing the output MSE against alpha... %.0f%%", 100.0f * st.curve_task.progress());
        if (cv.mse.empty()) return;
    } else if (cv.sampled_rows < cv.rows) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("estimated on %lld of %lld output rows", static_cast<long long>(cv.sampled_rows),
                           static_cast<long long>(cv.rows));
        ImGui::PopStyleColor();
    }
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    double lo = cv.plain_mse > 0 ? cv.plain_mse : 1e300, hi = cv.plain_mse;
    std::size_t best = 0;
    for (std::size_t i = 0; i < cv.mse.size(); ++i) {
        if (cv.mse[i] > 0) lo = std::min(lo, cv.mse[i]);
        hi = std::max(hi, cv.mse[i]);
        if (cv.mse[i] < cv.mse[best]) best = i;
    }
    if (!(hi > 0) || !(lo < 1e300)) return;
    if (!(hi > lo)) hi = lo * 2;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    dl->AddText(origin, ImGui::GetColorU32(ImGuiCol_Text), "output MSE against SmoothQuant's alpha (log)");
    const float ylab_w = ImGui::CalcTextSize("1e-10").x + font * 0.6f;
    const ImVec2 p0(std::floor(origin.x + ylab_w), std::floor(origin.y + line * 1.3f));
    const ImVec2 p1(std::floor(origin.x + size.x - font), std::floor(origin.y + std::max(font * 5.0f, size.y - 4.5f * line)));
    const double margin = 0.08 * (std::log10(hi) - std::log10(lo));
    const PlotAxis ax{0.0, 1.0, p0.x, p1.x};
    const PlotAxis ay{lo * std::pow(10.0, -margin), hi * std::pow(10.0, margin), p1.y, p0.y, true};
    const auto y_of = [&](double m) { return ay.at(m > 0 ? m : ay.lo); };
    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##alpha-plot", ImVec2(p1.x - p0.x, p1.y - p0.y));
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {  // a click picks that alpha
        st.settings.smooth = true;
        st.settings.alpha = std::round(std::clamp((ImGui::GetIO().MousePos.x - p0.x) / (p1.x - p0.x), 0.0f, 1.0f) * 100.0) / 100.0;
    }
    dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg, 0.35f));
    DrawTicksBelow(dl, ax, p1.y + 1.0f, 5, p0.x - font, p1.x + font);
    DrawTicksLeft(dl, ay, p0.x - 1.0f, std::max(2, static_cast<int>((p1.y - p0.y) / (font * 2.5f))), false, p1.x);
    dl->PushClipRect(p0, p1, true);
    const float plain_y = std::round(y_of(cv.plain_mse));
    dl->AddLine(ImVec2(p0.x, plain_y), ImVec2(p1.x, plain_y), palette::kRange, 1.5f);
    std::vector<ImVec2> pts;
    for (std::size_t i = 0; i < cv.mse.size(); ++i) pts.emplace_back(ax.at(cv.alphas[i]), y_of(cv.mse[i]));
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), palette::kCurve, 0, 2.5f);
    const float mr = std::max(4.0f, font * 0.38f);
    DrawMarker(dl, pts[best], MarkerShape::Triangle, palette::kBest, mr * 1.3f);
    const bool smooth = st.shown.settings.smooth;
    if (smooth) {
        const float x = std::round(ax.at(st.shown.settings.alpha));
        dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), palette::kCurrent, 1.5f);
        DrawMarker(dl, ImVec2(x, y_of(st.shown.result.output.mse)), MarkerShape::Circle, palette::kCurrent, mr);
    }
    dl->PopClipRect();
    const std::string a = Symbols().alpha;
    std::vector<LegendEntry> legend{
        MarkerEntry(MarkerShape::Triangle, palette::kBest, "best " + a + " = " + FormatFixed(cv.alphas[best], 2, 2) + ": MSE " + FormatNumber(cv.mse[best])),
        TextEntry("orange: no smoothing, " + FormatNumber(cv.plain_mse), true)};
    if (smooth)
        legend.insert(legend.begin() + 1, MarkerEntry(MarkerShape::Circle, palette::kCurrent,
                                                      a + " = " + FormatFixed(st.shown.settings.alpha, 2, 2) + ": MSE " +
                                                          FormatNumber(st.shown.result.output.mse)));
    DrawLegend(legend, ImVec2(p0.x, p1.y + line * 1.2f));
}

}  // namespace

float LayerMapsMinHeight() {
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    return std::ceil(2.0f * (font * 3.0f + 1.0f) + 2.0f * line + std::round(font * 0.8f));
}

float LayerTableHeight(const LayerPanelState& st) {
    if (st.table_h > 0) return st.table_h;
    // The header and four rows, their borders, the line under them and the spacing: the first frame's guess.
    const ImGuiStyle& s = ImGui::GetStyle();
    return std::ceil(5.0f * (ImGui::GetTextLineHeight() + 2.0f * s.CellPadding.y) + 2.0f + 2.0f * s.ItemSpacing.y +
                     ImGui::GetTextLineHeightWithSpacing());
}

void DrawLayerSide(LayerPanelState& st, ImVec2 size) {
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::BeginGroup();
    MetricsTable(st.shown, size.x);
    st.table_h = ImGui::GetCursorScreenPos().y - origin.y;
    ImGui::Spacing();
    const float used = ImGui::GetCursorScreenPos().y - origin.y;
    AlphaPlot(st, ImVec2(size.x, std::max(size.y - used, ImGui::GetFontSize() * 8.0f)));
    ImGui::EndGroup();
}

}  // namespace qs::gui
