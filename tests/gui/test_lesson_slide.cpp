// A lesson as a slide (issue 25 item 7): on a window that is small for its text, and always in presenter mode,
// the step's text beside the figure with nothing else around it; a step that names an analysis tab shows that
// tab under the figure; and no text runs over other text while the layout fits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "drawn_text.hpp"
#include "gui_test_support.hpp"

#include "cli/lessons.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/app/main_window.hpp"
#include "gui/platform/offscreen_renderer.hpp"

namespace {

// A window of `width` x `height` with 18 px text (times `ui_scale`, as --font-scale makes it) on lesson `name` at step `step` (0-based).
struct SlideScreen {
    qs::gui::OffscreenRenderer r;
    std::unique_ptr<qs::gui::AppState> owned = std::make_unique<qs::gui::AppState>();
    qs::gui::AppState& app = *owned;
    qs::gui::Frame frame;
    SlideScreen(int width, int height, const char* name, int step, float ui_scale = 1.0f) {
        std::string error;
        REQUIRE_MESSAGE(r.init(width, height, [ui_scale] {
            qs::gui::BuildFonts(std::round(18.0f * ui_scale));
            qs::gui::ApplyStyle(true, ui_scale);
        }, &error), error);
        app.doc.force_sync = true;
        qs::gui::OpenLesson(app, std::make_shared<const qs::Lesson>(qs::cli::load_lesson(name)), step);
        app.doc.finish_recompute_now();
        app.doc.update();
    }
    ~SlideScreen() {
        r.run([&] { owned.reset(); });  // the panels' textures belong to this context
    }
    // A few frames to settle (the fitted text sizes are found over the first ones); what the last one drew.
    std::string Text(std::string* overlap = nullptr) {
        for (int i = 0; i < 6; ++i) r.frame([&] { qs::gui::DrawMainWindow(app, frame); }, ImVec2(-1e9f, -1e9f), false);
        std::string text;
        r.run([&] {
            text = qs::gui_test::DrawnText();
            if (overlap) *overlap = qs::gui_test::OverlappingGlyphs();
        });
        return text;
    }
};

}  // namespace

TEST_CASE("lesson slide: a window narrow for its text shows an open lesson as a slide with the menu bar") {
    // 1000 px is 55 text sizes of 18 px: a projector's 1280 x 720 at font scale 2 is 49.
    SlideScreen narrow(1000, 700, "h-number-formats", 0);
    std::string text = narrow.Text();
    INFO(text);
    CHECK(text.find("Step1of6") != std::string::npos);
    CHECK(text.find("File") != std::string::npos);         // the menu bar stays
    CHECK(text.find("Colormap") == std::string::npos);     // no figure toolbar
    CHECK(text.find("Layout") == std::string::npos);
    CHECK(text.find("bits/weight") != std::string::npos);  // the presenter's metrics strip
    // View > "Lesson as a slide" off: the normal layout, controls and all.
    narrow.app.lesson_slides = false;
    text = narrow.Text();
    CHECK(text.find("Colormap") != std::string::npos);
    // The same lesson on a wide window keeps the normal layout.
    SlideScreen wide(1600, 900, "h-number-formats", 0);
    text = wide.Text();
    CHECK(text.find("Colormap") != std::string::npos);
    CHECK(text.find("Layout") != std::string::npos);
}

TEST_CASE("lesson slide: a step naming the bits tab shows the Bits view under the figure in presenter mode") {
    // Step 3: q4_K's nested scales in the Bits tab.
    const qs::Lesson lesson = qs::cli::load_lesson("k-quants");
    REQUIRE(lesson.steps.at(2).state.tab == "bits");
    SlideScreen s(1280, 720, "k-quants", 2);
    s.app.presenter = true;
    std::string overlap;
    const std::string text = s.Text(&overlap);
    INFO(text);
    CHECK(text.find("dmin(fp16)") != std::string::npos);  // the Bits view's nesting: d, dmin, the sub-block
    CHECK(text.find("sub-block") != std::string::npos);
    CHECK(text.find("bits/weight") != std::string::npos);
    CHECK_MESSAGE(overlap.empty(), overlap);
}

