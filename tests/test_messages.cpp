// Error lines (issue 8, item 13): untrusted text reaches a message escaped and capped by one function
// (qs::printable), every qs::Error is one printable line of bounded length, integers read from files are
// range-checked and shown as written, and a prefix is never repeated. Unit tests, then the built binary.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <random>
#include <string>

#include "cli/options.hpp"
#include "quantscope/config.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/random.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"
#include "hostile/hostile_corpus.hpp"
#include "test_helpers.hpp"

using namespace std::string_literals;

namespace {

using qs::test::error_of;
using qs::test::Run;
using qs::test::run;
using qs::test::shell_quote;
using qs::test::TempDir;
using qs::test::write_bytes;

using qs::character_count;

using qs::hostile::is_printable_line;

std::string random_bytes(std::mt19937& rng, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        // Mostly the interesting bytes: controls, high bytes, quotes and backslashes, UTF-8 lead bytes.
        static const char kSome[] = "\x00\x1b\n\r\t\x7f\x80\x9b\xc2\xe2\x80\xae\xf0\x9f\x98\x80\xff\\'\"a";
        out += rng() % 3 ? kSome[rng() % (sizeof kSome - 1)] : static_cast<char>(rng() % 256);
    }
    return out;
}

std::string session_with(const std::string& tensor, const std::string& quantization) {
    return R"({"quantscope_session": 1, "tensor": )" + tensor + R"(, "quantization": )" + quantization + "}";
}

std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("printable escapes what acts on a terminal and keeps text") {
    using qs::printable;
    CHECK(printable("plain text, caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "plain text, caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(printable("\x1b[2J\r\n\t\x7f") == "\\x1b[2J\\r\\n\\t\\x7f");
    CHECK(printable("caf\xe9") == "caf\\xe9");                 // Latin-1: not UTF-8
    CHECK(printable("\xc0\xaf \xed\xa0\x80") == "\\xc0\\xaf \\xed\\xa0\\x80");  // overlong, surrogate
    CHECK(printable("\xc2\x9b" "31m") == "\\u009b31m");        // C1 CSI
    CHECK(printable("abc\xe2\x80\xae" "def") == "abc\\u202edef");  // right-to-left override
    CHECK(printable("back\\slash") == "back\\slash");
    CHECK(qs::quoted_text("x\ny") == "'x\\ny'");
}

TEST_CASE("printable caps long text at its start and end around one ellipsis") {
    const std::string path = "/home/user/" + std::string(200, 'd') + "/model.safetensors";
    const std::string shown = qs::printable(path);
    CHECK(character_count(shown) <= qs::kQuotedChars);
    CHECK(shown.rfind("/home/user/", 0) == 0);
    CHECK(shown.size() > 18);
    CHECK(shown.substr(shown.size() - 18) == "/model.safetensors");
    CHECK(count_of(shown, "\xe2\x80\xa6") == 1);
    CHECK(qs::printable(std::string(80, 'x')) == std::string(80, 'x'));  // exactly the cap: nothing cut
    CHECK(character_count(qs::printable(std::string(81, 'x'))) == 80);
    // 40 MB of escapes costs what 80 characters cost, and the cut never splits an escape or a character.
    const std::string huge = std::string(40u << 20, '\x1b') + "\xf0\x9f\x98\x80";
    const std::string cut = qs::printable(huge);
    CHECK(character_count(cut) <= 80);
    CHECK(cut.rfind("\\x1b\\x1b", 0) == 0);
    CHECK(cut.substr(cut.size() - 4) == "\xf0\x9f\x98\x80");
}

TEST_CASE("printable of any bytes is one printable line within the cap and printable again unchanged") {
    std::mt19937 rng(8);
    for (int trial = 0; trial < 2000; ++trial) {
        const std::string bytes = random_bytes(rng, rng() % 200);
        const std::size_t cap = 5 + rng() % 120;
        const std::string shown = qs::printable(bytes, cap);
        CAPTURE(bytes);
        CHECK(is_printable_line(shown));
        CHECK(character_count(shown) <= cap);
        CHECK(qs::printable(shown, cap) == shown);
        if (character_count(shown) < cap && shown.find("\xe2\x80\xa6") == std::string::npos)
            CHECK(qs::printable(bytes, 100000) == shown);  // nothing was cut
    }
}

TEST_CASE("a qs::Error is one printable line however it was built") {
    const std::string message = qs::Error("f.json: bad \0 byte\nand a second line \x1b[31m"s).what();
    CHECK(message == "f.json: bad \\x00 byte\\nand a second line \\x1b[31m");
    const std::string long_message = qs::Error("x.npy: " + std::string(1u << 20, 'z') + " is wrong").what();
    CHECK(character_count(long_message) <= qs::kMaxMessageChars);
    CHECK(long_message.rfind("x.npy: zzz", 0) == 0);
    CHECK(long_message.substr(long_message.size() - 9) == " is wrong");
}

TEST_CASE("messages quote names from files escaped and short") {
    // A tensor name with a terminal escape, a line break and 100 KB more.
    const std::string name = "evil\x1b]0;pwned\x07\r\n" + std::string(100000, 'n');
    std::string header = "{\"" ;
    for (char c : name) header += c == '\x1b' ? "\\u001b" : c == '\x07' ? "\\u0007" : c == '\r' ? "\\r" : c == '\n' ? "\\n" : std::string(1, c);
    header += R"(": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})";
    const std::string bytes = qs::test::safetensors_file(header, std::string(4, '\0'));
    const std::string overlap = error_of([&] {
        qs::SafetensorsFile(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "m.safetensors");
    });
    CHECK(overlap.find("'evil\\x1b]0;pwned\\x07\\r\\nnnn") != std::string::npos);
    CHECK(is_printable_line(overlap));
    CHECK(character_count(overlap) < 250);
}

