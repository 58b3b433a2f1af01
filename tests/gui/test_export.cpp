// Export from the window (issue 4): the figure PNG against `quantscope render`, the four tensors as .npy/.csv,
// sessions saved from an AppState and reopened through the command line's own path (cli::load_input via
// LoadGuiInput, then StartWithInput as run_gui does), and picking one tensor of a .safetensors file. In-process
// where that is enough (EGL offscreen), the built binary under xvfb-run where the window itself is what is
// tested. Both fail (they do not skip) without EGL or xvfb-run. No doctest main here (test_figure.cpp has it).
#include <doctest/doctest.h>

#include "gui_test_support.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <stb_image.h>

#include "../gguf_writer.hpp"
#include "cli/options.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/export.hpp"
#include "gui/app/file_dialogs.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/app/figure_png.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "gui/app/session_io.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor_io.hpp"

namespace {

using qs::gui::AppState;

using namespace qs::gui_test;

// The whole quantization on show at full resolution (the document keeps only its overview).
qs::QuantResult FullResult(const qs::gui::Document& doc) {
    qs::QuantResult r;
    qs::quantize_into(*doc.shown_floats(), doc.params, doc.shown_config, r);
    return r;
}

// The window's start for these arguments, as run_gui does it (minus the window).
void Start(AppState& app, const std::vector<std::string>& args) {
    std::vector<qs::cli::OptionSpec> specs = qs::cli::join(qs::cli::tensor_source_options(), qs::cli::quantize_options());
    specs = qs::cli::join(specs, qs::gui::GuiFileOptionSpecs());
    qs::gui::GuiFileOptions files;
    qs::cli::Input input = qs::gui::LoadGuiInput(qs::cli::parse_args(args, specs), false, files);
    app.doc.force_sync = true;
    qs::gui::StartWithInput(app, input, files);
    app.doc.finish_recompute_now();
}

// Runs update() until the tensor job has been taken, then the recompute.
void WaitForJob(AppState& app) {
    for (int i = 0; i < 20000 && app.doc.busy(); ++i) {
        app.doc.update();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE_FALSE(app.doc.busy());
    app.doc.update();
    app.doc.finish_recompute_now();
}

void CheckSameState(const AppState& a, const AppState& b) {
    REQUIRE(a.doc.tensor);
    REQUIRE(b.doc.tensor);
    CHECK(a.doc.tensor->shape == b.doc.tensor->shape);
    CHECK(a.doc.tensor->values == b.doc.tensor->values);
    CHECK(a.doc.label == b.doc.label);
    CHECK(a.doc.base_mode == b.doc.base_mode);
    CHECK(a.doc.config == b.doc.config);  // every field (QuantConfig's operator== is tested to cover them)
    CHECK(qs::gui::FigurePanelSettingPairs(a.figure.settings) == qs::gui::FigurePanelSettingPairs(b.figure.settings));
    CHECK(a.figure.slice == b.figure.slice);
    CHECK(a.figure.selected == b.figure.selected);
    CHECK(a.figure.view.x0 == b.figure.view.x0);
    CHECK(a.figure.view.y0 == b.figure.view.y0);
    CHECK(a.figure.view.x1 == b.figure.view.x1);
    CHECK(a.figure.view.y1 == b.figure.view.y1);
    CHECK(a.histogram.log_counts == b.histogram.log_counts);
    CHECK(a.panels.metrics == b.panels.metrics);
    // And the numbers on screen.
    const qs::QuantResult ra = FullResult(a.doc), rb = FullResult(b.doc);
    CHECK(ra.codes == rb.codes);
    CHECK(ra.dequantized == rb.dequantized);
}

// A little .safetensors file: "a.weight" F32 4x6 (values 0..23) and "b.conv" F32 2x3x4x5 (values 0.5 * i).
void WriteSafetensors(const std::string& path) {
    std::string header =
        "{\"a.weight\":{\"dtype\":\"F32\",\"shape\":[4,6],\"data_offsets\":[0,96]},"
        "\"b.conv\":{\"dtype\":\"F32\",\"shape\":[2,3,4,5],\"data_offsets\":[96,576]},"
        "\"c.step\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[576,584]}}";
    while (header.size() % 8) header += ' ';
    std::string bytes(8, '\0');
    std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
    bytes += header;
    std::vector<float> a(24), b(120);
    for (int i = 0; i < 24; ++i) a[static_cast<std::size_t>(i)] = static_cast<float>(i);
    for (int i = 0; i < 120; ++i) b[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
    bytes.append(reinterpret_cast<const char*>(a.data()), a.size() * 4);
    bytes.append(reinterpret_cast<const char*>(b.data()), b.size() * 4);
    bytes.append(8, '\0');
    std::ofstream(path, std::ios::binary) << bytes;
}

// Two window screenshots show the same thing: equal sizes and pixels, except the right half of the menu bar,
// where the status line prints how long the last recompute took (a wall-clock time).
void CheckSameScreen(const std::string& a, const std::string& b) {
    int wa = 0, ha = 0, wb = 0, hb = 0, channels = 0;
    unsigned char* pa = stbi_load(a.c_str(), &wa, &ha, &channels, 3);
    unsigned char* pb = stbi_load(b.c_str(), &wb, &hb, &channels, 3);
    REQUIRE_MESSAGE(pa != nullptr, "cannot decode " << a);
    REQUIRE_MESSAGE(pb != nullptr, "cannot decode " << b);
    const int kStatusRows = 40;  // the menu bar at the default text size, with margin
    long differ = 0;
    if (wa == wb && ha == hb) {
        for (int y = 0; y < ha; ++y)
            for (int x = 0; x < wa; ++x) {
                if (y < kStatusRows && x > wa / 2) continue;
                const std::size_t i = (static_cast<std::size_t>(y) * wa + x) * 3;
                if (std::memcmp(pa + i, pb + i, 3) != 0) ++differ;
            }
    }
    stbi_image_free(pa);
    stbi_image_free(pb);
    CHECK(wa == wb);
    CHECK(ha == hb);
    CHECK_MESSAGE(differ == 0, differ << " pixels differ between " << a << " and " << b);
}

std::string NpyDescr(const std::string& path) {
    const std::string bytes = read_file(path);
    return qs::parse_npy_header(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), path).descr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------- figure PNG

TEST_CASE("export: the figure PNG of the lesson is byte-identical to quantscope render") {
    TempDir dir;
    AppState app;
    Start(app, {"--preset", "lesson"});
    std::string error;
    const std::string gui_png = dir / "gui.png", cli_png = dir / "render.png";
    REQUIRE_MESSAGE(qs::gui::ExportFigurePng(app, {gui_png, 1600, false}, &error),
                    "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
    const Run r = run(dir, "'" QS_BINARY "' render --preset lesson --width 1600 --out '" + cli_png + "'");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string a = read_file(gui_png), b = read_file(cli_png);
    CHECK(a.size() > 1000);
    CHECK(a == b);

    // With the user's figure settings: the same as render's options for them.
    app.figure.settings.lesson_look = true;
    REQUIRE(qs::gui::ExportFigurePng(app, {gui_png, 1200, false}, &error));
    const Run r2 = run(dir, "'" QS_BINARY "' render --preset lesson --lesson-look --width 1200 --out '" + cli_png + "'");
    REQUIRE(r2.exit_code == 0);
    CHECK(read_file(gui_png) == read_file(cli_png));
}

TEST_CASE("render draws a number format and a session keeps it for render and the window") {
    TempDir dir;
    for (const std::string dtype : {"--dtype fp8-e4m3", "--dtype nf4", "--dtype bf16 --mode cast", "--dtype mxfp4"}) {
        CAPTURE(dtype);
        const std::string png = dir / "f.png", session = dir / "f.json";
        const Run r = run(dir, "'" QS_BINARY "' render --random normal --shape 4x64 " + dtype + " --out '" + png + "'");
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(path_exists(png));
        AppState app;
        std::vector<std::string> args = {"--random", "normal", "--shape", "4x64"};
        for (std::size_t at = 0, next; at < dtype.size(); at = next + 1) {
            next = dtype.find(' ', at);
            if (next == std::string::npos) next = dtype.size();
            args.push_back(dtype.substr(at, next - at));
        }
        Start(app, args);
        CHECK(app.doc.error.empty());
        std::string error;
        REQUIRE_MESSAGE(qs::gui::SaveSession(app, session, &error), error);
        AppState back;
        Start(back, {session});
        CHECK(back.doc.error.empty());
        CHECK(back.doc.config == app.doc.config);
        const Run again = run(dir, "'" QS_BINARY "' render '" + session + "' --out '" + (dir / "g.png") + "'");
        CHECK(again.exit_code == 0);
        CHECK(read_file(dir / "g.png") == read_file(png));
    }
}

TEST_CASE("render and the window read the figure options alike") {
    TempDir dir;
    // One parser: what one accepts the other accepts (an upper-case .PNG too), what one refuses the other
    // refuses with the same line.
    const Run upper = run(dir, "'" QS_BINARY "' render --preset lesson --out '" + (dir / "F.PNG") + "'");
    INFO("stderr: " << upper.err);
    CHECK(upper.exit_code == 0);
    CHECK(path_exists(dir / "F.PNG"));
    for (const std::string bad : {"--cmap white", "--cmap rainbow", "--annotate maybe", "--slice 1", "--slice -1"}) {
        const Run a = run(dir, "'" QS_BINARY "' render --preset lesson " + bad + " --out '" + (dir / "x.png") + "'");
        const Run b = run(dir, "'" QS_BINARY "' gui --preset lesson " + bad + " --screenshot '" + (dir / "y.png") + "'");
        CAPTURE(bad);
        CHECK(a.exit_code == 2);
        CHECK(b.exit_code == 2);
        CHECK(a.err == b.err);
        CHECK_FALSE(path_exists(dir / "x.png"));
    }
    // A session's figure settings apply to `render` as to the window's headless figure.
    AppState app;
    Start(app, {"--preset", "lesson"});
    app.figure.settings.lesson_look = true;
    std::string error;
    const std::string session = dir / "s.json";
    REQUIRE_MESSAGE(qs::gui::SaveSession(app, session, &error), error);
    const Run from_session = run(dir, "'" QS_BINARY "' render '" + session + "' --out '" + (dir / "s.png") + "'");
    const Run with_option = run(dir, "'" QS_BINARY "' render --preset lesson --lesson-look --out '" + (dir / "o.png") + "'");
    REQUIRE(from_session.exit_code == 0);
    REQUIRE(with_option.exit_code == 0);
    CHECK(read_file(dir / "s.png") == read_file(dir / "o.png"));
}

TEST_CASE("export: bad figure requests are messages and leave no file") {
    TempDir dir;
    AppState app;
    Start(app, {"--preset", "lesson"});
    std::string error;
    CHECK_FALSE(qs::gui::ExportFigurePng(app, {dir / "no/such/dir/f.png", 1600, false}, &error));
    CHECK(error.find("no/such/dir") != std::string::npos);
    CHECK_FALSE(qs::gui::ExportFigurePng(app, {dir / "f.jpg", 1600, false}, &error));
    CHECK(error.find(".png") != std::string::npos);
    CHECK_FALSE(qs::gui::ExportFigurePng(app, {dir / "f.png", 100, false}, &error));
    CHECK_FALSE(path_exists(dir / "f.png"));

    // Through the dialog's queue: the failure is shown in the dialog.
    qs::gui::FileDialogsState& files = app.files;
    files.queued_figure = qs::gui::FigureExport{dir / "missing/f.png"};
    CHECK_FALSE(qs::gui::RunQueuedFileWork(files, app, &error));
    CHECK(files.message_is_error);
    CHECK_FALSE(files.message.empty());
    CHECK_FALSE(qs::gui::HasQueuedFileWork(files));
}

TEST_CASE("export: the window's Save figure equals render and the window draws on afterwards") {
    REQUIRE_MESSAGE(have_xvfb(), "xvfb-run not found: install xvfb and xauth");
    TempDir dir;
    const std::string shot = dir / "shot.png", plain = dir / "plain.png", fig = dir / "fig.png", ref = dir / "ref.png";
    Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --preset lesson --size 1280x720 --screenshot '" +
                               shot + "' --save-figure '" + fig + "'");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    r = run(dir, "'" QS_BINARY "' render --preset lesson --out '" + ref + "'");
    REQUIRE(r.exit_code == 0);
    CHECK(read_file(fig) == read_file(ref));
    // The export ran between frames; the frames after it must be the window's usual ones.
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --preset lesson --size 1280x720 --screenshot '" + plain + "'");
    REQUIRE(r.exit_code == 0);
    CheckSameScreen(shot, plain);
    // A scripted save needs --screenshot, and a failed one is exit code 2.
    r = run(dir, "env -u DISPLAY '" QS_BINARY "' gui --save-figure '" + fig + "'");
    CHECK(r.exit_code == 2);
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --screenshot '" + shot + "' --save-figure '" + dir.path +
                           "/no/dir/f.png'");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("quantscope: error: ") != std::string::npos);
}

// ------------------------------------------------------------------------------------------------ tensors

TEST_CASE("export: the four tensors as .npy with the code dtype of the bit width") {
    TempDir dir;
    struct Case {
        const char* dtype;
        const char* descr;
    };
    for (const Case c : {Case{"int4", "|i1"}, Case{"uint8", "|u1"}, Case{"int10", "<i2"}, Case{"uint16", "<u2"}}) {
        CAPTURE(c.dtype);
        AppState app;
        Start(app, {"--preset", "lesson", "--dtype", c.dtype});
        std::vector<std::string> written;
        std::string error;
        qs::gui::TensorExport request{dir.path, std::string("t_") + c.dtype, qs::gui::TensorFormat::Npy};
        REQUIRE_MESSAGE(qs::gui::ExportTensors(app, request, &written, &error), error);
        REQUIRE(written.size() == 4);
        CHECK(written == qs::gui::TensorExportPaths(request));
        CHECK(NpyDescr(written[0]) == "<f4");
        CHECK(NpyDescr(written[1]) == c.descr);
        CHECK(NpyDescr(written[2]) == "<f4");
        CHECK(NpyDescr(written[3]) == "<f4");
        const qs::Tensor original = qs::read_npy(written[0]);
        CHECK(original.values == qs::lesson_tensor().values);
        const qs::QuantResult result = FullResult(app.doc);
        CHECK(qs::read_npy(written[2]).values == result.dequantized);
        CHECK(qs::read_npy(written[3]).values == result.error);
        // The codes' bytes, decoded by width and sign, are the result's codes.
        const std::string bytes = read_file(written[1]);
        const qs::NpyHeader h =
            qs::parse_npy_header(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), written[1]);
        CHECK(h.shape == qs::Shape{3, 3});
        const std::size_t width = h.descr[2] == '1' ? 1 : 2;
        for (std::size_t i = 0; i < 9; ++i) {
            std::int32_t v = 0;
            if (width == 1) {
                const auto b = static_cast<std::uint8_t>(bytes[h.data_offset + i]);
                v = h.descr[1] == 'i' ? static_cast<std::int8_t>(b) : b;
            } else {
                std::uint16_t u = 0;
                std::memcpy(&u, bytes.data() + h.data_offset + 2 * i, 2);
                v = h.descr[1] == 'i' ? static_cast<std::int16_t>(u) : u;
            }
            CHECK(v == result.codes[i]);
        }
    }
}

