// The window end to end: the built binary runs under xvfb-run (a virtual X server with Mesa llvmpipe) with
// --screenshot or --bench-frames, and without any display (the headless fallback). Bad options exit 2
// before any window opens. No doctest main here: test_figure.cpp defines it for quantscope_gui_tests.
// These tests fail (they do not skip) when xvfb-run is missing: the setup script installs it.
#include <doctest/doctest.h>

#include "gui_test_support.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <stb_image.h>

#include "gui/panels/metrics_panel.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/random.hpp"

namespace {

using namespace qs::gui_test;

struct Image {
    int w = 0, h = 0;
    std::vector<std::uint8_t> rgb;
    const std::uint8_t* at(int x, int y) const { return &rgb[(static_cast<std::size_t>(y) * w + x) * 3]; }
};

Image load_png(const std::string& path) {
    Image img;
    int channels = 0;
    unsigned char* data = stbi_load(path.c_str(), &img.w, &img.h, &channels, 3);
    REQUIRE_MESSAGE(data != nullptr, "cannot decode " << path);
    img.rgb.assign(data, data + static_cast<std::size_t>(img.w) * img.h * 3);
    stbi_image_free(data);
    return img;
}

// Pixels within `tol` per channel of (r, g, b) inside the rectangle [x0, x1) x [y0, y1).
long count_near(const Image& img, int r, int g, int b, int tol, int x0, int y0, int x1, int y1) {
    long n = 0;
    for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x) {
            const std::uint8_t* p = img.at(x, y);
            if (std::abs(p[0] - r) <= tol && std::abs(p[1] - g) <= tol && std::abs(p[2] - b) <= tol) ++n;
        }
    return n;
}

}  // namespace

TEST_CASE("gui: xvfb-run is installed (the GUI tests need it)") {
    REQUIRE_MESSAGE(have_xvfb(), "xvfb-run not found: install xvfb and xauth");
}

TEST_CASE("gui: --screenshot of the lesson writes a PNG of the requested size showing the figure") {
    REQUIRE(have_xvfb());
    TempDir dir;
    const std::string png = dir.path + "/shot.png";
    const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --size 1280x720 --screenshot '" + png + "'");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(file_exists(png));
    const Image img = load_png(png);
    CHECK(img.w == 1280);
    CHECK(img.h == 720);

    // Not blank: many distinct colors.
    std::vector<bool> seen(1 << 15, false);
    long distinct = 0;
    for (int y = 0; y < img.h; y += 2)
        for (int x = 0; x < img.w; x += 2) {
            const std::uint8_t* p = img.at(x, y);
            const int key = ((p[0] >> 3) << 10) | ((p[1] >> 3) << 5) | (p[2] >> 3);
            if (!seen[key]) {
                seen[key] = true;
                ++distinct;
            }
        }
    CHECK(distinct > 50);

    // The lesson's largest value (728.6) is the deep red end of coolwarm, (180, 4, 38), in the figure area
    // right of the controls column: a whole heatmap cell of it, so many pixels.
    const long red = count_near(img, 180, 4, 38, 24, img.w / 4, 0, img.w, img.h);
    CHECK(red > 400);
    // The quantized panel's -128 and the original's -184 are blue: some clearly blue pixels exist.
    long blue = 0;
    for (int y = 0; y < img.h; ++y)
        for (int x = img.w / 4; x < img.w; ++x) {
            const std::uint8_t* p = img.at(x, y);
            if (p[2] > p[0] + 40 && p[2] > p[1] + 20) ++blue;
        }
    CHECK(blue > 400);
}

TEST_CASE("gui: --screenshot of a rank-3 preset and of a big random tensor") {
    REQUIRE(have_xvfb());
    TempDir dir;
    const std::string a = dir.path + "/outliers.png", b = dir.path + "/random.png";
    Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --preset outliers-4x128x256 --screenshot '" + a +
                         "' --frames 3");
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(file_exists(a));
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --random normal --shape 512x512 --seed 3 --dtype uint4 "
                                      "--screenshot '" + b + "'");
    CHECK(r.exit_code == 0);
    REQUIRE(file_exists(b));
    const Image img = load_png(b);
    CHECK(img.w == 1600);  // the default window size
    CHECK(img.h == 900);
}

