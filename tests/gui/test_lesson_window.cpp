// Lessons in the window: a step's state reaches the document and the figure (tensor, settings, the followed
// cell, what is covered), every shipped lesson's printed numbers agree with the window's own quantization,
// and `gui --lesson X --step K` shows the step under Xvfb, in the normal layout and in presenter mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>

#include "gui_test_support.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <utility>

#include <stb_image.h>

#include "cli/lessons.hpp"
#include "cli/options.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/gui_options.hpp"
#include "gui/app/session_io.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/panels/lesson_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include <imgui_internal.h>  // the keyboard focus (NavId) and SetFocusID
#include "gui/widgets/palette.hpp"
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>  // key codes: ImGui 1.86 indexes io.KeysDown by them

namespace {

using namespace qs::gui_test;

// Pixels of exactly the cover's colour (palette::kCover) in a PNG.
long CoverPixels(const std::string& path) {
    int w = 0, h = 0, channels = 0;
    unsigned char* data = stbi_load(path.c_str(), &w, &h, &channels, 3);
    REQUIRE(data != nullptr);
    const ImU32 c = qs::gui::palette::kCover;
    const int r = static_cast<int>(c & 0xff), g = static_cast<int>((c >> 8) & 0xff), b = static_cast<int>((c >> 16) & 0xff);
    long n = 0;
    for (long i = 0; i < static_cast<long>(w) * h; ++i)
        n += data[i * 3] == r && data[i * 3 + 1] == g && data[i * 3 + 2] == b;
    stbi_image_free(data);
    return n;
}

}  // namespace

TEST_CASE("lesson in the window: a step sets the tensor and settings and covers until revealed") {
    qs::gui::AppState app;
    app.doc.force_sync = true;
    const auto lesson = std::make_shared<const qs::Lesson>(qs::cli::load_lesson("a-quantize-by-hand"));
    qs::gui::OpenLesson(app, lesson, 1);
    app.doc.update();
    CHECK(app.lesson.step == 1);
    CHECK(app.doc.config.mode == qs::Mode::Manual);
    CHECK(app.doc.config.manual_scale == 3.5);
    CHECK(app.doc.overview.codes_mean.at(2) == 127.0f);  // the 3 x 3 overview is the codes themselves
    CHECK(app.figure.selected == 2);
    CHECK(app.figure.covered[qs::gui::kQuantized]);
    CHECK(app.lesson.covers_left);
    app.intents.push(qs::gui::LessonRevealIntent{});
    qs::gui::ApplyIntents(app);
    CHECK(!app.figure.covered[qs::gui::kQuantized]);
    CHECK(!app.lesson.covers_left);
    // Back to step 1 (a panel intent, as the Back button sends): everything but the original covered again.
    app.intents.push(qs::gui::LessonStepIntent{0});
    qs::gui::ApplyIntents(app);
    app.doc.update();
    CHECK(app.lesson.step == 0);
    CHECK(app.figure.covered[qs::gui::kError]);
    CHECK(app.doc.config.mode == qs::Mode::Asymmetric);
    // Past the end: the last step.
    qs::gui::GoToLessonStep(app, 99);
    CHECK(app.lesson.step == static_cast<int>(lesson->steps.size()) - 1);
}

