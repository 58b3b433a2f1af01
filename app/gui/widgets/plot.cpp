#include "gui/widgets/plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {

// ------------------------------------------------------------------------------------------------ ticks

std::vector<double> NiceTicks(double lo, double hi, int target, int* decimals) {
    std::vector<double> ticks;
    if (decimals) *decimals = 0;
    if (!std::isfinite(lo) || !std::isfinite(hi)) return ticks;
    if (!(hi > lo)) {
        ticks.push_back(lo);
        if (decimals) *decimals = (lo == std::floor(lo)) ? 0 : 2;
        return ticks;
    }
    const double raw = (hi - lo) / std::max(1, target);
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double norm = raw / mag;
    const double step = (norm < 1.5 ? 1.0 : norm < 3.0 ? 2.0 : norm < 7.0 ? 5.0 : 10.0) * mag;
    if (decimals) *decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    const double first = std::ceil(lo / step - 1e-9) * step;
    for (int i = 0; i < 64; ++i) {
        const double t = first + i * step;
        if (t > hi + step * 1e-9) break;
        ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    }
    return ticks;
}

std::vector<double> LogTicks(double lo, double hi, int target) {
    std::vector<double> ticks;
    if (!(lo > 0.0) || !(hi >= lo) || !std::isfinite(hi)) return ticks;
    const int e0 = static_cast<int>(std::floor(std::log10(lo))), e1 = static_cast<int>(std::ceil(std::log10(hi)));
    for (int pass = 0; pass < 3; ++pass) {  // 1-2-5, then powers of ten, then every k-th power
        ticks.clear();
        const int every = pass == 2 ? std::max(1, (e1 - e0 + target) / std::max(1, target)) : 1;  // at most target
        for (int e = e0; e <= e1; ++e) {
            if (pass == 2 && (e - e0) % every != 0) continue;
            for (double m : {1.0, 2.0, 5.0}) {
                if (pass > 0 && m != 1.0) continue;
                const double v = m * std::pow(10.0, e);
                if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
            }
        }
        if (static_cast<int>(ticks.size()) <= std::max(2, target)) break;
    }
    if (ticks.size() < 2) ticks = {lo, hi};
    return ticks;
}

constexpr int kMaxTickDecimals = 6;

std::string TickLabel(double v, int decimals) {
    if (std::fabs(v) >= 1e5) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.2g", v);
        return buf;
    }
    return FormatFixed(v, decimals, kMaxTickDecimals);  // steps below 1e-6: %.3g, or every tick reads 0.000000
}

std::string LogTickLabel(double v) {
    char buf[32];
    if (v != 0.0 && (std::fabs(v) < 1e-3 || std::fabs(v) >= 1e5)) std::snprintf(buf, sizeof buf, "%.0e", v);
    else std::snprintf(buf, sizeof buf, "%.3g", v);
    std::string s = buf;
    // "1e-05" -> "1e-5", "3e+06" -> "3e6"
    const std::size_t e = s.find('e');
    if (e != std::string::npos) {
        std::size_t d = e + 1;
        if (d < s.size() && (s[d] == '-' || s[d] == '+')) ++d;
        while (d + 1 < s.size() && s[d] == '0') s.erase(d, 1);
        if (s[e + 1] == '+') s.erase(e + 1, 1);
    }
    return s;
}

// ------------------------------------------------------------------------------------------------- axes