TEST_CASE("gui: manual mode on a tensor of +-3e36 or of denormals opens (every slider limit is admissible)") {
    // ImGui asserts (SIGABRT) on a float slider limit beyond FLT_MAX/2: the scale slider's two decades
    // around a computed scale of ~1e36 went there.
    REQUIRE(have_xvfb());
    TempDir dir;
    {
        std::ofstream(dir / "wide.csv") << "3e36,-3e36\n1,-2.5e36\n";
        std::ofstream(dir / "tiny.csv") << "1e-40,-2e-41\n0,3e-45\n";
    }
    const std::string manual = " --dtype int2 --scale 1 --zero-point 0 --screenshot '";
    for (const char* tab : {"histograms", "compare"}) {
        CAPTURE(tab);
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + dir / "wide.csv" + "'" + manual +
                                   dir / "wide.png' --tab " + tab + " --save-session '" + dir / "wide.json" + "'");
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(file_exists(dir / "wide.png"));
    }
    Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + dir / "wide.json" + "' --screenshot '" +
                         dir / "session.png'");
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(file_exists(dir / "session.png"));
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + dir / "tiny.csv" + "'" + manual + dir / "tiny.png'");
    CHECK(r.exit_code == 0);
    CHECK(file_exists(dir / "tiny.png"));
}

TEST_CASE("gui: --tab opens an analysis tab and the screenshot waits for its background work") {
    REQUIRE(have_xvfb());
    TempDir dir;
    for (const char* tab : {"landscape", "calibrators", "compare"}) {
        CAPTURE(tab);
        const std::string png = dir.path + "/" + tab + ".png";
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --preset lesson --tab " + tab +
                                   " --screenshot '" + png + "' --frames 3");
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(file_exists(png));
    }
}

TEST_CASE("gui: --bench-frames prints one JSON object with the timing keys") {
    REQUIRE(have_xvfb());
    TempDir dir;
    const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --random uniform --shape 256x256 --bench-frames 5");
    INFO("stdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const qs::JsonValue json = qs::parse_json(r.out, "bench output");
    REQUIRE(json.is_object());
    for (const char* key : {"frames", "frame_ms_median", "recompute_ms_median", "upload_ms_median", "settle_ms", "elements"}) {
        const qs::JsonValue* v = json.find(key);
        REQUIRE_MESSAGE(v != nullptr, "missing key " << key);
        CHECK(v->is_number());
        CHECK(v->number >= 0.0);
    }
    CHECK(json.find("frames")->number == 5);
    CHECK(json.find("elements")->number == 256 * 256);
}

TEST_CASE("gui: bad options exit 2 with one error line and open no window") {
    TempDir dir;
    const char* bad[] = {
        "gui --no-such-option",
        "gui --size 12",
        "gui --size 800x",
        "gui --frames 4",                       // --frames needs --screenshot
        "gui --bench-frames 0",
        "gui --dtype int99",
        "gui --preset no-such-preset",
        "gui --shape 4x4",                      // --shape needs --random
        "gui --screenshot",                     // missing value
        "gui /no/such/file.npy",
        "gui --tab nowhere",
    };
    for (const char* args : bad) {
        CAPTURE(args);
        // DISPLAY unset: if parsing wrongly passed, the headless path would exit 0, not hang on a window.
        const Run r = run(dir, "env -u DISPLAY -u WAYLAND_DISPLAY '" QS_BINARY "' " + std::string(args));
        CHECK(r.exit_code == 2);
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(r.out.empty());
    }
}

TEST_CASE("gui: a screenshot and a saved figure that are one file are refused before the window opens") {
    REQUIRE(have_xvfb());
    TempDir dir;
    REQUIRE(::symlink(dir.path.c_str(), (dir / "alias").c_str()) == 0);
    for (const std::string& other : {dir / "a.png", dir / "alias/a.png"}) {
        CAPTURE(other);
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --preset lesson --screenshot '" +
                                   dir / "a.png" + "' --save-figure '" + other + "'");
        CHECK(r.exit_code == 2);
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(r.err.find("are the same file") != std::string::npos);
        CHECK_FALSE(path_exists(dir / "a.png"));
    }
}

