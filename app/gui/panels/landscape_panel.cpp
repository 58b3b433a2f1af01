#include "gui/panels/landscape_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gui/widgets/colormap.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "quantscope/landscape.hpp"

namespace qs::gui {
namespace {

// A click on the map (a point of the curve) this frame: the (s, z) it asks for.
struct LandscapeClick {
    bool requested = false;
    double scale = 1.0;
    std::int32_t zero_point = 0;
};

// What the worker needs, copied on the UI thread.
struct Request {
    std::shared_ptr<const TensorData> data;
    LandscapeRequest landscape;
};

// The numbers come from the core; this only routes its progress, cancel flag and passes through the task.
void RunRequest(const Request& rq, Task<LandscapeResult>::Context& ctx) {
    LandscapeCallbacks callbacks;
    callbacks.cancel = &ctx.cancel_flag();
    callbacks.progress = [&ctx](float p) { ctx.set_progress(p); };
    callbacks.publish = [&ctx](LandscapeResult r) { ctx.publish(std::move(r)); };
    // A mapped tensor is read in its stored type (bf16/f16: its exact map from its bit patterns' counts).
    if (rq.data->floats) compute_landscape(*rq.data->floats, rq.landscape, callbacks);
    else compute_landscape(rq.data->view, rq.landscape, callbacks);
}

bool CurrentPoint(const QuantView& qv, double& s, std::int32_t& z) {
    if (qv.params->block_count != 1) return false;
    s = qv.params->scale[0];
    z = qv.params->zero_point[0];
    return true;
}

// A new request when the tensor or the inputs of the MSE change, or when the current point left the grid.
bool NeedsRequest(const LandscapePanelState& st, const QuantView& qv, bool curve) {
    if (!st.started || st.tensor_key != TensorKeyOf(qv) || !(st.dtype == qv.config->dtype) ||
        st.rounding != qv.config->rounding || st.curve != curve)
        return true;
    if (!st.has_shown || st.shown.curve != curve) return false;
    double s = 0;
    std::int32_t z = 0;
    if (!CurrentPoint(qv, s, z)) return false;
    const LandscapeResult& r = st.shown;
    if (r.scales.empty()) return false;
    if (curve) {
        const double alpha = s * qv.config->dtype.q_max();
        return alpha > r.alphas.back() * (1.0 + 1e-9);
    }
    return s < r.scales.front() * (1.0 - 1e-9) || s > r.scales.back() * (1.0 + 1e-9) || z < r.zero_points.front() ||
           z > r.zero_points.back();
}

void StartRequest(LandscapePanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data, bool curve) {
    Request rq;
    rq.data = data;
    rq.landscape.config = *qv.config;
    rq.landscape.curve = curve;
    rq.landscape.has_current = CurrentPoint(qv, rq.landscape.current.scale, rq.landscape.current.zero_point);
    // A bf16/f16 file's pattern counts, kept alive by rq.data: its exact map is then a second's arithmetic.
    if (!data->values.bit_counts.empty()) rq.landscape.bit_counts = &data->values.bit_counts;
    st.task.start([rq](Task<LandscapeResult>::Context& ctx) { RunRequest(rq, ctx); });
    st.tensor_key = TensorKeyOf(qv);
    st.dtype = qv.config->dtype;
    st.rounding = qv.config->rounding;
    st.curve = curve;
    st.started = true;
    st.has_shown = false;
    ++st.requests;
}

// What the panel is doing (or what the shown result is), and whether it is an error.
std::string StatusText(const LandscapePanelState& st, const QuantView& qv, bool* is_error) {
    *is_error = false;
    const Sym sym = Symbols();
    const std::string times = std::string(" ") + sym.times + " ";
    char buf[160];
    if (st.task.running()) {
        // A bf16/f16 file with its bit patterns counted gets the exact pass alone (compute_landscape).
        const bool refining = st.has_shown, at_once = !qv.data->values.bit_counts.empty();
        const bool fine = refining || at_once;
        const int k = st.curve ? (fine ? kCurveFine : kCurveCoarse) : (fine ? kLandscapeFine : kLandscapeCoarse);
        const std::string grid = st.curve ? std::to_string(k) + " points" : std::to_string(k) + times + std::to_string(k);
        // The pass after the coarse one reads every element, except the middle pass of a big tensor's map.
        const bool exact_next = at_once || (refining && (st.curve || qv.data->numel() <= kLandscapeMidSample ||
                                             st.shown.scales.size() == static_cast<std::size_t>(kLandscapeFine)));
        std::snprintf(buf, sizeof buf, "%s %s, %s  %3.0f%%", refining ? "refining:" : "computing", grid.c_str(),
                      exact_next ? "every element" : "on a sample", 100.0 * st.task.progress());
        std::string text = buf;
        // A big tensor's exact pass takes minutes: how long is left, from the pace so far.
        const double p = st.task.progress(), elapsed = st.task.elapsed_seconds();
        if (exact_next && p > 0.1 && elapsed > 5.0) {
            const double left = elapsed * (1.0 - p) / p;
            std::snprintf(buf, sizeof buf, ", about %s left",
                          left >= 90.0 ? (FormatInteger(std::round(left / 60.0)) + " min").c_str()
                                       : (FormatInteger(std::round(left)) + " s").c_str());
            text += buf;
        }
        return text;
    }
    if (!st.task.error().empty()) {
        *is_error = true;
        return st.task.error();
    }
    if (!st.has_shown) return "";
    const LandscapeResult& r = st.shown;
    const std::string grid = r.curve ? std::to_string(r.alphas.size()) + " points"
                                     : std::to_string(r.scales.size()) + times + std::to_string(r.zero_points.size());
    std::snprintf(buf, sizeof buf, "%s, exact over %lld elements, %.0f ms", grid.c_str(),
                  static_cast<long long>(qv.data->numel()), r.ms);
    return buf;
}

void DrawStatus(const LandscapePanelState& st, const QuantView& qv) {
    bool error = false;
    const std::string text = StatusText(st, qv, &error);
    if (error) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", text.c_str());
    else ImGui::TextDisabled("%s", text.c_str());
}

// Unit position of log10(mse) in the color range.
double ColorUnit(double mse, double lo, double hi) {
    if (!(hi > lo) || !(mse > 0.0)) return 0.0;
    return std::clamp((std::log10(mse) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)), 0.0, 1.0);
}

// The colour (or y) range of the MSE values: from the smallest positive one (the MSE can be 0, a tensor
// exactly on the grid) to `hi`, at least a decade wide.
std::pair<double, double> PositiveRange(const std::vector<double>& mse, double hi) {
    double lo = std::numeric_limits<double>::infinity();
    for (double m : mse)
        if (m > 0.0) lo = std::min(lo, m);
    hi = std::max(hi, lo);
    if (!std::isfinite(lo)) lo = hi = 1.0;
    if (!(hi > lo)) hi = lo * 10.0;
    return {lo, hi};
}

// The map's texture, row 0 = the largest zero point (drawn at the top), log10 MSE in viridis.
void UploadMapTexture(LandscapePanelState& st, const ColorLut& lut, double lo, double hi) {
    const LandscapeResult& r = st.shown;
    const std::size_t ns = r.scales.size(), nz = r.zero_points.size();
    const std::uint64_t key = (static_cast<std::uint64_t>(ns) << 32) ^ (st.requests << 1) ^ (r.exact ? 1u : 0u);
    if (st.texture.is_current(key)) return;
    std::vector<std::uint32_t> rgba(ns * nz);
    for (std::size_t zi = 0; zi < nz; ++zi)
        for (std::size_t si = 0; si < ns; ++si)
            rgba[(nz - 1 - zi) * ns + si] = lut[LutIndex(ColorUnit(r.mse[zi * ns + si], lo, hi) * 255.0)];
    st.texture.upload_rgba(static_cast<int>(ns), static_cast<int>(nz), rgba.data(), key);
}

std::vector<LegendEntry> MapLegend(const LandscapePanelState& st, const QuantView& qv, bool has_current, double cs,
                                   std::int32_t cz) {
    const LandscapeResult& r = st.shown;
    std::vector<LegendEntry> legend;
    legend.push_back(TextEntry("MSE over (s, z), one pair per tensor", false));
    legend.push_back(TextEntry("color: log10 MSE, dark = small error", true));
    if (has_current) {
        legend.push_back(MarkerEntry(MarkerShape::Circle, palette::kCurrent, "current: s = " + FormatNumber(cs) + ", z = " + FormatNumber(cz)));
        legend.push_back(TextEntry("MSE " + FormatNumber(qv.metrics().mse), true));
    } else {
        legend.push_back(TextEntry(std::string(to_string(qv.config->granularity)) + " granularity: each block has its own (s, z)", false, true));
        legend.push_back(TextEntry("the map is for a single pair per tensor", true));
    }
    legend.push_back(MarkerEntry(MarkerShape::Diamond, palette::kRange,
                                 "lessons' min/max: s = " + FormatNumber(r.minmax_scale) + ", z = " + FormatNumber(r.minmax_zero_point)));
    legend.push_back(TextEntry("MSE " + FormatNumber(r.minmax_mse), true));
    const bool best_is_minmax = r.best_scale == r.minmax_scale && r.best_zero_point == r.minmax_zero_point;
    legend.push_back(MarkerEntry(MarkerShape::Triangle, palette::kBest,
                                 "best on grid: s = " + FormatNumber(r.best_scale) + ", z = " + FormatNumber(r.best_zero_point) +
                                     (best_is_minmax ? "  (= min/max)" : "")));
    legend.push_back(TextEntry("MSE " + FormatNumber(r.best_mse) + (r.exact ? "" : " (on a sample)"), true));
    bool status_error = false;
    legend.push_back(TextEntry(StatusText(st, qv, &status_error), true, status_error));
    legend.push_back(TextEntry("click a cell to try its s and z", true));
    return legend;
}

// The cell under the mouse: outlined, its (s, z) and MSE in a tooltip; a click asks for them.
void MapHover(const LandscapeResult& r, ImVec2 m0, ImVec2 m1, bool clicked, LandscapeClick& click) {
    const std::size_t ns = r.scales.size(), nz = r.zero_points.size();
    const ImVec2 mp = ImGui::GetIO().MousePos;
    const int si = std::clamp(static_cast<int>((mp.x - m0.x) / (m1.x - m0.x) * ns), 0, static_cast<int>(ns) - 1);
    const int zr = std::clamp(static_cast<int>((mp.y - m0.y) / (m1.y - m0.y) * nz), 0, static_cast<int>(nz) - 1);
    const std::size_t zi = nz - 1 - static_cast<std::size_t>(zr);
    const float cw = (m1.x - m0.x) / ns, ch = (m1.y - m0.y) / nz;
    const ImVec2 a(m0.x + cw * si, m0.y + ch * zr);
    ImGui::GetWindowDrawList()->AddRect(a, ImVec2(a.x + cw, a.y + ch), palette::kHoverCell, 0.0f, 0, 1.5f);
    const double s = r.scales[static_cast<std::size_t>(si)];
    const std::int32_t z = r.zero_points[zi];
    ImGui::BeginTooltip();
    ImGui::Text("s = %s, z = %s", FormatNumber(s).c_str(), FormatNumber(z).c_str());
    ImGui::Text("MSE = %s%s", FormatNumber(r.mse[zi * ns + static_cast<std::size_t>(si)]).c_str(), r.exact ? "" : " (on a sample)");
    ImGui::TextDisabled("click: use this s and z (manual mode)");
    ImGui::EndTooltip();
    if (clicked) {
        click.requested = true;
        click.scale = s;
        click.zero_point = z;
    }
}

LandscapeClick DrawMap(LandscapePanelState& st, const QuantView& qv, ImVec2 region) {
    LandscapeClick click;
    const LandscapeResult& r = st.shown;
    const std::size_t ns = r.scales.size(), nz = r.zero_points.size();
    if (ns < 2 || nz < 1) return click;
    const float font = ImGui::GetFontSize();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const auto [lo, hi] = PositiveRange(r.mse, r.mse_hi);
    const ColorLut& lut = GetColormapLut(Colormap::Viridis);
    UploadMapTexture(st, lut, lo, hi);
    double cs = 0;
    std::int32_t cz = 0;
    const bool has_current = CurrentPoint(qv, cs, cz);
    const std::vector<LegendEntry> legend = MapLegend(st, qv, has_current, cs, cz);

    // Layout: [z labels | map | colorbar + labels | legend]; the axis titles above the z labels and under the map.
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float ylab_w = ImGui::CalcTextSize("-32768").x + font * 0.8f;
    const float cbar_w = ColorbarWidth(ImGui::CalcTextSize("1e-10").x);
    const float legend_w = std::max(LegendWidth(legend), ImGui::CalcTextSize("refining: 64 x 64, every element  100%").x);
    const float map_h = std::max(font * 5.0f, region.y - 3.2f * line);
    const float map_w = std::max(font * 6.0f, std::min(region.x - ylab_w - cbar_w - legend_w - font, map_h * 1.8f));
    const ImVec2 m0(std::floor(origin.x + ylab_w), std::floor(origin.y + line));
    const ImVec2 m1(m0.x + std::floor(map_w), m0.y + std::floor(map_h));
    st.plot_min = m0;
    st.plot_max = m1;

    // Axes whose ends are the outer edges of the cells: x = log scale, y = zero point (up).
    const double ls0 = std::log(r.scales.front()), ls1 = std::log(r.scales.back());
    const double ds = (ls1 - ls0) / static_cast<double>(ns - 1);
    const double z0 = r.zero_points.front(), z1 = r.zero_points.back();
    const double dz = nz > 1 ? (z1 - z0) / static_cast<double>(nz - 1) : 1.0;
    const PlotAxis s_axis{std::exp(ls0 - ds * 0.5), std::exp(ls1 + ds * 0.5), m0.x, m1.x, true};
    const PlotAxis z_axis{z0 - dz * 0.5, z1 + dz * 0.5, m1.y, m0.y};

    ImGui::SetCursorScreenPos(m0);
    ImGui::InvisibleButton("##map", ImVec2(m1.x - m0.x, m1.y - m0.y));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    dl->AddImage(st.texture.id(), m0, m1);
    dl->AddRect(ImVec2(m0.x - 1, m0.y - 1), ImVec2(m1.x + 1, m1.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksBelow(dl, s_axis, m1.y + 1.0f, std::max(2, static_cast<int>((m1.x - m0.x) / (font * 4.5f))),
                   m0.x - ylab_w * 0.5f, m1.x + font);
    DrawTicksLeft(dl, z_axis, m0.x - 1.0f, std::max(2, static_cast<int>((m1.y - m0.y) / (font * 2.0f))), true);
    const std::string xtitle = "scale s (log axis)";
    dl->AddText(ImVec2(std::round((m0.x + m1.x - ImGui::CalcTextSize(xtitle.c_str()).x) * 0.5f), m1.y + font * 0.4f + line),
                text, xtitle.c_str());
    dl->AddText(ImVec2(origin.x, origin.y), text, "zero point z");
    const ImVec2 bar_min(m1.x + std::round(font * 0.5f), m0.y), bar_max(bar_min.x + std::round(font * 0.9f), m1.y);
    DrawColorbarGradient(dl, lut, 0.0, 1.0, bar_min, bar_max);
    DrawColorbarTicks(dl, LogColorbarTicks(lo, hi, bar_max.y - bar_min.y), bar_min, bar_max);

    // Markers: the best grid point under the lessons' min/max (when they coincide the diamond sits inside the
    // triangle's outline), the current (s, z) on top.
    const float mr = std::max(4.0f, font * 0.38f);
    auto inside = [&](ImVec2 p) { return p.x >= m0.x - 1 && p.x <= m1.x + 1 && p.y >= m0.y - 1 && p.y <= m1.y + 1; };
    dl->PushClipRect(ImVec2(m0.x - mr * 2, m0.y - mr * 2), ImVec2(m1.x + mr * 2, m1.y + mr * 2), true);
    const ImVec2 p_mm(s_axis.at(r.minmax_scale), z_axis.at(r.minmax_zero_point));
    const ImVec2 p_best(s_axis.at(r.best_scale), z_axis.at(r.best_zero_point));
    if (inside(p_best)) DrawMarker(dl, p_best, MarkerShape::Triangle, palette::kBest, mr * 1.3f);
    if (inside(p_mm)) DrawMarker(dl, p_mm, MarkerShape::Diamond, palette::kRange, mr);
    const ImVec2 p_current(s_axis.at(cs), z_axis.at(cz));
    if (has_current && inside(p_current)) DrawMarker(dl, p_current, MarkerShape::Circle, palette::kCurrent, mr);
    if (hovered) MapHover(r, m0, m1, clicked, click);
    dl->PopClipRect();

    DrawLegend(legend, ImVec2(m1.x + cbar_w + font, m0.y));
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(region.x, m1.y + 2.2f * line - origin.y));
    return click;
}

std::vector<LegendEntry> CurveLegend(const LandscapePanelState& st, const QuantView& qv, bool has_current, double cs) {
    const LandscapeResult& r = st.shown;
    const Sym sym = Symbols();
    const double q_max = qv.config->dtype.q_max();
    std::vector<LegendEntry> legend;
    legend.push_back(TextEntry("MSE against the clipping range (symmetric)", false));
    legend.push_back(TextEntry(std::string("a smaller ") + sym.alpha + ": finer steps, more clipping", true));
    if (has_current) {
        legend.push_back(MarkerEntry(MarkerShape::Circle, palette::kCurrent, std::string("current: ") + sym.alpha + " = " + FormatNumber(cs * q_max)));
        legend.push_back(TextEntry("MSE " + FormatNumber(qv.metrics().mse), true));
    } else {
        legend.push_back(TextEntry(std::string(to_string(qv.config->granularity)) + " granularity: each block has its own s", false, true));
        legend.push_back(TextEntry("the curve is for a single s per tensor", true));
    }
    legend.push_back(MarkerEntry(MarkerShape::Diamond, palette::kRange,
                                 std::string("lessons' max|r|: ") + sym.alpha + " = " + FormatNumber(r.minmax_scale * q_max)));
    legend.push_back(TextEntry("MSE " + FormatNumber(r.minmax_mse), true));
    legend.push_back(MarkerEntry(MarkerShape::Triangle, palette::kBest, std::string("best: ") + sym.alpha + " = " + FormatNumber(r.best_scale * q_max)));
    legend.push_back(TextEntry("MSE " + FormatNumber(r.best_mse) + ", s = " + FormatNumber(r.best_scale), true));
    bool status_error = false;
    legend.push_back(TextEntry(StatusText(st, qv, &status_error), true, status_error));
    legend.push_back(TextEntry(std::string("click the curve to try that ") + sym.alpha, true));
    return legend;
}

// The curve's point nearest the mouse in x: marked, its alpha, s and MSE in a tooltip; a click asks for its s.
void CurveHover(const LandscapeResult& r, const std::vector<ImVec2>& pts, ImVec2 p0, ImVec2 p1, float mr, bool clicked,
                LandscapeClick& click) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const Sym sym = Symbols();
    const float mx = ImGui::GetIO().MousePos.x;
    std::size_t best = 0;
    for (std::size_t i = 1; i < pts.size(); ++i)
        if (std::fabs(pts[i].x - mx) < std::fabs(pts[best].x - mx)) best = i;
    dl->AddLine(ImVec2(pts[best].x, p0.y), ImVec2(pts[best].x, p1.y), ImGui::GetColorU32(ImGuiCol_Text, 0.5f));
    dl->AddCircle(pts[best], mr, ImGui::GetColorU32(ImGuiCol_Text), 16, 1.5f);
    ImGui::BeginTooltip();
    ImGui::Text("%s = %s (s = %s, z = 0)", sym.alpha, FormatNumber(r.alphas[best]).c_str(), FormatNumber(r.scales[best]).c_str());
    ImGui::Text("MSE = %s%s", FormatNumber(r.mse[best]).c_str(), r.exact ? "" : " (on a sample)");
    ImGui::TextDisabled("click: use this s with z = 0 (manual mode)");
    ImGui::EndTooltip();
    if (clicked) {
        click.requested = true;
        click.scale = r.scales[best];
        click.zero_point = 0;
    }
}

LandscapeClick DrawCurve(LandscapePanelState& st, const QuantView& qv, ImVec2 region) {
    LandscapeClick click;
    const LandscapeResult& r = st.shown;
    const std::size_t n = r.alphas.size();
    if (n < 2) return click;
    const float font = ImGui::GetFontSize();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const Sym sym = Symbols();
    const double q_max = qv.config->dtype.q_max();
    double hi = 0;
    for (double m : r.mse) hi = std::max(hi, m);
    const auto [lo, top] = PositiveRange(r.mse, hi);
    const double margin = 0.05 * (std::log10(top) - std::log10(lo));  // the curve off the plot's edges
    double cs = 0;
    std::int32_t cz = 0;
    const bool has_current = CurrentPoint(qv, cs, cz);
    const std::vector<LegendEntry> legend = CurveLegend(st, qv, has_current, cs);

    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float ylab_w = ImGui::CalcTextSize("1e-10").x + font * 0.8f;
    const float legend_w = std::max(LegendWidth(legend), ImGui::CalcTextSize("refining: 128 points, every element  100%").x);
    const float plot_h = std::max(font * 5.0f, region.y - 3.2f * line);
    const float plot_w = std::max(font * 8.0f, region.x - ylab_w - legend_w - font * 2.0f);
    const ImVec2 p0(std::floor(origin.x + ylab_w), std::floor(origin.y + line));
    const ImVec2 p1(p0.x + std::floor(plot_w), p0.y + std::floor(plot_h));
    st.plot_min = p0;
    st.plot_max = p1;
    const PlotAxis alpha_axis{0.0, r.alphas.back() * 1.02, p0.x, p1.x};
    const PlotAxis mse_axis{lo * std::pow(10.0, -margin), top * std::pow(10.0, margin), p1.y, p0.y, true};
    auto y_of = [&](double m) { return mse_axis.at(m > 0.0 ? m : mse_axis.lo); };  // an MSE of 0 sits on the floor

    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##curve", ImVec2(p1.x - p0.x, p1.y - p0.y));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg, 0.35f));
    dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksBelow(dl, alpha_axis, p1.y + 1.0f, std::max(2, static_cast<int>((p1.x - p0.x) / (font * 5.0f))),
                   p0.x - ylab_w * 0.5f, p1.x + font);
    DrawTicksLeft(dl, mse_axis, p0.x - 1.0f, std::max(2, static_cast<int>((p1.y - p0.y) / (font * 3.0f))), false, p1.x);
    const std::string xtitle = std::string("clipping range ") + sym.alpha + " = s " + sym.times + " q_max  (z = 0)";
    dl->AddText(ImVec2(std::round((p0.x + p1.x - ImGui::CalcTextSize(xtitle.c_str()).x) * 0.5f), p1.y + font * 0.4f + line),
                text, xtitle.c_str());
    dl->AddText(ImVec2(origin.x, origin.y), text, "MSE (log axis)");

    dl->PushClipRect(p0, p1, true);
    std::vector<ImVec2> pts(n);
    for (std::size_t i = 0; i < n; ++i) pts[i] = ImVec2(alpha_axis.at(r.alphas[i]), y_of(r.mse[i]));
    dl->AddPolyline(pts.data(), static_cast<int>(n), palette::kCurve, 0, 2.5f);
    const float mr = std::max(4.0f, font * 0.38f);
    const double alpha_mm = r.minmax_scale * q_max;
    const float x_mm = std::round(alpha_axis.at(alpha_mm));
    dl->AddLine(ImVec2(x_mm, p0.y), ImVec2(x_mm, p1.y), palette::kRange, 1.5f);
    DrawMarker(dl, ImVec2(alpha_axis.at(alpha_mm), y_of(r.minmax_mse)), MarkerShape::Diamond, palette::kRange, mr);
    DrawMarker(dl, ImVec2(alpha_axis.at(r.best_scale * q_max), y_of(r.best_mse)), MarkerShape::Triangle, palette::kBest, mr);
    if (has_current) {
        const float x = std::round(alpha_axis.at(cs * q_max));
        dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), palette::kCurrent, 1.5f);
        DrawMarker(dl, ImVec2(x, y_of(qv.metrics().mse)), MarkerShape::Circle, palette::kCurrent, mr);
    }
    if (hovered) CurveHover(r, pts, p0, p1, mr, clicked, click);
    dl->PopClipRect();

    DrawLegend(legend, ImVec2(p1.x + font * 1.5f, p0.y));
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(region.x, p1.y + 2.2f * line - origin.y));
    return click;
}

}  // namespace

