// `quantscope lesson list|check`: the shipped lessons with their step counts, and a lesson walked headless
// with every number its notebook printed beside the app's (what a teacher runs on a lesson being written).
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/lessons.hpp"
#include "cli/options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {

const char* const kLessonHelp =
    "usage: quantscope lesson list             the shipped lessons: name, steps, title, source notebook\n"
    "       quantscope lesson check NAME|FILE  walk a lesson headless: every number its notebook printed\n"
    "                                          beside the app's; exit 1 when one disagrees\n"
    "\n"
    "Open a lesson in the window with `quantscope gui --lesson NAME [--step K]` (PageDown / PageUp or the\n"
    "arrow keys step through it, R reveals what a step hides). A lesson is a .json file: the format is in\n"
    "the README (\"Lessons\"); a teacher's own file is given by its path.\n";

namespace {

// Headers only (a lesson's steps are `lesson check`'s to walk): a folder of large lessons lists at once.
int ListLessons() {
    const std::string dir = lessons_dir();
    if (dir.empty()) throw Error("no lessons folder found (set QUANTSCOPE_LESSONS to the folder of the lesson files)");
    for (const std::string& file : lesson_files(dir)) {
        const LessonHeader lesson = read_lesson_header(file);
        std::printf("%-28s %3zu steps  %s  [%s]\n", printable(lesson.name).c_str(), lesson.steps,
                    printable(lesson.title, 120).c_str(), printable(lesson.source, 200).c_str());
    }
    return 0;
}

std::string Joined(const std::vector<double>& values, std::size_t limit) {
    std::string out;
    char buf[40];
    for (std::size_t i = 0; i < values.size() && i < limit; ++i) {
        std::snprintf(buf, sizeof buf, "%.10g", values[i]);
        out += (i ? ", " : "") + std::string(buf);
    }
    return values.size() > limit ? out + ", ..." : out;
}

int CheckLesson(const std::string& name) {
    const Lesson lesson = load_lesson(name);
    int disagreements = 0;
    for (std::size_t k = 0; k < lesson.steps.size(); ++k) {
        const LessonStep& step = lesson.steps[k];
        std::printf("step %zu: %s\n", k + 1, printable(step.title, 120).c_str());
        std::vector<LessonAgreement> agreements;
        try {
            agreements = check_lesson_step(step);
        } catch (const Error& e) {
            throw Error(printable(name) + ": step " + std::to_string(k + 1) + ": " + e.what());
        }
        for (std::size_t i = 0; i < agreements.size(); ++i) {
            const LessonNumber& n = step.printed[i];
            const LessonAgreement& a = agreements[i];
            std::printf("  %-4s %s: notebook %s, app %s\n", a.agrees() ? "ok" : "DIFF", printable(n.label).c_str(),
                        Joined(n.values, 8).c_str(), Joined(a.app, 8).c_str());
            disagreements += a.agrees() ? 0 : 1;
        }
    }
    std::printf("%s: %zu steps, %d printed number%s disagree\n", printable(lesson.name).c_str(), lesson.steps.size(),
                disagreements, disagreements == 1 ? "" : "s");
    return disagreements == 0 ? 0 : 1;
}

}  // namespace

int run_lesson(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kLessonHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {});
    if (parsed.positionals.empty()) throw Error("lesson needs list or check NAME (see quantscope lesson --help)");
    const std::string& sub = parsed.positionals[0];
    if (sub == "list") {
        if (parsed.positionals.size() != 1) throw Error("lesson list takes no arguments");
        return ListLessons();
    }
    if (sub == "check") {
        if (parsed.positionals.size() != 2) throw Error("lesson check needs one lesson NAME or FILE.json");
        return CheckLesson(parsed.positionals[1]);
    }
    throw Error("unknown lesson command " + quoted_text(sub) + ": expected list or check");
}

}  // namespace qs::cli