TEST_CASE("gui: with no display the figure is rendered headless to a PNG") {
    TempDir dir;
    Run r = run(dir, "env -u DISPLAY -u WAYLAND_DISPLAY '" QS_BINARY "' gui");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string cached = dir.path + "/cache/quantscope/figure.png";
    CHECK(r.out.find("quantscope: no display; rendered the figure to " + cached) != std::string::npos);
    CHECK(file_exists(cached));

    const std::string chosen = dir.path + "/chosen.png";
    r = run(dir, "env -u DISPLAY -u WAYLAND_DISPLAY '" QS_BINARY "' gui --preset lesson-manual --screenshot '" + chosen +
                     "'");
    CHECK(r.exit_code == 0);
    CHECK(file_exists(chosen));
}

// ------------------------------------------------------------------------------------------------------
// The app state without a window: recompute on change only, validation, undo, jobs, the worker recompute.

#include <chrono>
#include <memory>
#include <thread>

#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/platform/settings.hpp"
#include "gui/panels/tensor_panel.hpp"
#include "quantscope/presets.hpp"

namespace {

using qs::gui::AppState;

void load_lesson(AppState& app) {
    const qs::Preset p = qs::make_preset("lesson");
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(p.tensor), p.name, &p.config));
    app.doc.update();
}

// Runs update() until `done` or ~20 s.
template <class Done>
bool pump(AppState& app, Done done) {
    for (int i = 0; i < 4000 && !done(); ++i) {
        app.doc.update();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
}

}  // namespace

TEST_CASE("app state: the lesson is recomputed only when something changes") {
    AppState app;
    load_lesson(app);
    const qs::gui::QuantView v = app.doc.view();
    REQUIRE(v.valid());
    CHECK(v.params->scale.at(0) == doctest::Approx(3.578823433670343));
    CHECK(v.params->zero_point.at(0) == -77);
    const std::uint64_t g = app.doc.generation;
    CHECK(v.tensor_generation == 1);
    for (int i = 0; i < 5; ++i) app.doc.update();
    CHECK(app.doc.generation == g);  // no change, no recompute

    qs::QuantConfig bits4 = app.doc.config;
    bits4.dtype = qs::IntType{true, 4};
    REQUIRE(app.doc.apply_config(bits4, false));
    app.doc.update();
    CHECK(app.doc.generation == g + 1);
    CHECK(app.doc.view().tensor_generation == 1);  // same tensor: caches of its values stay
    app.doc.undo();
    app.doc.update();
    CHECK(app.doc.config.dtype.bits == 8);
    const std::uint64_t g2 = app.doc.generation;

    qs::QuantConfig c = app.doc.config;
    CHECK(app.doc.apply_config(c, false));  // the same config: no step, no recompute
    app.doc.update();
    CHECK(app.doc.generation == g2);
    CHECK_FALSE(app.doc.history.can_undo());
}

// The codes on show, at full resolution (the figure's window of the whole 2-D tensor).
std::vector<std::int32_t> shown_codes(const AppState& app) {
    const qs::gui::TensorData& d = *app.doc.shown_data;
    qs::WindowResults w;
    qs::quantize_window(d.view, app.doc.params, app.doc.shown_config, 0, qs::CellWindow{0, 0, d.rows(), d.cols()}, w);
    return w.codes;
}

TEST_CASE("app state: manual s = 3.5 and z = -70 give the lesson's codes and the computed comparison") {
    AppState app;
    load_lesson(app);
    qs::QuantConfig c = app.doc.config;
    c.mode = qs::Mode::Manual;
    c.manual_scale = 3.5;
    c.manual_zero_point = -70;
    REQUIRE(app.doc.apply_config(c, false));
    app.doc.update();
    const std::vector<std::int32_t> want = {-15, -74, 127, -44, 14, -123, -70, 126, 0};
    CHECK(shown_codes(app) == want);
    CHECK(app.doc.overview.metrics.mse == doctest::Approx(170.8753).epsilon(1e-6));
    // The pass's own figures agree: every code counted, the 3 x 3 overview at full resolution.
    CHECK(app.doc.overview.code_counts.at(static_cast<std::size_t>(127 + 128)) == 1);
    CHECK(app.doc.overview.codes_mean.at(2) == 127.0f);
    const qs::gui::QuantView v = app.doc.view();
    REQUIRE(v.computed_metrics != nullptr);
    CHECK(v.computed_metrics->mse == doctest::Approx(1.5730).epsilon(1e-4));
    CHECK(app.doc.computed_params.zero_point.at(0) == -77);

    // The naive cast: 728.6 rounds to 138, which wraps to -118.
    c.overflow = qs::Overflow::Wrap;
    REQUIRE(app.doc.apply_config(c, false));
    app.doc.update();
    CHECK(shown_codes(app)[2] == -118);
}

