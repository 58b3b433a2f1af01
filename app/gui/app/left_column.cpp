#include "gui/app/left_column.hpp"

#include <algorithm>
#include <cmath>

#include <imgui.h>

#include "gui/app/app_state.hpp"
#include "gui/app/main_window.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {
namespace {

constexpr float kLeftColumnPx = 340.0f;  // at scale 1

struct LeftTab {
    const char* label;
    const char* child;  // the tab's scrolling child
};
const LeftTab kLeftTabs[3] = {{"Lesson", "##lesson-scroll"}, {"Quantize", "##controls-scroll"}, {"Tensor", "##tensor-scroll"}};

void DrawLeftTab(AppState& app, int tab) {
    ImGui::BeginChild(kLeftTabs[tab].child);
    if (tab == 0) DrawLessonPanel(app.lesson, app.doc.view(), app.intents, ImGui::GetContentRegionAvail().x);
    if (tab == 1) DrawControlsPanel(app.controls, app.doc, app.intents);
    if (tab == 2) DrawTensorPanel(app.tensor_panel, app.doc, app.intents, app.safetensors.checkpoint && !app.safetensors.open);
    ImGui::EndChild();
}

float TabWidth(int tab) { return ImGui::CalcTextSize(kLeftTabs[tab].label).x + ImGui::GetStyle().FramePadding.x * 2.0f; }

// The tabs as a row of buttons that wraps, the open one highlighted like an active tab.
void DrawWrappedTabs(AppState& app, int first) {
    const ImGuiStyle& style = ImGui::GetStyle();
    const float avail = ImGui::GetContentRegionAvail().x;
    float x = 0.0f;
    for (int k = first; k < 3; ++k) {
        const float w = TabWidth(k);
        if (x > 0.0f && x + style.ItemSpacing.x + w <= avail) {
            ImGui::SameLine();
            x += style.ItemSpacing.x + w;
        } else {
            x = w;
        }
        const bool open = k == app.left_tab;
        ImGui::PushStyleColor(ImGuiCol_Button, style.Colors[open ? ImGuiCol_TabActive : ImGuiCol_Tab]);
        if (ImGui::Button(kLeftTabs[k].label)) app.left_tab = k;
        ImGui::PopStyleColor();
    }
    ImGui::Separator();
    DrawLeftTab(app, app.left_tab);
}

}  // namespace

void DrawLeftColumn(AppState& app, const Frame& frame) {
    // Wide enough for the labels at any text size, but never more than a third of the window.
    // (At a projector's text size on a small window up to 45%: room for a label word like "Asymmetric".)
    const float avail = ImGui::GetContentRegionAvail().x;
    const float width = std::floor(std::min(kLeftColumnPx * frame.ui_scale,
                                            std::max(avail * 0.33f, std::min(avail * 0.45f, ImGui::GetFontSize() * 10.5f))));
    ImGui::BeginChild("##left", ImVec2(width, 0.0f), true);
    if (!app.doc.notice.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, WarningColor());
        ImGui::TextWrapped("%s", app.doc.notice.c_str());
        ImGui::PopStyleColor();
        if (ImGui::SmallButton("OK##notice")) app.doc.notice.clear();
    }
    const int first = app.lesson.lesson ? 0 : 1;
    if (app.show_lesson_tab && first == 0) app.left_tab = 0;
    app.left_tab = std::clamp(app.left_tab, first, 2);
    float needed = 0.0f;
    for (int k = first; k < 3; ++k) needed += TabWidth(k) + (k > first ? ImGui::GetStyle().ItemInnerSpacing.x : 0.0f);
    const bool wrap = needed > ImGui::GetContentRegionAvail().x;
    if (wrap) {
        DrawWrappedTabs(app, first);
    } else if (ImGui::BeginTabBar("##left-tabs", ImGuiTabBarFlags_FittingPolicyScroll)) {
        // The open tab is the tab bar's; brought to the front when a lesson opens or the buttons chose it.
        for (int k = first; k < 3; ++k) {
            const bool bring = (k == 0 && app.show_lesson_tab) || (app.left_tabs_wrapped && k == app.left_tab);
            if (!ImGui::BeginTabItem(kLeftTabs[k].label, nullptr, bring ? ImGuiTabItemFlags_SetSelected : 0)) continue;
            app.left_tab = k;
            DrawLeftTab(app, k);
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    app.show_lesson_tab = false;
    app.left_tabs_wrapped = wrap;
    ImGui::EndChild();
}

void DrawPresenterLessonColumn(AppState& app, const Frame& frame, float width) {
    ImGui::BeginChild("##presenter-lesson", ImVec2(width, 0.0f), true, ImGuiWindowFlags_NoScrollbar);
    // Large presenter text would leave a few words a line: the column's text is the user's size brought back
    // towards the normal one, at least 0.7 of it; then as much smaller as the step's text needs to end on the
    // screen (its height goes about with the square of the scale), found over the first frames of a step.
    const float base = std::clamp(1.0f / std::max(frame.font_scale, 0.5f), 0.7f, 1.0f);
    if (app.presenter_lesson_step != app.lesson.step || app.presenter_lesson_scale <= 0.0f) app.presenter_lesson_scale = base;
    app.presenter_lesson_step = app.lesson.step;
    const float scale = std::min(app.presenter_lesson_scale, base);
    ImGui::SetWindowFontScale(scale);
    const float top = ImGui::GetCursorPosY(), room = ImGui::GetContentRegionAvail().y;
    DrawLessonPanel(app.lesson, app.doc.view(), app.intents, ImGui::GetContentRegionAvail().x, true);
    const float used = ImGui::GetCursorPosY() - top;
    if (used > room && room > 0.0f) app.presenter_lesson_scale = std::max(0.35f, scale * std::sqrt(room / used) * 0.97f);
    ImGui::EndChild();
}

}  // namespace qs::gui