TEST_CASE("lesson in the window: PageDown and Right step forward and PageUp and Left back and R reveals") {
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(320, 240, [] {}, &error), error);
    qs::gui::AppState app;
    app.doc.force_sync = true;
    qs::gui::OpenLesson(app, std::make_shared<const qs::Lesson>(qs::cli::load_lesson("a-quantize-by-hand")), 0);
    // A key is pressed in the frame after it went down: set it in one frame, handle it in the next, release it.
    const auto press = [&](int key) {
        r.frame([&] { ImGui::GetIO().KeysDown[key] = true; });
        r.frame([&] {
            qs::gui::HandleLessonKeys(app);
            ImGui::GetIO().KeysDown[key] = false;
        });
        r.frame([] {});
    };
    press(GLFW_KEY_PAGE_DOWN);
    CHECK(app.lesson.step == 1);
    press(GLFW_KEY_RIGHT);
    CHECK(app.lesson.step == 2);
    press(GLFW_KEY_LEFT);
    CHECK(app.lesson.step == 1);
    CHECK(app.figure.covered[qs::gui::kQuantized]);
    press(GLFW_KEY_R);
    CHECK(!app.figure.covered[qs::gui::kQuantized]);
    press(GLFW_KEY_PAGE_UP);
    CHECK(app.lesson.step == 0);
    press(GLFW_KEY_PAGE_UP);
    CHECK(app.lesson.step == 0);  // the first step stays the first
}

TEST_CASE("lesson in the window: the arrows step the lesson and do not move the keyboard focus") {
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(320, 240, [] {
        ImGuiIO& io = ImGui::GetIO();
        io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;  // as the window sets it
        io.KeyMap[ImGuiKey_LeftArrow] = GLFW_KEY_LEFT;          // as ImGui's GLFW backend maps them
        io.KeyMap[ImGuiKey_RightArrow] = GLFW_KEY_RIGHT;
        io.KeyMap[ImGuiKey_UpArrow] = GLFW_KEY_UP;
        io.KeyMap[ImGuiKey_DownArrow] = GLFW_KEY_DOWN;
        io.KeyMap[ImGuiKey_PageUp] = GLFW_KEY_PAGE_UP;
        io.KeyMap[ImGuiKey_PageDown] = GLFW_KEY_PAGE_DOWN;
        io.KeyMap[ImGuiKey_Space] = GLFW_KEY_SPACE;  // navigation requires it mapped
    }, &error), error);
    qs::gui::AppState app;
    app.doc.force_sync = true;
    qs::gui::OpenLesson(app, std::make_shared<const qs::Lesson>(qs::cli::load_lesson("a-quantize-by-hand")), 0);
    // Two buttons side by side, the left one with the keyboard focus; the app's shortcuts run every frame.
    ImGuiID left = 0;
    bool focus = true;
    const auto body = [&](int key, bool down) {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("lesson-keys", nullptr, ImGuiWindowFlags_NoDecoration);
        ImGui::Button("left");
        left = ImGui::GetItemID();
        if (focus) {
            ImGui::SetFocusID(left, ImGui::GetCurrentWindow());
            GImGui->NavDisableHighlight = false;
            focus = false;
        }
        ImGui::SameLine();
        ImGui::Button("right");
        ImGui::End();
        qs::gui::HandleLessonKeys(app);
        if (key >= 0) ImGui::GetIO().KeysDown[key] = down;
    };
    for (int i = 0; i < 3; ++i) r.frame([&] { body(-1, false); });
    REQUIRE(r.imgui_context()->NavId == left);
    r.frame([&] { body(GLFW_KEY_RIGHT, true); });
    r.frame([&] { body(GLFW_KEY_RIGHT, false); });
    for (int i = 0; i < 3; ++i) r.frame([&] { body(-1, false); });
    CHECK(app.lesson.step == 1);
    CHECK(r.imgui_context()->NavId == left);  // ImGui's navigation would have moved it to "right"
    // Without a lesson the arrows are ImGui's again.
    app.lesson.lesson.reset();
    for (int i = 0; i < 2; ++i) r.frame([&] { body(-1, false); });
    r.frame([&] { body(GLFW_KEY_RIGHT, true); });
    r.frame([&] { body(GLFW_KEY_RIGHT, false); });
    for (int i = 0; i < 3; ++i) r.frame([&] { body(-1, false); });
    CHECK(r.imgui_context()->NavId != left);
}