// quantize refuses an (s, z) whose r' = s (q - z) overflows float32 with a line naming the element; the
// window showed inf metrics with no word of why.
TEST_CASE("app state: an r' that overflows float32 is reported with quantize's line") {
    AppState app;
    const auto t = std::make_shared<qs::Tensor>();
    t->shape = {1, 3};
    t->values = {1.0f, -3.38e38f, 3.38e38f};
    qs::QuantConfig c;
    c.mode = qs::Mode::Manual;
    c.manual_scale = 2e38;
    c.manual_zero_point = 127;
    REQUIRE(app.doc.apply_tensor(t, "near float32's limits", &c));
    REQUIRE(pump(app, [&] { return app.doc.view().valid() && !app.doc.busy(); }));
    std::string want;
    try {
        (void)qs::quantize_checked(qs::view_of(*t), c);
    } catch (const std::exception& e) {
        want = e.what();
    }
    REQUIRE(want.find("float32 overflow at index [0, 1]") != std::string::npos);
    CHECK(app.doc.error == want);
    CHECK_FALSE(std::isfinite(app.doc.overview.metrics.max_abs_error));  // the numbers stay on show

    c.manual_scale = 1e38;  // no overflow: the line goes
    REQUIRE(app.doc.apply_config(c, false));
    REQUIRE(pump(app, [&] { return app.doc.shown_config.manual_scale == 1e38 && !app.doc.busy(); }));
    INFO(app.doc.error);
    CHECK(app.doc.error.empty());
    CHECK(std::isfinite(app.doc.overview.metrics.max_abs_error));
}

// Manual mode's second column quantizes with the base mode's (s, z): on values near float32's limits that pair's
// r' can overflow while the user's does not, and the column showed inf with no word of why.
TEST_CASE("app state: a computed s and z whose r' overflows float32 is reported as the computed one") {
    AppState app;
    const auto t = std::make_shared<qs::Tensor>();
    t->shape = {2, 2};
    t->values = {-3.4e38f, 3.4e38f, 1.0f, 2.0f};
    qs::QuantConfig c;
    c.dtype = qs::IntType{true, 4};
    c.mode = qs::Mode::Manual;
    c.manual_scale = 1e37;
    c.manual_zero_point = 0;
    REQUIRE(app.doc.apply_tensor(t, "near float32's limits", &c));
    REQUIRE(pump(app, [&] { return app.doc.view().computed_metrics != nullptr && !app.doc.busy(); }));
    CHECK(std::isfinite(app.doc.overview.metrics.max_abs_error));  // the user's pair is fine
    CHECK_FALSE(std::isfinite(app.doc.computed_metrics.mse));      // the column's inf
    qs::QuantConfig asym = c;
    asym.mode = qs::Mode::Asymmetric;
    std::string want;  // what the command line says for the same tensor and mode
    try {
        (void)qs::quantize_checked(qs::view_of(*t), asym);
    } catch (const std::exception& e) {
        want = e.what();
    }
    REQUIRE(want.find("float32 overflow at index") != std::string::npos);
    CHECK(app.doc.error == "the computed s, z (asymmetric): " + want);

    c.dtype = qs::IntType{true, 8};  // int8's computed pair does not overflow: the line goes
    REQUIRE(app.doc.apply_config(c, false));
    REQUIRE(pump(app, [&] { return app.doc.shown_config.dtype.bits == 8 && !app.doc.busy(); }));
    INFO(app.doc.error);
    CHECK(std::isfinite(app.doc.computed_metrics.mse));
    CHECK(app.doc.error.empty());
}

TEST_CASE("app state: an invalid combination is reported and not applied") {
    AppState app;
    load_lesson(app);
    qs::QuantConfig c = app.doc.config;
    c.granularity = qs::Granularity::Group;
    c.group_size = 2;  // does not divide 3
    std::string message;
    CHECK_FALSE(app.doc.apply_config(c, false, &message));
    CHECK_FALSE(message.empty());
    CHECK(app.doc.config.granularity == qs::Granularity::Tensor);
    CHECK_FALSE(app.doc.history.can_undo());

    c.group_size = 3;
    CHECK(app.doc.apply_config(c, false, &message));
    app.doc.update();
    CHECK(app.doc.params.scale.size() == 3);
}