TEST_CASE("session integers are range-checked and shown as written") {
    const std::string preset = R"({"kind": "preset", "name": "lesson"})";
    CHECK(error_of([&] { qs::parse_session(session_with(preset, R"({"granularity": "channel", "axis": 1000000000000000})"), "s.json"); }) ==
          "s.json: quantization.axis 1000000000000000 is out of range [0, 2]");
    CHECK(error_of([&] { qs::parse_session(session_with(preset, R"({"axis": 99999999999999999999999})"), "s.json"); }) ==
          "s.json: quantization.axis 99999999999999999999999 is out of range [0, 2]");
    CHECK(error_of([&] { qs::parse_session(session_with(preset, R"({"axis": -1})"), "s.json"); }) ==
          "s.json: quantization.axis -1 is out of range [0, 2]");
    CHECK(error_of([&] { qs::parse_session(session_with(preset, R"({"axis": 1e15})"), "s.json"); }) ==
          "s.json: quantization.axis must be an integer, not 1e15");
    CHECK_ERROR_HAS(qs::parse_session(session_with(preset, R"({"zero_point": 4294967296})"), "s.json"),
                    "s.json: quantization.zero_point 4294967296 is out of range");
    CHECK_ERROR_HAS(qs::parse_session(session_with(preset, R"({"group_size": -4})"), "s.json"),
                    "s.json: quantization.group_size -4 is out of range");
    CHECK_ERROR_HAS(qs::parse_session(session_with(R"({"kind": "random", "distribution": "normal", "shape": [2, 2], "outliers": 1e300})", "{}"), "s.json"),
                    "s.json: tensor.outliers must be an integer, not 1e300");
    CHECK_ERROR_HAS(qs::parse_session(session_with(R"({"kind": "random", "distribution": "normal", "shape": [2, 2], "seed": -1})", "{}"), "s.json"),
                    "s.json: tensor.seed -1 is not an integer in [0, 2^64)");
    CHECK_ERROR_HAS(qs::parse_session(R"({"quantscope_session": 1000000000000001, "tensor": {}, "quantization": {}})", "s.json"),
                    "not a QuantScope session of version 1");
}

