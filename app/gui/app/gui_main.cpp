// The window: options, GLFW + OpenGL 3.3 core + Dear ImGui set-up, the main loop of imgui's
// example_glfw_opengl3 (poll or wait, sleep while iconified, new frame, draw, render), the headless
// fallback, --screenshot and --bench-frames, and shutdown in reverse order.
#include "gui/app/gui_main.hpp"

#include <algorithm>
#include <chrono>
#include <cfloat>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>  // ErrorCheckEndFrameRecover
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>

#include "cli/options.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/document/stopwatch.hpp"
#include "gui/panels/controls_panel.hpp"
#include "gui/app/file_dialogs.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/histogram_panel.hpp"
#include "gui/panels/calibration_panel.hpp"
#include "gui/panels/compare_panel.hpp"
#include "gui/panels/landscape_panel.hpp"
#include "gui/panels/metrics_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/app/figure_png.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "gui/app/session_io.hpp"
#include "gui/platform/settings.hpp"
#include "gui/widgets/style.hpp"
#include "gui/panels/tensor_panel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/quantize.hpp"

namespace qs::gui {
namespace {

constexpr float kBaseFontPx = 18.0f;      // at content scale 1 and font scale 1
constexpr float kLeftColumnPx = 340.0f;   // at scale 1
constexpr int kGlfwNoDisplay = 0x00010008;  // GLFW_PLATFORM_ERROR: what glfwInit reports without X/Wayland

// ------------------------------------------------------------------------------------------- options

const char* const kGuiHelp =
    "usage: quantscope [gui] [INPUT | --preset NAME | --random normal|uniform --shape RxC[xD] [--seed N]\n"
    "                        [--mean M --std S | --low L --high H] [--outliers K]]\n"
    "                        [quantize options] [--size WxH] [--font-scale F] [--no-settings]\n"
    "                        [--cmap NAME] [--annotate auto|on|off] [--lesson-look] [--grid] [--slice I]\n"
    "                        [--screenshot out.png [--frames N] [--save-figure F.png] [--save-session S.json]]\n"
    "                        [--bench-frames N] [--tab NAME]\n"
    "\n"
    "Opens the window on INPUT (.npy, .csv, .safetensors [--tensor NAME] or a saved SESSION.json), a preset or\n"
    "a random tensor; the lesson's 3x3 tensor by default. A .safetensors file of several tensors without\n"
    "--tensor opens its list of tensors to pick from.\n"
    "Quantize options: --dtype int8 --mode asymmetric|symmetric --scale S --zero-point Z\n"
    "  --granularity tensor|channel|group --axis A --group-size G --rounding half-even|half-away\n"
    "  --calibrate C --recompute-scale --overflow clamp|wrap --recipe naive-max255\n"
    "  --size WxH          window size (default: the last one, or 1600x900)\n"
    "  --font-scale F      text size factor 0.5..3 (Ctrl+= / Ctrl+- / Ctrl+0 in the window)\n"
    "  --no-settings       neither read nor write ~/.config/quantscope/settings.ini\n"
    "  --screenshot PNG    draw N frames (default 5, at least 3), save the window as PNG, exit\n"
    "  --cmap, --annotate, --lesson-look, --grid, --slice   figure settings, as for `quantscope render`\n"
    "  --save-figure PNG   with --screenshot: also File > Save figure as PNG (the `render` image)\n"
    "  --save-session JSON with --screenshot: also File > Save session\n"
    "  --bench-frames N    drag the manual scale for N frames, print timing medians as JSON, exit\n"
    "  --tab NAME          the analysis tab shown first: histograms, landscape, calibrators, compare\n"
    "                      (a screenshot waits until its background computation is done)\n"
    "Without a display the figure is rendered headless to ~/.cache/quantscope/figure.png (or the\n"
    "--screenshot path).\n";

struct GuiOptions {
    cli::Input input;
    int width = 0, height = 0;  // --size; 0: settings or default
    std::string screenshot;
    int frames = 5;
    int bench_frames = 0;
    float font_scale = 0.0f;  // --font-scale; 0: settings or 1
    bool use_settings = true;
    int tab = -1;             // --tab: the analysis tab shown first
    GuiFileOptions files;     // figure options, scripted saves, a model file to list
};

GuiOptions ParseGuiOptions(const std::vector<std::string>& args) {
    const std::vector<cli::OptionSpec> own = {
        {"--size", true}, {"--screenshot", true}, {"--frames", true}, {"--bench-frames", true},
        {"--font-scale", true}, {"--no-settings", false}, {"--tab", true}};
    const cli::ParsedArgs parsed =
        cli::parse_args(args, cli::join(cli::join(cli::join(cli::tensor_source_options(), cli::quantize_options()), own),
                                        GuiFileOptionSpecs()));
    GuiOptions o;
    if (const std::string* v = parsed.get("--size")) {
        const auto x = v->find('x');
        if (x == std::string::npos) throw Error("--size: '" + *v + "' is not WxH (e.g. 1600x900)");
        const std::int64_t w = cli::parse_int("--size", v->substr(0, x));
        const std::int64_t h = cli::parse_int("--size", v->substr(x + 1));
        if (w < 320 || h < 240 || w > 16384 || h > 16384)
            throw Error("--size: " + *v + " is out of range (320x240 to 16384x16384)");
        o.width = static_cast<int>(w);
        o.height = static_cast<int>(h);
    }
    if (const std::string* v = parsed.get("--screenshot")) {
        if (v->empty()) throw Error("--screenshot: the path is empty");
        o.screenshot = *v;
    }
    if (const std::string* v = parsed.get("--frames")) {
        if (o.screenshot.empty()) throw Error("--frames needs --screenshot");
        const std::int64_t n = cli::parse_int("--frames", *v);
        if (n < 1 || n > 100000) throw Error("--frames must be 1 to 100000");
        o.frames = static_cast<int>(std::max<std::int64_t>(n, 3));  // auto-sized windows need 3 frames
    }
    if (const std::string* v = parsed.get("--bench-frames")) {
        const std::int64_t n = cli::parse_int("--bench-frames", *v);
        if (n < 1 || n > 100000) throw Error("--bench-frames must be 1 to 100000");
        if (!o.screenshot.empty()) throw Error("--bench-frames and --screenshot do not go together");
        o.bench_frames = static_cast<int>(n);
    }
    if (const std::string* v = parsed.get("--font-scale")) {
        const double f = cli::parse_double("--font-scale", *v);
        if (!(f >= 0.5 && f <= 3.0)) throw Error("--font-scale must be 0.5 to 3");
        o.font_scale = static_cast<float>(f);
    }
    if (const std::string* v = parsed.get("--tab")) {
        const char* const names[] = {"histograms", "landscape", "calibrators", "compare"};
        for (int i = 0; i < 4; ++i)
            if (*v == names[i]) o.tab = i;
        if (o.tab < 0) throw Error("--tab: '" + *v + "' is not histograms, landscape, calibrators or compare");
    }
    // Screenshots and benchmarks must not depend on what a user saved.
    o.use_settings = !parsed.has("--no-settings") && o.screenshot.empty() && o.bench_frames == 0;
    o.input = LoadGuiInput(parsed, !o.screenshot.empty(), o.files);
    std::vector<FileRole> outputs;
    if (!o.screenshot.empty()) outputs.push_back({"--screenshot", o.screenshot});
    if (!o.files.save_figure.empty()) outputs.push_back({"--save-figure", o.files.save_figure});
    if (!o.files.save_session.empty()) outputs.push_back({"--save-session", o.files.save_session});
    check_distinct_files(cli::input_files(parsed, o.input), outputs);
    return o;
}

// --------------------------------------------------------------------------------------- no display

int RenderHeadless(const GuiOptions& o) {
    if (o.bench_frames > 0) throw Error("--bench-frames needs a display (run it under xvfb-run)");
    if (!o.files.save_figure.empty() || !o.files.save_session.empty())
        throw Error("--save-figure and --save-session need a display (run them under xvfb-run)");
    std::string path = o.screenshot;
    if (path.empty()) {
        const std::string dir = cache_dir();
        std::string problem;
        if (!make_dirs(dir, &problem)) throw Error("no display, and " + problem);
        path = dir + "/figure.png";
    }
    try {
        RenderFigureFile(o.input, o.files.view, o.width > 0 ? o.width : 1600, path);
    } catch (const Error& e) {
        throw Error(std::string("no display, and rendering without one failed: ") + e.what());
    }
    std::printf("quantscope: no display; rendered the figure to %s\n", printable(path, kMaxMessageChars).c_str());
    return 0;
}

// ------------------------------------------------------------------------------------ window events

// SIGINT / SIGTERM close the window the normal way (settings saved, GPU objects freed in order). The loop
// waits at most 0.5 s for events, so it notices soon.
volatile std::sig_atomic_t g_stop_requested = 0;
extern "C" void RequestStop(int) { g_stop_requested = 1; }

// Reached from GLFW callbacks through the window user pointer.
struct LoopEvents {
    int wake_frames = 3;            // frames still to draw after input before waiting again
    std::vector<std::string> dropped;
    bool rescale = true;            // content scale or font scale changed: rebuild fonts and sizes
};

LoopEvents& Events(GLFWwindow* w) { return *static_cast<LoopEvents*>(glfwGetWindowUserPointer(w)); }

// ImGui draws a hover or a click one frame after the event and settles a frame later.
void Wake(GLFWwindow* w) { Events(w).wake_frames = 3; }

void InstallWakeCallbacks(GLFWwindow* window) {
    // Installed before ImGui's backend, which chains to them.
    glfwSetCursorPosCallback(window, [](GLFWwindow* w, double, double) { Wake(w); });
    glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int, int, int) { Wake(w); });
    glfwSetScrollCallback(window, [](GLFWwindow* w, double, double) { Wake(w); });
    glfwSetKeyCallback(window, [](GLFWwindow* w, int, int, int, int) { Wake(w); });
    glfwSetCharCallback(window, [](GLFWwindow* w, unsigned int) { Wake(w); });
    glfwSetWindowSizeCallback(window, [](GLFWwindow* w, int, int) { Wake(w); });
    glfwSetWindowRefreshCallback(window, [](GLFWwindow* w) { Wake(w); });
    glfwSetWindowContentScaleCallback(window, [](GLFWwindow* w, float, float) {
        Events(w).rescale = true;
        Wake(w);
    });
    glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
        for (int i = 0; i < count; ++i) Events(w).dropped.emplace_back(paths[i]);
        Wake(w);
    });
}