TEST_CASE("export: csv of a 2-D tensor and a rank-3 csv refused with nothing written") {
    TempDir dir;
    AppState app;
    Start(app, {"--preset", "lesson"});
    std::vector<std::string> written;
    std::string error;
    REQUIRE(qs::gui::ExportTensors(app, {dir.path, "lesson", qs::gui::TensorFormat::Csv}, &written, &error));
    REQUIRE(written.size() == 4);
    CHECK(qs::load_tensor(written[0]).values == qs::lesson_tensor().values);
    const std::string codes = read_file(written[1]);
    CHECK(codes.find("-23") != std::string::npos);  // SPEC's asymmetric q[0][0]
    CHECK(codes.find('.') == std::string::npos);    // integers

    AppState cube;
    Start(cube, {"--preset", "outliers-4x128x256"});
    CHECK_FALSE(qs::gui::ExportTensors(cube, {dir.path, "cube", qs::gui::TensorFormat::Csv}, &written, &error));
    CHECK(error.find("CSV") != std::string::npos);
    CHECK(written.empty());
    for (const std::string& p : qs::gui::TensorExportPaths({dir.path, "cube", qs::gui::TensorFormat::Csv}))
        CHECK_FALSE(path_exists(p));
    CHECK_FALSE(qs::gui::ExportTensors(cube, {dir / "nope", "cube", qs::gui::TensorFormat::Npy}, &written, &error));
    CHECK(error.find("not a directory") != std::string::npos);
}

