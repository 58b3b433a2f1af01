// Small layout helpers shared by the side panels and dialogs, so they look alike.
#pragma once

#include <imgui.h>

namespace qs::gui {

// A dimmed title with a separator under it.
void SectionHeader(const char* title);
// A label in a fixed first column (`column_em` font sizes wide); the next widget fills the rest of the line.
void RowLabel(const char* text, float column_em);
// A wrapped tooltip for the last item, also when it is disabled (to say why it is).
void HelpTooltip(const char* text);

}  // namespace qs::gui
