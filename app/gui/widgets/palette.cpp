#include "gui/widgets/palette.hpp"

namespace qs::gui {

bool IsLightTheme() {
    const ImVec4 bg = ImGui::GetStyleColorVec4(ImGuiCol_WindowBg);
    return bg.x + bg.y + bg.z > 1.5f;
}

ImVec4 BetterTextColor() { return IsLightTheme() ? ImVec4(0.10f, 0.52f, 0.20f, 1.0f) : ImVec4(0.40f, 0.85f, 0.45f, 1.0f); }
ImVec4 WorseTextColor() { return IsLightTheme() ? ImVec4(0.78f, 0.12f, 0.12f, 1.0f) : ImVec4(1.0f, 0.45f, 0.45f, 1.0f); }
ImU32 BetterRowColor() { return IsLightTheme() ? palette::kBetterRowLight : palette::kBetterRowDark; }
ImU32 WarningColor() { return IsLightTheme() ? IM_COL32(200, 70, 0, 255) : IM_COL32(255, 140, 60, 255); }

}  // namespace qs::gui
