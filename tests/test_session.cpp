// Session files: the tensor and every setting round-trip; every bad file is refused clearly.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "quantscope/error.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor_io.hpp"

using namespace qs;

namespace {

Session example() {
    Session s;
    s.source.kind = TensorSource::Kind::Inline;
    s.tensor = lesson_tensor();
    s.tensor.values[4] = 1e-7f;  // needs all 9 digits to round-trip
    s.config.dtype = {false, 6};
    s.config.mode = Mode::Manual;
    s.config.manual_scale = 3.578823433670343;
    s.config.manual_zero_point = 17;
    s.config.rounding = Rounding::HalfAway;
    s.config.overflow = Overflow::Wrap;
    s.view = {{"colormap", "viridis"}, {"odd \"key\"", "line\nbreak"}};
    return s;
}

}  // namespace

TEST_CASE("a session round-trips its tensor and every setting") {
    const Session a = example();
    const Session b = parse_session(session_to_json(a), "s.json");
    CHECK(b.tensor.shape == a.tensor.shape);
    CHECK(b.tensor.values == a.tensor.values);
    CHECK(b.config.dtype == a.config.dtype);
    CHECK(b.config.mode == Mode::Manual);
    CHECK(b.config.manual_scale == a.config.manual_scale);
    CHECK(b.config.manual_zero_point == 17);
    CHECK(b.config.rounding == Rounding::HalfAway);
    CHECK(b.config.overflow == Overflow::Wrap);
    CHECK(b.view == a.view);
    CHECK(session_to_json(b) == session_to_json(a));

    Session r;
    r.source.kind = TensorSource::Kind::Random;
    r.source.random.distribution = Distribution::Uniform;
    r.source.random.shape = {4, 8};
    r.source.random.seed = 18446744073709551615ull;
    r.source.random.low = -2;
    r.source.random.high = 5;
    r.source.random.outliers = 3;
    r.config.granularity = Granularity::Group;
    r.config.group_size = 4;
    r.config.calibration = Calibration::Percentile;
    r.config.percentile = 99.5;
    r.config.recompute_scale = true;
    const Session r2 = parse_session(session_to_json(r), "r.json");
    CHECK(r2.source.random.seed == r.source.random.seed);
    CHECK(load_session_tensor(r2, "r.json").values == generate_random(r.source.random).values);
    CHECK(r2.config.calibration == Calibration::Percentile);
    CHECK(r2.config.percentile == 99.5);
    CHECK(r2.config.recompute_scale);
    CHECK(r2.config.group_size == 4);
}

TEST_CASE("a session's file path is relative to the session") {
    const auto dir = std::filesystem::temp_directory_path() / "quantscope-session-test";
    std::filesystem::create_directories(dir / "data");
    const Tensor t = lesson_tensor();
    save_floats((dir / "data" / "t.npy").string(), t.shape, t.values.data());
    Session s;
    s.source.kind = TensorSource::Kind::File;
    s.source.path = "data/t.npy";
    write_session((dir / "s.json").string(), s);
    const Session back = read_session((dir / "s.json").string());
    CHECK(load_session_tensor(back, (dir / "s.json").string()).values == t.values);
    std::filesystem::remove_all(dir);
}

TEST_CASE("bad session files are refused with the file name and what is wrong") {
    const std::string good = session_to_json(example());
    auto message = [](const std::string& text) -> std::string {
        try {
            parse_session(text, "s.json");
        } catch (const Error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    CHECK(message("{").find("s.json: invalid JSON") == 0);
    CHECK(message("[]").find("must be an object") != std::string::npos);
    CHECK(message(R"({"quantscope_session": 2, "tensor": {"kind": "preset", "name": "lesson"}, "quantization": {}})")
              .find("version 1") != std::string::npos);
    const std::string head = R"({"quantscope_session": 1, )";
    CHECK(message(head + R"("tensor": {"kind": "inline", "shape": [2, 2], "values": [1, 2, 3]}, "quantization": {}})")
              .find("has 3 numbers but shape [2, 2] needs 4") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "inline", "shape": [1000000000, 1000000000], "values": []}, "quantization": {}})")
              .find("elements") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "preset", "name": "lesson", "extra": 1}, "quantization": {}})")
              .find("unknown key \"extra\"") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "soup"}, "quantization": {}})").find("soup") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "preset", "name": "lesson"}, "quantization": {"dtype": "int99"}})")
              .find("int99") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "preset", "name": "lesson"}, "quantization": {"axis": "x"}})")
              .find("quantization.axis must be a number") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "inline", "shape": [2], "values": [1, 2]}, "quantization": {"mode": "manual", "scale": 0}})")
              .find("scale") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "inline", "shape": [2], "values": [1, 2]}, "quantization": {"mode": "manual", "scale": 1, "zero_point": 400}})")
              .find("zero point 400") != std::string::npos);
    CHECK(message(head + R"("tensor": {"kind": "preset", "name": "lesson"}, "quantization": {}, "view": {"a": 1}})")
              .find("view.a must be a string") != std::string::npos);
    CHECK(message(good.substr(0, good.size() / 2)).find("invalid JSON") != std::string::npos);
}