float PlotAxis::at(double v) const {
    double u = 0.5;
    if (log) {
        if (lo > 0.0 && hi > lo && v > 0.0) u = (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    } else if (hi > lo) {
        u = (v - lo) / (hi - lo);
    }
    return p0 + static_cast<float>(u) * (p1 - p0);
}

namespace {

struct AxisTick {
    double value;
    std::string label;
};

std::vector<AxisTick> AxisTicks(const PlotAxis& axis, int target, bool integers_only) {
    std::vector<AxisTick> out;
    if (axis.log) {
        for (double v : LogTicks(axis.lo, axis.hi, target)) out.push_back({v, LogTickLabel(v)});
        return out;
    }
    int decimals = 0;
    for (double v : NiceTicks(axis.lo, axis.hi, target, &decimals)) {
        if (integers_only && v != std::floor(v)) continue;
        out.push_back({v, TickLabel(v, integers_only ? 0 : decimals)});
    }
    return out;
}

float TickLength() { return std::round(ImGui::GetFontSize() * 0.3f); }

}  // namespace

void DrawTicksBelow(ImDrawList* dl, const PlotAxis& axis, float y, int target, float label_min_x, float label_max_x) {
    const ImU32 col = ImGui::GetColorU32(ImGuiCol_Text);
    const float tick = TickLength();
    const float min_x = std::max(label_min_x, dl->GetClipRectMin().x);
    const float max_x = std::min(label_max_x, dl->GetClipRectMax().x);
    for (const AxisTick& t : AxisTicks(axis, target, false)) {
        const float x = std::round(axis.at(t.value)) + 0.5f;
        dl->AddLine(ImVec2(x, y), ImVec2(x, y + tick), col);
        const float w = ImGui::CalcTextSize(t.label.c_str()).x;
        const float lx = std::clamp(x - w * 0.5f, min_x, std::max(min_x, max_x - w));
        dl->AddText(ImVec2(std::round(lx), y + tick + 1.0f), col, t.label.c_str());
    }
}

void DrawTicksLeft(ImDrawList* dl, const PlotAxis& axis, float x, int target, bool integers_only, float grid_to_x) {
    const ImU32 col = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border, 0.35f);
    const float tick = TickLength();
    for (const AxisTick& t : AxisTicks(axis, target, integers_only)) {
        const float y = std::round(axis.at(t.value)) + 0.5f;
        dl->AddLine(ImVec2(x - tick, y), ImVec2(x, y), col);
        if (grid_to_x > x) dl->AddLine(ImVec2(x + 1.0f, y), ImVec2(grid_to_x, y), grid);
        const ImVec2 size = ImGui::CalcTextSize(t.label.c_str());
        dl->AddText(ImVec2(x - tick - ImGui::GetFontSize() * 0.15f - size.x, std::round(y - size.y * 0.5f)), col,
                    t.label.c_str());
    }
}

// ------------------------------------------------------------------------------------------ bar charts

void BarsAt(std::size_t count, float x0, float x1, float x, std::int64_t& first, std::int64_t& last) {
    first = 1;
    last = 0;
    const float w = x1 - x0;
    if (count == 0 || !(w > 0.0f) || x < x0 || x >= x1) return;
    const double n = static_cast<double>(count);
    if (n <= static_cast<double>(w)) {
        first = last = std::min<std::int64_t>(static_cast<std::int64_t>((x - x0) / w * n), static_cast<std::int64_t>(count) - 1);
        return;
    }
    const double px = std::floor(x - x0);
    first = static_cast<std::int64_t>(std::ceil(px * n / w));
    last = std::min<std::int64_t>(static_cast<std::int64_t>(std::ceil((px + 1.0) * n / w)) - 1, static_cast<std::int64_t>(count) - 1);
}

int DrawTensorBars(const char* id, std::size_t count, const std::function<TensorBar(std::size_t)>& bar, ImVec2 size) {
    const ImVec2 p0 = ImGui::GetCursorScreenPos();
    const float font = ImGui::GetFontSize();
    const float label_w = ImGui::CalcTextSize("-000").x + font * 0.6f;
    const ImVec2 a(p0.x + label_w, p0.y), b(p0.x + size.x, p0.y + size.y);
    ImGui::InvisibleButton(id, size);
    const bool hovered = ImGui::IsItemHovered();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    double hi = 1.0;
    for (std::size_t i = 0; i < count; ++i) {
        const TensorBar t = bar(i);
        if (!t.failed && t.value) hi = std::max(hi, *t.value);
    }
    const PlotAxis y{0.0, hi * 1.05, b.y, a.y};
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksLeft(dl, y, a.x - 1.0f, std::max(2, static_cast<int>(size.y / (font * 2.0f))), false, b.x);
    const float w = (b.x - a.x) / static_cast<float>(std::max<std::size_t>(count, 1));
    const float mouse_x = ImGui::GetIO().MousePos.x;
    int under_mouse = -1;
    for (std::size_t i = 0; i < count; ++i) {
        const float x0 = a.x + w * static_cast<float>(i), x1 = std::max(x0 + 1.0f, x0 + w - (w > 3.0f ? 1.0f : 0.0f));
        if (hovered && mouse_x >= x0 && mouse_x < x0 + w) under_mouse = static_cast<int>(i);
        const TensorBar t = bar(i);
        if (t.failed) {
            dl->AddRectFilled(ImVec2(x0, b.y - 3.0f), ImVec2(x1, b.y), palette::kClipped);  // no number: a red foot
            continue;
        }
        const double v = t.value.value_or(hi);
        dl->AddRectFilled(ImVec2(x0, std::min(y.at(std::max(v, 0.0)), b.y - 1.0f)), ImVec2(x1, b.y), t.color);
    }
    return under_mouse;
}

