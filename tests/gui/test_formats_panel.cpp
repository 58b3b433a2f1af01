// The Formats tab (issue 12 item 4): the table of `quantscope formats` for the document's tensor, computed in
// the background once per tensor (not per setting), its chart's points and Pareto front, and a click on a
// point or a row that switches the window's settings to it as one undoable step; on a mapped tensor too;
// `gui --tab formats` under Xvfb with nothing cut at normal and large text.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gui_test_support.hpp"

#include "gui/app/analysis_tabs.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/main_window.hpp"
#include "gui/document/recompute.hpp"
#include "gui/panels/formats_panel.hpp"
#include "gui/panels/metrics_panel.hpp"
#include "gui/widgets/text.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"

namespace {

using namespace qs::gui_test;

SharedQuant RandomShared(std::uint64_t seed) {
    qs::RandomSpec spec;
    spec.shape = {8, 256};
    spec.outliers = 3;
    spec.seed = seed;
    return MakeSharedQuant(qs::generate_random(spec), qs::QuantConfig{});
}

// The panel in an offscreen window (gui_test_support's PanelWindow), on any tensor the view shows.
struct FormatsWindow {
    PanelWindow w{1500, 600};
    qs::gui::FormatsPanelState st;
    // One frame; returns what the panel asked for in it.
    std::optional<qs::gui::PickConfigIntent> draw(const qs::gui::QuantView& view,
                                                  const std::shared_ptr<const qs::gui::TensorData>& data,
                                                  ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX), bool down = false) {
        qs::gui::Intents out;
        w.frame([&] { qs::gui::DrawFormatsPanel(st, view, data, out); }, mouse, down);
        return Asked<qs::gui::PickConfigIntent>(out);
    }
    std::optional<qs::gui::PickConfigIntent> draw(const SharedQuant& s, ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX),
                                                  bool down = false) {
        return draw(s.view(), s.data, mouse, down);
    }
    // The whole table computed and shown.
    void finish(const SharedQuant& s) {
        draw(s);
        qs::gui::FinishFormats(st, s.view(), s.data);
        for (int i = 0; i < 3; ++i) draw(s);
    }
    // Press and release at `at`: the config asked for, if any.
    std::optional<qs::QuantConfig> click(const SharedQuant& s, ImVec2 at) {
        std::optional<qs::QuantConfig> asked;
        for (const bool down : {false, true, false}) {
            if (const auto c = draw(s, at, down)) asked = c->config;
        }
        return asked;
    }
};

bool Inside(ImVec2 p, ImVec2 a, ImVec2 b) { return p.x >= a.x && p.x <= b.x && p.y >= a.y && p.y <= b.y; }

// A row on the front that is not the current choice, preferring one far from the others.
std::size_t FrontRowOtherThan(const qs::gui::FormatsPanelState& st, int current) {
    for (auto it = st.front.rbegin(); it != st.front.rend(); ++it)
        if (static_cast<int>(*it) != current) return *it;
    FAIL("no front row other than the current one");
    return 0;
}

}  // namespace

TEST_CASE("formats tab: the table is quantscope formats' and the chart draws each row and the front") {
    FormatsWindow w;
    qs::gui::FormatsPanelState& st = w.st;
    SharedQuant s = RandomShared(1);
    w.finish(s);
    CHECK_FALSE(qs::gui::FormatsBusy(st));
    const std::vector<qs::FormatRow> rows = qs::format_table(s.data->view);
    REQUIRE(st.sorted.size() == rows.size());
    REQUIRE(rows.size() == 36);  // 25 formats and layouts before the eleven llama.cpp types
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CHECK(st.sorted[i].format == rows[i].format);
        CHECK(st.sorted[i].metrics.mse == rows[i].metrics.mse);
        CHECK(st.sorted[i].bits_per_weight == rows[i].bits_per_weight);
    }
    CHECK(st.front == qs::pareto_front(rows));
    REQUIRE(st.point.size() == rows.size());
    for (const ImVec2& p : st.point) CHECK(Inside(p, st.plot_min, st.plot_max));
    // Higher SQNR is higher on screen; more bits further right.
    const std::size_t a = st.front.front(), b = st.front.back();
    CHECK(st.point[b].y < st.point[a].y);
    CHECK(st.point[b].x > st.point[a].x);
    // The default settings (int8 asymmetric per tensor) are a row of the table: the current one.
    REQUIRE(st.current >= 0);
    CHECK(st.sorted[static_cast<std::size_t>(st.current)].format == "int8");
    CHECK(st.sorted[static_cast<std::size_t>(st.current)].granularity == "tensor");

    // A setting changes nothing in the table and starts nothing; the current row follows the settings.
    REQUIRE(static_cast<int>(a) != st.current);
    s.requantize(st.sorted[a].config);
    w.draw(s);
    CHECK_FALSE(qs::gui::FormatsBusy(st));
    CHECK(st.current == static_cast<int>(a));
    CHECK(st.sorted.size() == 36);
    // Settings that are no row (a percentile calibrator): no row is current, the ring stands alone.
    qs::QuantConfig percentile;
    percentile.calibration = qs::Calibration::Percentile;
    s.requantize(percentile);
    w.draw(s);
    CHECK(st.current == -1);
    CHECK_FALSE(qs::gui::FormatsBusy(st));
    // Another tensor starts the table again.
    const SharedQuant other = RandomShared(2);
    w.finish(other);
    CHECK(st.sorted.front().metrics.mse == qs::format_table(other.data->view).front().metrics.mse);
}