TEST_CASE("app state: a drag on a large tensor shows the heatmaps each step and the metrics where it rests") {
    qs::RandomSpec spec;
    spec.shape = {512, 1024};  // above kDragBlocksElements, below kSyncElements: every step on this thread
    spec.seed = 4;
    AppState app;
    app.doc.force_sync = true;
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(qs::generate_random(spec)), "random"));
    app.doc.update();
    for (const qs::Granularity g : {qs::Granularity::Tensor, qs::Granularity::Channel}) {
        CAPTURE(static_cast<int>(g));
        qs::QuantConfig c = app.doc.config;
        c.granularity = g;
        c.axis = 0;
        c.dtype.bits = 8;
        REQUIRE(app.doc.apply_config(c, false));
        app.doc.update();
        REQUIRE_FALSE(app.doc.overview.blocks_only);
        const qs::Metrics before = app.doc.overview.metrics;
        c.dtype.bits = 4;  // a step of the bits slider, held down
        REQUIRE(app.doc.apply_config(c, true));
        app.doc.update();
#ifdef __AVX512F__
        CHECK(app.doc.overview.blocks_only);
        CHECK(app.doc.overview.metrics.mse == before.mse);  // the last whole pass's, until the drag rests
        {
            // The caption says the metrics and counts are to come, not the last ones as if they were this step's.
            PanelWindow w;  // the numbers' formatting reads the ImGui context's settings
            w.frame([&] {
                const std::vector<std::string> items = qs::gui::MetricsSummaryItems(app.doc.view());
                CHECK(std::find(items.begin(), items.end(), "MSE, max |e|, L2, SQNR: ...") != items.end());
                CHECK(std::find(items.begin(), items.end(), "clipped, levels: ...") != items.end());
            });
        }
#endif
        const qs::QuantOverview step = app.doc.overview;
        const qs::QuantOverview whole = qs::quantize_overview(app.doc.data->view, app.doc.params, c, step.grid,
                                                              &app.doc.data->values);
        CHECK(step.codes_mean == whole.codes_mean);
        CHECK(step.error_max == whole.error_max);
        CHECK(step.dequantized_mean == whole.dequantized_mean);
        CHECK(step.metrics.max_abs_error == whole.metrics.max_abs_error);
        app.doc.update();  // a frame with no new step: the drag rests, the whole pass runs
        CHECK_FALSE(app.doc.overview.blocks_only);
        CHECK(app.doc.overview.metrics.mse == whole.metrics.mse);
        CHECK(app.doc.overview.code_counts == whole.code_counts);
        CHECK(app.doc.overview.error_argmax == whole.error_argmax);
        app.doc.end_frame(false);
    }
}

TEST_CASE("app state: what is saved right after a drag step on a large tensor has the whole pass") {
    // An export or a script waits for the recompute (finish_recompute_now): a drag step's heatmaps alone, taken
    // there, must not be what is written (its metrics are the last whole pass's, of another config).
    qs::RandomSpec spec;
    spec.shape = {512, 1024};
    spec.seed = 5;
    AppState app;
    app.doc.force_sync = true;
    REQUIRE(app.doc.apply_tensor(std::make_shared<qs::Tensor>(qs::generate_random(spec)), "random"));
    app.doc.update();
    qs::QuantConfig c = app.doc.config;
    c.granularity = qs::Granularity::Channel;
    c.axis = 0;
    c.dtype.bits = 8;
    REQUIRE(app.doc.apply_config(c, false));
    app.doc.update();
    c.dtype.bits = 4;
    REQUIRE(app.doc.apply_config(c, true));  // a step of the bits slider, still held
    app.doc.update();
    app.doc.finish_recompute_now();  // e.g. Export > Figure before the next frame
    CHECK_FALSE(app.doc.overview.blocks_only);
    const qs::QuantOverview whole = qs::quantize_overview(app.doc.data->view, app.doc.params, c, app.doc.overview.grid,
                                                          &app.doc.data->values);
    CHECK(app.doc.overview.metrics.mse == whole.metrics.mse);
    CHECK(app.doc.overview.code_counts == whole.code_counts);
    app.doc.end_frame(false);
}

