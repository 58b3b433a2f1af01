// Issue 25 item 1: a slider step costs what the figure shows. The document computes the quantization's overview
// at the blocks the figure's textures are reduced to (not at every cell of a tensor up to 1 M cells), and what
// the textures show stays quantize's cells reduced exactly: at the figure's blocks, after a zoom (the frame
// before the document's recompute included) and at another figure size.
#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "quantscope/downsample.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

namespace {

using qs::gui::AppState;

// How many texels of the codes' and the errors' panels differ from quantize's full-resolution results reduced to
// the same window and blocks (the dequantized panel is the codes' mapped by s (q - z)).
int TexelsNotExact(const qs::gui::FigurePanelState& fig, const qs::Tensor& tensor, const qs::QuantResult& full) {
    int differ = 0;
    for (int panel : {1, 3}) {
        const qs::gui::HeatmapState& hs = fig.maps[static_cast<std::size_t>(panel)];
        std::vector<float> want(hs.reduced.size());
        if (panel == 1)
            qs::downsample(full.codes.data(), tensor.cols(), hs.window, hs.fy, hs.fx, qs::Reduction::Mean, want.data());
        else
            qs::downsample(full.error.data(), tensor.cols(), hs.window, hs.fy, hs.fx, qs::Reduction::Max, want.data());
        for (std::size_t i = 0; i < want.size(); ++i) differ += hs.reduced[i] != want[i];
    }
    return differ;
}

}  // namespace

TEST_CASE("figure overview: the document computes the blocks the figure shows and the textures stay exact") {
    qs::RandomSpec spec;
    spec.shape = {768, 1024};
    spec.seed = 25;
    spec.outliers = 5;
    const auto tensor = std::make_shared<const qs::Tensor>(qs::generate_random(spec));
    AppState app;
    REQUIRE(app.doc.apply_tensor(tensor, "random"));
    app.doc.update();  // at most kSyncElements: on this thread
    REQUIRE(app.doc.overview.grid.exact());  // before the figure says what it shows

    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1200, 420, nullptr, &error), error);
    const auto frame = [&] {
        r.frame([&] {
            ImGui::SetNextWindowPos(ImVec2(0, 0));
            ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
            ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
            qs::gui::DrawFigurePanel(app.figure, app.doc.view(), ImGui::GetContentRegionAvail());
            ImGui::End();
        });
        qs::gui::ApplyIntents(app);  // hands the textures' blocks to the document
        app.doc.update();
    };
    qs::QuantParams params;
    const qs::QuantResult full = qs::quantize(*tensor, app.doc.shown_config, &params);

    for (int i = 0; i < 3; ++i) frame();
    const qs::gui::HeatmapState& codes = app.figure.maps[1];
    REQUIRE(codes.fy > 1);  // a 1024-column tensor in a quarter of 1200 px
    const qs::OverviewGrid& grid = app.doc.overview.grid;
    CHECK(grid.fy == codes.fy);
    CHECK(grid.fx == codes.fx);
    CHECK(grid.cells() == codes.tex_rows * codes.tex_cols);  // no more blocks than the texture has texels
    CHECK(TexelsNotExact(app.figure, *tensor, full) == 0);

    // Zoomed in: the first frame's blocks are finer than the document's overview (reduced from one computed
    // for them), and the next recompute follows them.
    app.figure.view = qs::gui::HeatmapView{130, 70, 130 + 600, 70 + 450};
    r.frame([&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(app.figure, app.doc.view(), ImGui::GetContentRegionAvail());
        ImGui::End();
    });
    REQUIRE(codes.fy < grid.fy);
    CHECK(TexelsNotExact(app.figure, *tensor, full) == 0);
    qs::gui::ApplyIntents(app);
    app.doc.update();
    frame();
    CHECK(app.doc.overview.grid.fy == codes.fy);
    CHECK(app.doc.overview.grid.fx == codes.fx);
    CHECK(TexelsNotExact(app.figure, *tensor, full) == 0);
    CHECK(app.figure.tiles.windows_computed() == 0);  // the tensor's own grid is exact: no full-resolution window

    // A figure of another size (a saved PNG) over the same document: its blocks are not the document's.
    qs::gui::FigurePanelState other;
    r.frame([&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(other, app.doc.view(), ImVec2(700, 300));
        ImGui::End();
    });
    REQUIRE(other.maps[1].fy != app.doc.overview.grid.fy);
    CHECK(TexelsNotExact(other, *tensor, full) == 0);
    r.run([&] {  // the textures belong to the renderer's context
        for (auto& m : app.figure.maps) m.texture.reset();
        for (auto& m : other.maps) m.texture.reset();
    });
}
