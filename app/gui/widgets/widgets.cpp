#include "gui/widgets/widgets.hpp"

#include "gui/widgets/palette.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>

#include <imgui_internal.h>  // the windows' measured content sizes (CountOverflowingWindows)

#include "gui/widgets/text.hpp"

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
    TextWrappedAtSpaces(title);  // a narrow column at a large text size: two lines, not a cut word
    ImGui::PopStyleColor();
    ImGui::Separator();
}

namespace {

// Where the widget after a row label starts (x from the line's start), or -1: on the next line, full width
// (large text in a narrow column would leave it no room beside the label, or push it past the edge).
float RowWidgetX(const char* text, float column_em, float needed) {
    const float line_w = ImGui::GetContentRegionAvail().x;
    const float label_w = ImGui::CalcTextSize(text).x + ImGui::GetStyle().ItemSpacing.x;
    const float column = std::max(label_w, std::min(ImGui::GetFontSize() * column_em, line_w * 0.45f));
    return line_w - column >= needed ? column : -1.0f;
}

}  // namespace

void RowLabel(const char* text, float column_em) {
    ImGui::AlignTextToFramePadding();
    const float x = RowWidgetX(text, column_em, ImGui::GetFontSize() * 5.0f);
    ImGui::TextUnformatted(text);
    if (x >= 0.0f) ImGui::SameLine(x);
    ImGui::SetNextItemWidth(-1.0f);
}

bool ComboRow(const char* label, const char* id, int* current, const char* const items[], int count, float column_em) {
    const ImGuiStyle& style = ImGui::GetStyle();
    float widest = 0.0f;
    for (int i = 0; i < count; ++i) widest = std::max(widest, ImGui::CalcTextSize(items[i]).x);
    const float needed = widest + style.FramePadding.x * 2.0f + ImGui::GetFrameHeight();
    ImGui::AlignTextToFramePadding();
    const float x = RowWidgetX(label, column_em, needed);
    ImGui::TextUnformatted(label);
    if (x >= 0.0f) ImGui::SameLine(x);
    const float w = ImGui::GetContentRegionAvail().x;
    ImGui::SetNextItemWidth(w);
    const int cur = std::clamp(*current, 0, std::max(count - 1, 0));
    const std::string full = count > 0 ? items[cur] : "";
    const std::string preview = FitText(full, w - style.FramePadding.x * 2.0f - ImGui::GetFrameHeight());
    bool changed = false;
    if (ImGui::BeginCombo(id, preview.c_str())) {
        for (int i = 0; i < count; ++i) {
            if (ImGui::Selectable(items[i], i == cur) && i != *current) {
                *current = i;
                changed = true;
            }
        }
        ImGui::EndCombo();
    } else if (preview != full && ImGui::IsItemHovered()) {
        ImGui::SetTooltip("%s", full.c_str());
    }
    return changed;
}

bool CheckboxWrapped(const char* label, bool* v) {
    const char* end = std::strstr(label, "##");
    const std::string text(label, end ? static_cast<std::size_t>(end - label) : std::strlen(label));
    const float inner = ImGui::GetStyle().ItemInnerSpacing.x;
    if (ImGui::GetFrameHeight() + inner + ImGui::CalcTextSize(text.c_str()).x <= ImGui::GetContentRegionAvail().x)
        return ImGui::Checkbox(label, v);
    ImGui::PushID(label);
    bool changed = ImGui::Checkbox("##box", v);
    ImGui::SameLine(0.0f, inner);
    ImGui::BeginGroup();
    // Lined up with the box's text baseline, as Checkbox's own label is.
    ImGui::SetCursorPosY(ImGui::GetCursorPosY() + ImGui::GetStyle().FramePadding.y);
    TextWrappedAtSpaces(text);
    ImGui::EndGroup();
    if (ImGui::IsItemClicked()) {
        *v = !*v;
        changed = true;
    }
    ImGui::PopID();
    return changed;
}

void SameLineOrWrap(float width) {
    // Decided before SameLine: SameLine then NewLine counted the item spacing after a row's last item as content,
    // past the window's edge when the row ended near it.
    const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
    const float x = ImGui::GetCurrentWindow()->DC.CursorPosPrevLine.x + ImGui::GetStyle().ItemSpacing.x;
    if (x + width <= right) ImGui::SameLine();
}

