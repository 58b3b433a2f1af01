// The analysis tools on a tensor too large for a float32 copy (issue 10): a bf16 safetensors file above
// kInMemoryElements is only mapped, and the histograms, the calibrator table and the comparison still work on
// it, in its stored type, with the numbers of the float32 path; under an address-space cap far below a float32
// copy of the tensor, the window computes and shows each of them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "../test_helpers.hpp"
#include "gui_test_support.hpp"

#include "gui/document/recompute.hpp"
#include "gui/document/tensor_data.hpp"
#include "gui/panels/calibration_panel.hpp"
#include "gui/panels/compare_panel.hpp"
#include "gui/panels/histogram_panel.hpp"
#include "gui/panels/landscape_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/tensor_io.hpp"

namespace {

using namespace qs::gui_test;

constexpr std::int64_t kRows = 4100, kCols = 4100;  // 16.8 M elements: just above kInMemoryElements

// A bf16 tensor of kRows x kCols: normal values with a few large outliers (33.6 MB on disk).
std::string WriteBf16(const TempDir& dir) {
    const std::int64_t n = kRows * kCols;
    std::string data(static_cast<std::size_t>(n) * 2, '\0');
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.01f, 0.02f);
    for (std::int64_t i = 0; i < n; ++i) {
        float v = normal(rng);
        if (i % 1000003 == 17) v *= 40.0f;
        std::uint32_t bits;
        std::memcpy(&bits, &v, 4);
        const auto b = static_cast<std::uint16_t>(bits >> 16);
        data[static_cast<std::size_t>(2 * i)] = static_cast<char>(b & 0xff);
        data[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>(b >> 8);
    }
    const std::string header = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(kRows) + "," +
                               std::to_string(kCols) + "],\"data_offsets\":[0," + std::to_string(data.size()) + "]}}";
    const std::string path = dir / "big.safetensors";
    std::ofstream(path, std::ios::binary) << qs::test::safetensors_file(header, data);
    return path;
}



}  // namespace