namespace {

// The window's start on a session file, as `quantscope gui SESSION.json` does.
void StartOnSession(qs::gui::AppState& app, const std::string& path) {
    std::vector<qs::cli::OptionSpec> specs = qs::cli::join(qs::cli::tensor_source_options(), qs::cli::quantize_options());
    specs = qs::cli::join(specs, qs::gui::GuiFileOptionSpecs());
    qs::gui::GuiFileOptions files;
    qs::cli::Input input = qs::gui::LoadGuiInput(qs::cli::parse_args({path}, specs), false, files);
    app.doc.force_sync = true;
    qs::gui::StartWithInput(app, input, files);
    app.doc.finish_recompute_now();
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    REQUIRE(out.good());
}

}  // namespace

TEST_CASE("lesson in the window: a session keeps the open lesson and its step and older sessions open none") {
    TempDir dir;
    qs::gui::AppState a;
    a.doc.force_sync = true;
    qs::gui::OpenLessonNamed(a, "a-quantize-by-hand");
    REQUIRE(a.lesson.lesson);
    qs::gui::GoToLessonStep(a, 2);
    a.doc.finish_recompute_now();
    a.doc.update();
    const std::string path = dir / "lesson.json";
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, path, &error), error);
    const std::string json = read_file(path);
    CHECK(json.find("\"lesson\": \"a-quantize-by-hand\"") != std::string::npos);
    CHECK(json.find("\"lesson.step\": \"3\"") != std::string::npos);

    qs::gui::AppState b;
    StartOnSession(b, path);
    INFO(b.doc.notice);
    CHECK(b.doc.notice.empty());
    REQUIRE(b.lesson.lesson);
    CHECK(b.lesson.lesson->name == "a-quantize-by-hand");
    CHECK(b.lesson.step == 2);
    CHECK(b.doc.config == a.doc.config);  // the session's own state, which the step had set
    // Saved again, the same lesson and step.
    REQUIRE(qs::gui::SaveSession(b, dir / "again.json", &error));
    CHECK(read_file(dir / "again.json").find("\"lesson.step\": \"3\"") != std::string::npos);

    // A session of before lessons were kept (no lesson keys) opens no lesson; one naming a lesson that does not
    // load opens the rest and says which lesson it skipped.
    std::string old = json;
    const std::size_t at = old.find(", \"lesson\": ");
    REQUIRE(at != std::string::npos);
    old.erase(at, old.find('}', at) - at);
    write_file(dir / "old.json", old);
    qs::gui::AppState c;
    StartOnSession(c, dir / "old.json");
    CHECK(c.doc.notice.empty());
    CHECK(!c.lesson.lesson);
    CHECK(c.doc.config == a.doc.config);
    std::string missing = json;
    missing.replace(missing.find("a-quantize-by-hand"), 18, "no-such-lesson");
    write_file(dir / "missing.json", missing);
    qs::gui::AppState d;
    StartOnSession(d, dir / "missing.json");
    CHECK(!d.lesson.lesson);
    CHECK(d.doc.notice.find("the session's lesson 'no-such-lesson' did not open: unknown lesson") != std::string::npos);
    CHECK(d.doc.config == a.doc.config);
}

// A teacher's lesson file beside the session is stored relative to it, as the tensor is: the folder can move.
TEST_CASE("lesson in the window: a session stores its lesson file relative and reopens it after a move") {
    TempDir dir;
    std::filesystem::create_directories(std::filesystem::path(dir / "class") / "lessons");
    const std::string lesson_file = (std::filesystem::path(dir / "class") / "lessons" / "mine.json").string();
    std::filesystem::copy_file(std::string(QS_TESTS_DIR) + "/../assets/lessons/a-quantize-by-hand.json", lesson_file);
    qs::gui::AppState a;
    a.doc.force_sync = true;
    qs::gui::OpenLessonNamed(a, lesson_file);
    REQUIRE(a.lesson.lesson);
    qs::gui::GoToLessonStep(a, 1);
    a.doc.finish_recompute_now();
    std::string error;
    const std::string session = (std::filesystem::path(dir / "class") / "s.json").string();
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, session, &error), error);
    CHECK(read_file(session).find("\"lesson\": \"lessons/mine.json\"") != std::string::npos);
    std::filesystem::rename(dir / "class", dir / "moved");
    qs::gui::AppState b;
    StartOnSession(b, (std::filesystem::path(dir / "moved") / "s.json").string());
    INFO(b.doc.notice);
    REQUIRE(b.lesson.lesson);
    CHECK(b.lesson.lesson->name == "mine");
    CHECK(b.lesson.step == 1);
}