TEST_CASE("formats tab: a click on a point or on a row asks for that row's settings") {
    FormatsWindow w;
    qs::gui::FormatsPanelState& st = w.st;
    const SharedQuant s = RandomShared(3);
    w.finish(s);
    const std::size_t target = FrontRowOtherThan(st, st.current);
    // Hovering the point lights up its row; clicking it asks for its config.
    w.draw(s, st.point[target]);
    CHECK(st.hovered == static_cast<int>(target));
    const std::optional<qs::QuantConfig> by_point = w.click(s, st.point[target]);
    REQUIRE(by_point);
    CHECK(*by_point == st.sorted[target].config);
    // A row of the table (the first one shown: sorted by bits per weight).
    const std::size_t first = st.order.front();
    const std::optional<qs::QuantConfig> by_row = w.click(s, st.row_center[first]);
    REQUIRE(by_row);
    CHECK(*by_row == st.sorted[first].config);
    // Nothing is asked for by a click beside every point.
    CHECK_FALSE(w.click(s, ImVec2(st.plot_min.x + 2.0f, st.plot_min.y + 2.0f)));
}

TEST_CASE("formats tab: a click on a header sorts the table by that column and a second click reverses it") {
    FormatsWindow w;
    qs::gui::FormatsPanelState& st = w.st;
    const SharedQuant s = RandomShared(4);
    w.finish(s);
    const auto column = [&](auto key) {
        std::vector<double> v;
        for (std::size_t i : st.order) v.push_back(key(st.sorted[i]));
        return v;
    };
    const auto bits = [](const qs::FormatRow& r) { return r.bits_per_weight; };
    const auto sqnr = [](const qs::FormatRow& r) { return qs::comparable_sqnr_db(r); };
    const auto sorted = [](const std::vector<double>& v) { return std::is_sorted(v.begin(), v.end()); };
    CHECK(sorted(column(bits)));  // by bits per weight, as the command
    REQUIRE(st.header_center.size() == 7);
    const ImVec2 header = st.header_center[5];  // SQNR dB
    w.click(s, header);
    w.draw(s);
    const std::vector<double> up = column(sqnr);
    CHECK_FALSE(sorted(column(bits)));
    w.click(s, header);
    w.draw(s);
    const std::vector<double> down = column(sqnr);
    // One click sorts one way, the next the other way.
    const bool up_ascending = std::is_sorted(up.begin(), up.end());
    CHECK((up_ascending || std::is_sorted(up.rbegin(), up.rend())));
    CHECK(std::is_sorted(down.rbegin(), down.rend()) == up_ascending);
    CHECK(std::is_sorted(down.begin(), down.end()) != up_ascending);
}

TEST_CASE("formats tab in the window: a click on a point switches the type and undo brings the last one back") {
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1600, 900, [] {
        qs::gui::BuildFonts(18.0f);
        qs::gui::ApplyStyle(true, 1.0f);
    }, &error), error);
    auto owned = std::make_unique<qs::gui::AppState>();
    qs::gui::AppState& app = *owned;
    app.doc.force_sync = true;
    qs::RandomSpec spec;
    spec.shape = {64, 256};
    spec.outliers = 4;
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(qs::generate_random(spec)), "random"));
    app.doc.update();
    const qs::QuantConfig before = app.doc.config;
    qs::gui::Frame frame;
    frame.select_tab = qs::gui::AnalysisTabIndex("formats");
    const auto draw = [&](ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX), bool down = false) {
        r.frame([&] { qs::gui::DrawMainWindow(app, frame); }, mouse, down);
        qs::gui::ApplyIntents(app);
        app.doc.update();
    };
    for (int i = 0; i < 3; ++i) draw();
    CHECK(app.analysis_tab == qs::gui::AnalysisTabIndex("formats"));
    qs::gui::FinishFormats(app.formats, app.doc.view(), app.doc.shown_data);
    for (int i = 0; i < 3; ++i) draw();
    REQUIRE(app.formats.sorted.size() == 36);
    const std::size_t target = FrontRowOtherThan(app.formats, app.formats.current);
    const qs::QuantConfig wanted = app.formats.sorted[target].config;
    REQUIRE(wanted != before);
    const ImVec2 at = app.formats.point[target];
    REQUIRE(Inside(at, app.formats.plot_min, app.formats.plot_max));
    draw(at, false);
    draw(at, true);
    draw(at, false);
    CHECK(app.doc.config == wanted);
    CHECK(app.doc.shown_config == wanted);
    draw();
    CHECK(app.formats.current == static_cast<int>(target));  // the chart's ring and the row follow
    CHECK_FALSE(qs::gui::FormatsBusy(app.formats));          // a new setting, the same table
    app.doc.undo();
    app.doc.update();
    CHECK(app.doc.config == before);
    r.run([&] { owned.reset(); });  // the panels' textures belong to this context
}