// -------------------------------------------------------------------------------------- fonts/style

// Rebuilds the fonts and sizes for `scale` (monitor content scale times the user's font scale). Between
// frames only; the caller re-uploads the font atlas.
FontSet ApplyUiScale(float scale) {
    FontSet fonts = BuildFonts(std::round(kBaseFontPx * scale));
    ApplyStyle(true, scale);
    return fonts;
}

// ------------------------------------------------------------------------------------------ drawing

struct Frame {
    float ui_scale = 1.0f;
    float font_scale = 1.0f;
    bool quit = false;
    double figure_ms = 0;     // wall time of the figure panel's draw this frame (colormap + upload + draw list)
    double histogram_ms = 0;  // the histogram panel's (it recounts when the result changes)
    int select_tab = -1;      // an analysis tab to bring to the front this frame (--tab), -1: none
};

void DrawMenuBar(AppState& app, Frame& frame) {
    if (!ImGui::BeginMenuBar()) return;
    if (ImGui::BeginMenu("File")) {
        ImGui::BeginDisabled(app.doc.busy());
        if (ImGui::BeginMenu("Preset")) {
            for (const std::string& name : preset_names())
                if (ImGui::MenuItem(name.c_str())) LoadPreset(app, name);
            ImGui::EndMenu();
        }
        ImGui::EndDisabled();
        DrawFileMenuItems(app.files, app);
        ImGui::Separator();
        if (ImGui::MenuItem("Quit", "Ctrl+Q")) frame.quit = true;
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Edit")) {
        if (ImGui::MenuItem("Undo", "Ctrl+Z", false, app.doc.history.can_undo() && !app.doc.busy())) app.doc.undo();
        if (ImGui::MenuItem("Redo", "Ctrl+Shift+Z", false, app.doc.history.can_redo() && !app.doc.busy())) app.doc.redo();
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        ImGui::MenuItem("Controls", nullptr, &app.panels.controls);
        ImGui::MenuItem("Figure", nullptr, &app.panels.figure);
        ImGui::MenuItem("Metrics", nullptr, &app.panels.metrics);
        ImGui::MenuItem("Histograms and landscape", nullptr, &app.panels.histogram);
        ImGui::Separator();
        if (ImGui::MenuItem("Larger text", "Ctrl+=")) frame.font_scale *= 1.125f;
        if (ImGui::MenuItem("Smaller text", "Ctrl+-")) frame.font_scale /= 1.125f;
        if (ImGui::MenuItem("Reset text size", "Ctrl+0")) frame.font_scale = 1.0f;
        ImGui::EndMenu();
    }
    // Right-aligned: a running job's progress, else what is loaded and how long the last recompute took.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float right = ImGui::GetWindowWidth() - style.WindowPadding.x * 2.0f;
    if (app.doc.jobs.running()) {
        char overlay[96];
        std::snprintf(overlay, sizeof overlay, "%s  %.0f%%  %.1f s", app.doc.jobs.stage(), 100.0 * app.doc.jobs.progress(),
                      app.doc.jobs.elapsed_seconds());
        const float bar_w = ImGui::GetFontSize() * 14.0f;
        const float label_w = ImGui::CalcTextSize(app.doc.jobs.label().c_str()).x;
        ImGui::SameLine(std::max(ImGui::GetCursorPosX(), right - bar_w - label_w - style.ItemSpacing.x));
        ImGui::TextUnformatted(app.doc.jobs.label().c_str());
        ImGui::SameLine();
        ImGui::ProgressBar(app.doc.jobs.progress(), ImVec2(bar_w, ImGui::GetTextLineHeight()), overlay);
    } else {
        char status[256];
        std::snprintf(status, sizeof status, "%s   %s   recompute %.2f ms%s", app.doc.label.c_str(),
                      app.doc.tensor ? shape_to_string(app.doc.tensor->shape).c_str() : "", app.doc.last_recompute_ms,
                      app.doc.recomputing() ? " (updating...)" : "");
        const float w = ImGui::CalcTextSize(status).x;
        ImGui::SameLine(std::max(ImGui::GetCursorPosX(), right - w));
        ImGui::TextDisabled("%s", status);
    }
    ImGui::EndMenuBar();
}