TEST_CASE("lesson slide: a row tensor's figure trace and metrics strip do not run over each other at large text") {
    // k-quants' 4 x 256 row at twice the text size: no layout prints its values, and the figure's titles,
    // block strip and a followed element's four trace lines once ran over the metrics strip. Step 2 follows
    // [0, 40] with the figure alone; step 3's Bits tab shows the element in full, and its figure leaves the
    // trace out (that the tab and the figure keep apart there is the Bits step's own test).
    for (const int step : {1, 2}) {
        CAPTURE(step);
        SlideScreen s(1280, 720, "k-quants", step, 2.0f);
        s.app.presenter = true;
        std::string overlap;
        const std::string text = s.Text(&overlap);
        INFO(text);
        CHECK((text.find("Selected") != std::string::npos) == (step == 1));
        CHECK_MESSAGE(overlap.empty(), overlap);
    }
}

TEST_CASE("lesson slide: the window's slide under its menu bar keeps a row tensor's text apart at large text") {
    // The menu bar leaves the figure above the Bits tab too short for any text size to fit: the layout took
    // the full size then and drew the strip, trace and metrics over each other.
    SlideScreen s(1280, 720, "k-quants", 2, 2.0f);
    std::string overlap;
    const std::string text = s.Text(&overlap);
    INFO(text);
    CHECK(text.find("File") != std::string::npos);
    CHECK(text.find("dmin(fp16)") != std::string::npos);
    CHECK_MESSAGE(overlap.empty(), overlap);
}

TEST_CASE("lesson slide: a 4 x 256 row is drawn as four bands and not as lines at a projector's size") {
    // Cells could stretch 1.5 times from square: the row's panels were 60-230 px wide and 4-6 px high, four
    // in a row at twice the text size. Now a strip's image spans at least 0.3 of its width, and the slide
    // takes the 2 x 2 grid, whose images are the larger.
    const auto image = [](const qs::gui::AppState& app, float& w, float& h) {
        w = app.figure.image_max[0].x - app.figure.image_min[0].x;
        h = app.figure.image_max[0].y - app.figure.image_min[0].y;
    };
    float w = 0, h = 0;
    SlideScreen projector(1280, 720, "k-quants", 1, 2.0f);  // "Predict: q4_K against q4_0": the figure alone
    projector.Text();
    image(projector.app, w, h);
    INFO("projector image " << w << " x " << h);
    CHECK(w >= 250.0f);
    CHECK(h >= 0.25f * w);
    SlideScreen window(1600, 900, "k-quants", 1);  // the normal layout, four in a row
    window.Text();
    image(window.app, w, h);
    INFO("window image " << w << " x " << h);
    CHECK(h >= 0.25f * w);
    CHECK(h >= 40.0f);
}

namespace {

// The lowest edge of the glyphs of the first occurrence of `text` (spaces left out) in the last frame, else -1;
// and the bottom of what the slide's tab shows (its child window's clip rectangle), else -1.
float GlyphsBottom(qs::gui::OffscreenRenderer& r, const std::string& text, float* tab_bottom = nullptr) {
    float bottom = -1.0f;
    r.run([&] {
        if (tab_bottom) {
            *tab_bottom = -1.0f;
            for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows)
                if (w->Active && std::string(w->Name).find("##presenter-tab") != std::string::npos) *tab_bottom = w->InnerClipRect.Max.y;
        }
        const std::vector<qs::gui_test::DrawnGlyph> glyphs = qs::gui_test::DrawnGlyphs();
        std::string chars;
        for (const qs::gui_test::DrawnGlyph& g : glyphs) chars += g.c < 0x80 ? static_cast<char>(g.c) : '~';
        const std::size_t at = chars.find(text);
        if (at == std::string::npos) return;
        for (std::size_t i = at; i < at + text.size(); ++i) bottom = std::max(bottom, glyphs[i].b.y);
    });
    return bottom;
}

}  // namespace