TEST_CASE("formats tab: a mapped tensor's table is computed from its file") {
    TempDir dir;
    // Just above the in-memory limit (2^24 elements), with a last axis every block and group divides.
    const std::string path = dir / "large.safetensors";
    const Run made = run(dir, "'" QS_BINARY "' bench --make-large '" + path + "' --large-shape 4097x4096");
    REQUIRE_MESSAGE(made.exit_code == 0, made.err);
    const MappedQuant m = OpenMapped(path);
    const std::shared_ptr<const qs::gui::TensorData>& data = m.data;
    REQUIRE(data->floats == nullptr);
    const qs::gui::QuantView view = m.view();
    FormatsWindow w;
    qs::gui::FormatsPanelState& st = w.st;
    // The first frame hands the table to its task and draws what is there: nothing yet, or (on a fast machine) some
    // rows, each already the final one (not a timing assertion: any count from 0 to 36 passes).
    w.draw(view, data);
    CHECK(st.started);
    const std::vector<qs::FormatRow> first = st.shown.rows;
    qs::gui::FinishFormats(st, view, data);
    w.draw(view, data);
    CHECK_FALSE(qs::gui::FormatsBusy(st));
    REQUIRE(st.sorted.size() == 36);
    REQUIRE(first.size() <= st.shown.rows.size());
    for (std::size_t i = 0; i < first.size(); ++i) CHECK(first[i].metrics.mse == st.shown.rows[i].metrics.mse);
    CHECK(st.shown.skipped.empty());
    // The rows are the command's: one of them recomputed straight from the file.
    const qs::FormatRow again = qs::format_table_row(data->view, st.sorted.back().config);
    CHECK(again.metrics.mse == st.sorted.back().metrics.mse);
    CHECK(again.bytes == st.sorted.back().bytes);
}

TEST_CASE("gui: --tab formats shows the table and chart with nothing cut at normal and large text") {
    REQUIRE(have_xvfb());
    TempDir dir;
    // At large text the figure pushes the analysis area below the fold: the third run shows the tab alone.
    for (const char* size : {"--size 1600x900", "--size 1280x720 --font-scale 2", "--size 1280x720 --font-scale 2 --panels histogram"}) {
        CAPTURE(size);
        const std::string png = dir / "formats.png";
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --random normal --shape 64x256 --tab formats " +
                                   size + " --screenshot '" + png + "' --layout-report");
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(file_exists(png));
        CHECK(r.out.find("\"overflowing_windows\": 0") != std::string::npos);
        CHECK(r.out.find("\"clipped_table_columns\": 0") != std::string::npos);
    }
    const Run bad = run(dir, "'" QS_BINARY "' gui --tab format --screenshot '" + (dir / "x.png") + "'");
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("formats") != std::string::npos);
}

// An SQNR of no number had three wordings ("exact"/"—" in the table, "exact"/"none" on the chart, "no error"/"no
// signal" in tooltips): one now (SqnrWord), in the table, the tooltips, the chart's bands and the metrics.
TEST_CASE("formats tab: an infinite SQNR reads the same in the table tooltip and metrics line") {
    CHECK(qs::gui::SqnrWord(HUGE_VAL) == "exact");
    CHECK(qs::gui::SqnrWord(-HUGE_VAL) == "no signal");
    CHECK(qs::gui::SqnrWord(41.25) == "");
    CHECK(qs::gui::FormatSqnr(41.25, true) == "41.25 dB");
    qs::Tensor t;
    t.shape = {2, 4};
    t.values = {1e-44f, 2e-44f, 0, 3e-44f, 0, 0, 1e-44f, 0};  // fp16 and bf16 hold these exactly (scaled)
    FormatsWindow w;
    SharedQuant s = MakeSharedQuant(t, qs::QuantConfig{});
    w.finish(s);
    const auto exact = std::find_if(w.st.sorted.begin(), w.st.sorted.end(), [](const qs::FormatRow& r) { return r.metrics.mse == 0.0; });
    REQUIRE(exact != w.st.sorted.end());
    const std::string tip = qs::gui::FormatRowTooltip(w.st, static_cast<std::size_t>(exact - w.st.sorted.begin()));
    INFO(tip);
    CHECK(tip.find("SQNR exact") != std::string::npos);
    s.requantize(exact->config);
    const std::string line = qs::gui::MetricsSummary(s.view());
    INFO(line);
    CHECK(line.find("SQNR exact") != std::string::npos);
}