void DrawErrorBanner(AppState& app) {
    if (app.doc.error.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.45f, 0.10f, 0.10f, 1.0f));
    const float h = ImGui::GetFrameHeightWithSpacing() + ImGui::GetStyle().WindowPadding.y;
    ImGui::BeginChild("##error", ImVec2(-1.0f, h), false, ImGuiWindowFlags_NoScrollbar);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Error:");
    ImGui::SameLine();
    ImGui::TextUnformatted(app.doc.error.c_str());
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowWidth() - ImGui::GetFontSize() * 5.0f));
    if (ImGui::Button("Dismiss")) app.doc.error.clear();
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

void DrawLeftColumn(AppState& app, const Frame& frame) {
    // Wide enough for the labels at any text size, but never more than a third of the window.
    const float width = std::min(kLeftColumnPx * frame.ui_scale, std::floor(ImGui::GetContentRegionAvail().x * 0.33f));
    ImGui::BeginChild("##left", ImVec2(width, 0.0f), true);
    if (!app.doc.notice.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(0.80f, 0.42f, 0.0f, 1.0f));
        ImGui::TextWrapped("%s", app.doc.notice.c_str());
        ImGui::PopStyleColor();
        if (ImGui::SmallButton("OK##notice")) app.doc.notice.clear();
    }
    if (ImGui::BeginTabBar("##left-tabs")) {
        if (ImGui::BeginTabItem("Quantize")) {
            ImGui::BeginChild("##controls-scroll");
            DrawControlsPanel(app.controls, app.doc, app.intents);
            ImGui::EndChild();
            ImGui::EndTabItem();
        }
        if (ImGui::BeginTabItem("Tensor")) {
            ImGui::BeginChild("##tensor-scroll");
            DrawTensorPanel(app.tensor_panel, app.doc, app.intents, app.safetensors.file && !app.safetensors.open);
            ImGui::EndChild();
            ImGui::EndTabItem();
        }
        ImGui::EndTabBar();
    }
    ImGui::EndChild();
}