TEST_CASE("export: the four tensors never overwrite the file the tensor was read from") {
    TempDir dir;
    const qs::Tensor lesson = qs::lesson_tensor();
    const std::string source = dir / "x_codes.csv";
    qs::save_floats(source, lesson.shape, lesson.values.data());
    const std::string before = read_file(source);
    AppState app;
    Start(app, {source});
    std::vector<std::string> written;
    std::string error;
    CHECK_FALSE(qs::gui::ExportTensors(app, {dir.path, "x", qs::gui::TensorFormat::Csv}, &written, &error));
    CHECK(error.find("would overwrite the tensor's file") != std::string::npos);
    CHECK(written.empty());
    CHECK(read_file(source) == before);
    CHECK_FALSE(path_exists(dir / "x_original.csv"));  // all four or none
}

TEST_CASE("export: a PNG is never written through a link planted at a temporary name") {
    TempDir dir;
    const std::string out = dir / "f.png", victim = dir / "victim";
    { std::ofstream(victim) << "precious"; }
    // The name the PNG writer used to write through (out + ".tmp" + pid).
    const std::string planted = out + ".tmp" + std::to_string(static_cast<long>(::getpid()));
    REQUIRE(::symlink(victim.c_str(), planted.c_str()) == 0);
    const std::vector<std::uint8_t> rgba(4 * 4 * 4, 200);
    std::string error;
    REQUIRE_MESSAGE(qs::gui::WritePngAtomic(out, 4, 4, rgba, false, &error), error);
    CHECK(read_file(victim) == "precious");
    struct stat st {};
    CHECK(::lstat(planted.c_str(), &st) == 0);
    CHECK(S_ISLNK(st.st_mode));
    CHECK(read_file(out).rfind("\x89PNG", 0) == 0);
}

