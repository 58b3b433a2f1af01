// A lesson step that covers part of the figure ("predict, then R") gives nothing of it away anywhere on the
// screen: the text the window draws is read back from its draw lists, glyph by glyph, so a caption, a colorbar
// legend, a tooltip, the metrics table, the presenter's strip or an analysis tab that prints a covered number
// is caught wherever it is drawn (a-quantize-by-hand step 1 once read "centred on z = -77" under its cover).
#include <doctest/doctest.h>

#include <cfloat>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "drawn_text.hpp"
#include "gui_test_support.hpp"

#include "cli/lessons.hpp"
#include "gui/app/analysis_tabs.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/app/main_window.hpp"
#include "gui/platform/offscreen_renderer.hpp"

namespace {

struct LessonScreen {
    qs::gui::OffscreenRenderer r;
    std::unique_ptr<qs::gui::AppState> owned = std::make_unique<qs::gui::AppState>();
    qs::gui::AppState& app = *owned;
    qs::gui::Frame frame;
    LessonScreen() {
        std::string error;
        REQUIRE_MESSAGE(r.init(1600, 900, [] {
            qs::gui::BuildFonts(18.0f);
            qs::gui::ApplyStyle(true, 1.0f);
        }, &error), error);
        app.doc.force_sync = true;
        qs::gui::OpenLesson(app, std::make_shared<const qs::Lesson>(qs::cli::load_lesson("a-quantize-by-hand")), 0);
        app.doc.finish_recompute_now();
        app.doc.update();
    }
    ~LessonScreen() {
        r.run([&] { owned.reset(); });  // the panels' textures belong to this context
    }
    // Three frames to settle, the last one hovering `mouse`; the text it drew.
    std::string Text(ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX)) {
        for (int i = 0; i < 3; ++i) r.frame([&] { qs::gui::DrawMainWindow(app, frame); }, mouse, false);
        std::string text;
        r.run([&] { text = qs::gui_test::DrawnText(); });
        return text;
    }
    // Over the original panel's first cell (728.6's row), where the tooltip would trace the element.
    ImVec2 OverOriginal() const {
        const ImVec2 a = app.figure.image_min[qs::gui::kOriginal], b = app.figure.image_max[qs::gui::kOriginal];
        return ImVec2(a.x + (b.x - a.x) * 0.85f, a.y + (b.y - a.y) * 0.15f);
    }
};

}  // namespace

TEST_CASE("covers: a-quantize-by-hand step 1 shows no z = -77 anywhere until R: not in any tab nor in presenter mode") {
    LessonScreen s;
    REQUIRE(s.app.figure.covered[qs::gui::kQuantized]);
    REQUIRE(s.app.doc.params.zero_point.at(0) == -77);
    std::string text = s.Text();
    INFO(text);
    CHECK(text.find("728.60") != std::string::npos);  // the reader reads: the original's values are there
    CHECK(text.find("-77") == std::string::npos);
    CHECK(text.find("1.57297") == std::string::npos);  // the MSE: the error panel is covered too
    text = s.Text(s.OverOriginal());  // the tooltip over an uncovered panel's cell
    CHECK(text.find("728.6") != std::string::npos);
    CHECK(text.find("-77") == std::string::npos);
    CHECK(text.find("3.57882") == std::string::npos);  // s, computed: part of the answer
    const std::vector<qs::gui::AnalysisTabSpec>& tabs = qs::gui::AnalysisTabs();
    for (std::size_t t = 0; t < tabs.size(); ++t) {
        if (tabs[t].shown) continue;
        s.app.request_tab = static_cast<int>(t);
        s.app.figure.selected = 2;  // and the followed element's bits
        text = s.Text();
        CAPTURE(tabs[t].word);
        CHECK(text.find("-77") == std::string::npos);
    }
    s.app.presenter = true;
    text = s.Text();
    CHECK(text.find("728.60") != std::string::npos);
    CHECK(text.find("-77") == std::string::npos);
    CHECK(text.find("1.57297") == std::string::npos);

    qs::gui::RevealLesson(s.app);  // R: every number back, in presenter mode and in the window
    text = s.Text();
    CHECK(text.find("z=-77") != std::string::npos);
    CHECK(text.find("1.57297") != std::string::npos);
    s.app.presenter = false;
    s.app.request_tab = qs::gui::AnalysisTabIndex("histograms");
    text = s.Text();
    CHECK(text.find("centredonz=-77") != std::string::npos);
    CHECK(text.find("1.57297") != std::string::npos);
}