TEST_CASE("lesson slide: a Bits step gives its tab the height it needs and the figure the rest at one text size") {
    // The figure kept 36% of the slide whatever the tab needed: on a 1600 x 900 projector its titles shrank while
    // the tab had room to spare, and at 1280 x 720 font scale 2 the tab's last line (r' worked out) ran off the
    // bottom. Now the two take one text size, the largest at which both fit.
    SUBCASE("1600 x 900 presenter, q4_K's nesting: everything at the window's text size") {
        SlideScreen s(1600, 900, "k-quants", 2);
        s.app.presenter = true;
        std::string overlap;
        const std::string text = s.Text(&overlap);
        INFO(text);
        CHECK_MESSAGE(overlap.empty(), overlap);
        CHECK(s.app.presenter_view.text_scale == doctest::Approx(1.0f));  // the figure's titles and strip
        CHECK(s.app.presenter_tab_scale * s.app.presenter_tab_fit == doctest::Approx(1.0f));
        const float h = s.app.figure.image_max[0].y - s.app.figure.image_min[0].y;
        INFO("image height " << h);
        CHECK(h >= 80.0f);  // 59 px before
        float tab = -1.0f;
        const float bottom = GlyphsBottom(s.r, "(r=0.13)", &tab);  // the tab's last line
        CHECK(bottom > 0.0f);
        CHECK(bottom <= tab);
    }
    SUBCASE("1280 x 720 at font scale 2 under the menu bar, q4_0: the tab whole, its text and the figure's alike") {
        SlideScreen s(1280, 720, "k-quants", 0, 2.0f);
        std::string overlap;
        const std::string text = s.Text(&overlap);
        INFO(text);
        CHECK_MESSAGE(overlap.empty(), overlap);
        float tab = -1.0f;
        const float bottom = GlyphsBottom(s.r, "(r=3.61)", &tab);
        INFO("last line's bottom " << bottom << " in the tab's " << tab << ", figure text " << s.app.presenter_view.text_scale << ", tab text "
                                   << s.app.presenter_tab_scale * s.app.presenter_tab_fit);
        CHECK(bottom > 0.0f);
        CHECK(bottom <= tab);
        CHECK(s.app.presenter_tab_scale * s.app.presenter_tab_fit >= 0.5f);  // 18 px: not below half
        CHECK(s.app.presenter_view.text_scale >= 0.5f);
    }
}

TEST_CASE("lesson slide: a Bits step's text size settles and stays (no swing between two sizes frame to frame)") {
    // The size is chosen from the tab's height measured the frame before at the size then drawn; a height
    // measured at a smaller size wraps less and could let the next frame go back up, and so on.
    for (const auto& [w, h, step, font] : {std::tuple{1280, 720, 0, 2.0f}, std::tuple{1280, 720, 2, 2.0f}, std::tuple{1600, 900, 2, 1.0f},
                                           std::tuple{1024, 600, 3, 1.5f}}) {
        SlideScreen s(w, h, "k-quants", step, font);
        s.app.presenter = step == 2;
        std::vector<float> scales;
        for (int i = 0; i < 12; ++i) {
            s.r.frame([&] { qs::gui::DrawMainWindow(s.app, s.frame); }, ImVec2(-1e9f, -1e9f), false);
            scales.push_back(s.app.presenter_view.text_scale * 100.0f + s.app.presenter_tab_scale);
        }
        CAPTURE(w);
        CAPTURE(step);
        for (int i = 6; i < 12; ++i) CHECK(scales[static_cast<std::size_t>(i)] == scales[5]);
    }
}


namespace {

// Where the slide's tab starts, as a share of the slide's height under the lesson column's top (the figure's
// share), from last frame's windows.
float FigureShare(qs::gui::OffscreenRenderer& r) {
    float share = -1.0f;
    r.run([&] {
        const ImGuiWindow* slide = nullptr;
        const ImGuiWindow* tab = nullptr;
        for (const ImGuiWindow* w : ImGui::GetCurrentContext()->Windows) {
            if (!w->Active) continue;
            const std::string name = w->Name;
            if (name.find("##presenter-tab") != std::string::npos) tab = w;
            // the slide itself, not a child of it: its name ends with the child id ImGui appends (8 hex digits)
            else if (const std::string tail = "/##presenter-figure_"; name.rfind(tail) != std::string::npos &&
                                                                     name.rfind(tail) + tail.size() + 8 == name.size())
                slide = w;
        }
        if (slide && tab) share = (tab->Pos.y - slide->Pos.y) / slide->Size.y;
    });
    return share;
}

}  // namespace

