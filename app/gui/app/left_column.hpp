// The lesson's text where a class reads it: the window's left column, whose tabs wrap into a row of buttons
// when large text leaves them no room (a scrolling tab bar cut its last tab: "Lesson | Quantize | T..."), and
// presenter mode's lesson column, whose text is fitted to the screen (the step's last lines ran below it).
#pragma once

namespace qs::gui {

struct AppState;
struct Frame;

// The left column (lesson, controls, tensor) at the cursor, beside the figure.
void DrawLeftColumn(AppState& app, const Frame& frame);
// Presenter mode with a lesson: the step's text and numbers in a column `width` wide at the cursor, the text
// as large as fits (at most the window's text brought back towards the normal size).
void DrawPresenterLessonColumn(AppState& app, const Frame& frame, float width);

}  // namespace qs::gui
