// The window with a number format of FORMATS.md (issue 12 item 3): every kind of format draws its four panels
// and histogram under Xvfb, and a session keeps the format.
#include <doctest/doctest.h>

#include <string>

#include "gui_test_support.hpp"
#include "quantscope/session.hpp"

using namespace qs;
using namespace qs::gui_test;

TEST_CASE("gui formats: a float a codebook and a block format each draw the window and a session keeps the format") {
    REQUIRE(have_xvfb());
    TempDir dir;
    for (const char* dtype : {"fp8-e4m3", "nf4", "mxfp4", "q4_1", "bf16"}) {
        CAPTURE(dtype);
        const std::string png = dir.path + "/" + dtype + ".png", session = dir.path + "/" + dtype + ".json";
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --random normal --shape 64x128 --dtype " +
                                   dtype + " --size 1280x720 --screenshot '" + png + "' --save-session '" + session + "'");
        INFO("stderr: " << r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(file_exists(png));
        const Session s = read_session(session);
        CHECK(s.config.format == *parse_format_name(dtype));
        CHECK(s.config.mode == Mode::Symmetric);
    }
    // --mode cast reaches the window too.
    const Run cast = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --preset lesson --dtype bf16 --mode cast --save-session '" +
                                  dir.path + "/cast.json' --screenshot '" + dir.path + "/cast.png'");
    REQUIRE(cast.exit_code == 0);
    CHECK(read_session(dir.path + "/cast.json").config.mode == Mode::Cast);
}
