// Lessons: every shipped lesson walked step by step headless, each number its notebook printed compared with
// the app's (issue 11's "done means"); the format's strictness on hostile files; `quantscope lesson`.
#include <doctest/doctest.h>

#include <filesystem>

#include "quantscope/lesson.hpp"
#include "quantscope/presets.hpp"
#include "test_helpers.hpp"

namespace {

using qs::test::contains;

const std::string kLessonsDir = std::string(QS_TESTS_DIR) + "/../assets/lessons";

std::string lesson_json(const std::string& steps) {
    return R"({"quantscope_lesson": 1, "title": "t", "source": "seed 000", "steps": )" + steps + "}";
}

}  // namespace

TEST_CASE("every shipped lesson agrees with every number its notebook printed") {
    const std::vector<std::string> files = qs::lesson_files(kLessonsDir);
    REQUIRE(files.size() >= 1);
    for (const std::string& file : files) {
        const qs::Lesson lesson = qs::read_lesson(file);
        CHECK(!lesson.source.empty());
        for (std::size_t k = 0; k < lesson.steps.size(); ++k) {
            const qs::LessonStep& step = lesson.steps[k];
            const std::vector<qs::LessonAgreement> agreements = qs::check_lesson_step(step);
            REQUIRE(agreements.size() == step.printed.size());
            for (std::size_t i = 0; i < agreements.size(); ++i) {
                const qs::LessonAgreement& a = agreements[i];
                INFO(lesson.name << " step " << k + 1 << " '" << step.printed[i].label << "': value "
                                 << a.first_disagreeing << " printed "
                                 << (a.first_disagreeing >= 0 ? step.printed[i].printed[a.first_disagreeing] : "")
                                 << " app " << (a.first_disagreeing >= 0 ? a.app[a.first_disagreeing] : 0.0));
                CHECK(a.agrees());
            }
        }
    }
}

TEST_CASE("a lesson step carries the previous state and hides for itself only") {
    const qs::Lesson l = qs::parse_lesson(lesson_json(R"([
        {"title": "a", "text": "x", "state": {"preset": "lesson", "hide": ["error"], "hide_code": [0, 2]}},
        {"title": "b", "text": "y", "state": {"scale": 3.5, "zero_point": -70, "select": [1, 1]}},
        {"title": "c", "text": "z", "state": {"mode": "symmetric", "granularity": "channel", "axis": 0},
         "printed": [{"label": "s", "quantity": "scale", "value": [5.7370, 2.3268, 5.3906]}]}
    ])"), "t.json", "t");
    REQUIRE(l.steps.size() == 3);
    CHECK(l.steps[0].state.hidden[3]);
    CHECK(l.steps[0].state.hidden_code == 2);
    CHECK(!l.steps[1].state.hidden[3]);
    CHECK(l.steps[1].state.hidden_code == -1);
    CHECK(l.steps[1].state.config.mode == qs::Mode::Manual);
    CHECK(l.steps[1].state.selected == 4);
    CHECK(l.steps[2].state.selected == 4);  // carried
    CHECK(l.steps[2].state.config.mode == qs::Mode::Symmetric);
    const auto a = qs::check_lesson_step(l.steps[2]);
    CHECK(a[0].agrees());
}

TEST_CASE("a printed number that the app does not reproduce is reported as disagreeing") {
    const qs::Lesson l = qs::parse_lesson(lesson_json(R"([
        {"title": "a", "text": "x", "state": {"preset": "lesson-manual"},
         "printed": [{"label": "mse", "quantity": "mse", "value": 170.8752},
                     {"label": "mse", "quantity": "mse", "value": 170.875},
                     {"label": "q", "quantity": "q", "at": [0, 2], "value": 126}]}
    ])"), "t.json", "t");
    const auto a = qs::check_lesson_step(l.steps[0]);
    CHECK(!a[0].agrees());  // 170.87531 is not 170.8752 to four decimals
    CHECK(a[1].agrees());
    CHECK(!a[2].agrees());
    CHECK(a[2].app[0] == 127);
}