TEST_CASE("app state: a slider drag is one undo step and tensor edits undo and redo") {
    AppState app;
    load_lesson(app);
    const qs::QuantConfig start = app.doc.config;
    qs::QuantConfig c = start;
    c.mode = qs::Mode::Manual;
    c.manual_scale = 3.0;
    REQUIRE(app.doc.apply_config(c, true));
    c.manual_scale = 4.0;
    REQUIRE(app.doc.apply_config(c, true));
    c.manual_scale = 5.0;
    REQUIRE(app.doc.apply_config(c, true));
    app.doc.end_frame(false);  // released
    app.doc.undo();
    CHECK(app.doc.config.mode == start.mode);
    CHECK_FALSE(app.doc.history.can_undo());
    app.doc.redo();
    CHECK(app.doc.config.manual_scale == 5.0);

    auto edited = std::make_shared<qs::Tensor>(*app.doc.tensor);
    edited->values[0] = 1000.0f;
    REQUIRE(app.doc.apply_tensor(edited, "lesson (edited)"));
    app.doc.update();
    CHECK(app.doc.shown_floats()->values[0] == 1000.0f);
    app.doc.undo();
    app.doc.update();
    CHECK(app.doc.shown_floats()->values[0] == doctest::Approx(191.6f));
    CHECK(app.doc.config.manual_scale == 5.0);  // the step before the edit
    app.doc.redo();
    app.doc.update();
    CHECK(app.doc.shown_floats()->values[0] == 1000.0f);

    // A NaN is refused with a message naming the index; nothing changes.
    auto bad = std::make_shared<qs::Tensor>(*app.doc.tensor);
    bad->values[4] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(app.doc.apply_tensor(bad, "bad"));
    CHECK(app.doc.error.find("[1, 1]") != std::string::npos);
    CHECK(app.doc.tensor->values[4] == 295.5f);
}

TEST_CASE("app state: presets and files load as background jobs") {
    AppState app;
    load_lesson(app);
    qs::gui::LoadPreset(app, "lesson-manual");
    CHECK(app.doc.busy());
    REQUIRE(pump(app, [&] { return !app.doc.busy() && !app.doc.recomputing(); }));
    CHECK(app.doc.label == "lesson-manual");
    CHECK(app.doc.config.mode == qs::Mode::Manual);
    CHECK(app.doc.view().valid());

    qs::gui::OpenTensorFile(app, "/no/such/file.npy");
    REQUIRE(pump(app, [&] { return !app.doc.busy(); }));
    CHECK_FALSE(app.doc.error.empty());
    CHECK(app.doc.label == "lesson-manual");  // unchanged
}

TEST_CASE("app state: a big tensor recomputes on a worker while the last result stays on screen") {
    AppState app;
    auto big = std::make_shared<qs::Tensor>();
    big->shape = {2048, 1536};  // above kSyncElements
    big->values.resize(2048 * 1536);
    for (std::size_t i = 0; i < big->values.size(); ++i) big->values[i] = static_cast<float>(i % 1000) - 500.0f;
    REQUIRE(app.doc.apply_tensor(big, "big"));
    app.doc.update();
    CHECK(app.doc.recomputing());
    REQUIRE(pump(app, [&] { return app.doc.view().valid(); }));
    const std::uint64_t g = app.doc.generation;
    qs::QuantConfig c = app.doc.config;
    c.dtype = qs::IntType{true, 4};
    REQUIRE(app.doc.apply_config(c, false));
    app.doc.update();
    CHECK(app.doc.view().valid());  // the previous result is still shown
    REQUIRE(pump(app, [&] { return app.doc.generation > g && !app.doc.recomputing(); }));
    CHECK(app.doc.shown_config.dtype.bits == 4);
    CHECK(app.doc.overview.code_hi <= 7);

    // A job that lands while a worker recompute runs wins: the worker's stale result is dropped.
    c.dtype = qs::IntType{true, 8};
    REQUIRE(app.doc.apply_config(c, false));
    app.doc.update();
    CHECK(app.doc.recomputing());
    qs::gui::LoadPreset(app, "lesson");
    REQUIRE(pump(app, [&] { return !app.doc.busy() && !app.doc.recomputing(); }));
    for (int i = 0; i < 3; ++i) app.doc.update();
    CHECK(app.doc.label == "lesson");
    CHECK(app.doc.shown_data == app.doc.data);
    CHECK(app.doc.overview.metrics.count == 9);
}

