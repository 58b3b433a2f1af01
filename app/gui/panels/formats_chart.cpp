// The Formats tab's chart: SQNR (dB) against bits per weight, one point per row of the table, shaped and
// colored by the kind of format, the Pareto front as a staircase, the current choice as a ring.
#include <algorithm>
#include <iterator>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/panels/formats_panel.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/format.hpp"

namespace qs::gui {
namespace {

FormatKind KindOf(const FormatRow& r) { return format_traits(r.config.format).kind; }

// The chart's key: a marker and a colour per kind, in format_kinds()' order (int, float, codebook, block).
struct KindMarker {
    MarkerShape shape;
    ImU32 color;
};
const KindMarker kKindMarkers[] = {{MarkerShape::Square, palette::kFormatInt},
                                   {MarkerShape::Diamond, palette::kFormatFloat},
                                   {MarkerShape::Triangle, palette::kFormatCodebook},
                                   {MarkerShape::Dot, palette::kFormatBlock}};

const KindMarker& MarkerOf(FormatKind k) {
    const auto& kinds = format_kinds();
    const auto at = static_cast<std::size_t>(std::find(kinds.begin(), kinds.end(), k) - kinds.begin());
    return kKindMarkers[std::min(at, std::size(kKindMarkers) - 1)];
}

MarkerShape ShapeOf(FormatKind k) { return MarkerOf(k).shape; }
ImU32 ColorOf(FormatKind k) { return MarkerOf(k).color; }

// The axes' ranges: bits from the rows (and the current point), SQNR over the finite values with a margin.
// A lossless row (no error: +infinity) sits in a band at the top, labelled, above every finite value.
struct Ranges {
    double bits_lo = 0, bits_hi = 1, sqnr_lo = 0, sqnr_hi = 1;
    bool exact_band = false, zero_band = false;  // rows of +infinity / -infinity SQNR
    bool finite = false;                         // any finite SQNR (else the SQNR axis has no ticks)
};

Ranges RangesOf(const std::vector<FormatRow>& rows, double current_bits, double current_sqnr) {
    Ranges r;
    double blo = current_bits, bhi = current_bits;
    double slo = std::numeric_limits<double>::infinity(), shi = -slo;
    auto add = [&](double bits, double sqnr) {
        blo = std::min(blo, bits);
        bhi = std::max(bhi, bits);
        if (std::isfinite(sqnr)) slo = std::min(slo, sqnr), shi = std::max(shi, sqnr);
        else if (sqnr > 0) r.exact_band = true;
        else r.zero_band = true;
    };
    for (const FormatRow& row : rows) add(row.bits_per_weight, comparable_sqnr_db(row));
    add(current_bits, current_sqnr);
    r.finite = std::isfinite(slo);
    if (!r.finite) slo = 0.0, shi = 1.0;
    const double bspan = std::max(bhi - blo, 1.0), sspan = std::max(shi - slo, 1.0);
    r.bits_lo = std::max(0.0, blo - 0.06 * bspan);
    r.bits_hi = bhi + 0.06 * bspan;
    r.sqnr_lo = slo - 0.08 * sspan;
    r.sqnr_hi = shi + 0.08 * sspan;
    return r;
}

bool Overlaps(const std::vector<ImVec4>& taken, ImVec4 box) {
    for (const ImVec4& t : taken)
        if (box.x < t.z && t.x < box.z && box.y < t.w && t.y < box.w) return true;
    return false;
}

// A label beside point `p`: right of it, else left, above or below, wherever it stays in the plot and covers
// no point and no label drawn before; none where every place is taken (the tooltip still names every point).
void Label(ImDrawList* dl, std::vector<ImVec4>& taken, ImVec2 p, float gap, const std::string& text, ImU32 color, ImVec2 p0,
           ImVec2 p1) {
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    const ImVec2 places[] = {ImVec2(p.x + gap, p.y - size.y * 0.5f), ImVec2(p.x - gap - size.x, p.y - size.y * 0.5f),
                             ImVec2(p.x - size.x * 0.5f, p.y - gap - size.y), ImVec2(p.x - size.x * 0.5f, p.y + gap)};
    for (const ImVec2& at : places) {
        const ImVec4 box(at.x, at.y, at.x + size.x, at.y + size.y);
        if (box.x < p0.x + 2.0f || box.z > p1.x - 2.0f || box.y < p0.y || box.w > p1.y || Overlaps(taken, box)) continue;
        dl->AddText(at, color, text.c_str());
        taken.push_back(box);
        return;
    }
}

// The bands of infinite SQNR named like ticks left of the plot, in the table's words (SqnrWord) and, where no SQNR is finite, a note in the plot instead of an axis of nothing.
void DrawBands(ImDrawList* dl, const Ranges& rg, ImVec2 p0, ImVec2 p1) {
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    auto left = [&](double db, float y) {
        const std::string label = SqnrWord(db);
        dl->AddText(ImVec2(p0.x - font * 0.4f - ImGui::CalcTextSize(label.c_str()).x, y), dim, label.c_str());
    };
    const double inf = std::numeric_limits<double>::infinity();
    if (rg.exact_band) left(inf, p0.y + (line - ImGui::GetTextLineHeight()) * 0.5f);
    if (rg.zero_band) left(-inf, p1.y - line + (line - ImGui::GetTextLineHeight()) * 0.5f);
    if (rg.finite) return;
    const char* note = rg.exact_band ? "every format is exact on this tensor" : "no SQNR: the tensor is all zeros";
    const ImVec2 size = ImGui::CalcTextSize(note);
    dl->AddText(ImVec2(std::round((p0.x + p1.x - size.x) * 0.5f), std::round((p0.y + p1.y - size.y) * 0.5f)), dim, note);
}

// The point of `points` nearest to `m` within `reach` pixels, or -1 (points can sit on top of each other).
int Nearest(const std::vector<ImVec2>& points, ImVec2 m, float reach) {
    int found = -1;
    float best = reach * reach;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const float dx = points[i].x - m.x, dy = points[i].y - m.y;
        if (dx * dx + dy * dy <= best) best = dx * dx + dy * dy, found = static_cast<int>(i);
    }
    return found;
}

// The kinds' shapes and the current ring, on a line (or two) above the plot.
std::vector<LegendEntry> LegendEntries() {
    return {
        MarkerEntry(MarkerShape::Square, palette::kFormatInt, "int"),
        MarkerEntry(MarkerShape::Diamond, palette::kFormatFloat, "float"),
        MarkerEntry(MarkerShape::Triangle, palette::kFormatCodebook, "codebook"),
        MarkerEntry(MarkerShape::Dot, palette::kFormatBlock, "block"),
        MarkerEntry(MarkerShape::Circle, palette::kCurrent, "current"),
    };
}

}  // namespace

