// A scripted window (--screenshot) whose input does not open: the window itself shows the reason in a banner or
// notice and stays, but a script asked for a picture of something else, so it gets the command line's answer to
// a refused input: one line on stderr, exit 2, no PNG. The inputs here pass the option parser and fail only
// when the window opens them (values checked on the mapped file, the session's lesson, a tensor of a checkpoint).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../test_helpers.hpp"
#include "gui_test_support.hpp"
#include "quantscope/npy.hpp"

namespace {

using qs::gui_test::file_exists;
using qs::gui_test::kXvfb;
using qs::gui_test::path_exists;
using qs::test::contains;
using qs::test::one_line;
using qs::test::safetensors_file;
using qs::test::write_bytes;

std::string Floats(const std::vector<float>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// A session of `tensor_path` (relative to the session) with `extra_view` appended to its view.
std::string SessionText(const std::string& tensor_path, const std::string& extra_view) {
    return "{\"quantscope_session\": 1, \"tensor\": {\"kind\": \"file\", \"path\": \"" + tensor_path +
           "\"}, \"quantization\": {\"dtype\": \"int8\", \"mode\": \"asymmetric\", \"granularity\": \"tensor\", "
           "\"axis\": 0, \"group_size\": 0, \"rounding\": \"half-even\", \"overflow\": \"clamp\", \"scale\": 1, "
           "\"zero_point\": 0, \"calibration\": \"minmax\", \"percentile\": 99.99, \"recompute_scale\": false}, "
           "\"view\": {\"label\": \"t\"" + extra_view + "}}";
}

}  // namespace

TEST_CASE("gui --screenshot: an input the window refuses exits 2 with one line and no PNG") {
    REQUIRE_MESSAGE(qs::gui_test::have_xvfb(), "xvfb-run not found: install xvfb and xauth");
    qs::gui_test::TempDir dir;
    const float nan = std::nanf("");
    write_bytes(dir / "nan.npy", qs::npy_header_bytes("<f4", {2, 2}) + Floats({1, nan, 3, 4}));
    write_bytes(dir / "good.npy", qs::npy_header_bytes("<f4", {2, 2}) + Floats({1, 2, 3, 4}));
    write_bytes(dir / "nan_session.json", SessionText("nan.npy", ""));
    write_bytes(dir / "lesson_session.json", SessionText("good.npy", ", \"lesson\": \"no-such-lesson\", \"lesson.step\": \"2\""));
    const std::string header = "{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [0, 16]}, "
                               "\"b\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": [16, 32]}}";
    write_bytes(dir / "two.safetensors", safetensors_file(header, Floats({1, 2, 3, 4, 1, nan, 3, 4})));
    write_bytes(dir / "broken.safetensors.index.json", "{\"weight_map\": {\"a\": \"missing.safetensors\"}}");

    struct Case {
        std::string args, says;
    };
    const std::vector<Case> cases = {
        {"'" + dir / "nan.npy" + "'", "NaN"},
        {"'" + dir / "nan_session.json" + "'", "NaN"},
        {"'" + dir / "two.safetensors" + "' --tensor b", "NaN"},
        {"'" + dir / "lesson_session.json" + "'", "the session's lesson 'no-such-lesson' did not open"},
        {"'" + dir / "broken.safetensors.index.json" + "'", "missing.safetensors"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const std::string png = dir / "shot.png";
        const auto r = qs::gui_test::run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui " + c.args +
                                                  " --no-settings --frames 3 --screenshot '" + png + "'");
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(one_line(r.err));
        CHECK(contains(r.err, c.says));
        CHECK_FALSE(path_exists(png));
    }
    // The same session on good values opens and is drawn.
    write_bytes(dir / "good_session.json", SessionText("good.npy", ""));
    const auto r = qs::gui_test::run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + dir / "good_session.json" +
                                              "' --no-settings --frames 3 --screenshot '" + dir / "good.png" + "'");
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(file_exists(dir / "good.png"));
}
