// The command line of the number formats (FORMATS.md "What the command line and JSON add"): --dtype names,
// --mode cast, the JSON's format_kind / bits_per_weight / bytes, --out-quantized codes, --out-packed, the
// formats command, and the refusals that name the format.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "quantscope/json_reader.hpp"
#include "quantscope/packing.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

JsonValue parse(const std::string& text) { return parse_json(text, "output"); }

// The last n items of an .npy file (its data follows the header).
template <class T>
std::vector<T> npy_tail(const std::string& path, std::size_t n) {
    const std::string bytes = test::read_bytes(path);
    std::vector<T> out(n);
    std::memcpy(out.data(), bytes.data() + bytes.size() - n * sizeof(T), n * sizeof(T));
    return out;
}

}  // namespace

TEST_CASE("formats cli: every name in any case quantizes and the JSON gains kind bits and bytes") {
    test::TempDir dir;
    const std::pair<const char*, const char*> names[] = {
        {"FP16", "float"},    {"Bf16", "float"},       {"fp8-E4M3", "float"},  {"fp8-e5m2", "float"},
        {"fp6-e3m2", "float"}, {"fp6-e2m3", "float"},  {"fp4-e2m1", "float"},  {"NF4", "codebook"},
        {"MXFP8-E4M3", "block"}, {"mxfp8-e5m2", "block"}, {"mxfp6-e3m2", "block"}, {"mxfp6-e2m3", "block"},
        {"MXFP4", "block"},   {"NVFP4", "block"},      {"Q8_0", "block"},      {"q4_0", "block"},
        {"q4_1", "block"},
    };
    for (const auto& [name, kind] : names) {
        CAPTURE(name);
        const test::Run r = test::run(std::string("quantize --random normal --shape 4x64 --dtype ") + name, dir);
        REQUIRE(r.exit_code == 0);
        const JsonValue doc = parse(r.out);
        CHECK(doc.find("format_kind")->text == kind);
        CHECK(doc.find("bits_per_weight")->is_number());
        CHECK(doc.find("bytes")->number == std::ceil(doc.find("bits_per_weight")->number * 256 / 8));
        CHECK(doc.find("q_min")->is_null());
    }
    const JsonValue q8 = parse(test::run("quantize --random normal --shape 4x64 --dtype q8_0", dir).out);
    CHECK(q8.find("bits_per_weight")->number == 8.5);
    CHECK(q8.find("bytes")->number == 256 + 8 * 2);
    CHECK(q8.find("granularity")->text == "block");
    CHECK(q8.find("block_size")->number == 32);
    CHECK(q8.find("scale")->items.size() == 8);
    CHECK(q8.find("zero_point")->items.empty());
    const JsonValue q41 = parse(test::run("quantize --random normal --shape 4x64 --dtype q4_1", dir).out);
    CHECK(q41.find("zero_point")->items.size() == 8);  // fp16(m) per block
    CHECK(q41.find("bits_per_weight")->number == 5);
}

TEST_CASE("formats cli: int types report bits per weight with their stored s and z") {
    test::TempDir dir;
    // The lesson's 3x3 tensor, int8 asymmetric per tensor: 8 + 64 / 9 (a float32 s and z), 72 + 64 bits = 17 bytes.
    const JsonValue asym = parse(test::run("quantize --preset lesson", dir).out);
    CHECK(asym.find("format_kind")->text == "int");
    CHECK(asym.find("bits_per_weight")->number == 8 + 64.0 / 9);
    CHECK(asym.find("bytes")->number == 17);
    const JsonValue sym = parse(test::run("quantize --preset lesson --mode symmetric", dir).out);
    CHECK(sym.find("bits_per_weight")->number == 8 + 32.0 / 9);
    const JsonValue group = parse(test::run("quantize --random normal --shape 4x64 --dtype int4 --granularity group --group-size 32", dir).out);
    CHECK(group.find("bits_per_weight")->number == 4 + 64.0 / 32);
}