// ----------------------------------------------------------------------------------------------- sessions

TEST_CASE("session: non-default settings of a preset survive a save and a reopen through the CLI path") {
    TempDir dir;
    AppState a;
    Start(a, {"--preset", "lesson"});
    qs::QuantConfig c = a.doc.config;
    c.dtype = qs::IntType::parse("int4");
    c.mode = qs::Mode::Manual;
    c.manual_scale = 61.0;
    c.manual_zero_point = -3;
    c.rounding = qs::Rounding::HalfAway;
    REQUIRE(a.doc.apply_config(c, false));
    a.doc.base_mode = qs::Mode::Symmetric;
    a.doc.finish_recompute_now();
    a.figure.settings.colormap = qs::gui::Colormap::Viridis;
    a.figure.settings.lesson_look = true;
    a.figure.settings.annotate = qs::gui::AnnotateMode::On;
    a.figure.selected = 5;
    a.figure.view = qs::gui::HeatmapView{0.5, 0.25, 2.75, 3.0};
    a.histogram.log_counts = true;
    a.panels.metrics = false;

    const std::string path = dir / "lesson.json";
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, path, &error), error);
    const std::string json = read_file(path);
    CHECK(json.find("\"kind\": \"preset\"") != std::string::npos);  // unedited: referred to, not copied
    CHECK_FALSE(path_exists(path + ".tensor.npy"));

    AppState b;
    Start(b, {path});
    CHECK(b.doc.notice.empty());
    CheckSameState(a, b);
}