// A session saved at a step that hides parts of the figure (students guess first) reopened with them shown.
TEST_CASE("lesson in the window: a session reopened at a step hides again what the step hides until R") {
    TempDir dir;
    qs::gui::AppState a;
    a.doc.force_sync = true;
    qs::gui::OpenLessonNamed(a, "a-quantize-by-hand");
    REQUIRE(a.lesson.lesson);
    qs::gui::GoToLessonStep(a, 1);  // hides the quantized panel
    a.doc.finish_recompute_now();
    a.doc.update();
    const auto hidden = a.lesson.lesson->steps[1].state.hidden;
    REQUIRE(std::any_of(hidden.begin(), hidden.end(), [](bool b) { return b; }));
    REQUIRE(a.figure.covered == hidden);
    qs::gui::RevealLesson(a);  // revealed before saving: the reopened step still starts hidden
    std::string error;
    REQUIRE_MESSAGE(qs::gui::SaveSession(a, dir / "step2.json", &error), error);

    qs::gui::AppState b;
    StartOnSession(b, dir / "step2.json");
    REQUIRE(b.lesson.lesson);
    CHECK(b.lesson.step == 1);
    CHECK(b.figure.covered == hidden);
    CHECK(b.figure.covered_code == a.lesson.lesson->steps[1].state.hidden_code);
    CHECK(b.lesson.covers_left);
    qs::gui::RevealLesson(b);
    CHECK_FALSE(b.lesson.covers_left);
    CHECK(b.figure.covered == std::array<bool, 4>{});
}

// A session file can lie: a lesson named by megabytes of text, steps out of range. The notice names the lesson
// shortened and keeps the reason (the name's length used to push it out of the shortened notice).
TEST_CASE("lesson in the window: a session's hostile lesson keys open the rest with a short notice") {
    qs::gui::AppState a;
    const std::string notice = qs::gui::ApplySessionView(a, {{"lesson", std::string(1 << 20, 'x')}, {"lesson.step", "3"}});
    INFO(notice);
    CHECK(!a.lesson.lesson);
    CHECK(notice.find("did not open: unknown lesson") != std::string::npos);
    CHECK(notice.size() < 600);
    // A step the lesson does not have is refused as --step refuses it: never clamped, never skipped in silence.
    for (const char* step : {"-1", "0", "6", "1099511627776", "99999999999999999999", "2abc"}) {
        qs::gui::AppState b;
        std::string failure;
        const std::string n = qs::gui::ApplySessionView(b, {{"lesson", "a-quantize-by-hand"}, {"lesson.step", step}}, &failure);
        CAPTURE(step);
        CAPTURE(n);
        CHECK_FALSE(failure.empty());
        CHECK(failure.find('\n') == std::string::npos);
        CHECK(failure.find("lesson.step") != std::string::npos);
    }
}

// The window's keys that a session gives a value they do not take are refused (a screenshot run: the line,
// exit 2), a key of a later version is only skipped; the same rule as every option.
TEST_CASE("session view: a bad value of a known key is refused and an unknown key is skipped") {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"presenter", "yes"}, {"figure.layout", "diagonal"}, {"panels.figure", "2"}, {"lesson", ""},
        {"lesson.step", "abc"}, {"figure.slice", "99"}};
    for (const auto& [key, value] : bad) {
        qs::gui::AppState a;
        std::string failure;
        qs::gui::ApplySessionView(a, {{key, value}}, &failure);
        CAPTURE(key);
        CHECK(failure.find(key + "=" + value) != std::string::npos);
    }
    for (const char* key : {"future.key", "figure.future"}) {
        qs::gui::AppState a;
        std::string failure;
        const std::string notice = qs::gui::ApplySessionView(a, {{key, "1"}}, &failure);
        CHECK(failure.empty());
        CHECK(notice.find(std::string("does not understand: ") + key) != std::string::npos);
    }
}

