// The app's side of a lesson: opening one, going to a step (its state replaces the document's tensor and
// settings, the followed cell and what the figure covers), revealing, and the keys a presentation clicker
// sends (PageDown / PageUp; the arrow keys too), in the normal layout and in presenter mode alike.
#pragma once

#include <memory>
#include <string>

#include "quantscope/lesson.hpp"

namespace qs::gui {

struct AppState;

// Opens `lesson` at `step` (0-based, clamped). `ref` is what loads it again (cli::load_lesson: a shipped name or
// a file's path; empty: the lesson's name), which sessions keep.
void OpenLesson(AppState& app, std::shared_ptr<const Lesson> lesson, int step, const std::string& ref = {});
// The lesson a session names (cli::load_lesson's `ref`) opened at `step` (0-based) without applying the step's
// state: the session's own tensor, settings and figure are what was saved. False with *error when the lesson
// does not load or has no such step (the window's lesson, if any, stays).
bool RestoreLesson(AppState& app, const std::string& ref, int step, std::string* error);
// How a session names the open lesson: a shipped lesson by its name (it moves with the program), another
// lesson file by its absolute path (MakeSession stores it relative to the session when it can); empty without a
// lesson.
std::string LessonRefForSession(const AppState& app);
// Loads a shipped lesson by name or a lesson file by path and opens it; a bad file goes to the error banner.
void OpenLessonNamed(AppState& app, const std::string& name_or_path);
// Applies step `step` of the open lesson (clamped; nothing without a lesson).
void GoToLessonStep(AppState& app, int step);
// Uncovers what the step hid.
void RevealLesson(AppState& app);
// Next / previous / reveal from the keyboard, unless a text field or a widget has it. Call every frame: while a
// lesson is open (and no text field has the keys) it also keeps ImGui's keyboard navigation off, so that the
// arrows and PageUp / PageDown step the lesson only and leave the focus where it is.
void HandleLessonKeys(AppState& app);

}  // namespace qs::gui