enum AnalysisTab : int { kTabHistograms = 0, kTabLandscape = 1, kTabCalibrators = 2, kTabCompare = 3 };

// Brings `tab` to the front once when --tab asked for it.
ImGuiTabItemFlags TabFlags(Frame& frame, int tab) {
    if (frame.select_tab != tab) return 0;
    frame.select_tab = -1;
    return ImGuiTabItemFlags_SetSelected;
}

void DrawRightColumn(AppState& app, Frame& frame) {
    ImGui::BeginChild("##right", ImVec2(0.0f, 0.0f), false);
    const QuantView view = app.doc.view();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool bottom = app.panels.metrics || app.panels.histogram;
    const float spacing = ImGui::GetStyle().ItemSpacing.y;
    // The figure first, as tall as its heatmaps need for square cells (at most 70%); the numbers and
    // histograms take the rest.
    float figure_h = avail.y;
    if (bottom && view.valid()) figure_h = std::min(std::floor(avail.y * 0.70f), FigurePanelHeight(app.figure, view, avail.x));
    if (!app.panels.figure) figure_h = 0.0f;
    if (app.panels.figure) {
        const Stopwatch clock;
        if (view.valid()) {
            DrawFigurePanel(app.figure, view, ImVec2(avail.x, figure_h));
        } else {
            ImGui::Dummy(ImVec2(avail.x, figure_h));
        }
        frame.figure_ms = clock.ms();
    }
    if (bottom && view.valid()) {
        const float h = std::max(ImGui::GetContentRegionAvail().y, 0.0f);
        // The landscape, the calibrator table and the comparison need the width: the metrics step aside.
        const bool wide = app.panels.histogram && app.analysis_tab != kTabHistograms;
        const bool show_metrics = app.panels.metrics && !wide;
        const float metrics_w = app.panels.histogram ? std::floor(avail.x * 0.42f) : avail.x;
        if (show_metrics) {
            ImGui::BeginChild("##metrics", ImVec2(metrics_w, h), true);
            DrawMetricsPanel(view);
            ImGui::EndChild();
            if (app.panels.histogram) ImGui::SameLine();
        }
        if (app.panels.histogram) {
            ImGui::BeginChild("##analysis", ImVec2(0.0f, h), true);
            if (ImGui::BeginTabBar("##analysis-tabs")) {
                if (ImGui::BeginTabItem("Histograms", nullptr, TabFlags(frame, kTabHistograms))) {
                    app.analysis_tab = kTabHistograms;
                    app.histogram.follow_element = app.figure.selected;
                    const Stopwatch clock;
                    DrawHistogramPanel(app.histogram, view);
                    frame.histogram_ms = clock.ms();
                    ImGui::EndTabItem();
                }
                if (ImGui::BeginTabItem("Error landscape", nullptr, TabFlags(frame, kTabLandscape))) {
                    app.analysis_tab = kTabLandscape;
                    // Drawn (and computed, in the background) only while its tab is open.
                    const LandscapeClick click = DrawLandscapePanel(app.landscape, view, app.doc.shown_tensor);
                    if (click.requested && !app.doc.busy()) {
                        QuantConfig next = app.doc.config;
                        next.mode = Mode::Manual;
                        next.granularity = Granularity::Tensor;
                        next.axis = 0;
                        next.group_size = 0;
                        next.calibration = Calibration::MinMax;  // manual s and z: no calibrator
                        next.manual_scale = click.scale;
                        next.manual_zero_point = click.zero_point;
                        app.intents.push(ApplyConfigIntent{next, false});
                    }
                    ImGui::EndTabItem();
                }
                if (ImGui::BeginTabItem("Calibrators", nullptr, TabFlags(frame, kTabCalibrators))) {
                    app.analysis_tab = kTabCalibrators;
                    const CalibrationApply apply = DrawCalibrationPanel(app.calibration, view, app.doc.shown_tensor);
                    if (apply.requested && !app.doc.busy()) {
                        app.intents.push(ApplyConfigIntent{apply.config, false});
                    }
                    ImGui::EndTabItem();
                }
                if (ImGui::BeginTabItem("Compare", nullptr, TabFlags(frame, kTabCompare))) {
                    app.analysis_tab = kTabCompare;
                    DrawComparePanel(app.compare, view, app.doc.shown_tensor);
                    ImGui::EndTabItem();
                }
                ImGui::EndTabBar();
            }
            // A hidden landscape stops computing (a big tensor's exact map is seconds of both cores).
            if (app.analysis_tab != kTabLandscape) SuspendLandscape(app.landscape);
            ImGui::EndChild();
        }
    }
    (void)spacing;
    ImGui::EndChild();
}

