// Tests of the analysis panels (landscape, calibrators, compare) and of the histogram/figure caches: each panel
// drawn for a few frames offscreen on the lesson and outliers presets, its background work finished, and its
// mouse interaction checked against the core's numbers. Set QS_FIGURE_PNG_DIR to keep a PNG of each panel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "gui_test_support.hpp"

#include "gui/panels/calibration_panel.hpp"
#include "gui/panels/compare_panel.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/histogram_panel.hpp"
#include "gui/panels/landscape_panel.hpp"
#include "gui/panels/metrics_panel.hpp"
#include "gui/widgets/widgets.hpp"
#include <imgui_internal.h>  // the tables drawn this frame
#include "gui/panels/presenter_view.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/app/figure_png.hpp"
#include "gui/document/quant_view.hpp"
#include "gui/widgets/heatmap.hpp"
#include "gui/widgets/style.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/downsample.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

namespace {

using Shared = qs::gui_test::SharedQuant;
using Window = qs::gui_test::PanelWindow;

Shared MakeShared(qs::Tensor t, const qs::QuantConfig& c) { return qs::gui_test::MakeSharedQuant(std::move(t), c); }

Shared FromPreset(const std::string& name) {
    qs::Preset p = qs::make_preset(name);
    return MakeShared(std::move(p.tensor), p.config);
}

}  // namespace

TEST_CASE("histogram helpers: rebin keeps the mass and sampled code counts match the full ones at step 1") {
    qs::Histogram h = qs::histogram(std::vector<float>{0.5f, 1.5f, 1.5f, 2.5f, 3.5f}.data(), 5, 4, 0.0, 4.0);
    const std::vector<double> same = qs::rebin(h, 4, 0.0, 4.0);
    for (int i = 0; i < 4; ++i) CHECK(same[static_cast<std::size_t>(i)] == doctest::Approx(static_cast<double>(h.counts[static_cast<std::size_t>(i)])));
    const std::vector<double> wide = qs::rebin(h, 8, -4.0, 4.0);  // the data in the upper half, one bin each
    CHECK(std::accumulate(wide.begin(), wide.end(), 0.0) == doctest::Approx(5.0));
    CHECK(wide[3] == doctest::Approx(0.0));
    CHECK(wide[5] == doctest::Approx(2.0));
    const std::vector<double> halves = qs::rebin(h, 8, 0.0, 4.0);  // each source bin split in two
    CHECK(halves[2] == doctest::Approx(1.0));
    CHECK(halves[3] == doctest::Approx(1.0));

    std::vector<std::int32_t> codes(100000);
    for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::int32_t>((i * 7919) % 256) - 128;
    std::int64_t sampled = 0;
    CHECK(qs::code_counts_sampled(codes.data(), 100000, -128, 127, 4096, 1, &sampled) ==
          qs::code_counts(codes.data(), 100000, -128, 127));
    CHECK(sampled == 100000);
    const auto part = qs::code_counts_sampled(codes.data(), 100000, -128, 127, 4096, 4, &sampled);
    CHECK(sampled == 4096 * 6 + 1696);  // runs at 0, 16384, ..., 98304 (the last one 1696 long)
    CHECK(std::accumulate(part.begin(), part.end(), std::int64_t{0}) == sampled);
}

TEST_CASE("histogram panel: a big tensor's values are counted once per tensor and its codes exactly in every frame") {
    qs::RandomSpec spec;
    spec.shape = {1500, 2048};  // above kHistogramExactElements and twice the code sample
    Shared s = MakeShared(qs::generate_random(spec), qs::QuantConfig{});
    Window w(900, 400);
    qs::gui::HistogramPanelState st;
    auto draw = [&] { qs::gui::DrawHistogramPanel(st, s.view()); };
    w.frame(draw);
    w.frame(draw);
    REQUIRE(st.fine.counts.size() > 0);
    const std::int64_t* fine_data = st.fine.counts.data();
    const auto exact = qs::code_counts(s.result.codes.data(), s.tensor->numel(), -128, 127);
    for (std::size_t i = 0; i < exact.size(); ++i) REQUIRE(st.codes[i] == static_cast<double>(exact[i]));
    // A drag: new results frame after frame. The fine histogram stays; the codes are counted exactly by the
    // recompute's own pass, frame after frame (no sample).
    qs::QuantConfig c = s.config;
    c.mode = qs::Mode::Manual;
    c.manual_scale = s.params.scale[0];
    c.manual_zero_point = s.params.zero_point[0];
    for (int i = 0; i < 3; ++i) {
        c.manual_scale *= 1.1;
        s.requantize(c);
        w.frame(draw);
    }
    CHECK(st.fine.counts.data() == fine_data);
    CHECK(st.code_stride == 1);
    w.frame(draw);
    const auto exact2 = qs::code_counts(s.result.codes.data(), s.tensor->numel(), -128, 127);
    for (std::size_t i = 0; i < exact2.size(); ++i) REQUIRE(st.codes[i] == static_cast<double>(exact2[i]));
}