bool ButtonFullWidth(const char* label) {
    const float w = ImGui::GetContentRegionAvail().x;
    const std::string shown = FitText(label, w - ImGui::GetStyle().FramePadding.x * 2.0f);
    ImGui::PushID(label);
    const bool pressed = ImGui::Button(shown.c_str(), ImVec2(w, 0.0f));
    ImGui::PopID();
    if (shown != label && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", label);
    return pressed;
}

namespace {

// A tab bar that scrolls (ImGuiTabBarFlags_FittingPolicyScroll) reports all its tabs' width as its size: its
// labels are whole and the arrows reach the rest, so an overflow that ends at its last tab is not a cut label.
bool ScrollingTabBarExplains(ImGuiContext& g, const ImGuiWindow* w) {
    const float content_right = w->ContentRegionRect.Min.x + w->ContentSize.x;
    for (int n = 0; n < g.TabBars.GetMapSize(); ++n) {
        const ImGuiTabBar* tb = g.TabBars.TryGetMapData(n);
        if (!tb || !(tb->Flags & ImGuiTabBarFlags_FittingPolicyScroll) || tb->PrevFrameVisible < g.FrameCount - 1) continue;
        const bool inside = tb->BarRect.Min.x >= w->Pos.x && tb->BarRect.Min.y >= w->Pos.y &&
                            tb->BarRect.Min.y <= w->Pos.y + w->Size.y && tb->BarRect.Min.x <= w->Pos.x + w->Size.x;
        if (inside && tb->BarRect.Min.x + tb->WidthAllTabs + 1.0f >= content_right) return true;
    }
    return false;
}

}  // namespace

int CountOverflowingWindows(std::vector<std::string>* names) {
    ImGuiContext& g = *ImGui::GetCurrentContext();
    int n = 0;
    for (const ImGuiWindow* w : g.Windows) {
        if (!w->WasActive || w->Hidden || (w->Flags & (ImGuiWindowFlags_Tooltip | ImGuiWindowFlags_Popup))) continue;
        if (w->ScrollbarX || (w->Flags & ImGuiWindowFlags_HorizontalScrollbar)) continue;
        const float shown = w->ContentRegionRect.GetWidth();
        if (w->ContentSize.x > shown + 1.0f && !ScrollingTabBarExplains(g, w)) {
            ++n;
            if (names) names->push_back(w->Name);
        }
    }
    return n;
}

int CountClippedTableColumns(std::vector<std::string>* names) {
    ImGuiContext& g = *ImGui::GetCurrentContext();
    int n = 0;
    for (int t = 0; t < g.Tables.GetMapSize(); ++t) {
        const ImGuiTable* table = g.Tables.TryGetMapData(t);
        if (!table || table->LastFrameActive != g.FrameCount || !table->OuterWindow) continue;  // drawn this frame
        for (int c = 0; c < table->ColumnsCount; ++c) {
            const ImGuiTableColumn& col = table->Columns[c];
            if (!col.IsEnabled || !col.IsVisibleX) continue;
            // The cells' contents reach past the column's right border: the column clips them there (or, without
            // clipping, they run into the next column). Header rows truncate themselves with "..." and are not counted.
            if (std::max(col.ContentMaxXFrozen, col.ContentMaxXUnfrozen) <= col.MaxX + 1.0f) continue;
            ++n;
            if (!names) continue;
            const char* column = ImGui::TableGetColumnName(table, c);
            names->push_back(std::string(table->OuterWindow->Name) + " / " +
                             (column && *column ? std::string(column) : "column " + std::to_string(c)));
        }
    }
    return n;
}

int CountCutTables(std::vector<std::string>* names) {
    ImGuiContext& g = *ImGui::GetCurrentContext();
    int n = 0;
    for (int t = 0; t < g.Tables.GetMapSize(); ++t) {
        const ImGuiTable* table = g.Tables.TryGetMapData(t);
        if (!table || table->LastFrameActive != g.FrameCount || !table->OuterWindow) continue;  // drawn this frame
        const ImGuiWindow* w = table->OuterWindow;
        if (!w->WasActive || w->Hidden) continue;
        // What the window shows (within its parents' and the screen's), and the table's whole extent.
        const ImRect shown = w->InnerClipRect;
        const ImRect r = table->OuterRect;
        const float tol = 1.0f;
        const bool visible = r.Min.x < shown.Max.x - tol && r.Max.x > shown.Min.x + tol && r.Min.y < shown.Max.y - tol &&
                             r.Max.y > shown.Min.y + tol;
        const bool whole = r.Min.x >= shown.Min.x - tol && r.Max.x <= shown.Max.x + tol && r.Min.y >= shown.Min.y - tol &&
                           r.Max.y <= shown.Max.y + tol;
        if (!visible || whole) continue;
        ++n;
        if (!names) continue;
        // A table keeps no name: its window's and its first column header's.
        std::string header;
        for (int c = 0; c < table->ColumnsCount && header.empty(); ++c)
            if (const char* h = ImGui::TableGetColumnName(table, c)) header = h;
        names->push_back(std::string(w->Name) + " / table" + (header.empty() ? std::string() : " '" + header + "'"));
    }
    return n;
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