TEST_CASE("formats cli: cast is the plain downcast and bf16 of the lesson equals torch's") {
    test::TempDir dir;
    const test::Run r = test::run("quantize --preset lesson --dtype bf16 --mode cast --out-dequantized " +
                                  test::shell_quote(dir / "d.npy") + " --out-quantized " + test::shell_quote(dir / "q.npy"), dir);
    REQUIRE(r.exit_code == 0);
    const JsonValue doc = parse(r.out);
    CHECK(doc.find("mode")->text == "cast");
    CHECK(doc.find("bits_per_weight")->number == 16);
    // torch.tensor([[191.6, -13.5, 728.6], ...]).to(torch.bfloat16): 191.6 -> 192, 728.6 -> 728, 92.14 -> 92
    const std::vector<float> d = npy_tail<float>(dir / "d.npy", 9);
    CHECK(d[0] == 192.0f);
    CHECK(d[1] == -13.5f);
    CHECK(d[2] == 728.0f);
    CHECK(d[3] == 92.0f);
    CHECK(test::contains(test::read_bytes(dir / "q.npy"), "'<u2'"));
    const std::vector<std::uint16_t> q = npy_tail<std::uint16_t>(dir / "q.npy", 9);
    CHECK(q[0] == 0x4340);  // 192 = 1.5 * 2^7: sign 0, exponent 134, mantissa 0b1000000
}

TEST_CASE("formats cli: codes as FORMATS.md writes them and the packed file round-trips") {
    test::TempDir dir;
    const std::string q = test::shell_quote(dir / "q.npy"), p = test::shell_quote(dir / "p.bin");
    const test::Run r = test::run("quantize --random normal --shape 4x64 --dtype nvfp4 --out-quantized " + q +
                                  " --out-packed " + p, dir);
    REQUIRE(r.exit_code == 0);
    const JsonValue doc = parse(r.out);
    CHECK(test::contains(test::read_bytes(dir / "q.npy"), "'|u1'"));
    const std::vector<std::uint8_t> codes8 = npy_tail<std::uint8_t>(dir / "q.npy", 256);
    const std::string packed = test::read_bytes(dir / "p.bin");
    REQUIRE(static_cast<double>(packed.size()) == doc.find("bytes")->number);  // 128 code bytes + 16 sb + 4 g
    CHECK(packed.size() == 128 + 16 + 4);
    const std::vector<std::int32_t> unpacked =
        unpack_codes(reinterpret_cast<const std::uint8_t*>(packed.data()), 128, 256, 4, false);
    CHECK(std::vector<std::int32_t>(codes8.begin(), codes8.end()) == unpacked);
    float g = 0;
    std::memcpy(&g, packed.data() + 144, 4);
    CHECK(g == static_cast<float>(doc.find("global_scale")->number));
    // Q8_0's codes are int8.
    REQUIRE(test::run("quantize --random normal --shape 2x32 --dtype q8_0 --out-quantized " + q, dir).exit_code == 0);
    CHECK(test::contains(test::read_bytes(dir / "q.npy"), "'|i1'"));
}

TEST_CASE("formats cli: the course's pack_weights example packs uint2 codes 1 0 3 2 into the byte 177") {
    test::TempDir dir;
    test::write_bytes(dir / "w.csv", "1, 0, 3, 2\n");
    // uint2 asymmetric over [0, 3]: s = 1, z = 0, codes = the values.
    const test::Run r = test::run("quantize " + test::shell_quote(dir / "w.csv") + " --dtype uint2 --out-packed " +
                                  test::shell_quote(dir / "p.bin"), dir);
    REQUIRE(r.exit_code == 0);
    const std::string packed = test::read_bytes(dir / "p.bin");
    REQUIRE(packed.size() == 1 + 4 + 4);  // the codes' byte, then float32 s and z
    CHECK(static_cast<unsigned char>(packed[0]) == 177);
    float s = 0;
    std::memcpy(&s, packed.data() + 1, 4);
    CHECK(s == 1.0f);
    CHECK(parse(r.out).find("bytes")->number == 9);
}