void DrawMainWindow(AppState& app, Frame& frame) {
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus;
    ImGui::Begin("QuantScope", nullptr, flags);
    DrawMenuBar(app, frame);
    DrawErrorBanner(app);
    if (app.panels.controls) {
        DrawLeftColumn(app, frame);
        ImGui::SameLine();
    }
    DrawRightColumn(app, frame);
    ImGui::End();
    // Their own windows, above the main one.
    DrawSafetensorsBrowser(app.safetensors, app.doc, app.intents);
    DrawFileDialogs(app.files, app);
}

void HandleShortcuts(AppState& app, Frame& frame) {
    const ImGuiIO& io = ImGui::GetIO();
    if (!io.KeyCtrl) return;
    // 1.86 indexes io.KeysDown by GLFW key codes.
    if (ImGui::IsKeyPressed(GLFW_KEY_EQUAL) || ImGui::IsKeyPressed(GLFW_KEY_KP_ADD)) frame.font_scale *= 1.125f;
    if (ImGui::IsKeyPressed(GLFW_KEY_MINUS) || ImGui::IsKeyPressed(GLFW_KEY_KP_SUBTRACT)) frame.font_scale /= 1.125f;
    if (ImGui::IsKeyPressed(GLFW_KEY_0) || ImGui::IsKeyPressed(GLFW_KEY_KP_0)) frame.font_scale = 1.0f;
    if (ImGui::IsKeyPressed(GLFW_KEY_Q, false)) frame.quit = true;
    if (io.WantTextInput) return;  // a text field has its own undo
    const bool z = ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Z));
    if (z && !io.KeyShift) app.doc.undo();
    if ((z && io.KeyShift) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Y))) app.doc.redo();
}

