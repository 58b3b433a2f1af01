// Every command on every hostile input (tests/hostile/): exit 0 or 2, at most one printable line on stderr, no
// signal, no hang (the CLI runner's time limit). In the sanitizer build (.ci/run) any ASan or UBSan report
// aborts the program, so this is also the sanitizers' pass over every parser.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "hostile/hostile_corpus.hpp"
#include "test_helpers.hpp"

namespace {

using qs::test::Run;
using qs::test::run;
using qs::test::shell_quote;
using qs::test::TempDir;

// `command` (its arguments after the input) on every input. The window's renderer loads Mesa, whose
// unloaded drivers' allocations LeakSanitizer cannot attribute (see tests/CMakeLists.txt): no leak check there.
void run_on_corpus(const std::string& command, const std::string& after_input, bool draws = false) {
    TempDir dir;
    for (const std::string& input : qs::hostile::make_inputs(dir / "corpus")) {
        const std::string args = command + " " + shell_quote(input) + " " + after_input;
        const Run r = run(args, dir, draws ? "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1" : "");
        qs::hostile::check_survived(args, r.exit_code, r.err, r.out);
    }
}

}  // namespace

TEST_CASE("hostile corpus: quantize survives every input") {
    TempDir out;
    run_on_corpus("quantize", "--out-error " + shell_quote(out / "e.npy"));
}

TEST_CASE("hostile corpus: inspect survives every input") { run_on_corpus("inspect", ""); }

TEST_CASE("hostile corpus: inspect --json survives every input") { run_on_corpus("inspect", "--json"); }

TEST_CASE("hostile corpus: sweep survives every input") { run_on_corpus("sweep", "--csv"); }

TEST_CASE("hostile corpus: render survives every input") {
    TempDir out;
    run_on_corpus("render", "--out " + shell_quote(out / "f.png"), true);
}

// Every input as a lesson file: the lesson reader's pass (tests/hostile/corpus/lesson_*.json are the lessons
// that lie: a first step without a tensor, indices of 2^63, nesting, escapes in titles, float32's limits).
TEST_CASE("hostile corpus: lesson check survives every input") { run_on_corpus("lesson check", ""); }