TEST_CASE("histogram panel: per channel it shows the picked block's values and grid and clipped count") {
    // Channel 0 is smooth, channel 1 has an outlier that its percentile range clips.
    qs::Tensor t;
    t.shape = {2, 8};
    t.values = {-1.0f, -0.75f, -0.5f, -0.25f, 0.25f, 0.5f, 0.75f, 1.0f, 0, 1, 2, 3, 4, 5, 6, 1000};
    qs::QuantConfig c;
    c.granularity = qs::Granularity::Channel;
    c.axis = 0;
    c.calibration = qs::Calibration::Percentile;
    c.percentile = 90.0;
    Shared s = MakeShared(std::move(t), c);
    REQUIRE(s.params.block_count == 2);
    auto clipped_in = [&](std::size_t block) {
        std::int64_t n = 0;
        for (std::size_t i = block * 8; i < block * 8 + 8; ++i) {
            bool out = false;
            qs::quantize_value(s.tensor->values[i], static_cast<float>(s.params.scale[block]), s.params.zero_point[block],
                               s.config, &out);
            n += out;
        }
        return n;
    };
    REQUIRE(clipped_in(1) > 0);
    REQUIRE(clipped_in(0) != clipped_in(1));

    Window w(900, 400);
    qs::gui::HistogramPanelState st;
    auto draw = [&] { qs::gui::DrawHistogramPanel(st, s.view()); };
    auto check_shows = [&](std::int64_t block) {
        CAPTURE(block);
        const std::size_t b = static_cast<std::size_t>(block);
        CHECK(st.shown_block == block);
        const double scale = static_cast<float>(s.params.scale[b]), z = s.params.zero_point[b];
        CHECK(st.rep_lo == scale * (-128 - z));
        CHECK(st.rep_hi == scale * (127 - z));
        CHECK(st.shown_clipped == clipped_in(b));
        CHECK(st.shown_count == 8);
        // The bars and the codes are of this block's 8 elements, not of the tensor's 16.
        CHECK(std::accumulate(st.bars.begin(), st.bars.end(), 0.0) == 8.0);
        CHECK(std::accumulate(st.codes.begin(), st.codes.end(), 0.0) == 8.0);
        CHECK(st.data_max == (block == 0 ? 1.0 : 1000.0));
    };
    st.follow_element = 15;  // the figure's selection: the outlier, in channel 1
    w.frame(draw);
    w.frame(draw);
    check_shows(1);
    st.follow_element = 3;  // a new selection in channel 0
    w.frame(draw);
    check_shows(0);
    st.block = 1;  // picked in the panel: the unchanged selection does not override it
    w.frame(draw);
    check_shows(1);
    w.save("histogram_per_channel");
}

TEST_CASE("colorbar: a tiny range keeps its round ticks beside the centre") {
    Window w(400, 400);
    for (double scale : {1.0, 1e-40, 1e-20}) {
        CAPTURE(scale);
        qs::gui::HeatmapStyle style;
        style.bar_lo = -2.0 * scale;
        style.bar_hi = 10.0 * scale;
        style.norm = qs::gui::ColorNorm::Centered(style.bar_lo, style.bar_hi, 0.0);
        std::vector<qs::gui::BarTick> ticks;
        w.frame([&] { ticks = qs::gui::ColorbarTicks(style, 300.0f); });
        // 0 and round values up to 10 (times the scale): the same ticks at every scale.
        REQUIRE(ticks.size() >= 3);
        CHECK(std::count_if(ticks.begin(), ticks.end(), [](const qs::gui::BarTick& t) { return t.value == 0.0; }) == 1);
        CHECK(ticks.back().value == doctest::Approx(10.0 * scale));
    }
}

