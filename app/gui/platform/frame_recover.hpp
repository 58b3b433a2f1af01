// Closing what a frame left open when drawing threw (an allocation, a core call): every window, table, tab
// bar, ID, group, style and disabled scope above the frame's root, so that Render() does not assert and the
// window keeps running with the error in its banner.
#pragma once

namespace qs::gui {

// Dear ImGui 1.86's ErrorCheckEndFrameRecover() ends the current tab bar from whichever window is current:
// a throw inside a child window drawn in a tab item (the analysis tabs) made it pop the child's last ID and
// abort ("window->IDStack.Size > 1"). This ends a tab bar only from the window that began it (its ID is on that
// window's ID stack), closing the inner windows first; then ImGui's own check for what is left.
void RecoverFrameAfterThrow();

}  // namespace qs::gui