// ------------------------------------------------------------------------------------------- bench

double Median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Bench {
    int frames = 0;
    double s0 = 1.0;
    std::int32_t z0 = 0;
    std::vector<double> frame_ms, recompute_ms, upload_ms, histogram_ms;
};

// Manual mode at the computed per-tensor (s, z), as a teacher would start dragging.
void StartBench(AppState& app, Bench& bench) {
    QuantConfig c = app.doc.config;
    c.granularity = Granularity::Tensor;
    c.axis = 0;
    c.group_size = 0;
    if (c.mode == Mode::Manual) c.mode = app.doc.base_mode;
    app.doc.apply_config(c, false);
    app.doc.finish_recompute_now();
    bench.s0 = app.doc.params.scale.at(0);
    bench.z0 = app.doc.params.zero_point.at(0);
    c.mode = Mode::Manual;
    c.manual_scale = bench.s0;
    c.manual_zero_point = bench.z0;
    app.doc.apply_config(c, false);
    app.doc.finish_recompute_now();
}

// Frame i of n moves the scale geometrically from s0/4 to 4 s0, as a drag of the slider would.
void BenchStep(AppState& app, const Bench& bench, int i) {
    QuantConfig c = app.doc.config;
    const double t = bench.frames > 1 ? static_cast<double>(i) / (bench.frames - 1) : 0.5;
    c.manual_scale = bench.s0 * std::pow(4.0, 2.0 * t - 1.0);
    app.doc.apply_config(c, true);
}

void PrintBench(const AppState& app, const Bench& bench) {
    std::printf("{\"frames\":%d,\"frame_ms_median\":%.3f,\"recompute_ms_median\":%.3f,\"upload_ms_median\":%.3f,"
                "\"elements\":%lld}\n",
                bench.frames, Median(bench.frame_ms), Median(bench.recompute_ms), Median(bench.upload_ms),
                static_cast<long long>(app.doc.tensor ? app.doc.tensor->numel() : 0));
    std::fflush(stdout);
    // What the keys measure, and the rest of the frame, for a person reading the numbers.
    std::fprintf(stderr,
                 "quantscope: bench: recompute = compute_params + quantize_into on the UI thread; upload = the "
                 "figure panel's draw (reduce + colormap + texture upload of 4 heatmaps + draw list); histograms "
                 "%.3f ms median; frame = poll to swap\n",
                 Median(bench.histogram_ms));
}

}  // namespace

// -------------------------------------------------------------------------------------------- run_gui