TEST_CASE("formats cli: options a format refuses are one line naming it") {
    test::TempDir dir;
    const std::string src = "quantize --random normal --shape 4x64 ";
    const std::pair<std::string, std::string> cases[] = {
        {"--dtype q4_0 --mode symmetric", "q4_0"},
        {"--dtype mxfp4 --granularity channel", "mxfp4"},
        {"--dtype nvfp4 --scale 2", "nvfp4"},
        {"--dtype q8_0 --calibrate mse", "q8_0"},
        {"--dtype fp8-e4m3 --mode asymmetric", "fp8-e4m3"},
        {"--dtype nf4 --zero-point 3 --scale 1", "nf4"},
        {"--dtype nf4 --mode cast", "nf4"},
        {"--dtype int8 --mode cast", "int8"},
        {"--dtype fp16 --calibrate percentile:99", "fp16"},
        {"--dtype bf16 --rounding half-away", "bf16"},
        {"--dtype fp8-e5m2 --scale 0", "fp8-e5m2"},
        {"--dtype fp8-e5m2 --scale 2 --granularity channel", "fp8-e5m2"},
        {"--dtype fp9", "fp9"},
    };
    for (const auto& [options, named] : cases) {
        CAPTURE(options);
        const test::Run r = test::run(src + options, dir);
        CHECK(r.exit_code == 2);
        CHECK(test::one_line(r.err));
        CHECK(test::contains(r.err, named));
    }
    const test::Run odd = test::run("quantize --random normal --shape 4x60 --dtype mxfp4", dir);
    CHECK(odd.exit_code == 2);
    CHECK(test::contains(odd.err, "mxfp4: its block of 32 elements must divide the last axis (60)"));
}

TEST_CASE("formats cli: hostile values saturate or are refused with one line") {
    test::TempDir dir;
    test::write_bytes(dir / "nan.csv", "1, 2\n3, nan\n");
    test::write_bytes(dir / "huge.csv", "3.4028235e38, -3.4028235e38, 1, 0\n");
    test::write_bytes(dir / "tiny.csv", "1e-45, -1e-45, 1e-40, 0\n");
    const test::Run nan = test::run("quantize " + test::shell_quote(dir / "nan.csv") + " --dtype fp8-e4m3", dir);
    CHECK(nan.exit_code == 2);
    CHECK(test::one_line(nan.err));
    for (const char* dtype : {"fp16", "bf16", "fp8-e4m3", "fp4-e2m1", "nf4"}) {
        for (const char* file : {"huge.csv", "tiny.csv"}) {
            CAPTURE(dtype);
            CAPTURE(file);
            const test::Run r = test::run("quantize " + test::shell_quote(dir / file) + " --dtype " + dtype, dir);
            REQUIRE(r.exit_code == 0);
            CHECK(parse(r.out).find("mse")->is_number());
        }
    }
    const test::Run cast = test::run("quantize " + test::shell_quote(dir / "huge.csv") + " --dtype fp16 --mode cast", dir);
    REQUIRE(cast.exit_code == 0);
    CHECK(parse(cast.out).find("clipped")->number == 2);  // +-3.4e38 saturate to +-65504
}

TEST_CASE("formats command: every format and int8 and int4 sorted by bits per weight") {
    test::TempDir dir;
    const test::Run r = test::run("formats --random normal --shape 4x128 --json", dir);
    REQUIRE(r.exit_code == 0);
    const JsonValue doc = parse(r.out);
    const auto& rows = doc.find("formats")->items;
    REQUIRE(rows.size() == 20 + 8);  // the 8 types whose block of 256 does not divide 128 are left out
    double last = 0;
    for (const JsonValue& row : rows) {
        std::vector<std::string> keys;
        for (const auto& member : row.members) keys.push_back(member.first);
        CHECK(keys == std::vector<std::string>{"format", "granularity", "group_size", "bits_per_weight", "bytes", "mse",
                                               "sqnr_db", "max_abs_error"});
        CHECK(row.find("bits_per_weight")->number >= last);
        last = row.find("bits_per_weight")->number;
    }
    CHECK(rows.front().find("format")->text == "fp4-e2m1");
    CHECK(rows.front().find("group_size")->is_null());
    // A last axis of 48: no mxfp/q formats (32), no groups of 32 or 128; nvfp4 (16) stays.
    const JsonValue odd = parse(test::run("formats --random normal --shape 4x48 --json", dir).out);
    CHECK(odd.find("formats")->items.size() == 8 + 1 + 4);
    const test::Run table = test::run("formats --preset lesson", dir);
    REQUIRE(table.exit_code == 0);
    CHECK(test::contains(table.out, "bits/w"));
}