TEST_CASE("a bad lesson file names the file and the step") {
    const auto err = [](const std::string& steps) {
        return qs::test::error_of([&] { qs::parse_lesson(lesson_json(steps), "bad.json", "bad"); });
    };
    CHECK(contains(err(R"([])"), "bad.json: steps is empty"));
    CHECK(contains(err(R"([{"title": "a", "text": "x"}])"), "bad.json: step 1: no tensor yet"));
    // A first step whose state sets something but no tensor (it used to dereference the missing tensor).
    for (const char* state : {R"({"dtype": "int4"})", R"({"recipe": "naive-max255"})", R"({"select": [0, 0]})",
                              R"({"hide": ["error"]})", R"({"scale": 1, "zero_point": 0})", "{}"})
        CHECK(contains(err(std::string(R"([{"title": "a", "text": "x", "state": )") + state + "}]"),
                       "bad.json: step 1: no tensor yet"));
    CHECK(contains(err(R"([{"title": "a", "text": "x", "state": {"preset": "nope"}}])"), "step 1: state.preset: unknown preset"));
    const std::string ok = R"({"title": "a", "text": "x", "state": {"preset": "lesson"}}, )";
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "state": {"dtype": "int99"}}])"), "bad.json: step 2: state.dtype"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "state": {"select": [3, 0]}}])"), "step 2: state.select: index 3"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "state": {"scale": 3.5}}])"), "step 2: state: \"scale\" and \"zero_point\" go together"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "state": {"scale": -1, "zero_point": 0}}])"), "step 2: state:"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "state": {"granularity": "group", "group_size": 2}}])"), "step 2: state:"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "colour": 1}])"), "step 2 has an unknown key 'colour'"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "printed": [{"label": "m", "quantity": "msee", "value": 1}]}])"),
                   "step 2: printed: unknown quantity 'msee'"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "printed": [{"label": "q", "quantity": "q", "value": [1, 2]}]}])"),
                   "step 2: printed 'q' has 2 values, the step's state has 9"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "printed": [{"label": "q", "quantity": "q", "value": [[1, 2], [3]]}]}])"),
                   "rows of different lengths"));
    CHECK(contains(err("[" + ok + R"J({"title": "b", "text": "x", "state": {"tensor": "tensor([[1, 2], [3, ...]])"}}])J"),
                   "step 2: state.tensor"));
    CHECK(contains(err("[" + ok + R"({"title": "b", "text": "x", "state": {"tensor": [[1, 2], [3, 4]], "preset": "lesson"}}])"),
                   "both"));
    CHECK(contains(qs::test::error_of([] { qs::parse_lesson("{", "bad.json", "bad"); }), "bad.json: invalid JSON"));
    CHECK(contains(qs::test::error_of([] { qs::parse_lesson(R"({"title": "t"})", "bad.json", "bad"); }),
                   "not a QuantScope lesson of version 1"));
}

TEST_CASE("a lesson tensor may be nested lists or a notebook's printed tensor") {
    const qs::Lesson l = qs::parse_lesson(lesson_json(R"J([
        {"title": "a", "text": "x", "state": {"tensor": [[1, 2], [3, 4]]}},
        {"title": "b", "text": "x", "state": {"tensor": "tensor([[ 0.7373, -0.5947],\n [ 1.0361, -0.2536]])"}}
    ])J"), "t.json", "t");
    CHECK(l.steps[0].state.tensor->shape == qs::Shape{2, 2});
    CHECK(l.steps[1].state.tensor->values[1] == doctest::Approx(-0.5947));
}

#ifdef QS_BINARY
TEST_CASE("quantscope lesson list and check") {
    qs::test::TempDir dir;
    const qs::test::Run list = qs::test::run("lesson list", dir);
    CHECK(list.exit_code == 0);
    CHECK(contains(list.out, "a-quantize-by-hand"));
    CHECK(contains(list.out, "5 steps"));
    const qs::test::Run check = qs::test::run("lesson check a-quantize-by-hand", dir);
    CHECK(check.exit_code == 0);
    CHECK(contains(check.out, "0 printed numbers disagree"));
    const qs::test::Run unknown = qs::test::run("lesson check nope", dir);
    CHECK(unknown.exit_code == 2);
    CHECK(qs::test::one_line(unknown.err));
    CHECK(contains(unknown.err, "unknown lesson 'nope'"));
    // A bad file among the lessons: one line naming it and the step, exit 2.
    qs::test::write_bytes(dir / "z-bad.json", lesson_json(R"([{"title": "a", "text": "x", "state": {"preset": "lesson"}},
        {"title": "b", "text": "x", "state": {"mode": "sideways"}}])"));
    const qs::test::Run bad = qs::test::run("lesson list", dir, "QUANTSCOPE_LESSONS=" + qs::test::shell_quote(dir.path.string()));
    CHECK(bad.exit_code == 2);
    CHECK(qs::test::one_line(bad.err));
    CHECK(contains(bad.err, "z-bad.json: step 2: state.mode"));
    const qs::test::Run wrong = qs::test::run("lesson check " + qs::test::shell_quote(dir / "z-bad.json"), dir);
    CHECK(wrong.exit_code == 2);
    CHECK(contains(wrong.err, "step 2"));
}
#endif