TEST_CASE("figure: the dequantized color range from the extremes equals a full pass and the original is reduced once") {
    qs::RandomSpec spec;
    spec.shape = {300, 500};
    Shared s = MakeShared(qs::generate_random(spec), qs::QuantConfig{});
    Window w(1200, 420);
    qs::gui::FigurePanelState st;
    auto draw = [&] { qs::gui::DrawFigurePanel(st, s.view(), ImGui::GetContentRegionAvail()); };
    qs::QuantConfig c = s.config;
    c.mode = qs::Mode::Manual;
    c.manual_zero_point = 3;
    for (double scale : {0.004, 0.01, 0.03}) {
        c.manual_scale = scale;
        s.requantize(c);
        w.frame(draw);
        const auto [lo, hi] = std::minmax_element(s.result.dequantized.begin(), s.result.dequantized.end());
        CHECK(st.deq_lo == static_cast<double>(*lo));
        CHECK(st.deq_hi == static_cast<double>(*hi));
    }
    CHECK(st.maps[0].reductions == 1);
    CHECK(st.maps[1].reductions == 3);
    // The dequantized panel is the codes' reduction mapped by s (q - z): the same as reducing r' itself.
    const qs::gui::HeatmapState& deq = st.maps[2];
    REQUIRE(deq.fx * deq.fy > 1);
    std::vector<float> direct(deq.reduced.size());
    qs::downsample(s.result.dequantized.data(), 500, deq.window, deq.fy, deq.fx, qs::Reduction::Mean, direct.data());
    double worst = 0;
    for (std::size_t i = 0; i < direct.size(); ++i) worst = std::max(worst, std::fabs(double(direct[i]) - deq.reduced[i]));
    CHECK(worst < 1e-5);
    w.r.run([&] {
        for (auto& m : st.maps) m.texture.reset();
    });
}

TEST_CASE("landscape: the lesson's map completes and a click asks for an (s z) of the grid") {
    Shared s = FromPreset("lesson");
    Window w(1300, 380);
    qs::gui::LandscapePanelState st;
    std::optional<qs::gui::PickManualIntent> click;
    auto draw = [&] {
        qs::gui::Intents out;
        qs::gui::DrawLandscapePanel(st, s.view(), s.data, out);
        if (auto c = qs::gui_test::Asked<qs::gui::PickManualIntent>(out)) click = c;
    };
    w.frame(draw);
    qs::gui::FinishLandscape(st);
    for (int i = 0; i < 3; ++i) w.frame(draw);
    REQUIRE(st.has_shown);
    CHECK_FALSE(qs::gui::LandscapeBusy(st));
    CHECK(st.shown.exact);
    CHECK_FALSE(st.shown.curve);
    CHECK(st.shown.scales.size() == qs::gui::kLandscapeFine);
    CHECK(st.shown.zero_points.size() == qs::gui::kLandscapeFine);
    // The min/max marker is the lessons' choice and its MSE the quantizer's.
    CHECK(st.shown.minmax_scale == doctest::Approx(3.578823433670343));
    CHECK(st.shown.minmax_zero_point == -77);
    CHECK(st.shown.minmax_mse == doctest::Approx(s.result.metrics.mse));
    CHECK(st.shown.best_mse == *std::min_element(st.shown.mse.begin(), st.shown.mse.end()));
    // The lessons' (s, z) is a grid point: the best of the grid is never worse than it.
    CHECK(std::find(st.shown.scales.begin(), st.shown.scales.end(), st.shown.minmax_scale) != st.shown.scales.end());
    CHECK(std::find(st.shown.zero_points.begin(), st.shown.zero_points.end(), -77) != st.shown.zero_points.end());
    CHECK(st.shown.best_mse <= st.shown.minmax_mse * (1 + 1e-6));
    // Each cell is the exact MSE of its (s, z).
    qs::QuantConfig check = s.config;
    check.mode = qs::Mode::Manual;
    check.manual_scale = st.shown.scales[10];
    check.manual_zero_point = st.shown.zero_points[20];
    CHECK(st.shown.mse[20 * st.shown.scales.size() + 10] ==
          doctest::Approx(qs::quantize(*s.tensor, check).metrics.mse).epsilon(1e-5));
    w.save("landscape_lesson");

    const ImVec2 target((st.plot_min.x * 0.3f + st.plot_max.x * 0.7f), (st.plot_min.y * 0.6f + st.plot_max.y * 0.4f));
    w.frame(draw, target, false);
    w.frame(draw, target, true);
    w.frame(draw, target, false);
    REQUIRE(click);
    CHECK(std::find(st.shown.scales.begin(), st.shown.scales.end(), click->scale) != st.shown.scales.end());
    CHECK(std::find(st.shown.zero_points.begin(), st.shown.zero_points.end(), click->zero_point) != st.shown.zero_points.end());
    // Left of the middle column and above the middle row: a smaller scale, a larger zero point than the center's.
    CHECK(click->scale > st.shown.scales[st.shown.scales.size() / 2]);
    CHECK(click->zero_point > st.shown.zero_points[st.shown.zero_points.size() / 2 - 1]);

    // Moving the current point inside the grid starts nothing; a new dtype does.
    const std::uint64_t requests = st.requests;
    qs::QuantConfig manual = s.config;
    manual.mode = qs::Mode::Manual;
    manual.manual_scale = click->scale;
    manual.manual_zero_point = click->zero_point;
    s.requantize(manual);
    w.frame(draw);
    CHECK(st.requests == requests);
    qs::QuantConfig int4 = s.config;
    int4.mode = qs::Mode::Asymmetric;
    int4.dtype.bits = 4;
    s.requantize(int4);
    w.frame(draw);
    CHECK(st.requests == requests + 1);
    qs::gui::FinishLandscape(st);
    w.frame(draw);
    CHECK(st.shown.zero_points.size() == 16);  // int4: every zero point
    w.r.run([&] { st.texture.reset(); });
}