bool LandscapeBusy(const LandscapePanelState& st) { return st.task.running(); }

void SuspendLandscape(LandscapePanelState& st) {
    if (!st.task.running()) return;
    st.task.cancel();
    st.started = false;  // NeedsRequest: start again when drawn
}

void FinishLandscape(LandscapePanelState& st) {
    st.task.wait();
    if (std::optional<LandscapeResult> r = st.task.take()) {
        st.shown = std::move(*r);
        st.has_shown = true;
    }
}

void DrawLandscapePanel(LandscapePanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data,
                        Intents& out) {
    LandscapeClick click;
    ImGui::PushID(&st);
    if (!qv.valid() || !data || data.get() != qv.data) {
        ImGui::TextDisabled("No result yet.");
        ImGui::PopID();
        return;
    }
    const bool curve = qv.config->mode == Mode::Symmetric;
    if (NeedsRequest(st, qv, curve)) StartRequest(st, qv, data, curve);
    if (std::optional<LandscapeResult> r = st.task.take()) {
        st.shown = std::move(*r);
        st.has_shown = true;
    }
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 region(std::max(avail.x, ImGui::GetFontSize() * 30.0f), std::max(avail.y, ImGui::GetFontSize() * 12.0f));
    if (!st.has_shown || st.shown.curve != curve) {
        ImGui::TextUnformatted(curve ? "MSE against the clipping range" : "MSE over (s, z)");
        DrawStatus(st, qv);
    } else {
        click = curve ? DrawCurve(st, qv, region) : DrawMap(st, qv, region);
    }
    ImGui::PopID();
    if (click.requested) out.push(PickManualIntent{click.scale, click.zero_point});
}

}  // namespace qs::gui
