// The window's right column (main_window.cpp) drawn whole, offscreen.
#include <doctest/doctest.h>

#include <cfloat>
#include <memory>
#include <string>

#include "gui_test_support.hpp"

#include "gui/app/app_state.hpp"
#include "gui/app/main_window.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "quantscope/random.hpp"

TEST_CASE("main window: a hidden figure still drops a selection past a smaller tensor's end") {
    // The Bits and Histograms tabs read the figure's selection: it must be valid for the tensor on show even
    // while View > Figure is off (the column measures the figure, which brings its state up to date).
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1400, 800, [] {
        qs::gui::BuildFonts(16.0f);
        qs::gui::ApplyStyle(true, 1.0f);
    }, &error), error);
    auto owned = std::make_unique<qs::gui::AppState>();
    qs::gui::AppState& app = *owned;
    app.doc.force_sync = true;
    qs::RandomSpec spec;
    spec.shape = {64, 256};
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(qs::generate_random(spec)), "random"));
    app.doc.update();
    qs::gui::Frame frame;
    const auto draw = [&] { r.frame([&] { qs::gui::DrawMainWindow(app, frame); }, ImVec2(-FLT_MAX, -FLT_MAX), false); };
    draw();
    app.figure.selected = 64 * 256 - 1;  // the last element
    draw();
    CHECK(app.figure.selected == 64 * 256 - 1);
    app.panels.figure = false;
    spec.shape = {4, 4};
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(qs::generate_random(spec)), "small"));
    app.doc.update();
    draw();
    CHECK(app.figure.selected == -1);
    r.run([&] { owned.reset(); });  // the panels' textures belong to this context
}