void DrawBars(ImDrawList* dl, const std::vector<double>& values, const PlotAxis& y_axis, double baseline, float x0,
              float x1, ImU32 color, ImU32 span_color, std::int64_t highlight) {
    const std::size_t n = values.size();
    const float w = x1 - x0;
    if (n == 0 || !(w > 0.0f)) return;
    const float yb = std::round(y_axis.at(baseline));
    auto bar = [&](float a, float b, double v, ImU32 c) {
        const float yv = std::round(y_axis.at(v));
        dl->AddRectFilled(ImVec2(a, std::min(yb, yv)), ImVec2(b, std::max(yb, yv) + (yv == yb ? 1.0f : 0.0f)), c);
    };
    if (static_cast<float>(n) <= w) {
        const float step = w / static_cast<float>(n);
        const float gap = step >= 6.0f ? 1.0f : 0.0f;
        for (std::size_t i = 0; i < n; ++i) {
            const float a = std::round(x0 + step * static_cast<float>(i)), b = std::round(x0 + step * static_cast<float>(i + 1)) - gap;
            bar(a, std::max(a + 1.0f, b), values[i], static_cast<std::int64_t>(i) == highlight ? palette::kSelected : color);
            if (static_cast<std::int64_t>(i) == highlight)
                dl->AddRect(ImVec2(a - 1.0f, std::min(yb, y_axis.at(values[i])) - 1.0f),
                            ImVec2(std::max(a + 1.0f, b) + 1.0f, std::max(yb, y_axis.at(values[i])) + 1.0f), palette::kOutline);
        }
        return;
    }
    // More values than pixels: per column, the nearest-to-baseline value solid and the farthest as a span.
    for (float px = 0.0f; px < std::floor(w); px += 1.0f) {
        std::int64_t first = 0, last = -1;
        BarsAt(n, x0, x1, x0 + px + 0.5f, first, last);
        if (first > last) continue;
        double near = values[static_cast<std::size_t>(first)], far = near;
        bool has_highlight = false;
        for (std::int64_t i = first; i <= last; ++i) {
            const double v = values[static_cast<std::size_t>(i)];
            if (std::fabs(v - baseline) < std::fabs(near - baseline)) near = v;
            if (std::fabs(v - baseline) > std::fabs(far - baseline)) far = v;
            has_highlight = has_highlight || i == highlight;
        }
        const float a = x0 + px;
        bar(a, a + 1.0f, far, span_color);
        bar(a, a + 1.0f, near, has_highlight ? palette::kSelected : color);
    }
}

// ------------------------------------------------------------------------------------------- colorbars

void DrawColorbarGradient(ImDrawList* dl, const ColorLut& lut, double t_lo, double t_hi, ImVec2 bar_min, ImVec2 bar_max) {
    const float h = bar_max.y - bar_min.y;
    constexpr int kSegments = 64;
    auto color_at = [&](double t) { return static_cast<ImU32>(lut[LutIndex(t * 255.0)]); };
    for (int i = 0; i < kSegments; ++i) {
        // Bottom = low values, like matplotlib's vertical colorbar.
        const double ta = t_lo + (t_hi - t_lo) * i / kSegments;
        const double tb = t_lo + (t_hi - t_lo) * (i + 1) / kSegments;
        const float y_bot = bar_max.y - h * i / kSegments;
        const float y_top = bar_max.y - h * (i + 1) / kSegments;
        const ImU32 c_bot = color_at(ta), c_top = color_at(tb);
        dl->AddRectFilledMultiColor(ImVec2(bar_min.x, std::floor(y_top)), ImVec2(bar_max.x, std::ceil(y_bot)), c_top,
                                    c_top, c_bot, c_bot);
    }
    dl->AddRect(bar_min, bar_max, ImGui::GetColorU32(ImGuiCol_Border));
}

