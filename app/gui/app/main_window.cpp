#include "gui/app/main_window.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include <imgui.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>  // key codes: 1.86 indexes io.KeysDown by them

#include "gui/app/analysis_tabs.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/left_column.hpp"
#include "gui/app/lesson_control.hpp"
#include "cli/lessons.hpp"
#include "gui/document/stopwatch.hpp"
#include "gui/panels/figure_cover.hpp"
#include "gui/panels/metrics_panel.hpp"
#include "gui/panels/presenter_view.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/error.hpp"
#include "quantscope/presets.hpp"

namespace qs::gui {
namespace {

// Presenter mode with a lesson: the lesson's column takes this share of the width (the 3x3 lesson tensor's
// cells are square, so the figure leaves room at the side of a 16:9 screen).
constexpr float kPresenterLessonShare = 0.3f;
// A window narrower than this many font sizes shows an open lesson as a slide (1280 px at font scale 2 is 49).
constexpr float kSlideBelowFontWidths = 64.0f;
// A window shorter than this many font sizes draws the Bits view compact (720 px at font scale 2 is 20; the
// normal 900 px at font scale 1 is 50): on a slide its rows left the figure above them a third of the height.
constexpr float kBitsCompactBelowFontHeights = 36.0f;

// The View menu's tabs: the analysis tabs (one brings its tab to the front, showing the analysis area), then
// the views that replace the figure, checked while shown.
void DrawTabMenuItems(AppState& app) {
    const std::vector<AnalysisTabSpec>& tabs = AnalysisTabs();
    if (ImGui::BeginMenu("Analysis tab")) {
        for (std::size_t i = 0; i < tabs.size(); ++i) {
            const bool open = app.panels.histogram && static_cast<int>(i) == app.analysis_tab;
            if (tabs[i].shown || !ImGui::MenuItem(tabs[i].title, nullptr, open)) continue;
            app.panels.histogram = true;
            app.request_tab = static_cast<int>(i);
            for (const AnalysisTabSpec& view : tabs)  // the figure and its tabs back in place of a view
                if (view.shown) app.*view.shown = false;
        }
        ImGui::EndMenu();
    }
    for (const AnalysisTabSpec& tab : tabs)
        if (tab.shown) ImGui::MenuItem(tab.menu, nullptr, &(app.*tab.shown));
}

void DrawMenuBar(AppState& app, Frame& frame) {
    if (!ImGui::BeginMenuBar()) return;
    if (ImGui::BeginMenu("File")) {
        ImGui::BeginDisabled(app.doc.busy());
        if (ImGui::BeginMenu("Preset")) {
            for (const std::string& name : preset_names())
                if (ImGui::MenuItem(name.c_str())) LoadPreset(app, name);
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("Lessons")) {  // the shipped lessons (listed while the menu is open)
            std::vector<std::string> files;
            std::string problem = "no lessons folder found";
            try {
                const std::string dir = cli::lessons_dir();
                if (!dir.empty()) files = lesson_files(dir);
            } catch (const std::exception& e) {
                problem = error_text(e);  // QUANTSCOPE_LESSONS names no folder
            }
            if (files.empty()) ImGui::TextDisabled("%s", problem.c_str());
            for (const std::string& file : files) {
                const std::string name = std::filesystem::path(file).stem().string();
                if (ImGui::MenuItem(name.c_str())) OpenLessonNamed(app, file);
            }
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
        ImGui::MenuItem("Presenter: the figure alone", "F5", &app.presenter);
        ImGui::MenuItem("Lesson as a slide on a small window", nullptr, &app.lesson_slides);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("A lesson on a window narrow for its text shows its step beside the figure, without the "
                              "controls; off: the normal layout with the Lesson, Quantize and Tensor tabs");
        DrawTabMenuItems(app);
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
        // A mapped tensor says so: it is read from its file in its own type, and not edited cell by cell.
        const std::string shape = !app.doc.data ? ""
                                  : shape_to_string(app.doc.data->shape()) +
                                        (app.doc.tensor ? "" : std::string(" ") + element_type_name(app.doc.data->view.type) +
                                                                   ", read from the file (too large to edit)");
        std::snprintf(status, sizeof status, "%s   %s   recompute %.2f ms%s", app.doc.label.c_str(), shape.c_str(),
                      app.doc.last_recompute_ms,
                      app.doc.recomputing() ? " (updating...)" : "");
        // Shortened at a word (whole in a tooltip) where large text leaves it less than the bar's rest.
        const float room = right - ImGui::GetCursorPosX() - style.ItemSpacing.x;
        const std::string shown = FitText(status, room);
        const float w = ImGui::CalcTextSize(shown.c_str()).x;
        ImGui::SameLine(std::max(ImGui::GetCursorPosX(), right - w));
        ImGui::TextDisabled("%s", shown.c_str());
        if (shown != status && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", status);
    }
    ImGui::EndMenuBar();
}

void DrawErrorBanner(AppState& app) {
    if (app.doc.error.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_ChildBg, ImGui::ColorConvertU32ToFloat4(palette::kErrorBanner));
    // A long line (a path, quantize's float32 overflow line) wraps before the button: it ran under the button
    // and off the window's edge, cut, at a projector's text size. The banner is as tall as the wrapped text.
    const ImGuiStyle& style = ImGui::GetStyle();
    const float button = ImGui::GetFontSize() * 5.0f;
    const float label = ImGui::CalcTextSize("Error:").x + style.ItemSpacing.x;
    const float wrap = std::max(ImGui::GetFontSize() * 8.0f, ImGui::GetContentRegionAvail().x - label - button - style.ItemSpacing.x);
    const float text_h = ImGui::CalcTextSize(app.doc.error.c_str(), nullptr, false, wrap).y;
    const float h = std::max(ImGui::GetFrameHeight(), text_h + 2.0f * style.FramePadding.y) + style.ItemSpacing.y + style.WindowPadding.y;
    ImGui::BeginChild("##error", ImVec2(-1.0f, h), false, ImGuiWindowFlags_NoScrollbar);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Error:");
    ImGui::SameLine();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
    ImGui::TextUnformatted(app.doc.error.c_str());
    ImGui::PopTextWrapPos();
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), ImGui::GetWindowWidth() - button));
    if (ImGui::Button("Dismiss")) app.doc.error.clear();
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

// Brings `tab` to the front once when --tab asked for it.
ImGuiTabItemFlags TabFlags(Frame& frame, int tab) {
    if (frame.select_tab != tab) return 0;
    frame.select_tab = -1;
    return ImGuiTabItemFlags_SetSelected;
}

// How tall the figure is, and how much height the numbers below it keep at least.
struct RightColumnLayout {
    float figure_h = 0.0f;
    float bottom_min = 0.0f;
};

RightColumnLayout LayOutRightColumn(AppState& app, const QuantView& view, ImVec2 avail, bool bottom) {
    RightColumnLayout layout;
    // The figure first, as tall as its heatmaps need for square cells (at most 70%); the numbers and
    // histograms take the rest. Measured even while the figure is hidden: measuring also keeps its state in
    // step with the tensor (a selection past a smaller tensor's end is cleared), which the Bits and
    // Histograms tabs read.
    layout.figure_h = avail.y;
    if (bottom && view.valid()) {
        const float natural = FigurePanelHeight(app.figure, view, avail.x);
        layout.figure_h = std::min(std::floor(avail.y * 0.70f), natural);
        // A projector's text on a small window: 70% of the column would squeeze the heatmaps to thumbnails.
        // The figure then keeps the height its square cells need and the column scrolls to the numbers below.
        if (layout.figure_h < 0.75f * natural || layout.figure_h < FigurePanelMinHeight(app.figure, view, avail.x)) {
            layout.figure_h = natural;
            layout.bottom_min = std::floor(avail.y * 0.6f);
        }
    }
    if (!app.panels.figure) layout = RightColumnLayout{};
    return layout;
}

// A tab whose numbers would give away what the lesson step covers (s, z, codes, errors) until R.
void DrawCoveredTab() {
    ImGui::Spacing();
    TextWrappedAtSpaces("Covered until the figure is revealed: this tab's numbers would give the answer away. "
                        "Predict, then R.");
}

// The analysis tabs' bar, made from AnalysisTabs(); the open tab is remembered in app.analysis_tab.
void DrawAnalysisTabBar(AppState& app, Frame& frame, const QuantView& view) {
    if (!ImGui::BeginTabBar("##analysis-tabs", ImGuiTabBarFlags_FittingPolicyScroll)) return;
    const std::vector<AnalysisTabSpec>& tabs = AnalysisTabs();
    for (std::size_t i = 0; i < tabs.size(); ++i) {
        const int index = static_cast<int>(i);
        if (tabs[i].shown || !ImGui::BeginTabItem(tabs[i].title, nullptr, TabFlags(frame, index))) continue;
        app.analysis_tab = index;
        if (tabs[i].shows_quantization && FigureCoversOf(app.figure).hides_pipeline(-1)) DrawCoveredTab();
        else tabs[i].draw(app, frame, view);
        ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
}

// Below the figure: the metrics beside the analysis tabs, `h` tall.
void DrawBottomArea(AppState& app, Frame& frame, const QuantView& view, float width, float h) {
    // The landscape, the calibrator table and the comparison need the width: the metrics step aside.
    const std::vector<AnalysisTabSpec>& tabs = AnalysisTabs();
    const bool wide = app.panels.histogram && !tabs[static_cast<std::size_t>(app.analysis_tab)].beside_metrics;
    const bool show_metrics = app.panels.metrics && !wide;
    const float metrics_w = app.panels.histogram ? std::floor(width * 0.42f) : width;
    if (show_metrics) {
        ImGui::BeginChild("##metrics", ImVec2(metrics_w, h), true);
        DrawMetricsPanel(view, FigureCoversOf(app.figure));
        ImGui::EndChild();
        if (app.panels.histogram) ImGui::SameLine();
    }
    if (!app.panels.histogram) return;
    ImGui::BeginChild("##analysis", ImVec2(0.0f, h), true);
    DrawAnalysisTabBar(app, frame, view);
    for (std::size_t i = 0; i < tabs.size(); ++i)  // hidden tabs stop their background work
        if (static_cast<int>(i) != app.analysis_tab && tabs[i].hidden) tabs[i].hidden(app);
    ImGui::EndChild();
}

// The text scales a slide's tab and the figure above it may take, largest first: not below half the window's
// (a projector's font scale 2: 18 px; the figure's titles took 15 px before).
constexpr float kSlideTabScales[] = {1.0f, 0.9f, 0.8f, 0.72f, 0.64f, 0.57f, 0.5f};

// A slide's tab under the figure: `draw`'s text at `scale`, shrunk further (not below `least`) until it ends in
// the child's height, found over the first frames of a lesson step, as the lesson column's is; where even that
// is too tall (q4_K's nesting at 1280 x 720 and font scale 2) the child scrolls instead of cutting the end off.
// Measures the height its contents take at scale 1 for the next frame's layout.
template <class Draw>
void DrawShrunkToFit(AppState& app, const char* id, float scale, float least, Draw&& draw) {
    ImGui::BeginChild(id, ImVec2(0.0f, 0.0f), false);
    if (app.presenter_tab_fit <= 0.0f || std::abs(scale - app.presenter_tab_scale) > 1e-3f) app.presenter_tab_fit = 1.0f;
    app.presenter_tab_scale = scale;
    const float drawn = std::max(least, scale * app.presenter_tab_fit);
    ImGui::SetWindowFontScale(drawn);
    const float top = ImGui::GetCursorPosY(), room = ImGui::GetContentRegionAvail().y;
    draw();
    const float used = ImGui::GetCursorPosY() - top;
    app.presenter_tab_height = used / drawn;
    if (used > room && room > 0.0f)
        app.presenter_tab_fit = std::max(least / scale, app.presenter_tab_fit * std::sqrt(room / used) * 0.97f);
    ImGui::SetWindowFontScale(1.0f);
    ImGui::EndChild();
}

// Presenter mode beside a lesson's text: what the step shows, as a slide. A layer step's lab; a step that names
// an analysis tab ("bits": a k-quant's nested scales) the figure with that tab under it; else the figure alone.
void DrawPresenterLessonSlide(AppState& app, Frame& frame) {
    const QuantView view = app.doc.view();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    for (const AnalysisTabSpec& tab : AnalysisTabs())
        if (tab.shown && app.*tab.shown && view.valid()) {
            // A view of its own (the layer lab) lays itself out and scrolls as in the window's right column.
            ImGui::BeginChild("##presenter-view", avail, false);
            tab.draw(app, frame, view);
            ImGui::EndChild();
            return;
        }
    const std::vector<LessonStep>& steps = app.lesson.lesson->steps;
    const std::string& word = steps[static_cast<std::size_t>(std::clamp<int>(app.lesson.step, 0, static_cast<int>(steps.size()) - 1))]
                                  .state.tab;
    const int tab = word.empty() ? -1 : AnalysisTabIndex(word);
    if (tab < 0 || !view.valid()) {
        DrawPresenterView(app.presenter_view, app.figure, view, avail);
        return;
    }
    // The tab is what the step is about: it takes the height its contents need and the figure above it the
    // rest, both at one text size, the largest at which the figure keeps its images a few lines tall (the figure
    // kept a third of the slide whatever the tab needed, its titles shrunk to 15 px, and the tab was cut at the
    // bottom). The figure leaves out the selected element's pipeline and the note on hidden values: the tab
    // shows that element in full. The contents' height is last frame's; a new step's is not known yet, and its
    // first frame gives the tab half.
    if (app.presenter_tab_step != app.lesson.step || app.presenter_tab_width != avail.x || app.presenter_tab_room != avail.y) {
        if (app.presenter_tab_step != app.lesson.step) app.presenter_tab_height = 0.0f, app.presenter_tab_fit = 0.0f;
        app.presenter_tab_step = app.lesson.step;
        app.presenter_tab_width = avail.x, app.presenter_tab_room = avail.y;
        app.presenter_tab_cap = 1.0f;
    }
    const ImGuiStyle& style = ImGui::GetStyle();
    // The separator between them and a margin (the figure's last line may end a little below its height).
    const float gap = style.ItemSpacing.y * 3.0f + 1.0f + std::round(ImGui::GetTextLineHeight() * 0.25f);
    const float smallest = kSlideTabScales[std::size(kSlideTabScales) - 1];
    float scale = smallest;  // not measured yet, or nothing fits: the smallest
    if (app.presenter_tab_height > 0.0f) {
        for (float s : kSlideTabScales) {
            const float figure = avail.y - gap - s * app.presenter_tab_height;
            if (s <= app.presenter_tab_cap + 1e-6f && figure >= PresenterMinHeight(app.presenter_view, app.figure, view, avail.x, s, false)) {
                scale = s;
                break;
            }
        }
        app.presenter_tab_cap = scale;
    }
    const float least = PresenterMinHeight(app.presenter_view, app.figure, view, avail.x, scale, false);
    const float tab_h = app.presenter_tab_height > 0.0f ? scale * app.presenter_tab_height : avail.y * 0.5f;
    const float figure_h = std::min(avail.y, std::max(std::floor(avail.y - gap - tab_h), least));
    DrawPresenterView(app.presenter_view, app.figure, view, ImVec2(avail.x, figure_h), scale, false);
    const AnalysisTabSpec& spec = AnalysisTabs()[static_cast<std::size_t>(tab)];
    app.analysis_tab = tab;
    ImGui::Separator();
    DrawShrunkToFit(app, "##presenter-tab", scale, smallest, [&] {
        if (spec.shows_quantization && FigureCoversOf(app.figure).hides_pipeline(-1)) DrawCoveredTab();
        else spec.draw(app, frame, view);
    });
}

void DrawRightColumn(AppState& app, Frame& frame) {
    ImGui::BeginChild("##right", ImVec2(0.0f, 0.0f), false);
    const QuantView view = app.doc.view();
    for (const AnalysisTabSpec& tab : AnalysisTabs()) {  // a view that replaces the figure (the layer lab)
        if (!tab.shown || !(app.*tab.shown) || !view.valid()) continue;
        tab.draw(app, frame, view);
        ImGui::EndChild();
        return;
    }
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool bottom = app.panels.metrics || app.panels.histogram;
    const RightColumnLayout layout = LayOutRightColumn(app, view, avail, bottom);
    if (app.panels.figure) {
        const Stopwatch clock;
        if (view.valid()) {
            DrawFigurePanel(app.figure, view, ImVec2(avail.x, layout.figure_h));
        } else {
            ImGui::Dummy(ImVec2(avail.x, layout.figure_h));
        }
        frame.figure_ms = clock.ms();
    }
    if (bottom && view.valid())
        DrawBottomArea(app, frame, view, avail.x, std::max(ImGui::GetContentRegionAvail().y, layout.bottom_min));
    ImGui::EndChild();
}

}  // namespace

void DrawMainWindow(AppState& app, Frame& frame) {
    if (app.request_tab >= 0) {
        frame.select_tab = app.request_tab;
        app.request_tab = -1;
    }
    const std::vector<AnalysisTabSpec>& tabs = AnalysisTabs();
    if (frame.select_tab >= 0 && tabs[static_cast<std::size_t>(frame.select_tab)].shown) {
        // --tab layer: the lab is a view of its own, not an analysis tab
        app.*tabs[static_cast<std::size_t>(frame.select_tab)].shown = true;
        frame.select_tab = -1;
    }
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_MenuBar |
                                   ImGuiWindowFlags_NoBringToFrontOnFocus;
    // A lesson on a window that is small for its text (a projector's 1280 x 720 at font scale 2) is laid out as
    // presenter mode lays it out, a slide, but keeps the menu bar: the normal layout would leave the figure
    // thumbnails and the step's text a scrolling third of the width.
    // A layer step keeps the normal layout: the layer lab is laid out for the right column's width, which at
    // a large text size its controls need.
    const bool slide = !app.presenter && app.lesson_slides && app.lesson.lesson && !app.layer_view &&
                       vp->WorkSize.x < ImGui::GetFontSize() * kSlideBelowFontWidths;
    app.bits.compact = vp->WorkSize.y < ImGui::GetFontSize() * kBitsCompactBelowFontHeights;
    if (app.presenter || slide) {
        // No columns (and in presenter mode no menu bar): the figure, its trace and the metrics strip fill the screen.
        ImGui::Begin("QuantScope", nullptr, slide ? flags : flags & ~ImGuiWindowFlags_MenuBar);
        if (slide) DrawMenuBar(app, frame);
        DrawErrorBanner(app);
        if (app.lesson.lesson) {  // the step's text and numbers beside the figure, for the class to read
            DrawPresenterLessonColumn(app, frame, std::floor(ImGui::GetContentRegionAvail().x * kPresenterLessonShare));
            ImGui::SameLine();
            // In a child of its own: the presenter's lines under the figure start at the column's left edge.
            ImGui::BeginChild("##presenter-figure", ImVec2(0.0f, 0.0f), false, ImGuiWindowFlags_NoScrollbar);
            DrawPresenterLessonSlide(app, frame);
            ImGui::EndChild();
        } else {
            DrawPresenterView(app.presenter_view, app.figure, app.doc.view(), ImGui::GetContentRegionAvail());
        }
        ImGui::End();
        if (slide) DrawSafetensorsBrowser(app.safetensors, app.doc, app.intents);
        DrawFileDialogs(app.files, app);
        return;
    }
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
    HandleLessonKeys(app);
    if (ImGui::IsKeyPressed(GLFW_KEY_F5, false)) app.presenter = !app.presenter;
    if (app.presenter && ImGui::IsKeyPressed(GLFW_KEY_ESCAPE, false) && !io.WantTextInput) app.presenter = false;
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

}  // namespace qs::gui