int DrawFormatsChart(FormatsPanelState& st, ImVec2 size, double current_bits, double current_sqnr,
                     const std::string& current_label) {
    const std::vector<FormatRow>& rows = st.sorted;
    st.point.assign(rows.size(), ImVec2(-1.0f, -1.0f));
    const float font = ImGui::GetFontSize();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const Ranges rg = RangesOf(rows, current_bits, current_sqnr);
    const double inf = std::numeric_limits<double>::infinity();
    float ylab_w = ImGui::CalcTextSize("-100").x;
    if (rg.exact_band) ylab_w = std::max(ylab_w, ImGui::CalcTextSize(SqnrWord(inf).c_str()).x);
    if (rg.zero_band) ylab_w = std::max(ylab_w, ImGui::CalcTextSize(SqnrWord(-inf).c_str()).x);
    ylab_w += font * 0.8f;
    const std::vector<LegendEntry> legend = LegendEntries();
    const float legend_h = LegendRowHeight(legend, size.x);
    const ImVec2 p0(std::floor(origin.x + ylab_w), std::floor(origin.y + line + legend_h + font * 0.3f));
    const ImVec2 p1(std::floor(origin.x + size.x - font * 0.5f), std::floor(origin.y + size.y - 2.2f * line));
    st.plot_min = p0;
    st.plot_max = p1;
    if (p1.x - p0.x < font * 4.0f || p1.y - p0.y < font * 3.0f) {
        ImGui::Dummy(size);
        return -1;
    }
    // Bands for SQNR of +infinity (no error) and -infinity (an all-zero tensor): a line of text each, and half a
    // text height more, so that a tick label centred on the finite axis' end never overlaps the band's word.
    const float band = line + ImGui::GetTextLineHeight() * 0.5f;
    const float top = p0.y + (rg.exact_band ? band : 0.0f), bottom = p1.y - (rg.zero_band ? band : 0.0f);
    const PlotAxis bx{rg.bits_lo, rg.bits_hi, p0.x, p1.x};
    const PlotAxis sy{rg.sqnr_lo, rg.sqnr_hi, bottom, top};
    auto at = [&](double bits, double sqnr) {
        const float y = std::isfinite(sqnr) ? sy.at(sqnr) : sqnr > 0 ? p0.y + line * 0.5f : p1.y - line * 0.5f;
        return ImVec2(std::round(bx.at(bits)), std::round(y));
    };

    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##chart", ImVec2(p1.x - p0.x, p1.y - p0.y));
    const bool hovered = ImGui::IsItemHovered();
    const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
    dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg, 0.35f));
    dl->AddRect(ImVec2(p0.x - 1, p0.y - 1), ImVec2(p1.x + 1, p1.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksBelow(dl, bx, p1.y + 1.0f, std::max(2, static_cast<int>((p1.x - p0.x) / (font * 4.0f))), p0.x - ylab_w * 0.5f,
                   p1.x + font * 0.5f);
    if (rg.finite) DrawTicksLeft(dl, sy, p0.x - 1.0f, std::max(2, static_cast<int>((bottom - top) / (font * 2.5f))), false, p1.x);
    DrawBands(dl, rg, p0, p1);
    // Titles shortened at a word where the chart is narrow (large text on a small window).
    const std::string xtitle = FitText("bits per weight (elements + stored scales and zero points)", p1.x - origin.x);
    const float xtitle_w = ImGui::CalcTextSize(xtitle.c_str()).x;
    dl->AddText(ImVec2(std::round(std::clamp((p0.x + p1.x - xtitle_w) * 0.5f, origin.x, std::max(origin.x, p1.x - xtitle_w))),
                       p1.y + font * 0.4f + line),
                text, xtitle.c_str());
    const std::string ytitle = FitText("SQNR (dB), higher is better; the staircase: the Pareto front", size.x);
    dl->AddText(origin, text, ytitle.c_str());
    DrawLegendRow(dl, legend, ImVec2(origin.x, origin.y + line), size.x);

    dl->PushClipRect(ImVec2(p0.x - font, p0.y - font), ImVec2(p1.x + font, p1.y + font), true);
    for (std::size_t i = 0; i < rows.size(); ++i) st.point[i] = at(rows[i].bits_per_weight, comparable_sqnr_db(rows[i]));
    std::vector<ImVec2> front;
    for (std::size_t i : st.front) front.push_back(st.point[i]);
    DrawStepLine(dl, front, palette::kCurve, 2.5f, p1.x);
    const float mr = std::max(4.0f, font * 0.3f);
    const int hover = hovered ? Nearest(st.point, ImGui::GetIO().MousePos, mr * 2.5f) : -1;
    for (std::size_t i = 0; i < rows.size(); ++i) DrawMarker(dl, st.point[i], ShapeOf(KindOf(rows[i])), ColorOf(KindOf(rows[i])), mr);
    // Labels: the current choice first, then the front left to right; a label that would cover another is left out.
    std::vector<ImVec4> taken;
    const float keep = mr * 1.6f;  // around each point
    for (const ImVec2& p : st.point) taken.push_back(ImVec4(p.x - keep, p.y - keep, p.x + keep, p.y + keep));
    const ImVec2 cur = at(current_bits, current_sqnr);
    const float ring = mr * 1.3f;
    Label(dl, taken, cur, ring * 1.45f + font * 0.4f,
          st.current >= 0 ? FormatRowName(rows[static_cast<std::size_t>(st.current)]) : "current", palette::kCurrent, p0, p1);
    for (std::size_t i : st.front)
        if (static_cast<int>(i) != st.current) Label(dl, taken, st.point[i], font * 0.55f, FormatRowName(rows[i]), text, p0, p1);
    DrawMarker(dl, cur, MarkerShape::Circle, palette::kCurrent, ring);
    const int lit = hover >= 0 ? hover : st.hovered;  // the chart's own hover, else the table row's
    if (lit >= 0 && lit < static_cast<int>(rows.size()))
        dl->AddCircle(st.point[static_cast<std::size_t>(lit)], mr * 2.3f, palette::kHoverCell, 24, 2.0f);
    dl->PopClipRect();

    int click = -1;
    if (hover >= 0) {
        st.hovered = hover;
        ImGui::SetTooltip("%s", FormatRowTooltip(st, static_cast<std::size_t>(hover)).c_str());
        if (clicked) click = hover;
    } else if (hovered && Nearest({cur}, ImGui::GetIO().MousePos, mr * 2.5f) == 0) {
        // The ring alone (settings that are no row of the table, e.g. a percentile calibrator): its numbers.
        ImGui::SetTooltip("the current settings: %s\n%s bits per weight, SQNR %s", current_label.c_str(),
                          FormatFixed(current_bits, 4, 4).c_str(), FormatSqnr(current_sqnr, true).c_str());
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
    return click;
}

}  // namespace qs::gui