TEST_CASE("gui --lesson refuses an option the lesson's steps would override") {
    for (const std::vector<std::string>& extra : {std::vector<std::string>{"--dtype", "nf4"}, {"--mode", "symmetric"},
                                                  {"--calibrate", "mse"}, {"--recompute-scale"}}) {
        std::vector<std::string> args = {"--lesson", "a-quantize-by-hand"};
        args.insert(args.end(), extra.begin(), extra.end());
        std::string err;
        try {
            qs::gui::ParseGuiOptions(args);
        } catch (const std::exception& e) {
            err = e.what();
        }
        CAPTURE(extra[0]);
        CHECK(err.find("give no " + extra[0] + " with it") != std::string::npos);
    }
}

namespace {

// Each shipped lesson's every step opened in a window, and the rows its lesson column shows given to `check`.
void ForEachShippedStepRows(const std::function<void(const qs::Lesson&, int step, const std::vector<qs::gui::LessonRow>&)>& check) {
    for (const qs::Lesson& l : qs::cli::shipped_lessons()) {
        qs::gui::AppState app;
        app.doc.force_sync = true;
        qs::gui::OpenLesson(app, std::make_shared<const qs::Lesson>(l), 0);
        for (int k = 0; k < static_cast<int>(l.steps.size()); ++k) {
            qs::gui::GoToLessonStep(app, k);
            app.doc.finish_recompute_now();
            app.doc.update();
            check(l, k, qs::gui::LessonRows(l.steps[static_cast<std::size_t>(k)], app.doc.view()));
        }
    }
}

}  // namespace

TEST_CASE("lesson in the window: every shipped step's printed numbers agree with what the window shows") {
    ForEachShippedStepRows([](const qs::Lesson& l, int k, const std::vector<qs::gui::LessonRow>& rows) {
        REQUIRE(rows.size() == l.steps[static_cast<std::size_t>(k)].printed.size());
        for (const qs::gui::LessonRow& row : rows) {
            INFO(l.name << " step " << k + 1 << " " << row.label << ": notebook " << row.notebook << ", app " << row.app);
            CHECK(row.applies);
            CHECK(row.agrees);
        }
    });
}

namespace {

// Digits after the dot, and significant digits, of a printed number ("0.016929134609192376": 18 and 17).
std::pair<int, int> DigitsOf(const std::string& number) {
    const std::size_t dot = number.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(number.size() - dot - 1);
    int significant = 0;
    for (char c : number)
        if (c >= '0' && c <= '9' && (significant > 0 || c != '0')) ++significant;
    return {decimals, significant};
}

}  // namespace

TEST_CASE("lesson in the window: an agreeing number reads with the notebook's digits") {
    // layer-lab step 1 printed the scale with 18 decimals: "notebook 0.016929134609192376  app 0.0169" and a
    // check mark read as two different numbers.
    ForEachShippedStepRows([](const qs::Lesson& l, int k, const std::vector<qs::gui::LessonRow>& rows) {
        for (const qs::gui::LessonRow& row : rows) {
            if (!row.agrees || row.notebook.find_first_of("eE, ") != std::string::npos) continue;  // one plain number
            INFO(l.name << " step " << k + 1 << " " << row.label << ": notebook " << row.notebook << ", app " << row.app);
            const auto [decimals, significant] = DigitsOf(row.notebook);
            const auto [app_decimals, app_significant] = DigitsOf(row.app);
            CHECK((app_decimals == decimals || app_significant == std::min(significant, 17)));
            if (l.name == "layer-lab" && row.label == "scale") CHECK(row.app == row.notebook);
        }
    });
}