// A float format's downcast (--mode cast; a Model-tab row against B's F16 values is one) is saved with base_mode
// cast: the reader took only asymmetric and symmetric, so every such session was refused on reopening (the
// command line's exit 2: "values its keys do not take: base_mode=cast"). On an integer type cast is still refused.
TEST_CASE("session: a float format's cast reopens with its base mode") {
    TempDir dir;
    AppState a;
    Start(a, {"--preset", "lesson", "--dtype", "fp8-e4m3", "--mode", "cast"});
    REQUIRE(a.doc.config.mode == qs::Mode::Cast);
    const std::string path = dir / "cast.json";
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, path, &error), error);
    CHECK(read_file(path).find("\"base_mode\": \"cast\"") != std::string::npos);
    AppState b;
    Start(b, {path});
    CHECK(b.doc.notice.empty());
    CHECK(b.doc.base_mode == qs::Mode::Cast);
    CHECK(b.doc.config.mode == qs::Mode::Cast);
    AppState c;
    Start(c, {"--preset", "lesson"});
    CHECK(qs::gui::ApplySessionView(c, {{"base_mode", "cast"}}).find("base_mode=cast") != std::string::npos);
    CHECK(c.doc.base_mode != qs::Mode::Cast);
}

TEST_CASE("session: the layer lab's Method view keeps its method and the GPTQ column and AWQ's picked ratio") {
    TempDir dir;
    AppState a;
    Start(a, {"--random", "normal", "--shape", "16x32", "--seed", "3"});
    a.layer_view = true;
    a.layer.show_method = true;
    a.layer.method.method = qs::LayerMethod::RotateGptq;
    a.layer.method.act_order = true;
    a.layer.method.target = 7;
    a.layer.method.awq_pick = 5;
    const std::string path = dir / "method.json";
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, path, &error), error);
    const std::string json = read_file(path);
    CHECK(json.find("\"layer.method\": \"rotate+gptq\"") != std::string::npos);
    CHECK(json.find("\"layer.column\": \"7\"") != std::string::npos);
    CHECK(json.find("\"layer.awq_pick\": \"5\"") != std::string::npos);

    AppState b;
    Start(b, {path});
    CHECK(b.doc.notice.empty());
    CHECK(b.layer_view);
    CHECK(b.layer.show_method);
    CHECK(b.layer.method.method == qs::LayerMethod::RotateGptq);
    CHECK(b.layer.method.act_order);
    CHECK(b.layer.method.target == 7);
    CHECK(b.layer.method.awq_pick == 5);
    // A value the keys do not take is refused by name, the state left as it was.
    AppState c;
    Start(c, {"--random", "normal", "--shape", "16x32"});
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"layer.method", "quarot"}, {"layer.column", "-1"}, {"layer.column", "4294967296"}, {"layer.act_order", "maybe"},
             {"layer.awq_pick", "-2"}, {"layer.awq_pick", "1000"}, {"layer.awq_pick", "best"}}) {
        CAPTURE(key);
        CHECK(qs::gui::ApplySessionView(c, {{key, value}}).find(key + "=" + value) != std::string::npos);
    }
    CHECK(c.layer.method.method == qs::LayerMethod::Gptq);
    CHECK(c.layer.method.target == 0);
    CHECK(c.layer.method.awq_pick == -1);
}

TEST_CASE("session: an edited rank-3 tensor is stored inline with its slice") {
    TempDir dir;
    AppState a;
    Start(a, {"--random", "normal", "--shape", "3x8x8", "--seed", "7", "--dtype", "uint6"});
    auto edited = std::make_shared<qs::Tensor>(*a.doc.tensor);
    edited->values[5] = 9.5f;
    REQUIRE(a.doc.apply_tensor(edited, "edited"));
    a.doc.finish_recompute_now();
    a.figure.slice = 2;
    a.figure.settings.colormap = qs::gui::Colormap::Greys;

    const std::string path = dir / "edited.json";
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, path, &error), error);
    CHECK(read_file(path).find("\"kind\": \"inline\"") != std::string::npos);
    AppState b;
    Start(b, {path});
    CheckSameState(a, b);

    // Undo back to the generated tensor: it is referred to by its random spec again.
    a.doc.undo();
    a.doc.finish_recompute_now();
    REQUIRE(qs::gui::SaveSession(a, path, &error));
    CHECK(read_file(path).find("\"kind\": \"random\"") != std::string::npos);
    AppState d;
    Start(d, {path});
    CheckSameState(a, d);
}