TEST_CASE("large tensor: the histograms the calibrators compare and the landscape work on a mapped bf16 tensor") {
    TempDir dir;
    const MappedQuant m = OpenMapped(WriteBf16(dir));
    REQUIRE(m.data->floats == nullptr);  // only mapped: no float32 copy for the tools to use
    const std::int64_t n = m.data->numel();
    const qs::Tensor decoded = qs::materialize(m.data->view);  // the float32 path's reference (the test's own copy)
    PanelWindow w(1400, 500);  // the app's look at 16 px, as a panel in its column

    qs::gui::HistogramPanelState hist;
    auto draw_hist = [&] { qs::gui::DrawHistogramPanel(hist, m.view(), m.data); };
    w.frame(draw_hist);
    qs::gui::FinishHistogram(hist);
    w.frame(draw_hist);
    CHECK_FALSE(qs::gui::HistogramBusy(hist));
    // Counted in the stored type, exactly: the fine histogram is the float32 one.
    const qs::Histogram want = qs::histogram(decoded.values.data(), n, 8192, m.data->values.lo, m.data->values.hi);
    CHECK(hist.fine.counts == want.counts);
    REQUIRE_FALSE(hist.bars.empty());
    CHECK(std::accumulate(hist.bars.begin(), hist.bars.end(), 0.0) == doctest::Approx(static_cast<double>(n)));

    qs::gui::CalibrationPanelState cal;
    qs::gui::Intents asked;
    auto draw_cal = [&] { qs::gui::DrawCalibrationPanel(cal, m.view(), m.data, asked); };
    w.frame(draw_cal);
    qs::gui::FinishCalibration(cal, m.view(), m.data);
    w.frame(draw_cal);
    REQUIRE(cal.has_shown);
    CHECK(cal.task.error().empty());
    const std::vector<qs::CalibrationRow> rows = qs::compare_calibrators(decoded, m.config);
    REQUIRE(cal.shown.rows.size() == rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CAPTURE(i);
        CHECK(cal.shown.rows[i].params.scale == rows[i].params.scale);
        CHECK(cal.shown.rows[i].params.zero_point == rows[i].params.zero_point);
        // From the document's bit pattern counts: the same terms added in pattern order (test_bit_patterns*.cpp).
        CHECK(cal.shown.rows[i].metrics.mse == doctest::Approx(rows[i].metrics.mse).epsilon(1e-11));
    }
    CHECK(cal.best_row >= 0);

    qs::gui::ComparePanelState cmp;
    auto draw_cmp = [&] { qs::gui::DrawComparePanel(cmp, m.view(), m.data); };
    w.frame(draw_cmp);
    qs::gui::FinishCompare(cmp);
    w.frame(draw_cmp);
    REQUIRE(cmp.has_shown);
    CHECK(cmp.shown.error.empty());
    CHECK(cmp.shown.overview.metrics.count == n);
    const qs::Quantization b = qs::quantize_checked(m.data->view, cmp.b);
    CHECK(cmp.shown.overview.metrics.mse == doctest::Approx(b.metrics.mse).epsilon(1e-12));
    CHECK(cmp.shown.overview.metrics.max_abs_error == b.metrics.max_abs_error);
    CHECK(cmp.shown.overview.metrics.levels_used == b.metrics.levels_used);
    CHECK(cmp.shared_max == std::max(m.overview.metrics.max_abs_error, b.metrics.max_abs_error));

    // The landscape: a bf16 file's exact 64 x 64 map comes at once, from the bit patterns' counts the document
    // keeps (no sampled passes first), and equals the core's map of the view.
    qs::gui::LandscapePanelState land;
    auto draw_land = [&] { qs::gui::DrawLandscapePanel(land, m.view(), m.data, asked); };
    for (int i = 0; i < 600 && !(land.has_shown && land.shown.scales.size() == 64); ++i) {
        w.frame(draw_land);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE(land.has_shown);
    CHECK(land.shown.scales.size() == 64);
    CHECK(land.shown.stride == 1);
    CHECK(land.shown.exact);
    CHECK(land.task.error().empty());
    {
        qs::LandscapeRequest rq;
        rq.config = m.config;
        rq.has_current = true;
        rq.current = {m.params.scale[0], m.params.zero_point[0]};
        qs::LandscapeResult core;
        qs::LandscapeCallbacks cb;
        cb.publish = [&core](qs::LandscapeResult r) { core = std::move(r); };
        REQUIRE(qs::compute_landscape(m.data->view, rq, cb));  // counting the patterns itself
        CHECK(land.shown.scales == core.scales);
        CHECK(land.shown.mse == core.mse);
        // A few cells against the element loop over the decoded values (test_bit_patterns.cpp: all of them).
        for (std::size_t i = 0; i < core.mse.size(); i += 517) {
            const double s = core.scales[i % core.scales.size()];
            const std::int32_t z = core.zero_points[i / core.scales.size()];
            CHECK(core.mse[i] == doctest::Approx(qs::values_mse(decoded.values.data(), n, s, z, m.config)).epsilon(1e-11));
        }
    }
    qs::gui::SuspendLandscape(land);
    CHECK_FALSE(qs::gui::LandscapeBusy(land));
}

#if !defined(__SANITIZE_ADDRESS__)
TEST_CASE("large tensor: the histograms the calibrators and compare of a 64M bf16 tensor run under an address-space cap") {
    if (!have_xvfb()) return;
    TempDir dir;
    const std::string path = dir / "large.safetensors";
    const Run made = run(dir, "'" QS_BINARY "' bench --make-large '" + path + "' --large-shape 16384x4096");
    REQUIRE_MESSAGE(made.exit_code == 0, made.err);
    // 64 M elements, 128 MB in bf16; a float32 copy would be 256 MB more. The window's own address space with
    // a 3x3 tensor is about 380 MB here (Mesa's llvmpipe, fonts, thread stacks), the mapping adds 128 MB. The
    // program keeps one malloc arena (main.cpp); the threads, each with its stack, are pinned to 2 of the
    // passes' and 2 of llvmpipe's, as the machine's core count would otherwise set the need.
    const long long bytes_kb = 128 * 1024, cap_kb = bytes_kb * 3 / 2 + 420 * 1024;
    CHECK(380 * 1024 + bytes_kb + 2 * bytes_kb > cap_kb);  // the cap refuses a float32 copy: it is doing the work
    for (const char* tab : {"histograms", "calibrators", "compare"}) {
        CAPTURE(tab);
        const Run r = run(dir, std::string(kXvfb) + "sh -c \"ulimit -v " + std::to_string(cap_kb) +
                                   " && exec env OMP_NUM_THREADS=2 LP_NUM_THREADS=2 timeout -k 5 120 '" QS_BINARY "' gui '" + path +
                                   "' --no-settings --size 1280x720 --tab " + tab + " --screenshot '" + (dir / "shot.png") +
                                   "' --layout-report\"");
        REQUIRE_MESSAGE(r.exit_code == 0, r.err);
        const qs::JsonValue report = qs::parse_json(r.out, "the layout report");
        REQUIRE(report.find("error"));
        CHECK(report.find("error")->text == "");  // no std::bad_alloc banner
        if (std::string(tab) == "histograms") CHECK(report.find("histogram_bars")->number > 10);
        if (std::string(tab) == "calibrators") CHECK(report.find("calibrator_rows")->number == 8);
        if (std::string(tab) == "compare") CHECK(report.find("compare_ready")->boolean);
    }
}
#endif