void DrawColorbarTicks(ImDrawList* dl, const std::vector<BarTick>& ticks, ImVec2 bar_min, ImVec2 bar_max) {
    const ImU32 col = ImGui::GetColorU32(ImGuiCol_Text);
    const float font = ImGui::GetFontSize();
    const float tick = TickLength();
    const float h = bar_max.y - bar_min.y;
    for (const BarTick& t : ticks) {
        const float y = bar_max.y - t.pos * h;
        const float yr = std::round(y) + 0.5f;
        dl->AddLine(ImVec2(bar_max.x, yr), ImVec2(bar_max.x + tick, yr), col, 1.0f);
        dl->AddText(ImVec2(bar_max.x + tick + font * 0.2f, std::round(y - font * 0.5f)), col, t.label.c_str());
    }
}

std::vector<BarTick> LogColorbarTicks(double lo, double hi, float bar_height) {
    std::vector<BarTick> out;
    const float font = ImGui::GetFontSize();
    const double a = std::log10(lo), b = std::log10(hi);
    const int target = std::max(2, static_cast<int>(bar_height / (font * 3.0f)));
    float last_px = -1e9f;
    for (double v : LogTicks(lo, hi, target)) {
        const float pos = b > a ? static_cast<float>((std::log10(v) - a) / (b - a)) : 0.5f;
        if ((pos * bar_height) - last_px < font * 1.1f) continue;  // labels closer than a line collide
        last_px = pos * bar_height;
        out.push_back({v, pos, LogTickLabel(v)});
    }
    return out;
}

float ColorbarWidth(float widest_label) {
    const float font = ImGui::GetFontSize();
    return std::round(font * 0.5f) + std::round(font * 0.9f) + std::round(font * 0.5f) + widest_label +
           std::round(font * 0.3f);
}

// ------------------------------------------------------------------------------------ markers, legends

void DrawMarker(ImDrawList* dl, ImVec2 c, MarkerShape shape, ImU32 fill, float r) {
    const ImU32 outline = palette::kOutline;
    switch (shape) {
        case MarkerShape::Circle:
            // A ring: whatever it sits on (another marker) stays visible.
            dl->AddCircle(c, r * 1.45f, outline, 24, 4.5f);
            dl->AddCircle(c, r * 1.45f, fill, 24, 2.5f);
            break;
        case MarkerShape::Diamond: {
            const float o = r + 2.0f;
            dl->AddQuadFilled(ImVec2(c.x, c.y - o), ImVec2(c.x + o, c.y), ImVec2(c.x, c.y + o), ImVec2(c.x - o, c.y), outline);
            dl->AddQuadFilled(ImVec2(c.x, c.y - r), ImVec2(c.x + r, c.y), ImVec2(c.x, c.y + r), ImVec2(c.x - r, c.y), fill);
            break;
        }
        case MarkerShape::Triangle: {
            const float o = r + 2.2f;
            dl->AddTriangleFilled(ImVec2(c.x, c.y - o * 1.1f), ImVec2(c.x + o, c.y + o * 0.8f), ImVec2(c.x - o, c.y + o * 0.8f),
                                  outline);
            dl->AddTriangleFilled(ImVec2(c.x, c.y - r * 1.1f), ImVec2(c.x + r, c.y + r * 0.8f), ImVec2(c.x - r, c.y + r * 0.8f),
                                  fill);
            break;
        }
        case MarkerShape::Square: {
            const float h = r * 0.85f;  // the same area as the diamond, about
            dl->AddRectFilled(ImVec2(c.x - h - 1.5f, c.y - h - 1.5f), ImVec2(c.x + h + 1.5f, c.y + h + 1.5f), outline);
            dl->AddRectFilled(ImVec2(c.x - h, c.y - h), ImVec2(c.x + h, c.y + h), fill);
            break;
        }
        case MarkerShape::Dot:
            dl->AddCircleFilled(c, r + 1.5f, outline, 20);
            dl->AddCircleFilled(c, r, fill, 20);
            break;
    }
}

