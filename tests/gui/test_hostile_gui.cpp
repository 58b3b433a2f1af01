// The window on every hostile input (tests/hostile/): `gui INPUT --screenshot` (and `gui --lesson FILE` on the
// lessons) exits 0 or 2 with at most one printable line on stderr, no signal, no hang.
// One Xvfb for the whole corpus; each run has its own time limit.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../hostile/hostile_corpus.hpp"
#include "gui_test_support.hpp"

using namespace qs::gui_test;

TEST_CASE("gui: --screenshot survives every hostile input") {
    REQUIRE(have_xvfb());
    TempDir dir;
    const std::vector<std::string> inputs = qs::hostile::make_inputs(dir / "corpus");
    std::string script;
    // The lessons that lie (lesson_*.json) also as --lesson FILE, at their first step and at a step they lack.
    std::vector<std::string> commands;
    for (const std::string& input : inputs) {
        commands.push_back("gui '" + input + "'");
        if (input.find("/lesson_") != std::string::npos)
            for (const char* step : {"1", "2", "-1"}) commands.push_back("gui --lesson '" + input + "' --step " + step);
    }
    for (std::size_t i = 0; i < commands.size(); ++i) {
        const std::string n = std::to_string(i);
        script += "timeout -k 5 60 '" QS_BINARY "' " + commands[i] + " --no-settings --frames 3 --screenshot '" +
                  dir / "shot.png" + "' >'" + dir / ("out" + n) + "' 2>'" + dir / ("err" + n) + "'; echo $? >'" +
                  dir / ("rc" + n) + "'\n";
    }
    {
        std::ofstream(dir / "run.sh") << script;
    }
    run(dir, std::string(kXvfb) + "sh '" + dir / "run.sh" + "'");
    for (std::size_t i = 0; i < commands.size(); ++i) {
        const std::string n = std::to_string(i);
        const std::string rc = read_file(dir / ("rc" + n));
        REQUIRE_MESSAGE(!rc.empty(), commands[i] << ": not run");
        qs::hostile::check_survived(commands[i], std::stoi(rc), read_file(dir / ("err" + n)),
                                    read_file(dir / ("out" + n)));
    }
}