TEST_CASE("a session's message names the file once") {
    const std::string preset = R"({"kind": "preset", "name": "lesson"})";
    for (const std::string& text : {
             session_with(preset, R"({"axis": 1.5})"),
             session_with(preset, R"({"dtype": "int99"})"),
             session_with(preset, R"({"dtype": 8})"),
             session_with(preset, R"({"overflow": "saturate"})"),
             session_with(preset, R"({"calibration": "best"})"),
             session_with(R"({"kind": "random", "shape": [2]})", "{}"),
             session_with(R"({"kind": "random", "distribution": "zipf", "shape": [2]})", "{}"),
         }) {
        CAPTURE(text);
        const std::string message = error_of([&] { qs::parse_session(text, "s.json"); });
        CHECK(message.rfind("s.json: ", 0) == 0);
        CHECK(count_of(message, "s.json") == 1);
        CHECK(count_of(message, "quantization") <= 1);
    }
    CHECK(error_of([&] { qs::parse_session(session_with(preset, R"({"dtype": "int99"})"), "s.json"); }) ==
          "s.json: quantization.dtype: unknown dtype 'int99': expected int2..int16, uint2..uint16, fp16, bf16, "
          "fp8-e4m3, fp8-e5m2, fp6-e3m2, fp6-e2m3, fp4-e2m1, nf4, mxfp8-e4m3, mxfp8-e5m2, mxfp6-e3m2, mxfp6-e2m3, "
          "mxfp4, nvfp4, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_nl, iq4_xs, tq1_0, tq2_0");
    // Errors found once the tensor is there name the session too, once.
    for (const std::string& text : {session_with(preset, R"({"granularity": "channel", "axis": 2})"),
                                    session_with(R"({"kind": "preset", "name": "nope"})", "{}"),
                                    session_with(R"({"kind": "random", "distribution": "normal", "shape": [2], "std": -1})", "{}")}) {
        CAPTURE(text);
        const std::string message = error_of([&] { qs::load_session_tensor(qs::parse_session(text, "s.json"), "s.json"); });
        CHECK(message.rfind("s.json: ", 0) == 0);
        CHECK(count_of(message, "s.json") == 1);
    }
}

// ------------------------------------------------------------------------------------------ the built binary

namespace {

// SPEC: exit 2 and exactly one line "quantscope: error: ..." that a terminal shows as it is.
void check_one_error_line(const Run& r, std::size_t max_chars = qs::kMaxMessageChars + 20) {
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK((!r.err.empty() && r.err.back() == '\n'));
    CHECK(is_printable_line(r.err.substr(0, r.err.size() - 1)));
    CHECK(character_count(r.err) <= max_chars);
}

}  // namespace

TEST_CASE("cli: a 99 MB string in a session gives a short line") {
    TempDir dir;
    const std::string huge(99u << 20, 'A');
    write_bytes(dir / "kind.json", session_with(R"({"kind": ")" + huge + "\"}", "{}"));
    Run r = run("quantize " + shell_quote(dir / "kind.json"), dir);
    check_one_error_line(r, 250);
    CHECK(r.err.find("tensor.kind 'AAAA") != std::string::npos);
    CHECK(r.err.find("AAAA' is not inline, file, preset or random") != std::string::npos);

    // A path the file system refuses: the message holding it whole is capped by qs::Error itself.
    write_bytes(dir / "path.json", session_with(R"({"kind": "file", "path": ")" + huge.substr(0, 1u << 20) + ".npy\"}", "{}"));
    check_one_error_line(run("quantize " + shell_quote(dir / "path.json"), dir));
}

