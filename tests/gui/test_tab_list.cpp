// The analysis tabs and the session's keys are each listed once (issue 22 items 3 and 5): --tab, the tab bar
// and the session's tab keys come from AnalysisTabs(); the session's writer and reader walk one table of
// fields, and the document's fields go through the document (revision bumped, undoable with the opening).
#include <doctest/doctest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gui/app/analysis_tabs.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/gui_options.hpp"
#include "gui/app/session_io.hpp"
#include "quantscope/presets.hpp"

namespace {

void Open(qs::gui::AppState& app, const std::string& preset) {
    app.doc.force_sync = true;
    const qs::Preset p = qs::make_preset(preset);
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(p.tensor), p.name, &p.config));
    app.doc.update();
}

}  // namespace

TEST_CASE("tab list: --tab takes every tab's word and names them all when refused") {
    const std::vector<qs::gui::AnalysisTabSpec>& tabs = qs::gui::AnalysisTabs();
    std::set<std::string> words;
    for (std::size_t i = 0; i < tabs.size(); ++i) {
        CAPTURE(tabs[i].word);
        CHECK(words.insert(tabs[i].word).second);  // one word a tab
        CHECK(static_cast<bool>(tabs[i].draw));
        CHECK(qs::gui::AnalysisTabIndex(tabs[i].word) == static_cast<int>(i));
        const qs::gui::GuiOptions o = qs::gui::ParseGuiOptions({"--tab", tabs[i].word});
        CHECK(o.tab == static_cast<int>(i));
        CHECK(qs::gui::AnalysisTabWords().find(tabs[i].word) != std::string::npos);
        if (tabs[i].shown) CHECK(tabs[i].menu != nullptr);  // a view of its own is checked in the View menu
        if (!tabs[i].fields.empty()) CHECK(tabs[i].session != nullptr);
    }
    CHECK(qs::gui::AnalysisTabIndex("nowhere") == -1);
    try {
        qs::gui::ParseGuiOptions({"--tab", "nowhere"});
        FAIL("--tab nowhere was taken");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()) == "--tab: 'nowhere' is not " + qs::gui::AnalysisTabWords());
    }
}

TEST_CASE("session fields: every key the window writes reads back and writes the same again") {
    auto a = std::make_unique<qs::gui::AppState>();
    Open(*a, "outliers-4x128x256");
    a->figure.slice = 2;
    a->figure.selected = 2 * 128 * 256 + 5;
    a->figure.view = qs::gui::HeatmapView{1.0, 2.0, 30.5, 40.25};
    a->figure.settings.lesson_look = true;
    a->panels.metrics = false;
    a->histogram.log_counts = true;
    a->presenter = true;
    const qs::gui::ViewSettings view = qs::gui::SessionView(*a);
    std::set<std::string> keys;
    for (const auto& [key, value] : view) CHECK_MESSAGE(keys.insert(key).second, key);  // no key twice
    CHECK(keys.count("histogram.log_counts") == 1);  // the Histograms tab's own key, from its spec

    auto b = std::make_unique<qs::gui::AppState>();
    Open(*b, "outliers-4x128x256");
    CHECK(qs::gui::ApplySessionView(*b, view).empty());  // nothing skipped
    CHECK(qs::gui::SessionView(*b) == view);
}

TEST_CASE("session fields: label and base mode go through the document as part of the opening's undo step") {
    auto app = std::make_unique<qs::gui::AppState>();
    Open(*app, "lesson");
    Open(*app, "randn-4x4");  // one undo step: back to the lesson
    const std::uint64_t revision = app->doc.revision;
    CHECK(qs::gui::ApplySessionView(*app, {{"label", "my tensor"}, {"base_mode", "symmetric"}}).empty());
    CHECK(app->doc.label == "my tensor");
    CHECK(app->doc.base_mode == qs::Mode::Symmetric);
    CHECK(app->doc.revision > revision);  // drafts re-sync
    app->doc.undo();  // the opening and its view go together
    CHECK(app->doc.label == "lesson");
    CHECK(app->doc.base_mode == qs::Mode::Asymmetric);
    CHECK_FALSE(app->doc.history.can_undo());
    app->doc.redo();
    CHECK(app->doc.label == "my tensor");
    CHECK(app->doc.base_mode == qs::Mode::Symmetric);
    // Refused values change nothing and are named.
    const std::string note = qs::gui::ApplySessionView(*app, {{"label", ""}, {"base_mode", "manual"}});
    CHECK(note.find("label=") != std::string::npos);
    CHECK(note.find("base_mode=manual") != std::string::npos);
    CHECK(app->doc.label == "my tensor");
    CHECK(app->doc.base_mode == qs::Mode::Symmetric);
}

// A tab added in one file keeps its state in AppState::tab_states: one object per type, made on first use
// and the same one at every later call, const or not; two types get two objects.
TEST_CASE("tab states: one state per type that is made on first use and kept") {
    struct LoudTab {
        bool loud = false;
    };
    struct QuietTab {
        int level = 3;
    };
    qs::gui::TabStates states;
    CHECK_FALSE(states.get<LoudTab>().loud);
    states.get<LoudTab>().loud = true;
    const qs::gui::TabStates& read = states;
    CHECK(read.get<LoudTab>().loud);
    CHECK(&read.get<LoudTab>() == &states.get<LoudTab>());
    CHECK(states.get<QuietTab>().level == 3);
    CHECK(static_cast<const void*>(&states.get<QuietTab>()) != static_cast<const void*>(&states.get<LoudTab>()));
    qs::gui::TabStates other;
    CHECK_FALSE(other.get<LoudTab>().loud);  // per AppState, not per program
}
