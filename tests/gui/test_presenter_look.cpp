// Presenter mode draws the window's figure with a look of its own (FigureLook): it changes nothing of the
// figure's settings or of the look its owner draws it with, however often it is toggled (issue 22 item 4).
#include <doctest/doctest.h>

#include <array>
#include <cfloat>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui_test_support.hpp"

#include "gui/app/app_state.hpp"
#include "gui/app/main_window.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/presenter_view.hpp"
#include "quantscope/presets.hpp"

using namespace qs::gui_test;

namespace {

// What a drawing of the figure showed: where the images went, the values' size, row or grid.
struct Shown {
    std::array<ImVec2, 4> image_min{}, image_max{};
    float annotation = 0.0f;
    bool grid = false;
};

Shown ShownBy(const qs::gui::FigurePanelState& f) { return {f.image_min, f.image_max, f.annotation_size, f.used_grid}; }

void CheckSame(const Shown& a, const Shown& b) {
    for (int i = 0; i < 4; ++i) {
        CHECK(a.image_min[i].x == b.image_min[i].x);
        CHECK(a.image_min[i].y == b.image_min[i].y);
        CHECK(a.image_max[i].x == b.image_max[i].x);
        CHECK(a.image_max[i].y == b.image_max[i].y);
    }
    CHECK(a.annotation == b.annotation);
    CHECK(a.grid == b.grid);
}

}  // namespace

TEST_CASE("presenter look: toggled twice the figure keeps its settings and its owner's look") {
    // A projector's text size, where presenter mode picks its own layout, aspect, captions and value sizes.
    PanelWindow w(1280, 720, 36.0f);
    const qs::Preset preset = qs::make_preset("lesson");
    const SharedQuant lesson = MakeSharedQuant(preset.tensor, preset.config);
    qs::gui::FigurePanelState figure;
    figure.settings.layout = qs::gui::FigureLayoutMode::Row;  // the user's choices, unlike the presenter's
    figure.settings.show_toolbar = false;
    figure.settings.show_pipeline = false;
    figure.settings.colormap = qs::gui::Colormap::Viridis;
    // The owner's look of the figure: no caption rows, cells that stay square, values at the font size.
    qs::gui::FigureLook look;
    look.captions = false;
    look.max_cell_aspect = 1.0f;
    const auto settings = qs::gui::FigurePanelSettingPairs(figure.settings);
    qs::gui::PresenterViewState presenter;
    const auto normal = [&] { qs::gui::DrawFigurePanel(figure, lesson.view(), ImGui::GetContentRegionAvail(), look); };
    const auto projector = [&] { qs::gui::DrawPresenterView(presenter, figure, lesson.view(), ImGui::GetContentRegionAvail()); };
    for (int i = 0; i < 3; ++i) w.frame(normal);
    const Shown before = ShownBy(figure);
    std::vector<std::uint8_t> pixels_before, pixels_after;
    w.r.read_pixels(pixels_before);
    for (int toggle = 0; toggle < 2; ++toggle) {
        for (int i = 0; i < 3; ++i) w.frame(projector);
        CHECK(figure.annotation_size >= 0.7f * 36.0f);  // presenter mode printed the values its own way...
        CHECK(qs::gui::FigurePanelSettingPairs(figure.settings) == settings);  // ...without touching the user's
        for (int i = 0; i < 3; ++i) w.frame(normal);
        CHECK(qs::gui::FigurePanelSettingPairs(figure.settings) == settings);
        CheckSame(ShownBy(figure), before);
    }
    w.r.read_pixels(pixels_after);
    CHECK(pixels_after == pixels_before);
    w.r.run([&] {  // the textures belong to this context
        for (qs::gui::HeatmapState& m : figure.maps) m.texture.reset();
    });
}

TEST_CASE("presenter look: F5 twice in the window leaves the figure's settings and its drawing as they were") {
    PanelWindow w(1280, 720, 36.0f);
    auto owned = std::make_unique<qs::gui::AppState>();
    qs::gui::AppState& app = *owned;
    app.doc.force_sync = true;
    const qs::Preset preset = qs::make_preset("lesson");
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(preset.tensor), "lesson", &preset.config));
    app.doc.update();
    app.figure.settings.layout = qs::gui::FigureLayoutMode::Row;  // set in the figure's toolbar
    app.figure.settings.shared_range = false;
    app.figure.settings.annotate = qs::gui::AnnotateMode::On;
    const auto settings = qs::gui::FigurePanelSettingPairs(app.figure.settings);
    qs::gui::Frame frame;
    const auto draw = [&] {
        w.r.frame([&] { qs::gui::DrawMainWindow(app, frame); }, ImVec2(-FLT_MAX, -FLT_MAX), false);
    };
    for (int i = 0; i < 3; ++i) draw();
    const Shown before = ShownBy(app.figure);
    for (int toggle = 0; toggle < 4; ++toggle) {  // on, off, on, off
        app.presenter = !app.presenter;
        for (int i = 0; i < 3; ++i) draw();
        CHECK(qs::gui::FigurePanelSettingPairs(app.figure.settings) == settings);
    }
    CheckSame(ShownBy(app.figure), before);
    w.r.run([&] { owned.reset(); });  // the panels' textures belong to this context
}
