#include "gui/platform/frame_recover.hpp"

#include <imgui.h>
#include <imgui_internal.h>

namespace qs::gui {

void RecoverFrameAfterThrow() {
    ImGuiContext& g = *GImGui;
    // The root of the window stack is ImGui's implicit "Debug" window, which the frame's own code never began.
    while (g.CurrentWindowStack.Size > 1) {
        ImGuiWindow* window = g.CurrentWindow;
        const ImGuiStackSizes& sizes = g.CurrentWindowStack.back().StackSizesOnBegin;
        while (g.CurrentTable && (g.CurrentTable->OuterWindow == window || g.CurrentTable->InnerWindow == window))
            ImGui::EndTable();
        while (window->DC.TreeDepth > 0) ImGui::TreePop();  // before the IDs: a tree node pops its own
        // This window's IDs from the top: a tab bar's ID (BeginTabBar pushed it here) ends that tab bar; a tab bar
        // of an outer window stays until its window is current.
        while (window->IDStack.Size > 1) {
            if (g.CurrentTabBar != nullptr && window->IDStack.back() == g.CurrentTabBar->ID) ImGui::EndTabBar();
            else ImGui::PopID();
        }
        while (g.GroupStack.Size > sizes.SizeOfGroupStack) ImGui::EndGroup();
        while (g.DisabledStackSize > sizes.SizeOfDisabledStack) ImGui::EndDisabled();
        while (g.ColorStack.Size > sizes.SizeOfColorStack) ImGui::PopStyleColor();
        while (g.StyleVarStack.Size > sizes.SizeOfStyleVarStack) ImGui::PopStyleVar();
        while (g.FontStack.Size > sizes.SizeOfFontStack) ImGui::PopFont();
        while (g.ItemFlagsStack.Size > sizes.SizeOfItemFlagsStack) ImGui::PopItemFlag();
        while (g.FocusScopeStack.Size > sizes.SizeOfFocusScopeStack) ImGui::PopFocusScope();
        if (window->Flags & ImGuiWindowFlags_Popup) ImGui::EndPopup();  // its BeginPopupStack entry too
        else if (window->Flags & ImGuiWindowFlags_ChildWindow) ImGui::EndChild();
        else ImGui::End();
    }
    ImGui::ErrorCheckEndFrameRecover(nullptr);  // what the root holds, if anything
}

}  // namespace qs::gui
