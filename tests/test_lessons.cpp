// Lessons: every shipped lesson walked step by step headless, each number its notebook printed compared with
// the app's (issue 11's "done means"); the format's strictness on hostile files; `quantscope lesson`.
#include <doctest/doctest.h>

#include <algorithm>
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

// A printed value's tolerance comes from its literal: a literal beyond a double (whose "last digit" is worth
// infinity, or whose exponent wraps when read into an int) would agree with anything.
TEST_CASE("a printed literal beyond a double is refused and not taken as any tolerance") {
    const auto printed = [](const std::string& value, const std::string& extra = "") {
        return lesson_json(R"([{"title": "a", "text": "x", "state": {"preset": "lesson-manual"},
            "printed": [{"label": "mse", "quantity": "mse", "value": )" + value + extra + "}]}]");
    };
    for (const std::string value : {"0.0e400", "9e-4294967295", "0e99999999999999999999", "1e-400"}) {
        CAPTURE(value);
        const std::string err = qs::test::error_of([&] { qs::parse_lesson(printed(value), "p.json", "p"); });
        CHECK(contains(err, "p.json: step 1: printed 'mse': "));
    }
    // With a tolerance of its own the literal is read as the number it is; exponents read as written.
    const qs::Lesson l = qs::parse_lesson(printed("0.0e400", R"(, "tolerance": 171)"), "p.json", "p");
    CHECK(qs::check_lesson_step(l.steps[0])[0].agrees());
    const qs::Lesson e = qs::parse_lesson(printed("1708753e-4"), "p.json", "p");
    CHECK(e.steps[0].printed[0].tolerance[0] == doctest::Approx(5e-5));
    CHECK(qs::check_lesson_step(e.steps[0])[0].agrees());
    CHECK(!qs::check_lesson_step(qs::parse_lesson(printed("0.0e0"), "p.json", "p").steps[0])[0].agrees());
}

TEST_CASE("a cell index that is not an integer is named as such") {
    for (const std::string cell : {R"(["0", 0])", R"([0.5, 0])", R"([null, 0])"}) {
        const std::string err = qs::test::error_of([&] {
            qs::parse_lesson(lesson_json(std::string(R"([{"title": "a", "text": "x", "state": {"preset": "lesson", "select": )") + cell + "}}]"),
                             "c.json", "c");
        });
        CAPTURE(cell);
        CHECK(contains(err, "step 1: state.select: index"));
        CHECK(contains(err, "is not an integer"));
    }
    CHECK(contains(qs::test::error_of([] {
                       qs::parse_lesson(lesson_json(R"([{"title": "a", "text": "x", "state": {"preset": "lesson", "select": [3, 0]}}])"), "c.json", "c");
                   }),
                   "index 3 is outside 0..2"));
}

// What editors write: a byte order mark, the version as 1.0, a file named in capitals.
TEST_CASE("a lesson with a BOM or version 1.0 or a .JSON name is read") {
    const std::string body = lesson_json(R"([{"title": "a", "text": "x", "state": {"preset": "lesson"}}])");
    CHECK(qs::parse_lesson("\xEF\xBB\xBF" + body, "b.json", "b").steps.size() == 1);
    std::string v10 = body;
    v10.replace(v10.find(": 1,"), 4, ": 1.0,");
    CHECK(qs::parse_lesson(v10, "v.json", "v").steps.size() == 1);
    CHECK(contains(qs::test::error_of([&] {
                       std::string v2 = body;
                       qs::parse_lesson(v2.replace(v2.find(": 1,"), 4, ": 1.5,"), "v.json", "v");
                   }),
                   "not a QuantScope lesson of version 1"));
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "Upper.JSON", body);
    qs::test::write_bytes(dir / "notes.txt", body);
    const std::vector<std::string> files = qs::lesson_files(dir.path.string());
    REQUIRE(files.size() == 1);
    CHECK(qs::read_lesson(files[0]).name == "Upper");
    CHECK(qs::is_lesson_path("a.Json"));
    CHECK(!qs::is_lesson_path("a.json.txt"));
}

// The folder scan looks at every file before it sorts (it stopped at 1001, so names past it went missing), and
// a folder that is not one is an error, not an empty list.
TEST_CASE("the lessons folder is read in full and a missing one is an error") {
    qs::test::TempDir dir;
    const std::string body = lesson_json(R"([{"title": "a", "text": "x", "state": {"preset": "lesson"}}])");
    for (int i = 0; i < 1500; ++i) qs::test::write_bytes(dir / ("l" + std::to_string(i) + ".json"), body);
    const std::vector<std::string> files = qs::lesson_files(dir.path.string());
    CHECK(files.size() == 1500);
    CHECK(std::is_sorted(files.begin(), files.end()));
    CHECK(contains(qs::test::error_of([&] { qs::lesson_files(dir / "l1.json"); }), "cannot be read"));
    CHECK(contains(qs::test::error_of([&] { qs::lesson_files(dir / "nowhere"); }), "lessons folder"));
#ifdef QS_BINARY
    const qs::test::Run found = qs::test::run("lesson check l1004", dir, "QUANTSCOPE_LESSONS=" + qs::test::shell_quote(dir.path.string()));
    CHECK(found.exit_code == 0);
    for (const std::string& where : {dir / "nowhere", dir / "l1.json"}) {
        for (const char* command : {"lesson list", "lesson check l1"}) {
            const qs::test::Run r = qs::test::run(command, dir, "QUANTSCOPE_LESSONS=" + qs::test::shell_quote(where));
            CAPTURE(command);
            CHECK(r.exit_code == 2);
            CHECK(qs::test::one_line(r.err));
            CHECK(contains(r.err, "QUANTSCOPE_LESSONS="));
        }
    }
#endif
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
    // list reads each lesson's header only (a folder of large lessons lists at once): a bad step is check's to
    // find, with one line naming the file and the step, exit 2; a bad header is list's.
    qs::test::write_bytes(dir / "z-bad.json", lesson_json(R"([{"title": "a", "text": "x", "state": {"preset": "lesson"}},
        {"title": "b", "text": "x", "state": {"mode": "sideways"}}])"));
    const std::string env = "QUANTSCOPE_LESSONS=" + qs::test::shell_quote(dir.path.string());
    const qs::test::Run listed = qs::test::run("lesson list", dir, env);
    CHECK(listed.exit_code == 0);
    CHECK(contains(listed.out, "z-bad"));
    CHECK(contains(listed.out, "2 steps"));
    const qs::test::Run bad = qs::test::run("lesson check z-bad", dir, env);
    CHECK(bad.exit_code == 2);
    CHECK(qs::test::one_line(bad.err));
    CHECK(contains(bad.err, "z-bad.json: step 2: state.mode"));
    qs::test::write_bytes(dir / "z-header.json", R"({"quantscope_lesson": 1, "title": "t", "steps": []})");
    const qs::test::Run header = qs::test::run("lesson list", dir, env);
    CHECK(header.exit_code == 2);
    CHECK(contains(header.err, "z-header.json: the lesson lacks \"source\""));
    const qs::test::Run wrong = qs::test::run("lesson check " + qs::test::shell_quote(dir / "z-bad.json"), dir);
    CHECK(wrong.exit_code == 2);
    CHECK(contains(wrong.err, "step 2"));
}
#endif