TEST_CASE("lesson in the window: a slider moved away from the step's settings loses the check mark") {
    qs::gui::AppState app;
    app.doc.force_sync = true;
    const auto lesson = std::make_shared<const qs::Lesson>(qs::cli::load_lesson("a-quantize-by-hand"));
    qs::gui::OpenLesson(app, lesson, 4);  // MSE 170.8753 at s = 3.5
    app.doc.update();
    qs::QuantConfig c = app.doc.config;
    c.manual_scale = 3.6;
    REQUIRE(app.doc.apply_config(c, false));
    app.doc.update();
    const auto rows = qs::gui::LessonRows(lesson->steps[4], app.doc.view());
    CHECK(!rows.at(0).agrees);
}

TEST_CASE("gui: --lesson X --step K shows the step also in presenter mode and bad lessons exit 2") {
    REQUIRE(have_xvfb());
    TempDir dir;
    const std::string normal = dir / "normal.png", presenter = dir / "presenter.png", revealed = dir / "revealed.png";
    Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --lesson a-quantize-by-hand --step 2 --size 1600x900 --screenshot '" + normal + "'");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(CoverPixels(normal) > 5000);  // the quantized panel is covered at step 2
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --lesson a-quantize-by-hand --step 2 --presenter --size 1280x720 --font-scale 2 --screenshot '" + presenter + "'");
    REQUIRE(r.exit_code == 0);
    CHECK(CoverPixels(presenter) > 5000);
    r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --lesson a-quantize-by-hand --step 3 --size 1600x900 --screenshot '" + revealed + "'");
    REQUIRE(r.exit_code == 0);
    CHECK(CoverPixels(revealed) == 0);  // step 3 hides nothing

    r = run(dir, std::string("'") + QS_BINARY + "' gui --lesson nope --screenshot '" + normal + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown lesson 'nope'") != std::string::npos);
    r = run(dir, std::string("'") + QS_BINARY + "' gui --lesson a-quantize-by-hand --step 9 --screenshot '" + normal + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("has steps 1 to 5") != std::string::npos);
    r = run(dir, std::string("'") + QS_BINARY + "' gui --step 2 --screenshot '" + normal + "'");
    CHECK(r.exit_code == 2);
    r = run(dir, std::string("'") + QS_BINARY + "' gui --lesson a-quantize-by-hand --preset lesson --screenshot '" + normal + "'");
    CHECK(r.exit_code == 2);
    const std::string bad = dir / "bad.json";
    std::FILE* f = std::fopen(bad.c_str(), "w");
    REQUIRE(f);
    std::fputs(R"({"quantscope_lesson": 1, "title": "t", "source": "s", "steps": [{"title": "a", "text": "b", "state": {"preset": "lesson", "select": [5, 5]}}]})", f);
    std::fclose(f);
    r = run(dir, std::string("'") + QS_BINARY + "' gui --lesson '" + bad + "' --screenshot '" + normal + "'");
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("bad.json: step 1: state.select") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

TEST_CASE("lesson in the window: a big tensor under an open lesson is not quantized again for the printed numbers") {
    // A session that keeps a lesson open over its own 8192 x 8192 tensor quantized it whole at full resolution on
    // the window's thread (1.65 GB instead of 0.40): the rows say the tensor is not the lesson's instead.
    const qs::Lesson lesson = qs::cli::load_lesson("a-quantize-by-hand");
    qs::Tensor t;
    t.shape = {512, 512};
    t.values.assign(512 * 512, 0.25f);
    const SharedQuant big = MakeSharedQuant(std::move(t), qs::QuantConfig{});
    const std::vector<qs::gui::LessonRow> rows = qs::gui::LessonRows(lesson.steps.at(2), big.view());
    REQUIRE(!rows.empty());
    for (const qs::gui::LessonRow& row : rows) {
        CHECK_FALSE(row.applies);
        CHECK(row.app.find("not the lesson's") != std::string::npos);
    }
}