TEST_CASE("lesson slide: a Bits step at a projector's size leaves the figure over half the slide and the tab whole") {
    // The Bits view's rows each took a header with a rule, the boxes, their labels and the decoded line: on
    // 1280 x 720 at font scale 2 the tab left the figure 39-47% of the slide (images 19-33 px tall) and q4_K's
    // nesting still scrolled, its last line (r' worked out) cut. Its compact look puts each row's name beside its
    // boxes and folds their labels into one legend.
    for (const bool presenter : {false, true})
        for (const auto& [step, least] : {std::pair{0, 0.55f}, std::pair{2, 0.5f}, std::pair{3, 0.5f}}) {
            CAPTURE(presenter);
            CAPTURE(step);
            SlideScreen s(1280, 720, "k-quants", step, 2.0f);
            s.app.presenter = presenter;
            std::string overlap;
            const std::string text = s.Text(&overlap);
            INFO(text);
            CHECK_MESSAGE(overlap.empty(), overlap);
            CHECK(s.app.bits.compact);
            float tab = -1.0f;
            const float bottom = GlyphsBottom(s.r, "(r=", &tab);  // the tab's last line
            const float share = FigureShare(s.r);
            INFO("figure share " << share << ", last line's bottom " << bottom << " in the tab's " << tab);
            CHECK(share >= least);
            CHECK(bottom > 0.0f);
            CHECK(bottom <= tab);
            CHECK(s.app.presenter_tab_scale * s.app.presenter_tab_fit >= 0.5f);
        }
}

TEST_CASE("lesson slide: the Bits view keeps its normal look at the normal size and is compact at a projector's") {
    SlideScreen normal(1600, 900, "k-quants", 2);
    normal.app.presenter = true;
    std::string text = normal.Text();
    CHECK_FALSE(normal.app.bits.compact);
    CHECK(text.find("sub-block1scalesc(uint6)") != std::string::npos);  // a header of its own for each row
    SlideScreen projector(1280, 720, "k-quants", 2, 2.0f);
    text = projector.Text();
    INFO(text);
    CHECK(projector.app.bits.compact);
    CHECK(text.find("sub-block1scalesc(uint6)") == std::string::npos);  // under the line naming its sub-block
    CHECK(text.find("scalesc(uint6)") != std::string::npos);
    CHECK(text.find("signexponentmantissa") != std::string::npos);  // the legend, once
    CHECK(text.find("signexponentmantissa") == text.rfind("signexponentmantissa"));
}

TEST_CASE("lesson slide: a wide tensor's grid keeps its rows and the metrics strip together in presenter mode") {
    // h-number-formats step 1's 4 x 32 weights: each image is as wide as its column lets it be and its cells as
    // tall as they may stretch, shorter than the grid's half of the height. The rows were drawn a half-height
    // apart, the metrics strip at the slide's bottom: an empty band under each row and above the strip.
    for (const auto& [width, height, scale] : {std::tuple{1280, 720, 2.0f}, std::tuple{1600, 900, 1.0f}}) {
        CAPTURE(width);
        SlideScreen s(width, height, "h-number-formats", 0, scale);
        s.app.presenter = true;
        std::string overlap;
        const std::string text = s.Text(&overlap);
        INFO(text);
        CHECK_MESSAGE(overlap.empty(), overlap);
        REQUIRE(s.app.figure.used_grid);
        const float line = std::round(18.0f * scale);
        const auto& f = s.app.figure;
        // A row's title and its legend line (under the first row) between the rows: no more.
        const float between_rows = f.image_min[2].y - f.image_max[0].y;
        INFO("between the rows " << between_rows << " px, text " << line << " px");
        CHECK(between_rows <= 3.5f * line);
        // Under the images: the legend line, the two lines of the click hint and the strip's first line.
        const float images_bottom = std::max(f.image_max[2].y, f.image_max[3].y);
        const float strip_bottom = GlyphsBottom(s.r, "SQNR");
        INFO("images end at " << images_bottom << ", the strip's SQNR at " << strip_bottom);
        REQUIRE(strip_bottom > images_bottom);
        CHECK(strip_bottom - images_bottom <= 7.0f * line);
    }
}
