// The main window's frame: menu bar, error banner, the controls column and the figure with the analysis tabs
// under it, and the keyboard shortcuts. It draws from AppState and queues what the user asks for as intents
// (or, for the window's own matters such as the text size, in Frame).
#pragma once

#include "gui/app/app_state.hpp"

namespace qs::gui {

// What one frame decides besides the document: sizes, quitting, and the timings the bench reports.
struct Frame {
    float ui_scale = 1.0f;
    float font_scale = 1.0f;
    bool quit = false;
    double figure_ms = 0;     // wall time of the figure panel's draw this frame (colormap + upload + draw list)
    double histogram_ms = 0;  // the histogram panel's (it recounts when the result changes)
    int select_tab = -1;      // an analysis tab to bring to the front this frame (--tab), -1: none
};

// The whole window for this frame (inside ImGui::NewFrame / Render).
void DrawMainWindow(AppState& app, Frame& frame);
// F5 / Esc presenter mode, Ctrl+= / Ctrl+- / Ctrl+0 text size, Ctrl+Q, Ctrl+Z / Ctrl+Shift+Z / Ctrl+Y outside
// text fields.
void HandleShortcuts(AppState& app, Frame& frame);

}  // namespace qs::gui
