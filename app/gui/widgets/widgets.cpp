#include "gui/widgets/widgets.hpp"

#include "gui/widgets/palette.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

namespace qs::gui {

void AgreementMark(bool agrees) {
    const float h = ImGui::GetTextLineHeight();
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(h, h));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImU32 col = ImGui::ColorConvertFloat4ToU32(agrees ? BetterTextColor() : WorseTextColor());
    const float t = std::max(1.5f, h * 0.12f), m = h * 0.2f;
    if (agrees) {
        dl->AddLine(ImVec2(p.x + m, p.y + h * 0.55f), ImVec2(p.x + h * 0.42f, p.y + h - m), col, t);
        dl->AddLine(ImVec2(p.x + h * 0.42f, p.y + h - m), ImVec2(p.x + h - m, p.y + m), col, t);
    } else {
        dl->AddLine(ImVec2(p.x + m, p.y + m), ImVec2(p.x + h - m, p.y + h - m), col, t);
        dl->AddLine(ImVec2(p.x + h - m, p.y + m), ImVec2(p.x + m, p.y + h - m), col, t);
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip(agrees ? "the app agrees with the notebook" : "the app differs from the notebook");
}

void SectionHeader(const char* title) {
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextUnformatted(title);
    ImGui::PopStyleColor();
    ImGui::Separator();
}

void RowLabel(const char* text, float column_em) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(text);
    ImGui::SameLine(ImGui::GetFontSize() * column_em);
    ImGui::SetNextItemWidth(-1.0f);
}

void HelpTooltip(const char* text) {
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 24.0f);
        ImGui::TextUnformatted(text);
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
    }
}

namespace {

constexpr double kFloatLimit = FLT_MAX / 2.0;

// A limit ImGui accepts: NaN becomes `fallback`, anything else is clamped to [floor, kFloatLimit].
double Admissible(double v, double fallback, double floor) {
    if (std::isnan(v)) v = fallback;
    return std::clamp(v, floor, kFloatLimit);
}

}  // namespace

SliderLimits SafeSliderLimits(double lo, double hi, bool logarithmic) {
    const double floor = logarithmic ? double(FLT_MIN) : -kFloatLimit;
    const double fallback = logarithmic ? 1.0 : 0.0;
    double a = Admissible(lo, std::isnan(hi) ? fallback : hi, floor);
    double b = Admissible(hi, a, floor);
    if (a > b) std::swap(a, b);
    // Too narrow for a float slider (equal, denormal or a denormal apart): widen around the centre, by a
    // factor of ten each way on a log scale, else by half the centre's magnitude (at least 1).
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (!(fb - fa >= FLT_MIN)) {
        const double centre = a / 2.0 + b / 2.0;
        if (logarithmic) {
            const double c = std::clamp(centre, 10.0 * FLT_MIN, kFloatLimit / 10.0);
            a = c / 10.0;
            b = c * 10.0;
        } else {
            const double c = std::clamp(centre, -kFloatLimit / 2.0, kFloatLimit / 2.0);
            const double half = std::max(std::fabs(c) / 2.0, 1.0);
            a = c - half;
            b = c + half;
        }
    }
    return SliderLimits{static_cast<float>(a), static_cast<float>(b)};
}

SliderIntLimits SafeSliderIntLimits(std::int64_t lo, std::int64_t hi) {
    const std::int64_t min = INT_MIN / 2, max = INT_MAX / 2;
    const std::int64_t a = std::clamp(lo, min, max);
    const std::int64_t b = std::clamp(hi, a, max);
    return SliderIntLimits{static_cast<int>(a), static_cast<int>(b)};
}

bool SafeSliderFloat(const char* label, float* v, double lo, double hi, const char* format, ImGuiSliderFlags flags) {
    const SliderLimits l = SafeSliderLimits(lo, hi, (flags & ImGuiSliderFlags_Logarithmic) != 0);
    return ImGui::SliderFloat(label, v, l.lo, l.hi, format, flags);
}

bool SafeSliderInt(const char* label, int* v, std::int64_t lo, std::int64_t hi, const char* format,
                   ImGuiSliderFlags flags) {
    const SliderIntLimits l = SafeSliderIntLimits(lo, hi);
    return ImGui::SliderInt(label, v, l.lo, l.hi, format, flags);
}

}  // namespace qs::gui
