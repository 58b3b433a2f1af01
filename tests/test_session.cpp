// Session files: the tensor and every setting round-trip; every bad file is refused clearly.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "quantscope/error.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor_io.hpp"
#include "test_helpers.hpp"

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
              .find("unknown key 'extra'") != std::string::npos);
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

// ----------------------------------------------------------------------------------- what is written reads back

namespace {

// Bytes of every kind a name can hold: ASCII, quotes and backslashes, control characters and NUL, valid UTF-8
// of every length, Latin-1 bytes that are not UTF-8, a lone surrogate's UTF-8 form, and text that looks like an
// escape.
std::string random_bytes(std::mt19937& rng) {
    static const std::vector<std::string> kPieces = {
        "a", "Z", "0", " ", ".", "/", "\"", "\\", "\n", "\r", "\t", std::string(1, '\0'), "\x1b[31m", "\x7f",
        "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe9", "\xff", "\x80", "\xc3", "\xed\xa0\x80",
        "\\udc80", "\\u00e9", "caf\xe9.npy"};
    std::string out;
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) out += kPieces[rng() % kPieces.size()];
    return out;
}

// The session, written and parsed back, compared field by field and by its text.
void check_round_trip(const Session& a) {
    const std::string text = session_to_json(a);
    const Session b = parse_session(text, "s.json");
    CHECK(b.source.kind == a.source.kind);
    CHECK(b.source.path == a.source.path);
    CHECK(b.source.tensor_name == a.source.tensor_name);
    CHECK(b.tensor.shape == a.tensor.shape);
    CHECK(b.tensor.values == a.tensor.values);
    CHECK(b.config == a.config);
    CHECK(b.view == a.view);
    CHECK(session_to_json(b) == text);
}

}  // namespace

TEST_CASE("whatever session_to_json writes parse_session reads: random sizes and byte-string names") {
    std::mt19937 rng(20261123);
    for (int trial = 0; trial < 300; ++trial) {
        CAPTURE(trial);
        Session s;
        if (trial % 2 == 0) {
            s.source.kind = TensorSource::Kind::Inline;
            const std::int64_t n = 1 + static_cast<std::int64_t>(rng() % 3000);
            s.tensor.shape = {n};
            for (std::int64_t i = 0; i < n; ++i) s.tensor.values.push_back(std::ldexp(float(rng() % 2001) - 1000.f, int(rng() % 200) - 100));
        } else {
            s.source.kind = TensorSource::Kind::File;
            s.source.path = random_bytes(rng);
            s.source.tensor_name = random_bytes(rng);
        }
        std::set<std::string> keys;  // view keys are unique, as the window writes them
        for (int i = static_cast<int>(rng() % 6); i > 0; --i) keys.insert(random_bytes(rng));
        for (const std::string& key : keys) s.view.emplace_back(key, random_bytes(rng));
        check_round_trip(s);
    }
}

TEST_CASE("a session at the writer's limits reads back from its file / one step beyond is refused on writing") {
    qs::test::TempDir dir;
    Session s;
    s.source.kind = TensorSource::Kind::Inline;
    s.tensor.shape = {kMaxInlineValues};
    std::mt19937 rng(5);
    for (std::int64_t i = 0; i < kMaxInlineValues; ++i)
        s.tensor.values.push_back(-1.17549435e-38f * static_cast<float>(rng() % 1000 + 1));  // long numbers
    for (std::size_t i = 0; i < kMaxSessionViewEntries; ++i) s.view.emplace_back("key" + std::to_string(i), "\xe9");
    write_session(dir / "limit.json", s);
    const Session back = read_session(dir / "limit.json");
    CHECK(back.tensor.values == s.tensor.values);
    CHECK(back.view == s.view);

    Session more = s;
    more.view.emplace_back("one more", "");
    CHECK_ERROR_HAS(session_to_json(more), "at most 4096 view settings");
    more = s;
    more.tensor.shape = {kMaxInlineValues + 1};
    more.tensor.values.push_back(1);
    CHECK_ERROR_HAS(session_to_json(more), "at most 1048576 inline values");
    more = s;
    more.view.back().first = "key0";
    CHECK_ERROR_HAS(session_to_json(more), "view setting 'key0' twice");
    more = Session{};
    more.config.manual_scale = std::nan("");
    CHECK_ERROR_HAS(session_to_json(more), "scale is not finite");
}

TEST_CASE("a Latin-1 file name in a session reads back and its tensor loads") {
    qs::test::TempDir dir;
    const std::string latin1 = "caf\xe9.npy";
    const Tensor t = lesson_tensor();
    save_floats(dir / latin1, t.shape, t.values.data());
    Session s;
    s.source.kind = TensorSource::Kind::File;
    s.source.path = latin1;
    s.view = {{"label", dir / latin1}};
    write_session(dir / "s.json", s);
    const std::string text = qs::test::read_bytes(dir / "s.json");
    CHECK(text.find("caf\\udce9.npy") != std::string::npos);  // PEP 383, as Python's os.fsdecode writes it
    const Session back = read_session(dir / "s.json");
    CHECK(back.source.path == latin1);
    CHECK(back.view == s.view);
    CHECK(load_session_tensor(back, dir / "s.json").values == t.values);
}
