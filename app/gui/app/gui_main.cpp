// The window's run: options, then either the headless figure (no display) or the desktop window and its
// frame loop (draw, apply the panels' intents, render), with --screenshot and --bench-frames.
#include "gui/app/gui_main.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "cli/options.hpp"
#include "gui/app/analysis_tabs.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/figure_options.hpp"
#include "gui/app/gui_bench.hpp"
#include "gui/app/gui_options.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/app/main_window.hpp"
#include "gui/app/session_io.hpp"
#include "gui/platform/frame_recover.hpp"
#include "gui/document/stopwatch.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/platform/settings.hpp"
#include "gui/platform/window.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

constexpr float kBaseFontPx = 18.0f;  // at content scale 1 and font scale 1

// --------------------------------------------------------------------------------------- no display

int RenderHeadless(const GuiOptions& o) {
    if (o.bench_frames > 0) throw Error("--bench-frames needs a display (run it under xvfb-run)");
    if (!o.files.save_figure.empty() || !o.files.save_session.empty())
        throw Error("--save-figure and --save-session need a display (run them under xvfb-run)");
    std::string path = o.screenshot;
    if (path.empty()) {
        const std::string dir = CacheDir();
        std::string problem;
        if (!MakeDirs(dir, &problem)) throw Error("no display, and " + problem);
        path = dir + "/figure.png";
    }
    try {
        RenderFigureFile(o.input, o.files.view, o.width > 0 ? o.width : 1600, path);
    } catch (const Error& e) {
        throw Error(std::string("no display, and rendering without one failed: ") + error_text(e));
    }
    std::printf("quantscope: no display; rendered the figure to %s\n", printable(path, kMaxMessageChars).c_str());
    return 0;
}

// ------------------------------------------------------------------------------------------ the loop

// Started when the program is loaded: the bench's time to the first figure counts parsing and opening too.
const Stopwatch& ProcessClock() {
    static const Stopwatch clock;
    return clock;
}
[[maybe_unused]] const Stopwatch& g_started = ProcessClock();  // starts the clock when the program loads

bool Scripted(const GuiOptions& o) { return !o.screenshot.empty() || o.bench_frames > 0; }

// Anything computing in the background: the loop keeps drawing, a screenshot waits for it.
bool AnythingRunning(const AppState& app) {
    return app.doc.busy() || app.doc.recomputing() || LandscapeBusy(app.landscape) || HistogramBusy(app.histogram) ||
           CalibrationBusy(app.calibration) || CompareBusy(app.compare) || ModelSweepBusy(app.model) || ModelCompareBusy(app.model.compare) || FormatsBusy(app.formats) ||
           LayerBusy(app.layer);
}

// Fonts can only be rebuilt between frames: when the monitor's or the user's scale changed.
void UpdateScale(AppWindow& window, AppState& app, Frame& frame, float& applied_scale) {
    frame.font_scale = std::clamp(frame.font_scale, 0.5f, 3.0f);
    frame.ui_scale = window.content_scale() * frame.font_scale;
    if (!window.events().rescale && frame.ui_scale == applied_scale) return;
    const FontSet fonts = BuildFonts(std::round(kBaseFontPx * frame.ui_scale));
    ApplyStyle(true, frame.ui_scale);
    app.figure.annotation_font = fonts.annotation;
    window.reload_fonts();
    applied_scale = frame.ui_scale;
    window.events().rescale = false;
}

// The document's part of a frame before drawing: dropped files, the bench's step, background results.
// Returns whether the quantization was recomputed.
bool UpdateDocument(AppWindow& window, AppState& app, Bench& bench, int frame_index) {
    std::vector<std::string>& dropped = window.events().dropped;
    if (!dropped.empty()) {
        if (app.doc.busy()) app.doc.error = "still loading; drop the file again when it is done";
        else OpenTensorFile(app, dropped.front());
        dropped.clear();
    }
    if (bench.frames > 0 && frame_index > 0) BenchStep(app, bench, frame_index - 1);  // frame 0: the opening
    const std::uint64_t generation_before = app.doc.generation;
    try {
        app.doc.update();
    } catch (const std::exception& e) {
        app.doc.error = error_text(e);  // e.g. out of memory for a huge tensor: say so, keep the window
    }
    return app.doc.generation != generation_before;
}

