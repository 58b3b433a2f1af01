// A throw in the middle of a frame (out of memory in a panel) closes what the frame left open and the next
// frames draw normally: the analysis tabs draw inside a child window in a tab item in another child, where
// ImGui 1.86's own recovery ended the outer tab bar from the inner window and aborted (issue 25 item 11).
#include <doctest/doctest.h>

#include <new>
#include <stdexcept>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>

#include "gui/platform/frame_recover.hpp"
#include "gui/platform/offscreen_renderer.hpp"

namespace {

// The window's nesting down to a tab's contents, with every kind of scope a panel opens, then a throw.
void DrawAndThrowInside() {
    ImGui::Begin("main");
    ImGui::PushID("outer");
    ImGui::BeginChild("##analysis", ImVec2(300, 200), true);
    if (ImGui::BeginTabBar("##tabs")) {
        if (ImGui::BeginTabItem("Bits")) {
            ImGui::BeginChild("##inner", ImVec2(0, 0), false);
            ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 0, 0, 255));
            ImGui::PushStyleVar(ImGuiStyleVar_Alpha, 0.5f);
            ImGui::BeginDisabled(true);
            ImGui::BeginGroup();
            if (ImGui::BeginTable("##t", 2)) {
                ImGui::TableNextColumn();
                ImGui::TextUnformatted("cell");
                throw std::bad_alloc();
            }
        }
    }
    throw std::logic_error("not reached: the table did not begin");
}

}  // namespace

TEST_CASE("frame recover: a throw inside a child in a tab item in a child closes every scope and the next frame draws") {
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(640, 480, [] {}, &error), error);
    bool caught = false;
    r.frame([&] {
        try {
            DrawAndThrowInside();
        } catch (const std::bad_alloc&) {
            caught = true;
            qs::gui::RecoverFrameAfterThrow();
        }
        const ImGuiContext& g = *GImGui;
        CHECK(g.CurrentWindowStack.Size == 1);  // the implicit root alone
        CHECK(g.CurrentTabBar == nullptr);
        CHECK(g.CurrentTable == nullptr);
        CHECK(g.ColorStack.Size == 0);
        CHECK(g.StyleVarStack.Size == 0);
        CHECK(g.DisabledStackSize == 0);
    });
    CHECK(caught);
    bool drawn = false;
    r.frame([&] {  // the next frame is a normal one
        ImGui::Begin("main");
        ImGui::TextUnformatted("again");
        ImGui::End();
        drawn = true;
    });
    CHECK(drawn);
}
