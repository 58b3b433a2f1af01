// Granularity made visible (issue 11 item 4): the per-block bar chart's pixel mapping, the block outlines on
// the heatmaps (drawn in channel mode, absent per tensor and in the exported figure), and a click in the
// block strip following that block's first element.
#include <doctest/doctest.h>

#include <cfloat>
#include <memory>
#include <string>
#include <vector>

#include "gui/panels/figure_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

namespace {

struct Quantized {
    qs::Tensor tensor;
    qs::QuantConfig config;
    qs::QuantParams params;
    qs::QuantResult result;
    std::shared_ptr<const qs::gui::TensorData> data;  // a view of `tensor` (which stays put: held by pointer)
    qs::QuantOverview overview;
    std::uint64_t generation = 1;
    qs::gui::QuantView view() const {
        qs::gui::QuantView v;
        v.data = data.get();
        v.tensor = &tensor;
        v.config = &config;
        v.params = &params;
        v.overview = &overview;
        v.generation = generation;
        v.tensor_generation = 1;
        return v;
    }
};

std::unique_ptr<Quantized> Make(qs::Granularity g) {
    auto q = std::make_unique<Quantized>();
    qs::RandomSpec spec;
    spec.shape = {8, 12};
    spec.seed = 2;
    q->tensor = qs::generate_random(spec);
    q->config.granularity = g;
    q->config.axis = 0;
    q->result = qs::quantize(q->tensor, q->config, &q->params);
    q->data = qs::gui::MakeTensorData(std::shared_ptr<const qs::Tensor>(std::shared_ptr<const qs::Tensor>(), &q->tensor));
    q->overview = qs::quantize_overview(q->data->view, q->params, q->config, q->data->values.grid);
    return q;
}

// Draws the figure full-window for a few frames (the last one with the mouse at `mouse`, pressed or not) and
// returns the pixels.
std::vector<std::uint8_t> Draw(qs::gui::OffscreenRenderer& r, qs::gui::FigurePanelState& st, const Quantized& q,
                               ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX), bool down = false,
                               const qs::gui::FigureLook& look = {}) {
    const auto body = [&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("figure", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(st, q.view(), ImGui::GetContentRegionAvail(), look);
        ImGui::End();
    };
    for (int i = 0; i < 3; ++i) r.frame(body);
    r.frame(body, mouse, down);
    std::vector<std::uint8_t> px;
    r.read_pixels(px);
    return px;
}

}  // namespace

TEST_CASE("bar chart columns: one bar per value when they fit and a range of values per pixel when not") {
    std::int64_t first = 0, last = 0;
    qs::gui::BarsAt(8, 0.0f, 800.0f, 150.0f, first, last);  // 100 px a bar
    CHECK(first == 1);
    CHECK(last == 1);
    qs::gui::BarsAt(5000, 0.0f, 100.0f, 0.5f, first, last);  // 50 values a pixel
    CHECK(first == 0);
    CHECK(last == 49);
    qs::gui::BarsAt(5000, 0.0f, 100.0f, 99.5f, first, last);
    CHECK(last == 4999);
    qs::gui::BarsAt(8, 0.0f, 800.0f, 900.0f, first, last);  // outside: none
    CHECK(first > last);
}

TEST_CASE("block outlines: drawn per channel and not per tensor and a strip click follows the block") {
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1200, 700, [] {
        qs::gui::BuildFonts(16.0f);
        qs::gui::ApplyStyle(true, 1.0f);
    }, &error), error);
    const auto channels = Make(qs::Granularity::Channel);
    qs::gui::FigurePanelState with, without;
    qs::gui::FigureLook no_outlines;
    no_outlines.block_outlines = false;
    const ImVec2 away(-FLT_MAX, -FLT_MAX);
    const std::vector<std::uint8_t> a = Draw(r, with, *channels), b = Draw(r, without, *channels, away, false, no_outlines);
    CHECK(a != b);  // the outlines and the tint
    // Per tensor there are no blocks: the same pixels either way.
    const auto tensor = Make(qs::Granularity::Tensor);
    qs::gui::FigurePanelState t1, t2;
    CHECK(Draw(r, t1, *tensor) == Draw(r, t2, *tensor, away, false, no_outlines));

    // The strip sits between the images and the pipeline: a click on the left chart's right end picks one of
    // the last channels, and the figure follows that channel's first element (row of an 8 x 12 tensor).
    float images_bottom = 0.0f;
    for (const ImVec2& m : with.image_max) images_bottom = std::max(images_bottom, m.y);
    const ImVec2 click(with.image_min[0].x + 0.55f * 1200.0f * 0.6f, images_bottom + 16.0f * 1.3f + 16.0f * 3.2f);
    Draw(r, with, *channels, click, true);
    Draw(r, with, *channels, click, false);
    INFO("clicked at " << click.x << ", " << click.y);
    REQUIRE(with.selected >= 0);
    CHECK(with.selected % 12 == 0);
    CHECK(with.selected / 12 >= 4);
    r.run([&] {
        for (auto* s : {&with, &without, &t1, &t2})
            for (qs::gui::HeatmapState& m : s->maps) m.texture.reset();
    });
}

TEST_CASE("block strip: its charts are made once per quantization and not copied every frame") {
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1200, 700, [] {
        qs::gui::BuildFonts(16.0f);
        qs::gui::ApplyStyle(true, 1.0f);
    }, &error), error);
    auto q = Make(qs::Granularity::Channel);
    q->params.zero_point.back() = 7;  // a z to chart
    qs::gui::FigurePanelState st;
    Draw(r, st, *q);  // four frames
    CHECK(st.strip_cache.builds == 1);
    CHECK(st.strip_cache.z == std::vector<double>(q->params.zero_point.begin(), q->params.zero_point.end()));
    CHECK(st.strip_cache.any_z);
    // Another quantization (a new generation): made again, from the new pairs.
    q->params.zero_point.back() = -3;
    ++q->generation;
    Draw(r, st, *q);
    CHECK(st.strip_cache.builds == 2);
    CHECK(st.strip_cache.z.back() == -3.0);
    r.run([&] {
        for (qs::gui::HeatmapState& m : st.maps) m.texture.reset();
    });
}

TEST_CASE("block strip: a negative scale (ggml's signed d) is inside the chart's range") {
    // q4_0 stores d = (the value of largest magnitude) / -8: a block whose largest is positive has d < 0, and
    // its bar hangs below the axis. The chart ran from 0 up, and such bars were drawn over the text under it.
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1200, 700, [] {
        qs::gui::BuildFonts(16.0f);
        qs::gui::ApplyStyle(true, 1.0f);
    }, &error), error);
    auto q = Make(qs::Granularity::Channel);
    q->params.scale.front() = -0.5;
    q->params.scale.back() = 0.25;
    qs::gui::FigurePanelState st;
    Draw(r, st, *q);
    CHECK(st.strip_cache.s_lo <= -0.5);
    CHECK(st.strip_cache.s_hi >= 0.25);
    r.run([&] {
        for (qs::gui::HeatmapState& m : st.maps) m.texture.reset();
    });
}