int run_gui(const std::vector<std::string>& args) {
    if (cli::print_help_if_asked(args, kGuiHelp)) return 0;
    GuiOptions options = ParseGuiOptions(args);  // qs::Error on a bad option: main prints it, exit 2

    const bool has_display = std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY");
    if (!has_display) return RenderHeadless(options);
    if (!glfwInit()) {
        const char* description = nullptr;
        const int code = glfwGetError(&description);
        if (code == kGlfwNoDisplay) return RenderHeadless(options);
        throw Error(std::string("cannot start the window system: ") + (description ? description : "unknown error"));
    }

    const std::string settings_file = options.use_settings ? settings_path() : std::string();
    Settings settings = options.use_settings ? load_settings(settings_file) : Settings{};
    if (options.width > 0) {
        settings.window_width = options.width;
        settings.window_height = options.height;
        settings.maximized = false;
    }
    const bool scripted = !options.screenshot.empty() || options.bench_frames > 0;

    // GL 3.3 core, forward-compatible, as the shaders say "#version 330 core".
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_MAXIMIZED, settings.maximized ? GLFW_TRUE : GLFW_FALSE);
    const std::string title = "QuantScope - " + options.input.label;
    GLFWwindow* window =
        glfwCreateWindow(settings.window_width, settings.window_height, title.c_str(), nullptr, nullptr);
    if (!window) {
        const char* description = nullptr;
        glfwGetError(&description);
        glfwTerminate();
        throw Error(std::string("cannot open an OpenGL 3.3 window: ") + (description ? description : "unknown error"));
    }
    if (settings.window_x >= 0 && settings.window_y >= 0 && !settings.maximized)
        glfwSetWindowPos(window, settings.window_x, settings.window_y);
    glfwMakeContextCurrent(window);
    glfwSwapInterval(scripted ? 0 : 1);

    std::signal(SIGINT, RequestStop);
    std::signal(SIGTERM, RequestStop);
    LoopEvents events;
    glfwSetWindowUserPointer(window, &events);
    InstallWakeCallbacks(window);

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the layout is fixed; what is worth keeping goes to settings.ini
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");

    int exit_code = 0;
    {
        // The app state holds GL textures (through the panels): it lives inside this scope so that it is
        // destroyed before the GL context and ImGui.
        auto app = std::make_unique<AppState>();
        app->panels = settings.panels;
        for (const auto& [key, value] : settings.figure)
            ApplyFigurePanelSetting(app->figure.settings, key.c_str(), value.c_str());
        app->doc.force_sync = scripted;
        StartWithInput(*app, options.input, options.files);  // also a session's view; not an undoable step
        if (scripted) app->doc.finish_recompute_now();

        Frame frame;
        frame.select_tab = options.tab;
        frame.font_scale = options.font_scale > 0.0f ? options.font_scale : settings.font_scale;
        float applied_scale = 0.0f;
        Bench bench;
        bench.frames = options.bench_frames;
        if (bench.frames > 0) StartBench(*app, bench);
        const int total_frames = !options.screenshot.empty() ? options.frames : bench.frames;
        std::string titled_label = options.input.label;

        const Stopwatch run_clock;
        for (int frame_index = 0; !glfwWindowShouldClose(window); ++frame_index) {
            const Stopwatch frame_clock;
            frame.figure_ms = frame.histogram_ms = 0.0;
            // Poll while something moves; otherwise wait for input so the CPU rests.
            const bool animate = scripted || events.wake_frames > 0 || app->doc.busy() || app->doc.recomputing() ||
                                 LandscapeBusy(app->landscape) || CalibrationBusy(app->calibration) ||
                                 CompareBusy(app->compare) || ImGui::IsAnyItemActive();
            if (animate) glfwPollEvents();
            else glfwWaitEventsTimeout(0.5);
            if (events.wake_frames > 0) --events.wake_frames;
            if (glfwGetWindowAttrib(window, GLFW_ICONIFIED) != 0 && !scripted) {
                glfwWaitEventsTimeout(0.1);  // nothing to draw: sleep
                continue;
            }

            // Fonts can only be rebuilt between frames.
            float xscale = 1.0f, yscale = 1.0f;
            glfwGetWindowContentScale(window, &xscale, &yscale);
            frame.font_scale = std::clamp(frame.font_scale, 0.5f, 3.0f);
            frame.ui_scale = std::max(xscale, 0.5f) * frame.font_scale;
            if (events.rescale || frame.ui_scale != applied_scale) {
                const FontSet fonts = ApplyUiScale(frame.ui_scale);
                app->figure.annotation_font = fonts.annotation;
                ImGui_ImplOpenGL3_DestroyFontsTexture();
                ImGui_ImplOpenGL3_CreateFontsTexture();
                applied_scale = frame.ui_scale;
                events.rescale = false;
            }

            if (!events.dropped.empty()) {
                if (app->doc.busy()) app->doc.error = "still loading; drop the file again when it is done";
                else OpenTensorFile(*app, events.dropped.front());
                events.dropped.clear();
            }
            if (bench.frames > 0) BenchStep(*app, bench, frame_index);
            const std::uint64_t generation_before = app->doc.generation;
            try {
                app->doc.update();
            } catch (const std::exception& e) {
                app->doc.error = e.what();  // e.g. out of memory for a huge tensor: say so, keep the window
            }
            const bool recomputed = app->doc.generation != generation_before;
            if (app->doc.label != titled_label) {
                titled_label = app->doc.label;
                glfwSetWindowTitle(window, ("QuantScope - " + titled_label).c_str());
            }

            ImGui_ImplOpenGL3_NewFrame();
            ImGui_ImplGlfw_NewFrame();
            // A screenshot or a benchmark must not depend on where the X server left the pointer.
            if (scripted) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
            ImGui::NewFrame();
            try {
                HandleShortcuts(*app, frame);
                DrawMainWindow(*app, frame);
            } catch (const std::exception& e) {
                // A panel threw mid-frame (a core call, an allocation): close the windows, tables, IDs and
                // styles it left open so that Render() does not assert, show the message, keep the window.
                ImGui::ErrorCheckEndFrameRecover(nullptr);
                app->doc.error = e.what();
            }
            ApplyIntents(*app);  // what the panels asked for, in order, now that they have drawn
            app->doc.end_frame(ImGui::IsAnyItemActive());
            ImGui::Render();

            int fb_w = 0, fb_h = 0;
            glfwGetFramebufferSize(window, &fb_w, &fb_h);
            glViewport(0, 0, fb_w, fb_h);
            glClearColor(0.09f, 0.10f, 0.12f, 1.0f);
            glClear(GL_COLOR_BUFFER_BIT);
            ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

            // A screenshot waits (up to a minute) for the background work of what it shows to finish.
            const bool settled = !(app->doc.busy() || app->doc.recomputing() || LandscapeBusy(app->landscape) ||
                                   CalibrationBusy(app->calibration) || CompareBusy(app->compare)) ||
                                 run_clock.seconds() > 60.0;
            if (!options.screenshot.empty() && frame_index + 1 >= total_frames && settled) {
                std::vector<std::uint8_t> pixels(static_cast<std::size_t>(fb_w) * fb_h * 4);
                glPixelStorei(GL_PACK_ALIGNMENT, 1);
                glReadBuffer(GL_BACK);
                glReadPixels(0, 0, fb_w, fb_h, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
                for (std::size_t i = 3; i < pixels.size(); i += 4) pixels[i] = 255;  // opaque, whatever GL left
                std::string problem;
                if (!write_png_atomic(options.screenshot, fb_w, fb_h, pixels, true, &problem)) {
                    std::fprintf(stderr, "quantscope: error: %s\n", printable(problem, kMaxMessageChars).c_str());
                    exit_code = 2;
                }
                break;
            }
            glfwSwapBuffers(window);
            if (HasQueuedFileWork(app->files)) {
                // Between frames: the figure export renders in its own EGL context. libglvnd refuses to make an
                // EGL context current while the window's GLX one is, and leaves neither current afterwards, so
                // the window's is released first and made current again after. The export restores ImGui's.
                std::string problem;
                glfwMakeContextCurrent(nullptr);
                const bool saved = RunQueuedFileWork(app->files, *app, &problem);
                glfwMakeContextCurrent(window);
                Wake(window);  // show the outcome in the dialog
                if (!saved && scripted) {
                    std::fprintf(stderr, "quantscope: error: %s\n", printable(problem, kMaxMessageChars).c_str());
                    exit_code = 2;
                    break;
                }
            }

            if (bench.frames > 0) {
                bench.frame_ms.push_back(frame_clock.ms());
                if (recomputed) {
                    bench.recompute_ms.push_back(app->doc.last_recompute_ms);
                    bench.upload_ms.push_back(frame.figure_ms);
                    bench.histogram_ms.push_back(frame.histogram_ms);
                }
                if (frame_index + 1 >= bench.frames) {
                    PrintBench(*app, bench);
                    break;
                }
            }
            if (frame.quit || g_stop_requested) glfwSetWindowShouldClose(window, GLFW_TRUE);
        }

        if (options.use_settings) {
            settings.panels = app->panels;
            settings.figure.clear();
            for (const auto& [key, value] : FigurePanelSettingPairs(app->figure.settings)) settings.figure[key] = value;
            settings.font_scale = std::clamp(frame.font_scale, 0.5f, 3.0f);
            settings.maximized = glfwGetWindowAttrib(window, GLFW_MAXIMIZED) != 0;
            if (!settings.maximized) {
                glfwGetWindowPos(window, &settings.window_x, &settings.window_y);
                glfwGetWindowSize(window, &settings.window_width, &settings.window_height);
            }
            std::string problem;
            if (!save_settings(settings_file, settings, &problem))
                std::fprintf(stderr, "quantscope: warning: settings not saved: %s\n", printable(problem, kMaxMessageChars).c_str());
        }
    }  // AppState (textures, worker threads) goes here, while the context is still current

    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return exit_code;
}

}  // namespace qs::gui