TEST_CASE("session: an edited big tensor goes to a .npy beside the session") {
    TempDir dir;
    AppState a;
    Start(a, {"--random", "uniform", "--shape", "1030x1024", "--seed", "1"});
    auto edited = std::make_shared<qs::Tensor>(*a.doc.tensor);
    edited->values[0] = 42.0f;
    REQUIRE(a.doc.apply_tensor(edited, "big edited"));
    a.doc.finish_recompute_now();
    const std::string path = dir / "big.json";
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, path, &error), error);
    REQUIRE(path_exists(path + ".tensor.npy"));
    const std::string json = read_file(path);
    CHECK(json.find("\"kind\": \"file\"") != std::string::npos);
    CHECK(json.find("\"path\": \"big.json.tensor.npy\"") != std::string::npos);  // relative: they move together
    AppState b;
    Start(b, {path});
    CheckSameState(a, b);
}

TEST_CASE("session: File > Open session applies the view once its tensor is loaded") {
    TempDir dir;
    AppState a;
    Start(a, {"--preset", "outliers-4x128x256", "--dtype", "int6"});
    a.figure.slice = 3;
    a.figure.settings.shared_range = false;
    const std::string path = dir / "open.json";
    std::string error;
    REQUIRE(qs::gui::SaveSession(a, path, &error));

    AppState b;
    Start(b, {"--preset", "lesson"});
    qs::gui::OpenSession(b, path);
    REQUIRE(b.doc.error.empty());
    WaitForJob(b);
    CheckSameState(a, b);

    // Dropped on the window (OpenTensorFile), a .json file opens as a session too.
    AppState dropped;
    Start(dropped, {"--preset", "lesson"});
    qs::gui::OpenTensorFile(dropped, path);
    WaitForJob(dropped);
    CheckSameState(a, dropped);

    // Problems are messages, never a crash: a session that is not one, an unknown view key.
    qs::gui::OpenSession(b, dir / "missing.json");
    CHECK_FALSE(b.doc.error.empty());
    const std::string note = qs::gui::ApplySessionView(b, {{"figure.slice", "99"}, {"future.key", "1"}});
    CHECK(note.find("figure.slice=99") != std::string::npos);
    CHECK(note.find("future.key") != std::string::npos);
    CHECK(b.figure.slice == 3);
    CHECK_FALSE(qs::gui::SaveSession(b, dir / "session.txt", &error));
    CHECK(error.find(".json") != std::string::npos);
}

TEST_CASE("session: a screenshot of the reopened session equals the original's") {
    REQUIRE_MESSAGE(have_xvfb(), "xvfb-run not found: install xvfb and xauth");
    TempDir dir;
    const std::string a = dir / "a.png", b = dir / "b.png", session = dir / "s.json";
    Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --random normal --shape 3x16x16 --seed 7 "
                               "--dtype int4 --scale 0.25 --zero-point 1 --cmap viridis --annotate off --slice 2 "
                               "--size 1280x720 --screenshot '" + a + "' --save-session '" + session + "'");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    REQUIRE(path_exists(session));
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + session + "' --size 1280x720 --screenshot '" + b + "'");
    REQUIRE(r.exit_code == 0);
    CheckSameScreen(a, b);
}

// ----------------------------------------------------------------------------------------------- safetensors

TEST_CASE("safetensors: --tensor opens one tensor and a folded one says so and no --tensor lists them") {
    TempDir dir;
    const std::string file = dir / "model.safetensors";
    WriteSafetensors(file);

    AppState a;
    Start(a, {file, "--tensor", "b.conv"});
    REQUIRE(a.doc.tensor);
    CHECK(a.doc.tensor->shape == qs::Shape{6, 4, 5});
    CHECK(a.doc.notice.find("2x3x4x5 viewed as 6x4x5") != std::string::npos);
    const qs::gui::TensorOrigin* origin = a.doc.origins.find(a.doc.data.get());
    REQUIRE(origin);
    CHECK(origin->note == "2x3x4x5 viewed as 6x4x5");
    CHECK(origin->source.tensor_name == "b.conv");
    // Its session refers to the file and the tensor by name.
    std::string error;
    REQUIRE(qs::gui::SaveSession(a, dir / "m.json", &error));
    const std::string json = read_file(dir / "m.json");
    CHECK(json.find("\"path\": \"model.safetensors\"") != std::string::npos);
    CHECK(json.find("\"tensor\": \"b.conv\"") != std::string::npos);

    // Several tensors, no --tensor: the lesson, with the file's list open; picking one reads it in a job.
    AppState b;
    Start(b, {file});
    CHECK(b.doc.label == "lesson");
    REQUIRE(b.safetensors.open);
    REQUIRE(b.safetensors.checkpoint);
    REQUIRE(b.safetensors.checkpoint->tensors.size() == 3);
    std::string why;
    for (const qs::CheckpointTensor& t : b.safetensors.checkpoint->tensors)
        if (t.dtype == "I64") CHECK_FALSE(qs::gui::TensorLoadable(t, &why));
    CHECK(why.find("I64") != std::string::npos);
    b.intents.push(qs::gui::ModelFileTensorJob(file, "a.weight", b.doc.config));
    qs::gui::ApplyIntents(b);
    WaitForJob(b);
    CHECK(b.doc.error.empty());
    CHECK(b.doc.label == file + " : a.weight");
    CHECK(b.doc.tensor->shape == qs::Shape{4, 6});
    CHECK(b.doc.tensor->values[23] == 23.0f);

    // Dropping a .safetensors file (OpenTensorFile) opens the list rather than a job.
    AppState c;
    Start(c, {"--preset", "lesson"});
    qs::gui::OpenTensorFile(c, file);
    CHECK_FALSE(c.doc.busy());
    CHECK(c.safetensors.open);
    qs::gui::OpenTensorFile(c, dir / "missing.safetensors");
    CHECK_FALSE(c.doc.error.empty());
}

