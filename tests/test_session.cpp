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

    // Outliers, their scale and the pinned range round-trip; a session from before real outliers (no
    // "outlier_scale") meant the pinning recipe by "outliers" and reopens the same tensor.
    r.source.random.outlier_scale = 6.5;
    r.source.random.pin_range = 2;
    const Session r3 = parse_session(session_to_json(r), "r.json");
    CHECK(r3.source.random.outliers == 3);
    CHECK(r3.source.random.outlier_scale == 6.5);
    CHECK(r3.source.random.pin_range == 2);
    const std::string old = R"({"quantscope_session": 1, "tensor": {"kind": "random", "distribution": "uniform",
        "shape": [4, 128, 256], "seed": 0, "low": -50, "high": 150, "outliers": 3}, "quantization": {}})";
    const Session legacy = parse_session(old, "old.json");
    CHECK(legacy.source.random.outliers == 0);
    CHECK(legacy.source.random.pin_range == 3);
    CHECK(load_session_tensor(legacy, "old.json").values == make_preset("outliers-4x128x256").tensor.values);
}

TEST_CASE("a session keeps the naive recipe's norm and refuses one beyond float32") {
    Session a = example();
    a.config.dtype = IntType{true, 8};
    a.config.manual_zero_point = 0;
    a.config.naive_norm = 728.6f;
    const Session b = parse_session(session_to_json(a), "s.json");
    CHECK(b.config == a.config);
    std::string text = session_to_json(a);
    const std::size_t at = text.find("\"naive_norm\"");
    REQUIRE(at != std::string::npos);
    text.replace(at, text.find_first_of(",}", at) - at, "\"naive_norm\": 1e300");
    CHECK_THROWS_AS(check_config(parse_session(text, "s.json").config, Shape{3}), Error);
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

namespace {

// A number of the kinds a setting or value can take: ordinary, zero, negative, tiny, huge, NaN, ±Inf.
double random_number(std::mt19937& rng) {
    switch (rng() % 8) {
        case 0: return 0.0;
        case 1: return std::nan("");
        case 2: return rng() % 2 ? HUGE_VAL : -HUGE_VAL;
        case 3: return 1e300;
        case 4: return -std::ldexp(1.0, -1074);
        default: return std::ldexp(double(rng() % 2001) - 1000.0, int(rng() % 40) - 20);
    }
}

// Any session the window could hold, or a bug could produce: settings out of range, values that are not
// finite, shapes that do not match, random specs and preset names the reader would refuse.
Session random_session(std::mt19937& rng) {
    Session s;
    const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    s.source.kind = static_cast<TensorSource::Kind>(pick(4));
    Shape shape;
    for (int i = pick(4); i > 0; --i) shape.push_back(pick(8) - 1);
    switch (s.source.kind) {
        case TensorSource::Kind::Inline: {
            s.tensor.shape = shape;
            std::int64_t n = 1;
            for (std::int64_t d : shape) n *= std::max<std::int64_t>(d, 0);
            n += pick(10) == 0 ? pick(3) - 1 : 0;  // sometimes one value too many or too few
            for (std::int64_t i = 0; i < std::max<std::int64_t>(n, 0); ++i)
                s.tensor.values.push_back(static_cast<float>(pick(20) == 0 ? random_number(rng) : double(pick(100))));
            break;
        }
        case TensorSource::Kind::File: s.source.path = random_bytes(rng); s.source.tensor_name = random_bytes(rng); break;
        case TensorSource::Kind::Preset: s.source.preset = pick(2) ? "lesson" : random_bytes(rng); break;
        case TensorSource::Kind::Random:
            s.source.random.distribution = pick(2) ? Distribution::Normal : Distribution::Uniform;
            s.source.random.shape = shape;
            s.source.random.seed = (std::uint64_t{rng()} << 32) | rng();
            s.source.random.mean = random_number(rng);
            s.source.random.std = random_number(rng);
            s.source.random.low = random_number(rng);
            s.source.random.high = random_number(rng);
            s.source.random.outliers = pick(6) - 1;
            break;
    }
    QuantConfig& c = s.config;
    c.dtype = {pick(2) == 0, 1 + pick(17)};
    c.mode = static_cast<Mode>(pick(3));
    c.granularity = static_cast<Granularity>(pick(3));
    c.axis = pick(6) - 1;
    c.group_size = pick(6) - 1;
    c.rounding = pick(2) ? Rounding::HalfEven : Rounding::HalfAway;
    c.overflow = pick(2) ? Overflow::Clamp : Overflow::Wrap;
    c.manual_scale = random_number(rng);
    c.manual_zero_point = pick(4) == 0 ? static_cast<std::int32_t>(rng()) : pick(300) - 150;
    c.calibration = static_cast<Calibration>(pick(3));
    c.percentile = pick(2) ? 40.0 + pick(70) : random_number(rng);
    c.recompute_scale = pick(2) == 0;
    for (int i = pick(4); i > 0; --i) s.view.emplace_back(random_bytes(rng), random_bytes(rng));
    return s;
}

}  // namespace

TEST_CASE("the session writer refuses what the reader would refuse and everything else reads back") {
    std::mt19937 rng(9);
    int refused = 0, written = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        CAPTURE(trial);
        const Session s = random_session(rng);
        std::string text;
        try {
            text = session_to_json(s);
        } catch (const Error& e) {
            ++refused;
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
            continue;
        }
        ++written;
        const Session back = parse_session(text, "s.json");  // never throws: that is the point
        CHECK(session_to_json(back) == text);
        CHECK(back.config == s.config);
        CHECK(back.view == s.view);
    }
    CHECK(refused > 100);  // the generator reaches both sides
    CHECK(written > 100);
}

TEST_CASE("a session too big for the reader is refused on writing and one just within reads back") {
    qs::test::TempDir dir;
    Session s;
    s.source.kind = TensorSource::Kind::Preset;
    s.source.preset = "lesson";
    s.view = {{"note", std::string(kMaxSessionBytes, 'x')}};
    CHECK_ERROR_HAS(write_session(dir / "big.json", s), "MB a session file may have");
    CHECK_FALSE(std::filesystem::exists(dir / "big.json"));
    s.view = {{"note", std::string(kMaxSessionBytes - 1000, 'x')}};
    write_session(dir / "big.json", s);
    CHECK(read_session(dir / "big.json").view == s.view);
}