TEST_CASE("landscape: symmetric mode draws MSE against the clipping range on the outliers preset") {
    Shared s = FromPreset("outliers-4x128x256");
    qs::QuantConfig c = s.config;
    c.mode = qs::Mode::Symmetric;
    s.requantize(c);
    Window w(1300, 380);
    qs::gui::LandscapePanelState st;
    std::optional<qs::gui::PickManualIntent> click;
    auto draw = [&] {
        qs::gui::Intents out;
        qs::gui::DrawLandscapePanel(st, s.view(), s.data, out);
        if (auto k = qs::gui_test::Asked<qs::gui::PickManualIntent>(out)) click = k;
    };
    w.frame(draw);
    qs::gui::FinishLandscape(st);
    for (int i = 0; i < 3; ++i) w.frame(draw);
    REQUIRE(st.has_shown);
    CHECK(st.shown.curve);
    CHECK(st.shown.exact);
    CHECK(st.shown.alphas.size() == qs::gui::kCurveFine);
    // With outliers, clipping them beats the lessons' max|r|.
    CHECK(st.shown.best_mse < st.shown.minmax_mse);
    CHECK(st.shown.minmax_mse == doctest::Approx(s.result.metrics.mse));
    w.save("landscape_outliers_symmetric");
    const ImVec2 target((st.plot_min.x + st.plot_max.x) * 0.5f, (st.plot_min.y + st.plot_max.y) * 0.5f);
    w.frame(draw, target, false);
    w.frame(draw, target, true);
    w.frame(draw, target, false);
    REQUIRE(click);
    CHECK(click->zero_point == 0);
    CHECK(std::find(st.shown.scales.begin(), st.shown.scales.end(), click->scale) != st.shown.scales.end());
}

TEST_CASE("calibrators: the table matches compare_calibrators and Apply returns the row's config") {
    Shared s = FromPreset("outliers-4x128x256");
    Window w(1300, 420);
    qs::gui::CalibrationPanelState st;
    std::optional<qs::gui::PickConfigIntent> applied;
    auto draw = [&] {
        qs::gui::Intents out;
        qs::gui::DrawCalibrationPanel(st, s.view(), s.data, out);
        if (auto a = qs::gui_test::Asked<qs::gui::PickConfigIntent>(out)) applied = a;
    };
    w.frame(draw);
    qs::gui::FinishCalibration(st, s.view(), s.data);
    for (int i = 0; i < 3; ++i) w.frame(draw);
    REQUIRE(st.has_shown);
    CHECK_FALSE(qs::gui::CalibrationBusy(st));
    const auto rows = qs::compare_calibrators(*s.tensor, s.config);
    REQUIRE(st.shown.rows.size() == rows.size());
    REQUIRE(rows.size() == 8);
    for (std::size_t i = 0; i < rows.size(); ++i) CHECK(st.shown.rows[i].metrics.mse == rows[i].metrics.mse);
    REQUIRE(st.best_row >= 0);
    for (const auto& r : rows) CHECK(st.shown.rows[static_cast<std::size_t>(st.best_row)].metrics.mse <= r.metrics.mse);
    w.save("calibrators_outliers");

    // One Apply per shown row: a "recompute s" twin with the same (s, z) as its row is not shown again.
    const auto shown = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const qs::CalibrationRow& r) { return !r.same_as_twin; }));
    CHECK(shown < rows.size());  // this tensor contains 0: recompute s changes nothing for min/max
    REQUIRE(st.apply_row.size() == shown);
    for (int i : st.apply_row) CHECK_FALSE(rows[static_cast<std::size_t>(i)].same_as_twin);
    // The third button from the top (display order pairs each calibrator with its recompute-s twin).
    const ImVec2 button = st.apply_center[2];
    const int row = st.apply_row[2];
    w.frame(draw, button, false);
    w.frame(draw, button, true);
    w.frame(draw, button, false);
    REQUIRE(applied);
    CHECK(applied->config.calibration == rows[static_cast<std::size_t>(row)].config.calibration);
    CHECK(applied->config.percentile == rows[static_cast<std::size_t>(row)].config.percentile);
    CHECK(applied->config.recompute_scale == rows[static_cast<std::size_t>(row)].config.recompute_scale);
    CHECK(applied->config.calibration == qs::Calibration::Percentile);
}