TEST_CASE("gguf: the window lists a .gguf's tensors with their types and opens a quantized one as ggml decodes it") {
    TempDir dir;
    const std::string file = dir / "model.gguf";
    std::vector<float> values(128);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 3.0f;
    const qs::GgmlTypeInfo& q8 = *qs::ggml_type_info(8);
    std::string blocks(static_cast<std::size_t>(qs::ggml_row_bytes(q8, 128)), '\0');
    qs::ggml_quantize_blocks(q8, values.data(), 4, nullptr, blocks.data());
    qs::test::GgufWriter w;
    w.tensor("blk.0.w", {64, 2}, 8, blocks).tensor("blk.0.f", {64, 2}, 0, qs::test::GgufWriter::raw(values))
        .tensor("blk.0.lattice", {256, 1}, 16, std::string(66, '\0'));
    const std::string bytes = w.build();
    std::FILE* f = std::fopen(file.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);

    AppState a;
    Start(a, {file});
    REQUIRE(a.safetensors.open);
    REQUIRE(a.safetensors.checkpoint);
    REQUIRE(a.safetensors.checkpoint->tensors.size() == 3);
    const qs::CheckpointTensor& quantized = a.safetensors.checkpoint->tensors[0];
    CHECK(quantized.dtype == "Q8_0");
    CHECK(quantized.shape == qs::Shape{2, 64});
    std::string why;
    CHECK(qs::gui::TensorLoadable(quantized, &why));
    CHECK_FALSE(qs::gui::TensorLoadable(a.safetensors.checkpoint->tensors[2], &why));
    CHECK(why.find("IQ2_XXS") != std::string::npos);
    a.intents.push(qs::gui::ModelFileTensorJob(file, "blk.0.w", a.doc.config));
    qs::gui::ApplyIntents(a);
    WaitForJob(a);
    CHECK(a.doc.error.empty());
    REQUIRE(a.doc.tensor);
    std::vector<float> expected(128);
    qs::ggml_dequantize(q8, blocks.data(), 128, expected.data());
    CHECK(a.doc.tensor->values == expected);
}

TEST_CASE("safetensors: the window opens a named tensor and the list under xvfb") {
    REQUIRE_MESSAGE(have_xvfb(), "xvfb-run not found: install xvfb and xauth");
    TempDir dir;
    const std::string file = dir / "model.safetensors";
    WriteSafetensors(file);
    Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + file + "' --tensor b.conv --frames 3 --screenshot '" +
                               dir.path + "/one.png'");
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + file + "' --frames 3 --screenshot '" + dir.path +
                           "/list.png'");
    CHECK(r.exit_code == 0);
    r = run(dir, "env -u DISPLAY '" QS_BINARY "' gui '" + file + "' --tensor nope");
    CHECK(r.exit_code == 2);
}

// -------------------------------------------------------------------------------------------------- dialogs

TEST_CASE("dialogs: every File dialog and the tensor list draw offscreen and queue their work") {
    TempDir dir;
    const std::string file = dir / "model.safetensors";
    WriteSafetensors(file);
    AppState app;
    Start(app, {file});
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1280, 720, [] {
        qs::gui::BuildFonts(16.0f);
        qs::gui::ApplyStyle(false, 1.0f);
    }, &error), "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
    using qs::gui::FileDialog;
    for (FileDialog d : {FileDialog::SaveFigure, FileDialog::ExportTensors, FileDialog::SaveSession,
                         FileDialog::OpenSession}) {
        CAPTURE(static_cast<int>(d));
        qs::gui::SetFileDialogDefaults(app.files);
        app.files.open = d;
        app.files.appearing = true;
        for (int i = 0; i < 3; ++i) r.frame([&] {
            qs::gui::DrawSafetensorsBrowser(app.safetensors, app.doc, app.intents);
            qs::gui::DrawFileDialogs(app.files, app);
        });
        CHECK(app.files.open == d);
        if (const char* keep = std::getenv("QS_FIGURE_PNG_DIR")) {
            std::vector<std::uint8_t> px;
            r.read_pixels(px);
            CHECK(qs::gui::WritePngAtomic(std::string(keep) + "/qs_dialog_" + std::to_string(static_cast<int>(d)) +
                                                ".png", r.width(), r.height(), px, true, &error));
        }
    }
    // The defaults are real places: the home directory and the current one.
    CHECK(app.files.figure.path.find("quantscope-figure.png") != std::string::npos);
    CHECK_FALSE(app.files.tensors.directory.empty());

    // A queued tensor export and session save run between frames and report in the dialog.
    app.files.queued_tensors = qs::gui::TensorExport{dir.path, "q", qs::gui::TensorFormat::Npy};
    app.files.queued_session = dir / "q.json";
    REQUIRE(qs::gui::RunQueuedFileWork(app.files, app, &error));
    CHECK_FALSE(app.files.message_is_error);
    CHECK(app.files.message.find("q_codes.npy") != std::string::npos);
    CHECK(path_exists(dir / "q.json"));
}

