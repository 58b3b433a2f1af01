// The analysis tabs under the figure, listed once (analysis_tabs.cpp, in the tab bar's order): the tab bar, the
// View menu, `--tab NAME` and the keys a session keeps of a tab's state are all made from this list. A tab is
// one file (`<what>_tab.cpp` here in app/: its draw function and its spec; its panel's state in AppState, or
// for a tab that nothing else reaches, in AppState::tab_states) and its line in analysis_tabs.cpp.
#pragma once

#include <string>
#include <vector>

#include "gui/app/session_fields.hpp"

namespace qs::gui {

struct AppState;
struct Frame;
struct QuantView;

struct AnalysisTabSpec {
    const char* title = "";  // on the tab bar and in the View menu: "Error landscape"
    const char* word = "";   // --tab NAME: "landscape"
    // Draws the tab's contents (its panel answers through app.intents).
    void (*draw)(AppState& app, Frame& frame, const QuantView& view) = nullptr;
    // Each frame the tab is not shown: stop its background work (null: it has none).
    void (*hidden)(AppState& app) = nullptr;
    bool beside_metrics = false;  // narrow enough to leave the metrics their column (the others take the width)
    // Its numbers come from the quantization on show: while a lesson step covers part of the figure until R
    // (panels/covers.hpp) the tab says so instead of drawing them. False: the tab asks the covers itself (Bits)
    // or shows something else (a checkpoint's sweep).
    bool shows_quantization = true;
    // A view of its own in place of the figure and the analysis area (the layer lab), not a tab on the bar:
    // shown while the AppState bool `shown` is set, which the View menu's item `menu` checks.
    bool AppState::*shown = nullptr;
    const char* menu = nullptr;
    // The session keys of the tab's state: `fields` keys are written `<session>.<key>` in a session's view
    // ("histogram.log_counts"), after the panels' and before presenter's.
    const char* session = nullptr;
    std::vector<SessionField> fields;
};

// Every tab, in the tab bar's order (the views that replace the figure last).
const std::vector<AnalysisTabSpec>& AnalysisTabs();
// The index of the tab whose --tab word is `word`, -1 for none.
int AnalysisTabIndex(const std::string& word);
// "histograms, landscape, ... or layer": every --tab word, for a message.
std::string AnalysisTabWords();

}  // namespace qs::gui