TEST_CASE("settings: written atomically under XDG_CONFIG_HOME and read back") {
    TempDir dir;
    const std::string saved = std::getenv("XDG_CONFIG_HOME") ? std::getenv("XDG_CONFIG_HOME") : "";
    const bool had = std::getenv("XDG_CONFIG_HOME") != nullptr;
    ::setenv("XDG_CONFIG_HOME", (dir.path + "/cfg").c_str(), 1);
    const std::string path = qs::gui::SettingsPath();
    CHECK(path == dir.path + "/cfg/quantscope/settings.ini");
    qs::gui::Settings s;
    s.window_width = 1280;
    s.window_height = 800;
    s.font_scale = 1.5f;
    s.panels.histogram = false;
    s.figure["colormap"] = "viridis";
    std::string error;
    REQUIRE(qs::gui::SaveSettings(path, s, &error));
    const qs::gui::Settings back = qs::gui::LoadSettings(path);
    CHECK(back.window_width == 1280);
    CHECK(back.window_height == 800);
    CHECK(back.font_scale == doctest::Approx(1.5f));
    CHECK_FALSE(back.panels.histogram);
    CHECK(back.figure.at("colormap") == "viridis");
    // A damaged file gives defaults, not an unusable window.
    std::ofstream(path) << "window_width=-5\nfont_scale=nan\ngarbage\n";
    const qs::gui::Settings damaged = qs::gui::LoadSettings(path);
    CHECK(damaged.window_width == 1600);
    CHECK(damaged.font_scale == 1.0f);
    if (had) ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
    else ::unsetenv("XDG_CONFIG_HOME");
}

TEST_CASE("app state: every control's change is applied and undone as one step") {
    // Each change goes the way the controls send it: a queued intent, applied after the panels drew.
    AppState app;
    load_lesson(app);
    using Change = void (*)(qs::QuantConfig&);
    const Change changes[] = {
        [](qs::QuantConfig& c) { c.dtype = qs::IntType{true, 4}; },
        [](qs::QuantConfig& c) { c.mode = qs::Mode::Symmetric; },
        [](qs::QuantConfig& c) { c.granularity = qs::Granularity::Channel; },
        [](qs::QuantConfig& c) { c.axis = 1; },
        [](qs::QuantConfig& c) { c.rounding = qs::Rounding::HalfAway; },
        [](qs::QuantConfig& c) { c.overflow = qs::Overflow::Wrap; },
        [](qs::QuantConfig& c) { c.calibration = qs::Calibration::Mse; },
        [](qs::QuantConfig& c) { c.calibration = qs::Calibration::Percentile; },
        [](qs::QuantConfig& c) { c.percentile = 99.5; },
        [](qs::QuantConfig& c) { c.recompute_scale = true; },
        [](qs::QuantConfig& c) { c.mode = qs::Mode::Asymmetric; c.granularity = qs::Granularity::Group; c.axis = 0; c.group_size = 3; },
        [](qs::QuantConfig& c) { c = qs::QuantConfig{}; c.mode = qs::Mode::Manual; c.manual_scale = 2.0; },
        [](qs::QuantConfig& c) { c.manual_zero_point = -5; },
    };
    for (std::size_t i = 0; i < std::size(changes); ++i) {
        INFO("change " << i);
        const qs::QuantConfig before = app.doc.config;
        qs::QuantConfig next = before;
        changes[i](next);
        REQUIRE(next != before);
        const std::uint64_t revision = app.doc.revision;
        REQUIRE(app.intents.apply_config(app.doc, next, false));
        qs::gui::ApplyIntents(app);
        app.doc.update();
        CHECK(app.doc.config == next);
        CHECK(app.doc.shown_config == next);  // recomputed, not only stored
        CHECK(app.doc.revision > revision);   // the panels' drafts re-sync
        app.doc.undo();
        CHECK(app.doc.config == before);      // exactly one step back
        app.doc.redo();
        CHECK(app.doc.config == next);
    }
    // The same config again is no step at all.
    const std::uint64_t revision = app.doc.revision;
    REQUIRE(app.intents.apply_config(app.doc, app.doc.config, false));
    qs::gui::ApplyIntents(app);
    CHECK(app.doc.revision == revision);
    app.doc.undo();
    CHECK(app.doc.config.manual_scale == 2.0);  // undid the zero point, not a phantom step
    CHECK(app.doc.config.manual_zero_point == 0);
}