TEST_CASE("cli: a NUL or a terminal escape from a file shows escaped and does not cut the line") {
    TempDir dir;
    write_bytes(dir / "nul.json", session_with(R"({"kind": "preset", "name": "les\u0000son\u001b[2J\r\n"})", "{}"));
    Run r = run("quantize " + shell_quote(dir / "nul.json"), dir);
    check_one_error_line(r);
    CHECK(r.err.find("unknown preset 'les\\x00son\\x1b[2J\\r\\n': expected one of") != std::string::npos);

    write_bytes(dir / "nul.csv", std::string("1,2\n3,\0\x1b[31m\n", 13));
    r = run("quantize " + shell_quote(dir / "nul.csv"), dir);
    check_one_error_line(r);
    CHECK(r.err.find("'\\x00\\x1b[31m' is not a number") != std::string::npos);
}

TEST_CASE("cli: inspect prints tensor names escaped") {
    TempDir dir;
    const std::string header =
        R"({"ok": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
        R"( "evil\u001b[2J\rname\nnext": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})";
    write_bytes(dir / "m.safetensors", qs::test::safetensors_file(header, std::string(8, '\0')));
    const Run r = run("inspect " + shell_quote(dir / "m.safetensors"), dir);
    INFO("stdout: " << r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find('\x1b') == std::string::npos);
    CHECK(r.out.find('\r') == std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 3);  // the heading and one line a tensor
    CHECK(r.out.find("evil\\x1b[2J\\rname\\nnext  F32    1\n") != std::string::npos);
    CHECK(r.out.find("ok" + std::string(23, ' ') + "F32    1\n") != std::string::npos);  // aligned on the escaped name
}

TEST_CASE("cli: a session axis of 10^15 is refused as written") {
    TempDir dir;
    write_bytes(dir / "axis.json", session_with(R"({"kind": "preset", "name": "lesson"})",
                                                R"({"granularity": "channel", "axis": 1000000000000000})"));
    const Run r = run("quantize " + shell_quote(dir / "axis.json"), dir);
    check_one_error_line(r);
    CHECK(r.err.find("quantization.axis 1000000000000000 is out of range [0, 2]") != std::string::npos);
    CHECK(r.err.find("1000 ") == std::string::npos);
}

TEST_CASE("cli: inspect --json escapes what acts on a terminal and stays JSON that reads back") {
    TempDir dir;
    // ESC, DEL, a C1 CSI (U+009B), a right-to-left override (U+202E), a line separator (U+2028) and a Latin-1
    // byte, which a JSON header cannot hold but a path can.
    const std::string header = R"({"a\u001b[2J\u007f\u009b\u202e\u2028z": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})";
    const std::string file = "caf\xe9.safetensors";
    write_bytes(dir / file, qs::test::safetensors_file(header, std::string(4, '\0')));
    const Run r = run("inspect --json " + shell_quote(dir / file), dir);
    INFO("stdout: " << r.out);
    REQUIRE(r.exit_code == 0);
    CHECK(is_printable_line(r.out.substr(0, r.out.size() - 1)));
    CHECK(r.out.find(R"("a\u001b[2J\u007f\u009b\u202e\u2028z")") != std::string::npos);
    qs::JsonLimits limits;
    limits.byte_escapes = true;
    const qs::JsonValue doc = qs::parse_json(r.out, "stdout", limits);
    CHECK(doc.find("file")->text == dir / file);
    CHECK(doc.find("tensors")->items.at(0).find("name")->text == "a\x1b[2J\x7f\xc2\x9b\xe2\x80\xae\xe2\x80\xa8z");
}

TEST_CASE("cli: an output past the file size limit is one line naming the file and leaves nothing") {
    TempDir dir;
    // prlimit runs the binary with a 4 KiB file size limit (ulimit -f): without SIGXFSZ ignored, the write past
    // it kills the program and leaves the temporary.
    const Run r = run("quantize --random normal --shape 256x256 --out-error " + shell_quote(dir / "e.npy"), dir,
                      "prlimit --fsize=4096");
    check_one_error_line(r);
    CHECK(r.err.find("cannot write '" + dir / "e.npy" + "': File too large") != std::string::npos);
    CHECK(r.err.find(".qs-") == std::string::npos);
    CHECK(dir.files() == std::vector<std::string>{"stderr.txt", "stdout.txt"});
}

TEST_CASE("cli: what a message quotes from the command line is capped") {
    TempDir dir;
    const std::string long_value(5000, '7');
    for (const std::string& args : {"quantize --preset lesson --zero-point 0 --scale " + long_value + "x",
                                    "quantize --preset lesson --no-such-option-" + long_value,
                                    "quantize --preset lesson --out-error " + shell_quote(dir / (long_value + "/e.npy"))}) {
        CAPTURE(args.substr(0, 60));
        const Run r = run(args, dir);
        check_one_error_line(r);
        const std::size_t open = r.err.find('\''), close = r.err.find('\'', open + 1);
        REQUIRE(close != std::string::npos);
        CHECK(character_count(r.err.substr(open + 1, close - open - 1)) <= qs::kQuotedChars);
        CHECK(r.err.size() < 300);
    }
}

TEST_CASE("the program's error line is one printable bounded line whatever the exception says") {
    // What a standard library exception could carry: line breaks, escapes, invalid UTF-8, a megabyte.
    const std::string what = "std: \x1b[31mred\r\nsecond line \xff " + std::string(1u << 20, 'w') + " end";
    const std::string line = qs::cli::message_line("error", what);
    CHECK(line.rfind("quantscope: error: std: \\x1b[31mred\\r\\nsecond line \\xff www", 0) == 0);
    CHECK(line.substr(line.size() - 5) == " end\n");
    CHECK(std::count(line.begin(), line.end(), '\n') == 1);
    CHECK(is_printable_line(line.substr(0, line.size() - 1)));
    CHECK(character_count(line) <= qs::kMaxMessageChars + 20);
}

TEST_CASE("a 600-character path is shown as 80 characters in every reader's message") {
    TempDir dir;
    std::string folder = dir.path.string();
    for (int k = 0; k < 3; ++k) {
        folder += "/" + std::string(200, 'd');
        std::filesystem::create_directory(folder);
    }
    const auto file = [&](const std::string& name, const std::string& bytes) {
        write_bytes(folder + "/" + name, bytes);
        return folder + "/" + name;
    };
    const std::string messages[] = {
        error_of([&] { qs::load_tensor(file("w.npy", "not a npy file")); }),
        error_of([&] { qs::load_tensor(file("w.csv", "1,2\n3,abc\n")); }),
        error_of([&] { qs::load_tensor(file("w.csv", "")); }),
        error_of([&] { qs::load_tensor(file("w.txt", "1")); }),
        error_of([&] { qs::load_tensor(file("w.safetensors", "xx")); }),
        error_of([&] { qs::load_tensor(file("w.npy", "x"), "t"); }),
        error_of([&] { qs::parse_session("{\"format\": 1", folder + "/s.json"); }),
        error_of([&] { qs::parse_session(R"({"quantscope_session": 1, "tensor": 5})", folder + "/s.json"); }),
    };
    for (const std::string& message : messages) {
        CAPTURE(message);
        CHECK(!message.empty());
        CHECK(character_count(message) < 200);
        CHECK(message.find("\xe2\x80\xa6") != std::string::npos);  // the path's "…"
    }
}

// The window shows the same line as the command line for an allocation that failed (it showed std::bad_alloc).
TEST_CASE("error_text says out of memory for bad_alloc and the message otherwise") {
    CHECK(qs::error_text(std::bad_alloc()) == "out of memory");
    CHECK(qs::error_text(std::bad_array_new_length()) == "out of memory");
    CHECK(qs::error_text(qs::Error("x.npy: bad header")) == "x.npy: bad header");
}

// A refused option's value is shown as given: "%g" printed --scale 3.4028236e38 as 3.40282e+38 (and the range as
// 3.4e38), --low 1.0000001 as 1, a percentile of 100.0000001 as 100: a value that reads as allowed, refused.
TEST_CASE("cli: a refused option's value is printed as given and not rounded") {
    CHECK(qs::format_exact(1000001) == "1000001");
    CHECK(qs::format_exact(1e6) == "1e+06");  // "%g" where that reads back exactly
    CHECK(qs::format_exact(0.1) == "0.1");
    CHECK(qs::format_exact(1.0000001) == "1.0000001");
    CHECK(qs::format_exact(std::nan("")) == "nan");
    CHECK(qs::format_exact(-HUGE_VAL) == "-inf");
    for (const double v : {1000001.0, 0.3, 1.0 / 3.0, 3.4028236e38, 1e-320, -2.5e-7})
        CHECK(std::strtod(qs::format_exact(v).c_str(), nullptr) == v);
    TempDir dir;
    const struct {
        const char* args;
        const char* part;
    } cases[] = {
        {"quantize --random normal --shape 4x32 --scale 3.4028236e38 --zero-point 0",
         "scale 3.4028236e+38 is outside float32's normal range [1.1754943508222875e-38, 3.4028234663852886e+38]"},
        {"quantize --random normal --shape 4x32 --dtype fp8-e4m3 --scale 3.4028236e38", "float32, got 3.4028236e+38"},
        {"quantize --random uniform --shape 4x32 --low 1.0000001 --high 1", "(got 1.0000001, 1)"},
        {"quantize --random uniform --shape 4x32 --low -3.4028236e38 --high 0", "(got -3.4028236e+38, 0)"},
        {"quantize --random normal --shape 4x32 --std -1.0000001", "std -1.0000001)"},
        // A literal nearer 0 than a double holds read as 0: "--scale 1e-400" was refused as "not 0".
        {"quantize --random normal --shape 4x32 --scale 1e-400 --zero-point 0", "--scale: '1e-400' is out of range"},
        {"quantize --random normal --shape 4x32 --std -1e-400", "--std: '-1e-400' is out of range"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.args);
        const Run r = run(c.args, dir);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.find(c.part) != std::string::npos);
    }
    qs::QuantConfig config;
    config.calibration = qs::Calibration::Percentile;
    config.percentile = 100.0000001;
    CHECK(error_of([&] { qs::check_config(config, {4, 32}); }).find("percentile 100.0000001 is outside (50, 100]") != std::string::npos);
    qs::RandomSpec spec;
    spec.shape = {4, 8};
    spec.outliers = 1;
    spec.outlier_scale = -0.30000000000000004;
    CHECK(error_of([&] { qs::generate_random(spec); }).find("(got -0.30000000000000004)") != std::string::npos);
}