TEST_CASE("calibrators: an all-positive tensor shows the clamped zero point and what recompute s saves") {
    qs::Tensor t;
    t.shape = {3, 3};
    t.values = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    Shared s = MakeShared(std::move(t), qs::QuantConfig{});
    Window w(1300, 420);
    qs::gui::CalibrationPanelState st;
    qs::gui::Intents out;
    auto draw = [&] { qs::gui::DrawCalibrationPanel(st, s.view(), s.data, out); };
    w.frame(draw);
    qs::gui::FinishCalibration(st, s.view(), s.data);
    w.frame(draw);
    w.frame(draw);
    REQUIRE(st.shown.rows.size() == 8);
    const qs::CalibrationRow& lessons = st.shown.rows[0];
    const qs::CalibrationRow& fixed = st.shown.rows[4];
    REQUIRE(fixed.config.recompute_scale);
    CHECK(lessons.params.zero_point[0] == -128);
    CHECK(qs::gui::ZeroPointClamped(lessons, &fixed));
    CHECK_FALSE(qs::gui::ZeroPointClamped(fixed, &lessons));
    CHECK(lessons.metrics.clipped > 0);
    CHECK(fixed.metrics.clipped == 0);
    w.save("calibrators_positive");
}

TEST_CASE("compare: B is the core's quantization and both heatmaps share one color scale") {
    for (const char* preset : {"lesson", "outliers-4x128x256"}) {
        CAPTURE(preset);
        Shared s = FromPreset(preset);
        Window w(1400, 400);
        qs::gui::ComparePanelState st;
        auto draw = [&] { qs::gui::DrawComparePanel(st, s.view(), s.data); };
        w.frame(draw);
        qs::gui::FinishCompare(st);
        for (int i = 0; i < 3; ++i) w.frame(draw);
        REQUIRE(st.has_shown);
        CHECK(st.b.dtype.bits == 4);  // B starts as A in int4
        const qs::QuantResult b = qs::quantize(*s.tensor, st.b);
        CHECK(st.shown.overview.metrics.mse == b.metrics.mse);
        CHECK(st.shown.overview.metrics.levels_used == b.metrics.levels_used);
        CHECK(st.shared_max == std::max(s.result.metrics.max_abs_error, b.metrics.max_abs_error));
        CHECK(st.shared_max == b.metrics.max_abs_error);  // int4 is the worse of the two
        // Same image size for A and B, side by side.
        CHECK(st.image_max[0].x - st.image_min[0].x == st.image_max[1].x - st.image_min[1].x);
        CHECK(st.image_max[0].x < st.image_min[1].x);
        // B per channel: recomputed.
        st.b.granularity = qs::Granularity::Channel;
        w.frame(draw);
        qs::gui::FinishCompare(st);
        w.frame(draw);
        CHECK(st.shown.params.scale.size() == static_cast<std::size_t>(s.tensor->shape[0]));
        w.save(std::string("compare_") + preset);
        w.r.run([&] {
            for (auto& m : st.maps) m.texture.reset();
        });
    }
}