void DrawFrame(AppWindow& window, AppState& app, Frame& frame, bool scripted) {
    // A screenshot or a benchmark must not depend on where the X server left the pointer.
    window.begin_frame(scripted);
    try {
        HandleShortcuts(app, frame);
        DrawMainWindow(app, frame);
    } catch (const std::exception& e) {
        // A panel threw mid-frame (a core call, an allocation): close the windows, tables, IDs and styles it
        // left open so that Render() does not assert, show the message, keep the window.
        RecoverFrameAfterThrow();
        app.doc.error = error_text(e);
    }
    ApplyIntents(app);  // what the panels asked for, in order, now that they have drawn
    app.doc.end_frame(ImGui::IsAnyItemActive());
    window.render_frame();
}

// `text` as a JSON string: the window's own names and lines are ASCII or UTF-8, but keep the JSON valid whatever
// they are.
std::string JsonQuoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
    }
    return out + "\"";
}

std::string JsonStrings(const std::vector<std::string>& list) {
    std::string out = "[";
    for (std::size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + JsonQuoted(list[i]);
    return out + "]";
}

// --layout-report: what the last frame showed, for tests and for checking a lesson's screens by script.
void PrintLayoutReport(const AppState& app, const Frame& frame) {
    std::vector<std::string> names;
    const int overflowing = CountOverflowingWindows(&names);
    const FigurePanelState& f = app.figure;
    std::string out = "{\"presenter\": " + std::string(app.presenter ? "true" : "false");
    char buf[160];
    std::snprintf(buf, sizeof buf, ", \"font_px\": %.1f, \"text_scale\": %.3f, \"grid\": %s, \"annotation_px\": %.2f",
                  std::round(kBaseFontPx * frame.ui_scale), app.presenter ? app.presenter_view.text_scale : 1.0f,
                  f.used_grid ? "true" : "false", f.annotation_size);
    out += buf;
    auto list = [&](const char* key, const std::array<std::int64_t, 4>& v) {
        std::snprintf(buf, sizeof buf, ", \"%s\": [%lld, %lld, %lld, %lld]", key, static_cast<long long>(v[0]),
                      static_cast<long long>(v[1]), static_cast<long long>(v[2]), static_cast<long long>(v[3]));
        out += buf;
    };
    list("annotated", f.annotated_cells);
    list("visible", f.visible_cells);
    out += ", \"overflowing_windows\": " + std::to_string(overflowing) + ", \"overflowing\": " + JsonStrings(names);
    std::vector<std::string> columns;
    const int clipped = CountClippedTableColumns(&columns);
    out += ", \"clipped_table_columns\": " + std::to_string(clipped) + ", \"clipped_columns\": " + JsonStrings(columns);
    std::vector<std::string> tables;
    CountCutTables(&tables);
    out += ", \"cut_tables\": " + JsonStrings(tables);  // tables shown only in part (cut at a window's edge)
    out += ", \"cut_text\": " + JsonStrings(CutTextWindows());  // text drawn past its window's edge or its line
    out += ", \"colorbar_legend\": " + JsonQuoted(f.colorbar_legend);
    if (app.analysis_tab == AnalysisTabIndex("bits") && !app.bits.report.empty())  // the Bits tab's lines, as printed
        out += ", \"bits\": " + JsonStrings(app.bits.report);
    // What the analysis tabs showed: the error banner, the histogram's bars, the calibrator table, comparison B.
    const auto bars = std::count_if(app.histogram.bars.begin(), app.histogram.bars.end(), [](double b) { return b > 0.0; });
    out += ", \"error\": " + JsonQuoted(app.doc.error) + ", \"histogram_bars\": " + std::to_string(bars) +
           ", \"calibrator_rows\": " + std::to_string(app.calibration.has_shown ? app.calibration.shown.rows.size() : 0) +
           ", \"compare_ready\": " + (app.compare.has_shown && app.compare.shown.error.empty() ? "true" : "false") + "}";
    std::printf("%s\n", out.c_str());
    std::fflush(stdout);
}

bool SaveScreenshot(const AppWindow& window, const std::string& path) {
    std::vector<std::uint8_t> pixels;
    int width = 0, height = 0;
    window.read_back_buffer(pixels, width, height);
    std::string problem;
    if (WritePngAtomic(path, width, height, pixels, true, &problem)) return true;
    cli::print_message_line("error", problem);
    return false;
}

// File menu work (and the scripted --save-figure/--save-session) between frames.
bool RunFileWork(AppWindow& window, AppState& app, bool scripted) {
    if (!HasQueuedFileWork(app.files)) return true;
    std::string problem;
    window.release_context();  // the figure export renders in its own EGL context
    const bool saved = RunQueuedFileWork(app.files, app, &problem);
    window.make_context_current();
    window.wake();  // show the outcome in the dialog
    if (saved || !scripted) return true;
    cli::print_message_line("error", problem);
    return false;
}

void SaveUserSettings(const std::string& path, Settings settings, const AppState& app, const AppWindow& window,
                      const Frame& frame) {
    settings.panels = app.panels;
    settings.figure.clear();
    for (const auto& [key, value] : FigurePanelSettingPairs(app.figure.settings)) settings.figure[key] = value;
    settings.font_scale = std::clamp(frame.font_scale, 0.5f, 3.0f);
    const WindowGeometry g = window.geometry();
    settings.maximized = g.maximized;
    if (!g.maximized) {
        settings.window_x = g.x;
        settings.window_y = g.y;
        settings.window_width = g.width;
        settings.window_height = g.height;
    }
    std::string problem;
    if (!SaveSettings(path, settings, &problem))
        cli::print_message_line("warning", "settings not saved: " + problem);
}

// The app on the command line's input, session view and lesson. Returns what did not open (see StartWithInput).
std::string StartApp(AppState& app, GuiOptions& options, const Settings& settings) {
    app.panels = settings.panels;
    for (const auto& [key, value] : settings.figure) ApplyFigurePanelSetting(app.figure.settings, key.c_str(), value.c_str());
    std::string failed = StartWithInput(app, options.input, options.files);  // also a session's view; not undoable
    if (!options.importance_path.empty() && app.doc.importance) app.doc.importance_path = options.importance_path;
    if (options.lesson) {
        const std::string error_before = app.doc.error;
        OpenLesson(app, options.lesson, options.lesson_step, options.lesson_ref);
        app.doc.history = UndoHistory{};
        if (failed.empty() && app.doc.error != error_before) failed = app.doc.error;  // its step did not apply
    }
    return failed;
}

// The frame loop over an open window; returns the exit code.
int RunWindow(AppWindow& window, GuiOptions& options, const Settings& settings, const std::string& settings_file) {
    const bool scripted = Scripted(options);
    // The app state holds GL textures (through the panels): it goes before the window and its context.
    auto app = std::make_unique<AppState>();
    app->doc.force_sync = scripted;
    Bench bench;
    bench.frames = options.bench_frames;
    bench.window_ready_ms = ProcessClock().ms();
    const std::string failed = StartApp(*app, options, settings);
    // The window shows what did not open and stays; a script asked for something else: the line, exit 2, no PNG.
    if (scripted && !failed.empty()) {
        cli::print_message_line("error", failed);
        return 2;
    }
    bench.values_done_ms = ProcessClock().ms();
    if (scripted) app->doc.finish_recompute_now();
    bench.overview_done_ms = ProcessClock().ms();

    Frame frame;
    frame.select_tab = options.tab;
    frame.font_scale = options.font_scale > 0.0f ? options.font_scale : settings.font_scale;
    float applied_scale = 0.0f;
    std::string titled_label = options.input.label;
    int exit_code = 0;
    const Stopwatch run_clock;
    for (int frame_index = 0; !window.should_close(); ++frame_index) {
        const Stopwatch frame_clock;
        frame.figure_ms = frame.histogram_ms = 0.0;
        const bool input = window.events().wake_frames > 0 || ImGui::IsAnyItemActive();
        const bool running = AnythingRunning(*app);
        // A benchmark's frames and input go at full speed; background work alone shows its progress at up to
        // 30 frames a second (a screenshot waiting for it, too).
        window.wait_for_events(input || bench.frames > 0 || (scripted && !running) ? AppWindow::Wait::Poll
                               : running                                           ? AppWindow::Wait::Throttle
                                                                                   : AppWindow::Wait::Idle);
        if (window.iconified() && !scripted) {
            window.rest();
            continue;
        }
        UpdateScale(window, *app, frame, applied_scale);
        const bool recomputed = UpdateDocument(window, *app, bench, frame_index);
        if (app->doc.label != titled_label) {
            titled_label = app->doc.label;
            window.set_title("QuantScope - " + titled_label);
        }
        const bool ran_before = AnythingRunning(*app);
        DrawFrame(window, *app, frame, scripted);

        // A screenshot waits (up to a minute) for the background work of what it shows to finish, and for a
        // frame drawn after it finished (work that ends while a frame is drawn shows in the next one).
        const bool settled = (!ran_before && !AnythingRunning(*app)) || run_clock.seconds() > 60.0;
        if (!options.screenshot.empty() && frame_index + 1 >= options.frames && settled) {
            if (!SaveScreenshot(window, options.screenshot)) exit_code = 2;
            if (options.layout_report) PrintLayoutReport(*app, frame);
            if (!RunFileWork(window, *app, scripted)) exit_code = 2;  // what the screenshot shows
            break;
        }
        window.swap();
        // A script's --save-figure / --save-session save what its screenshot shows: once the background work
        // (a Model-tab row opened against B) is done, not at the first frame.
        if ((!scripted || settled) && !RunFileWork(window, *app, scripted)) {
            exit_code = 2;
            break;
        }
        if (bench.frames > 0 && frame_index == 0) {
            // The first figure is on screen: that is the opening's time. Then the drag starts.
            bench.open_ms = ProcessClock().ms();
            StartBench(*app, bench);
        } else if (bench.frames > 0) {
            bench.frame_ms.push_back(frame_clock.ms());
            if (recomputed) {
                bench.recompute_ms.push_back(app->doc.last_recompute_ms);
                bench.upload_ms.push_back(frame.figure_ms);
                bench.histogram_ms.push_back(frame.histogram_ms);
            }
            if (frame_index >= bench.frames) {
                PrintBench(*app, bench);
                break;
            }
        }
        if (frame.quit || StopRequested()) window.request_close();
    }
    if (options.use_settings) SaveUserSettings(settings_file, settings, *app, window, frame);
    return exit_code;
}

}  // namespace

int run_gui(const std::vector<std::string>& args) {
    if (cli::print_help_if_asked(args, kGuiHelp)) return 0;
    GuiOptions options = ParseGuiOptions(args);  // qs::Error on a bad option: main prints it, exit 2
    if (!HaveDisplayVariable()) return RenderHeadless(options);

    const std::string settings_file = options.use_settings ? SettingsPath() : std::string();
    Settings settings = options.use_settings ? LoadSettings(settings_file) : Settings{};
    if (options.width > 0) {
        settings.window_width = options.width;
        settings.window_height = options.height;
        settings.maximized = false;
    }
    WindowGeometry geometry;
    geometry.x = settings.window_x;
    geometry.y = settings.window_y;
    geometry.width = settings.window_width;
    geometry.height = settings.window_height;
    geometry.maximized = settings.maximized;
    std::unique_ptr<AppWindow> window = AppWindow::Open(geometry, "QuantScope - " + options.input.label, !Scripted(options));
    if (!window) return RenderHeadless(options);  // a display variable, but no display behind it
    InstallStopSignals();
    return RunWindow(*window, options, settings, settings_file);
}

}  // namespace qs::gui
