#include "gui/app/lesson_control.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>

#include <imgui.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>  // key codes: 1.86 indexes io.KeysDown by them

#include "cli/lessons.hpp"
#include "gui/app/analysis_tabs.hpp"
#include "gui/app/app_state.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {

namespace fs = std::filesystem;

namespace {

// What step `s` hides until R (cells, the code): the step's covers, whether it comes from the step or a session.
void CoverAsStep(AppState& app, const LessonState& s) {
    app.figure.covered = s.hidden;
    app.figure.covered_code = s.hidden_code;
    app.lesson.covers_left = s.hidden_code >= 0 || std::any_of(s.hidden.begin(), s.hidden.end(), [](bool b) { return b; });
}

}  // namespace

void OpenLesson(AppState& app, std::shared_ptr<const Lesson> lesson, int step, const std::string& ref) {
    app.lesson.ref = ref.empty() && lesson ? lesson->name : ref;
    app.lesson.lesson = std::move(lesson);
    app.lesson.rows_step = -1;
    app.show_lesson_tab = true;
    GoToLessonStep(app, step);
}

void OpenLessonNamed(AppState& app, const std::string& name_or_path) {
    try {
        OpenLesson(app, std::make_shared<const Lesson>(cli::load_lesson(name_or_path)), 0, name_or_path);
    } catch (const std::exception& e) {
        app.doc.error = error_text(e);  // the window stays; the banner names the file and step
    }
}

bool RestoreLesson(AppState& app, const std::string& ref, int step, std::string* error) {
    std::shared_ptr<const Lesson> lesson;
    try {
        lesson = std::make_shared<const Lesson>(cli::load_lesson(ref));
    } catch (const std::exception& e) {
        if (error) *error = error_text(e);
        return false;
    }
    const int steps = static_cast<int>(lesson->steps.size());
    if (step < 0 || step >= steps) {  // as --step: a step the lesson does not have is refused, not clamped
        if (error)
            *error = "lesson.step " + std::to_string(step + 1) + ": lesson " + quoted_text(lesson->name) + " has steps 1 to " +
                     std::to_string(steps);
        return false;
    }
    app.lesson.step = step;
    app.lesson.lesson = std::move(lesson);
    app.lesson.ref = ref;
    app.lesson.rows_step = -1;
    // The session's own tensor and settings stay; what the step hides is hidden again (R reveals it), as when
    // the step was reached: a session saved mid-lesson must not give the answer away when it is reopened.
    CoverAsStep(app, app.lesson.lesson->steps[static_cast<std::size_t>(app.lesson.step)].state);
    app.show_lesson_tab = true;
    return true;
}

std::string LessonRefForSession(const AppState& app) {
    if (!app.lesson.lesson) return {};
    const std::string& ref = app.lesson.ref.empty() ? app.lesson.lesson->name : app.lesson.ref;
    if (!is_lesson_path(ref)) return ref;  // a shipped name
    std::error_code ec;
    const fs::path file = fs::absolute(ref, ec).lexically_normal();
    if (ec) return ref;
    // The shipped folder's own file (File > Lessons opens them by path): its name, which loads it anywhere.
    std::string dir;
    try {
        dir = cli::lessons_dir();
    } catch (const std::exception&) {  // QUANTSCOPE_LESSONS names no folder: the lesson is no shipped one
    }
    const fs::path shipped = fs::path(dir) / (app.lesson.lesson->name + ".json");
    if (!dir.empty() && fs::equivalent(file, shipped, ec) && !ec) return app.lesson.lesson->name;
    return file.string();
}

void GoToLessonStep(AppState& app, int step) {
    if (!app.lesson.lesson || app.doc.busy()) return;
    const Lesson& lesson = *app.lesson.lesson;
    step = std::clamp(step, 0, static_cast<int>(lesson.steps.size()) - 1);
    const LessonState& s = lesson.steps[static_cast<std::size_t>(step)].state;
    app.lesson.step = step;
    // The same tensor keeps its place in the undo history and its zoom; another one replaces it.
    if (app.doc.tensor != s.tensor) {
        if (!app.doc.apply_tensor(s.tensor, s.tensor_label, &s.config)) return;
        app.figure.view.reset();
    } else if (app.doc.config != s.config) {
        std::string problem;
        if (!app.doc.apply_config(s.config, false, &problem)) app.doc.error = problem;
    }
    app.figure.selected = s.selected;
    if (s.selected >= 0) app.figure.slice = static_cast<int>(s.selected / s.tensor->slice_size());
    CoverAsStep(app, s);
    if (!s.tab.empty()) app.request_tab = AnalysisTabIndex(s.tab);  // the step's tab to the front (its words are the tabs')
    app.layer_view = s.layer.has_value();  // a layer step: the layer lab with the step's settings
    if (s.layer) {
        app.layer.settings = LayerSettingsFromLesson(*s.layer);
        ApplyLessonMethod(app.layer, *s.layer);
        app.lesson.covers_left = app.lesson.covers_left || app.layer.method.covered;
    }
}

void RevealLesson(AppState& app) {
    app.figure.covered = {};
    app.figure.covered_code = -1;
    app.layer.method.covered = false;
    app.lesson.covers_left = false;
}

void HandleLessonKeys(AppState& app) {
    ImGuiIO& io = ImGui::GetIO();
    // While a lesson is open the arrows and PageUp / PageDown are the lesson's: ImGui's keyboard navigation
    // would also move the focus with them (and page the window), so it rests from the next frame on (it reads the
    // keys in NewFrame, before any of this), unless a text field has the keys. Tab still moves between fields.
    const bool lesson_keys = app.lesson.lesson && !io.WantTextInput;
    if (lesson_keys && (io.ConfigFlags & ImGuiConfigFlags_NavEnableKeyboard)) {
        io.ConfigFlags &= ~ImGuiConfigFlags_NavEnableKeyboard;
        app.lesson.keyboard_nav_suspended = true;
    } else if (!lesson_keys && app.lesson.keyboard_nav_suspended) {
        io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
        app.lesson.keyboard_nav_suspended = false;
    }
    if (!app.lesson.lesson || io.WantTextInput || ImGui::IsAnyItemActive() || io.KeyCtrl || io.KeyAlt) return;
    if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_DOWN) || ImGui::IsKeyPressed(GLFW_KEY_RIGHT)) GoToLessonStep(app, app.lesson.step + 1);
    if (ImGui::IsKeyPressed(GLFW_KEY_PAGE_UP) || ImGui::IsKeyPressed(GLFW_KEY_LEFT)) GoToLessonStep(app, app.lesson.step - 1);
    if (ImGui::IsKeyPressed(GLFW_KEY_R, false)) RevealLesson(app);
}

}  // namespace qs::gui
