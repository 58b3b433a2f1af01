// The open lesson (assets/lessons/*.json, core/io lesson.hpp): the step's title and explanation, the numbers
// the notebook printed at that point beside the app's live ones (a check mark where they agree), previous /
// next (PageUp / PageDown or the arrows, handled by the app) and Reveal (R) while the step hides something.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "gui/panels/intents.hpp"
#include "quantscope/lesson.hpp"

namespace qs::gui {

// One printed number beside the app's, as the panel shows it.
struct LessonRow {
    std::string label;
    std::string notebook;  // as printed ("170.8753"), or a summary of a whole tensor
    std::string app;       // the app's, to as many digits as the notebook printed
    std::string note;
    bool applies = true;   // false: the app's state has no such number now (app holds why)
    bool agrees = false;
};

struct LessonPanelState {
    std::shared_ptr<const Lesson> lesson;  // nullptr: no lesson open
    std::string ref;                       // what it was opened by: a shipped lesson's name or a lesson file's path
    int step = 0;                          // 0-based
    bool covers_left = false;              // something of this step is still covered (Reveal shown)
    bool keyboard_nav_suspended = false;   // the app turned ImGui's keyboard navigation off for the lesson's keys

    // [Internal state] the rows, redone when the quantization on show or the step changes
    std::uint64_t rows_generation = 0;
    int rows_step = -1;
    std::vector<LessonRow> rows;
};

// The app's value(s) for each of the step's printed numbers from `view` (whatever is on screen: a slider the
// class moves changes them live). Pure: no ImGui.
std::vector<LessonRow> LessonRows(const LessonStep& step, const QuantView& view);

// The panel's contents at the cursor in `width` (inside any window: the left column or presenter mode).
// `compact` (presenter mode): the step alone, without the lesson's title and source.
void DrawLessonPanel(LessonPanelState& state, const QuantView& view, Intents& out, float width, bool compact = false);

}  // namespace qs::gui