// ------------------------------------------------------------------------------------------ left column

namespace {

// An offscreen renderer with the app's look, for the left column's panels.
void InitLeftColumn(qs::gui::OffscreenRenderer& r, int w, int h) {
    std::string error;
    REQUIRE_MESSAGE(r.init(w, h, [] {
        qs::gui::BuildFonts(16.0f);
        qs::gui::ApplyStyle(true, 1.0f);
    }, &error), "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
}

// Three frames of the Quantize panel (and the Tensor panel above it when asked), as the left column draws them.
void DrawLeftColumn(qs::gui::OffscreenRenderer& r, AppState& app, bool with_tensor_panel) {
    for (int i = 0; i < 3; ++i) r.frame([&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("left", nullptr, ImGuiWindowFlags_NoDecoration);
        if (with_tensor_panel) qs::gui::DrawTensorPanel(app.tensor_panel, app.doc, app.intents, false);
        qs::gui::DrawControlsPanel(app.controls, app.doc, app.intents);
        ImGui::End();
    });
}

}  // namespace

TEST_CASE("left column: the Tensor and Quantize panels draw for the Generate default 64x64 and other edges") {
    qs::gui::OffscreenRenderer r;
    InitLeftColumn(r, 900, 700);
    // 64x64 is the Generate default; an ImGui table takes at most 64 columns, the row index among them.
    for (const char* shape : {"64x64", "3x63", "1x1", "65x3", "2x3x4"}) {
        CAPTURE(shape);
        AppState app;
        Start(app, {"--random", "normal", "--shape", shape});
        DrawLeftColumn(r, app, true);
        CHECK(app.doc.error.empty());
    }
}

TEST_CASE("quantize panel: the wrap sentence is computed from the tensor and the recipe") {
    qs::gui::OffscreenRenderer r;
    InitLeftColumn(r, 900, 900);
    struct Case {
        std::vector<std::string> args;
        const char* sentence;
    };
    const Case cases[] = {
        {{"--preset", "lesson", "--scale", "3.5", "--zero-point", "-70", "--overflow", "wrap"},
         "Without the clamp, 728.6 at s = 3.5, z = -70 rounds to 138 and the int8 cast wraps it to -118."},
        {{"--preset", "lesson", "--recipe", "naive-max255"},
         "Without the clamp, 728.6 at s = 2.85725, z = 0 rounds to 255 and the int8 cast wraps it to -1."},
        {{"--random", "uniform", "--shape", "4x4", "--low", "-1", "--high", "1", "--scale", "0.001", "--zero-point",
          "0", "--overflow", "wrap"},
         nullptr},  // whatever the values: not the lesson's numbers
        {{"--preset", "lesson", "--overflow", "wrap"},
         "Every value rounds into int8's [-128, 127] here: nothing wraps on this tensor."},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args.front());
        AppState app;
        Start(app, c.args);
        DrawLeftColumn(r, app, false);
        CHECK(app.doc.error.empty());
        const std::string& shown = app.controls.overflow_sentence;
        if (c.sentence) {
            CHECK(shown == c.sentence);
        } else {
            CHECK(shown.find("Without the clamp, ") == 0);
            CHECK(shown.find("728.6") == std::string::npos);
            CHECK(shown.find("s = 0.001, z = 0") != std::string::npos);
        }
    }
}

TEST_CASE("session: view settings it does not understand are listed escaped and few on one line") {
    AppState a;
    Start(a, {"--preset", "lesson"});
    qs::gui::ViewSettings view;
    for (int i = 0; i < 10; ++i) view.emplace_back("future.key" + std::to_string(i), "v\x1b[2J\n" + std::string(500, 'x'));
    const std::string notice = qs::gui::ApplySessionView(a, view);
    INFO(notice);
    CHECK(notice.rfind("skipped view settings this version does not understand: future.key0=v\\x1b[2J\\nxxx", 0) == 0);
    CHECK(notice.find("(10 in all)") != std::string::npos);
    CHECK(notice.find('\n') == std::string::npos);
    CHECK(notice.find('\x1b') == std::string::npos);
    CHECK(notice.size() < 700);
}