void DrawStepLine(ImDrawList* dl, const std::vector<ImVec2>& points, ImU32 color, float thickness, float x_end) {
    if (points.empty()) return;
    std::vector<ImVec2> path;
    path.reserve(points.size() * 2 + 1);
    for (std::size_t i = 0; i < points.size(); ++i) {
        if (i > 0) path.push_back(ImVec2(points[i].x, points[i - 1].y));
        path.push_back(points[i]);
    }
    if (x_end > points.back().x) path.push_back(ImVec2(x_end, points.back().y));
    if (path.size() >= 2) dl->AddPolyline(path.data(), static_cast<int>(path.size()), color, 0, thickness);
}

LegendEntry MarkerEntry(MarkerShape shape, ImU32 color, std::string text) {
    LegendEntry e;
    e.has_marker = true;
    e.shape = shape;
    e.color = color;
    e.text = std::move(text);
    return e;
}

LegendEntry TextEntry(std::string text, bool dim, bool warn) {
    LegendEntry e;
    e.text = std::move(text);
    e.dim = dim;
    e.warn = warn;
    return e;
}

float LegendWidth(const std::vector<LegendEntry>& entries) {
    float w = 0.0f;
    for (const LegendEntry& e : entries) w = std::max(w, ImGui::CalcTextSize(e.text.c_str()).x);
    return w + ImGui::GetFontSize() * 1.3f;
}

void DrawLegend(const std::vector<LegendEntry>& entries, ImVec2 at) {
    ImGui::SetCursorScreenPos(at);
    ImGui::BeginGroup();
    const float font = ImGui::GetFontSize();
    const float indent = font * 1.3f;
    for (const LegendEntry& e : entries) {
        const ImVec2 p = ImGui::GetCursorScreenPos();
        if (e.has_marker) {
            DrawMarker(ImGui::GetWindowDrawList(), ImVec2(p.x + font * 0.5f, p.y + ImGui::GetTextLineHeight() * 0.5f),
                       e.shape, e.color, font * 0.32f);
            ImGui::SetCursorScreenPos(ImVec2(p.x + indent, p.y));
            ImGui::TextUnformatted(e.text.c_str());
            continue;
        }
        ImGui::SetCursorScreenPos(ImVec2(at.x + (e.dim ? indent : 0.0f), p.y));
        if (e.warn) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", e.text.c_str());
        else if (e.dim) ImGui::TextDisabled("%s", e.text.c_str());
        else ImGui::TextUnformatted(e.text.c_str());
    }
    ImGui::EndGroup();
}

namespace {

// Lays the entries out left to right in lines of at most `width`: `draw` gets each entry and its position.
template <typename Draw>
float LayOutLegendRow(const std::vector<LegendEntry>& entries, ImVec2 at, float width, Draw draw) {
    const float font = ImGui::GetFontSize();
    const float line = ImGui::GetTextLineHeightWithSpacing();
    const float indent = font * 1.3f, gap = font * 1.0f;
    float x = at.x, y = at.y;
    for (const LegendEntry& e : entries) {
        const float w = (e.has_marker ? indent : 0.0f) + ImGui::CalcTextSize(e.text.c_str()).x;
        if (x > at.x && x + w > at.x + width) {
            x = at.x;
            y += line;
        }
        draw(e, ImVec2(x, y));
        x += w + gap;
    }
    return entries.empty() ? 0.0f : y + line - at.y;
}

}  // namespace

float LegendRowHeight(const std::vector<LegendEntry>& entries, float width) {
    return LayOutLegendRow(entries, ImVec2(0.0f, 0.0f), width, [](const LegendEntry&, ImVec2) {});
}

float DrawLegendRow(ImDrawList* dl, const std::vector<LegendEntry>& entries, ImVec2 at, float width) {
    const float font = ImGui::GetFontSize();
    return LayOutLegendRow(entries, at, width, [&](const LegendEntry& e, ImVec2 p) {
        float x = p.x;
        if (e.has_marker) {
            DrawMarker(dl, ImVec2(p.x + font * 0.5f, p.y + ImGui::GetTextLineHeight() * 0.5f), e.shape, e.color, font * 0.32f);
            x += font * 1.3f;
        }
        const ImU32 col = e.warn ? WarningColor() : ImGui::GetColorU32(e.dim ? ImGuiCol_TextDisabled : ImGuiCol_Text);
        dl->AddText(ImVec2(x, p.y), col, e.text.c_str());
    });
}

}  // namespace qs::gui