TEST_CASE("FitText shortens a label at a word boundary and never beyond its width") {
    Window w(400, 200);
    w.frame([] {
        const std::string title = "A: int8 asymmetric, per tensor, minmax";
        const float full = ImGui::CalcTextSize(title.c_str()).x;
        CHECK(qs::gui::FitText(title, full + 1.0f) == title);  // fits: unchanged
        const std::string cut = qs::gui::FitText(title, full * 0.7f);
        CHECK(ImGui::CalcTextSize(cut.c_str()).x <= full * 0.7f);
        REQUIRE(cut.size() > 3);
        CHECK(cut.substr(cut.size() - 3) == "...");
        // Cut after a whole word: what is left is the title's start up to a space.
        const std::string kept = cut.substr(0, cut.size() - 3);
        CHECK(title.compare(0, kept.size(), kept) == 0);
        CHECK(title[kept.size()] == ' ');
        // One long word is cut inside it, still within the width, and a UTF-8 sequence is never split.
        const std::string word = "\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1\xce\xb1";  // ten alphas
        const std::string w2 = qs::gui::FitText(word, ImGui::CalcTextSize(word.c_str()).x * 0.5f);
        CHECK(ImGui::CalcTextSize(w2.c_str()).x <= ImGui::CalcTextSize(word.c_str()).x * 0.5f + 0.5f);
        CHECK((w2.size() - 3) % 2 == 0);
    });
}

TEST_CASE("presenter view: the lesson's values are printed at a projector's text size and the figure settings come back") {
    // 1280 x 720 at font scale 2 (36 px), the case where the normal layout prints no values at all.
    Window w(1280, 720, 36.0f);
    const Shared lesson = FromPreset("lesson");
    qs::gui::FigurePanelState figure;
    figure.settings.layout = qs::gui::FigureLayoutMode::Row;
    figure.settings.show_toolbar = true;
    qs::gui::PresenterViewState presenter;
    const auto draw = [&] {
        figure.annotation_font = nullptr;
        qs::gui::DrawPresenterView(presenter, figure, lesson.view(), ImGui::GetContentRegionAvail());
    };
    for (int i = 0; i < 3; ++i) w.frame(draw);
    CHECK(figure.annotation_size >= 0.7f * 36.0f);  // printed, and at least 0.7 of the UI text
    // The metrics strip's text is made once for the quantization, not for every layout tried in every frame.
    CHECK(presenter.builds == 1);
    w.frame([&] { CHECK(presenter.summary == qs::gui::MetricsSummary(lesson.view(), true)); });
    w.frame([&] {  // (measuring needs the frame's fonts)
        CHECK(qs::gui::PresenterUsesGrid(lesson.view(), ImVec2(1280, 720)));  // 2x2 gives 3x3 cells more room
        CHECK_FALSE(qs::gui::PresenterUsesGrid(lesson.view(), ImVec2(4000, 500)));  // a very wide screen: one row
    });
    // Presenter mode overrides the layout only while it draws.
    CHECK(figure.settings.layout == qs::gui::FigureLayoutMode::Row);
    CHECK(figure.settings.show_toolbar);
    w.save("presenter");
    w.r.run([&] {  // the textures belong to this context: free them in it
        for (qs::gui::HeatmapState& m : figure.maps) m.texture.reset();
    });
}

TEST_CASE("metrics panel: a table where its columns fit and one metric under another where they would cut cells") {
    Shared lesson = FromPreset("lesson");
    qs::Metrics computed = lesson.overview.metrics;  // manual mode's second column
    qs::QuantConfig manual = lesson.config;
    manual.mode = qs::Mode::Manual;
    manual.manual_scale = 3.5;
    manual.manual_zero_point = -70;
    lesson.requantize(manual);
    qs::gui::QuantView view = lesson.view();
    view.computed_metrics = &computed;
    for (const auto& [width, font, table] : {std::tuple<int, float, bool>{1000, 16.0f, true}, {300, 36.0f, false}}) {
        CAPTURE(width);
        Window w(width, 1400, font);
        bool drew_table = false;
        int clipped = -1;
        for (int i = 0; i < 3; ++i) w.frame([&] { qs::gui::DrawMetricsPanel(view); });
        w.r.run([&] {
            ImGuiContext& g = *ImGui::GetCurrentContext();
            for (int t = 0; t < g.Tables.GetMapSize(); ++t)
                if (const ImGuiTable* tb = g.Tables.TryGetMapData(t)) drew_table |= tb->LastFrameActive == g.FrameCount;
            clipped = qs::gui::CountClippedTableColumns(nullptr);
        });
        CHECK(drew_table == table);
        CHECK(clipped == 0);
    }
}
