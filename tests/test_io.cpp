// File readers and writers: round trips for every dtype and rank, and every kind of bad file, which must
// end in one qs::Error (never a crash, never a huge allocation, never a half-written output).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/tensor_io.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;

namespace {

using qs::test::TempDir;
using qs::test::read_bytes;
using qs::test::write_bytes;
using qs::test::error_of;
using qs::test::safetensors_file;

template <typename T>
std::string le_bytes(const std::vector<T>& values) {
    std::string out;
    for (const T& v : values) {
        char raw[sizeof(T)];
        std::memcpy(raw, &v, sizeof(T));  // the test machine is little-endian, like every .npy we write
        out.append(raw, sizeof(T));
    }
    return out;
}
std::string u16_bytes(const std::vector<std::uint16_t>& bits) { return le_bytes(bits); }

// A .npy file from a header dict text and raw data, with the header length stated honestly.
std::string npy_file(const std::string& dict, const std::string& data, int major = 1) {
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    const std::string header = dict + "\n";
    const std::size_t n = header.size();
    out += static_cast<char>(n & 0xff);
    out += static_cast<char>((n >> 8) & 0xff);
    if (major != 1) {
        out += static_cast<char>((n >> 16) & 0xff);
        out += static_cast<char>((n >> 24) & 0xff);
    }
    return out + header + data;
}

std::string f4_dict(const std::string& shape, const std::string& descr = "<f4", bool fortran = false) {
    return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
           ", }";
}

qs::Tensor npy(const std::string& bytes, const std::string& name = "data.npy") {
    return qs::parse_npy(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), name);
}
qs::Tensor csv(const std::string& text, const std::string& name = "data.csv") {
    return qs::parse_csv(text.data(), text.size(), name);
}

qs::SafetensorsFile safetensors(const std::string& bytes) {
    return qs::SafetensorsFile(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "m.safetensors");
}

std::vector<float> ramp(std::size_t n, float start = -1.5f, float step = 0.25f) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
    return v;
}

// Random float32 bit patterns that are finite: normals of every exponent, subnormals, signed zeros.
std::vector<float> random_finite_floats(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<float> v;
    while (v.size() < n) {
        const std::uint32_t bits = rng();
        float f;
        std::memcpy(&f, &bits, sizeof f);
        if (std::isfinite(f)) v.push_back(f);
    }
    v[0] = 0.0f;
    if (n > 1) v[1] = -0.0f;
    if (n > 2) v[2] = 1e-45f;
    if (n > 3) v[3] = 3.4028235e38f;
    return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------- npy

TEST_CASE("io: npy float32 round trip for rank 1 / 2 and 3") {
    TempDir dir;
    for (const qs::Shape& shape : {qs::Shape{7}, qs::Shape{3, 5}, qs::Shape{2, 3, 4}, qs::Shape{1, 1, 1}}) {
        const auto values = random_finite_floats(static_cast<std::size_t>(qs::checked_numel(shape)), 7);
        const std::string path = dir / "t.npy";
        qs::save_floats(path, shape, values.data());
        const std::string bytes = read_bytes(path);
        // numpy's layout: v1.0, data aligned to 64 bytes, header ends in '\n'.
        REQUIRE(bytes.size() >= 64);
        CHECK(bytes.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
        const std::size_t header_end = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
        CHECK(header_end % 64 == 0);
        CHECK(bytes[header_end - 1] == '\n');
        CHECK(bytes.size() == header_end + values.size() * 4);
        const qs::Tensor t = qs::read_npy(path);
        CHECK(t.shape == shape);
        CHECK(same_bits(t.values, values));
        CHECK(qs::load_tensor(path).values.size() == values.size());
    }
}

TEST_CASE("io: npy header text is numpy's") {
    const std::string h = qs::npy_header_bytes("<f4", {3});
    CHECK(h.size() == 128);  // numpy's own files of this shape start their data at byte 128 too
    CHECK(h.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }") == 10);
    CHECK(h.back() == '\n');
    CHECK(qs::npy_header_bytes("|i1", {2, 3}).find("'shape': (2, 3), }") != std::string::npos);
}

TEST_CASE("io: npy codes are written as int8 / uint8 / int16 / uint16") {
    TempDir dir;
    struct Case {
        qs::NpyDtype dtype;
        const char* descr;
        std::vector<std::int32_t> codes;
        std::size_t item;
    };
    const std::vector<Case> cases = {
        {qs::NpyDtype::I1, "|i1", {-128, -1, 0, 1, 127, 5}, 1},
        {qs::NpyDtype::U1, "|u1", {0, 1, 128, 255, 7, 9}, 1},
        {qs::NpyDtype::I2, "<i2", {-32768, -1, 0, 300, 32767, 2}, 2},
        {qs::NpyDtype::U2, "<u2", {0, 65535, 256, 1, 2, 3}, 2},
    };
    for (const auto& c : cases) {
        const std::string path = dir / "q.npy";
        qs::save_codes(path, {2, 3}, c.codes.data(), c.dtype);
        const std::string bytes = read_bytes(path);
        const auto header = qs::parse_npy_header(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), path);
        CHECK(header.descr == c.descr);
        CHECK(header.shape == qs::Shape{2, 3});
        CHECK(header.data_offset % 64 == 0);
        REQUIRE(bytes.size() == header.data_offset + 6 * c.item);
        for (std::size_t i = 0; i < 6; ++i) {
            const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + header.data_offset + i * c.item);
            std::int32_t value = c.item == 1 ? p[0] : (p[0] | (p[1] << 8));
            if (c.descr[1] == 'i') value = c.item == 1 ? static_cast<std::int8_t>(value) : static_cast<std::int16_t>(value);
            CHECK(value == c.codes[i]);
        }
        // QuantScope refuses to read integer arrays back, clearly.
        CHECK_ERROR_HAS(qs::read_npy(path), std::string("unsupported dtype '") + c.descr + "'");
    }
    // Codes as float32 read back exactly.
    const std::vector<std::int32_t> codes = {-3, 0, 200};
    qs::save_codes(dir / "f.npy", {3}, codes.data(), qs::NpyDtype::F4);
    CHECK(qs::read_npy(dir / "f.npy").values == std::vector<float>{-3, 0, 200});
}

TEST_CASE("io: a code that does not fit its dtype is an error and writes nothing") {
    TempDir dir;
    const std::vector<std::int32_t> codes = {1, 2, 300};
    CHECK_ERROR_HAS(qs::save_codes(dir / "q.npy", {3}, codes.data(), qs::NpyDtype::I1),
                    "code 300 at index [2] does not fit int8");
    const std::vector<std::int32_t> negative = {-1};
    CHECK_ERROR_HAS(qs::save_codes(dir / "q.npy", {1}, negative.data(), qs::NpyDtype::U2), "does not fit uint16");
    CHECK(dir.files().empty());
}

TEST_CASE("io: npy <f8 and <f2 convert to float32") {
    const std::vector<double> doubles = {0.1, -2.5, 1e-300, 123456789.123};
    const qs::Tensor t = npy(npy_file(f4_dict("(2, 2)", "<f8"), le_bytes(doubles)));
    CHECK(t.shape == qs::Shape{2, 2});
    for (std::size_t i = 0; i < doubles.size(); ++i) CHECK(t.values[i] == static_cast<float>(doubles[i]));

    const qs::Tensor h = npy(npy_file(f4_dict("(6,)", "<f2"), u16_bytes({0x3C00, 0xC000, 0x0001, 0x03FF, 0x7BFF, 0x8000})));
    CHECK(h.values[0] == 1.0f);
    CHECK(h.values[1] == -2.0f);
    CHECK(h.values[2] == std::ldexp(1.0f, -24));              // smallest subnormal half
    CHECK(h.values[3] == std::ldexp(1023.0f, -24));           // largest subnormal half
    CHECK(h.values[4] == 65504.0f);                           // largest finite half
    CHECK(h.values[5] == 0.0f);
    CHECK(std::signbit(h.values[5]));
}

TEST_CASE("io: every float16 value converts exactly") {
    std::vector<std::uint16_t> all(65536);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
    const std::string file = npy_file(f4_dict("(65536,)", "<f2"), u16_bytes(all));
    // Inf/NaN are rejected as a whole, so check the finite ones by reading them in one tensor without specials.
    std::vector<std::uint16_t> finite;
    for (const auto bits : all) {
        if (((bits >> 10) & 0x1f) != 0x1f) finite.push_back(bits);
    }
    const qs::Tensor t = npy(npy_file(f4_dict("(" + std::to_string(finite.size()) + ",)", "<f2"), u16_bytes(finite)));
    bool all_exact = true;
    for (std::size_t i = 0; i < finite.size(); ++i) {
        const int exponent = (finite[i] >> 10) & 0x1f;
        const int mantissa = finite[i] & 0x3ff;
        const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
        const double want = (finite[i] & 0x8000) ? -magnitude : magnitude;
        if (static_cast<double>(t.values[i]) != want || std::signbit(t.values[i]) != bool(finite[i] & 0x8000)) {
            all_exact = false;
            INFO("half 0x" << std::hex << finite[i]);
            CHECK(t.values[i] == want);
        }
    }
    CHECK(all_exact);
    CHECK_ERROR_HAS(npy(file), "Inf at index [31744]");  // 0x7C00, the first special in order
}

TEST_CASE("io: npy Inf and NaN are rejected naming the index") {
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(2, 2)"), le_bytes(std::vector<float>{1, 2, NAN, 4}))),
                    "data.npy: NaN at index [1, 0]");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(3,)", "<f2"), u16_bytes({0x3C00, 0x3C00, 0xFC00}))), "-Inf at index [2]");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(2,)", "<f8"), le_bytes(std::vector<double>{1.0, 1e300}))),
                    "data.npy: value 1.0000000000000001e+300 at index [1] is outside the float32 range");
}

TEST_CASE("io: npy versions 2.0 and 3.0 and header spellings") {
    const std::string data = le_bytes(std::vector<float>{1, 2, 3});
    CHECK(npy(npy_file(f4_dict("(3,)"), data, 2)).values == std::vector<float>{1, 2, 3});
    CHECK(npy(npy_file(f4_dict("(3,)"), data, 3)).values == std::vector<float>{1, 2, 3});
    for (const std::string dict : {
             "{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}",
             "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}",
             "  {  'descr' :'<f4','fortran_order':False,'shape':( 3 , ) ,}   ",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3)}\t \r",
         }) {
        INFO(dict);
        const qs::Tensor t = npy(npy_file(dict, data));
        CHECK(t.values == std::vector<float>{1, 2, 3});
        CHECK(t.numel() == 3);
    }
}

TEST_CASE("io: npy Fortran order is transposed to row-major") {
    // Logical 2x3 [[0, 1, 2], [3, 4, 5]] stored column by column.
    const qs::Tensor t = npy(npy_file(f4_dict("(2, 3)", "<f4", true), le_bytes(std::vector<float>{0, 3, 1, 4, 2, 5})));
    CHECK(t.shape == qs::Shape{2, 3});
    CHECK(t.values == std::vector<float>{0, 1, 2, 3, 4, 5});
    // Rank 3, logical value at [i, j, k] = 100i + 10j + k; Fortran offset i + 2j + 6k.
    std::vector<double> column_major(2 * 3 * 4);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) column_major[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    const qs::Tensor t3 = npy(npy_file(f4_dict("(2, 3, 4)", "<f8", true), le_bytes(column_major)));
    CHECK(t3.shape == qs::Shape{2, 3, 4});
    bool ok = true;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) ok = ok && t3.values[static_cast<std::size_t>(12 * i + 4 * j + k)] == 100 * i + 10 * j + k;
    CHECK(ok);
    CHECK(npy(npy_file(f4_dict("(3,)", "<f4", true), le_bytes(std::vector<float>{1, 2, 3}))).values ==
          std::vector<float>{1, 2, 3});
}

TEST_CASE("io: truncated and over-long npy data say expected vs actual bytes") {
    const std::string file = npy_file(f4_dict("(3, 4)"), le_bytes(ramp(12)));
    CHECK_ERROR_HAS(npy(file.substr(0, file.size() - 8)),
                    "data.npy: truncated: shape (3, 4) of '<f4' needs 48 bytes of data, the file has 40");
    CHECK_ERROR_HAS(npy(file + "abc"), "the file has 51 (3 unexpected trailing bytes)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(3,)"), "")), "needs 12 bytes of data, the file has 0");
}

TEST_CASE("io: a huge npy shape fails fast / before any allocation") {
    const auto start = std::chrono::steady_clock::now();
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1000000000, 1000000000)"), "1234")), "more than 268435456 elements");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(4294967296, 4294967296, 4294967296)"), "")), "more than");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(99999999999999999999999,)"), "")), "dimension too large");
    // Within kMaxElements but far beyond the file: the length check refuses it without allocating 1 GiB.
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(268435456,)"), "1234")), "needs 1073741824 bytes of data, the file has 4");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("io: malformed npy preambles") {
    const std::string good = npy_file(f4_dict("(1,)"), le_bytes(std::vector<float>{1}));
    CHECK_ERROR_HAS(npy(""), "not a .npy file");
    CHECK_ERROR_HAS(npy("PK\x03\x04 this is a zip"), "data.npy: not a .npy file");
    CHECK_ERROR_HAS(npy(good.substr(0, 8)), "truncated .npy file (8 bytes)");
    std::string bad_magic = good;
    bad_magic[1] = 'X';
    CHECK_ERROR_HAS(npy(bad_magic), "not a .npy file");
    std::string version = good;
    version[6] = 4;
    CHECK_ERROR_HAS(npy(version), "unsupported .npy format version 4.0");
    version[6] = 1;
    version[7] = 1;
    CHECK_ERROR_HAS(npy(version), "unsupported .npy format version 1.1");
    // A header length that runs past the end of the file.
    std::string lying = good;
    lying[8] = '\xff';
    lying[9] = '\x7f';
    CHECK_ERROR_HAS(npy(lying), "the .npy header claims 32767 bytes but the file has only");
    std::string lying_v2 = npy_file(f4_dict("(1,)"), le_bytes(std::vector<float>{1}), 2);
    lying_v2[11] = '\x7f';
    CHECK_ERROR_HAS(npy(lying_v2), "the .npy header claims");
    // A header length shorter than the dict: the dict is cut off.
    std::string short_header = good;
    short_header[8] = 20;
    short_header[9] = 0;
    CHECK_ERROR_HAS(npy(short_header), "bad .npy header");
}

TEST_CASE("io: npy dtypes other than <f2 <f4 <f8 are refused clearly") {
    CHECK(error_of([] { npy(npy_file(f4_dict("(1,)", ">f4"), "\0\0\0\0")); }) ==
          "data.npy: unsupported dtype '>f4' (big-endian); QuantScope reads <f2, <f4, <f8");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1,)", ">f8"), std::string(8, '\0'))), "(big-endian)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1,)", "<i4"), std::string(4, '\0'))), "unsupported dtype '<i4' (signed integer)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1,)", "|b1"), std::string(1, '\0'))), "(boolean)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1,)", "<c8"), std::string(8, '\0'))), "(complex)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1,)", "|O"), std::string(8, '\0'))), "(Python objects)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(1,)", "<f16"), std::string(16, '\0'))), "unsupported dtype '<f16'");
    CHECK_ERROR_HAS(npy(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "")),
                    "structured");
}

TEST_CASE("io: bad npy header dicts") {
    const std::string data = le_bytes(std::vector<float>{1});
    for (const auto& [dict, part] : std::vector<std::pair<std::string, std::string>>{
             {"{'descr': '<f4', 'shape': (1,)}", "missing key 'fortran_order'"},
             {"{'fortran_order': False, 'shape': (1,)}", "missing key 'descr'"},
             {"{'descr': '<f4', 'fortran_order': False}", "missing key 'shape'"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}", "unknown key 'extra'"},
             {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", "duplicate key 'descr'"},
             {"{'descr' '<f4', 'fortran_order': False, 'shape': (1,)}", "expected ':'"},
             {"{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}", "must be True or False"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': [1]}", "must be a tuple"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "negative dimension"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}", "expected a dimension"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}", "expected ',' or ')'"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", "unexpected text after"},
             {"{'descr': '<f4 , 'fortran_order': False, 'shape': (1,)}", "bad .npy header"},
             {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", "expected ',' or '}'"},
             {"'descr': '<f4'", "must start with '{'"},
             {"", "must start with '{'"},
         }) {
        INFO(dict);
        CHECK_ERROR_HAS(npy(npy_file(dict, data)), part);
    }
}

TEST_CASE("io: npy rank > 3 folds to 3-D - rank 0 and empty arrays are refused") {
    std::string note;
    const std::string data(2 * 3 * 1 * 2 * 4, '\0');
    const std::string file = npy_file(f4_dict("(2, 3, 1, 2)"), data);
    const qs::Tensor t = qs::parse_npy(reinterpret_cast<const std::uint8_t*>(file.data()), file.size(), "t.npy", &note);
    CHECK(t.shape == qs::Shape{6, 1, 2});
    CHECK(note == "2x3x1x2 viewed as 6x1x2");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(2, 3, 1, 0)"), "")), "is empty");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(100000, 100000, 100000, 100000)"), "\0\0\0\0")), "elements");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("()"), "\0\0\0\0")), "shape () is a 0-d array (a scalar)");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(0, 3)"), "")), "shape (0, 3) is empty");
    CHECK_ERROR_HAS(npy(npy_file(f4_dict("(0,)"), "")), "shape (0,) is empty");
}

TEST_CASE("io: reading a large npy is one pass") {
    TempDir dir;
    const std::size_t n = std::size_t{1} << 24;  // 64 MiB of float32
    std::vector<float> values(n);
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 1000) * 0.5f;
    qs::save_floats(dir / "big.npy", {256, 256, 256}, values.data());
    const auto start = std::chrono::steady_clock::now();
    const qs::Tensor t = qs::read_npy(dir / "big.npy");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("read 64 MiB .npy in " << seconds * 1000 << " ms");
    CHECK(same_bits(t.values, values));
    CHECK(seconds < 2.0);
}

// ---------------------------------------------------------------------------------------------------- csv

TEST_CASE("io: csv round trip of floats and codes") {
    TempDir dir;
    const auto values = random_finite_floats(40, 11);
    qs::save_floats(dir / "f.csv", {5, 8}, values.data());
    const qs::Tensor t = qs::load_tensor(dir / "f.csv");
    CHECK(t.shape == qs::Shape{5, 8});
    CHECK(same_bits(t.values, values));  // shortest round-trip text, -0 and subnormals included

    qs::save_floats(dir / "row.CSV", {4}, values.data());
    const qs::Tensor row = qs::load_tensor(dir / "row.CSV");
    CHECK(row.shape == qs::Shape{1, 4});  // rank 1 is one row

    const std::vector<std::int32_t> codes = {-128, 0, 127, 65535, -5, 6};
    qs::save_codes(dir / "q.csv", {2, 3}, codes.data(), qs::NpyDtype::I1);
    CHECK(read_bytes(dir / "q.csv") == "-128,0,127\n65535,-5,6\n");
    CHECK(qs::load_tensor(dir / "q.csv").values == std::vector<float>{-128, 0, 127, 65535, -5, 6});

    const std::vector<float> simple = {0.1f, -2.5f, 3e-8f, 1e10f};
    qs::save_floats(dir / "s.csv", {2, 2}, simple.data());
    CHECK(read_bytes(dir / "s.csv") == "0.1,-2.5\n3e-08,1e+10\n");
}

TEST_CASE("io: csv separators / line ends / BOM / blank and comment lines") {
    const std::vector<float> want = {1, 2, 3, 4, 5, 6};
    for (const std::string text : {
             "1,2,3\n4,5,6\n",
             "1,2,3\n4,5,6",
             "1 2 3\n4 5 6\n",
             "1\t2\t3\n4\t5\t6\n",
             "1, 2, 3\r\n4 ,5 , 6\r\n",
             "\xEF\xBB\xBF" "1,2,3\n4,5,6\n",
             "  1,2,3\n\n4,5,6\n\n\n  \n",
             "# a comment\n1,2,3\n# another\n4,5,6\n",
             "+1,2.0,3e0\n4.,0.5e1,+6\n",
             "1,2,3\r4,5,6\r",
             "1,2,3\r4,5,6",
             "1,2,3\r\r4,5,6\r\n",
             "# CR only\r1 2 3\r4 5 6\r",
         }) {
        INFO(text);
        const qs::Tensor t = csv(text);
        CHECK(t.shape == qs::Shape{2, 3});
        CHECK(t.values == want);
    }
    CHECK(csv("42").shape == qs::Shape{1, 1});
    CHECK(csv("1\n2\n3\n").shape == qs::Shape{3, 1});
    CHECK(csv("1,2\r3,4\r").shape == qs::Shape{2, 2});
    // Lines are counted the same whichever line end the file uses (a CRLF is one line end, not two).
    for (const std::string end : {"\n", "\r\n", "\r"})
        CHECK(error_of([&] { csv("1,2" + end + end + "3" + end); }) == "data.csv:3: 1 value, expected 2 (as on line 1)");
    CHECK(csv("1e-50").values[0] == 0.0f);  // below float32's range rounds to 0, as numpy's astype does
}

TEST_CASE("io: bad csv files name line and column") {
    CHECK(error_of([] { csv("1,2,3\n4,5,6\n7,8\n"); }) == "data.csv:3: 2 values, expected 3 (as on line 1)");
    CHECK(error_of([] { csv("1,2,3\n4,5,abc\n"); }) == "data.csv:2:5: 'abc' is not a number");
    CHECK(error_of([] { csv(""); }) == "data.csv: no numbers in the file (it is empty or blank)");
    CHECK_ERROR_HAS(csv("\xEF\xBB\xBF\n \n\r\n"), "no numbers in the file");
    CHECK(error_of([] { csv("1,2\n3,nan\n"); }) ==
          "data.csv:2:3: 'nan' is not a finite number (NaN and Inf are not allowed)");
    CHECK_ERROR_HAS(csv("1,-inf\n"), "data.csv:1:3: '-inf' is not a finite number");
    CHECK_ERROR_HAS(csv("1,Infinity\n"), "not a finite number");
    CHECK_ERROR_HAS(csv("1e39\n"), "data.csv:1:1: '1e39' is outside the float32 range");
    CHECK_ERROR_HAS(csv("1e999\n"), "'1e999' is out of range");
    CHECK_ERROR_HAS(csv("1,2,\n"), "data.csv:1:4: trailing comma");
    CHECK_ERROR_HAS(csv("1,,2\n"), "data.csv:1:3: empty field");
    CHECK_ERROR_HAS(csv(",1,2\n"), "data.csv:1:1: empty field");
    CHECK_ERROR_HAS(csv("1, ,2\n"), "data.csv:1:4: empty field");
    CHECK_ERROR_HAS(csv("1;2\n"), "'1;2' is not a number");
    CHECK_ERROR_HAS(csv("0x10\n"), "'0x10' is not a number");
    CHECK_ERROR_HAS(csv("1,2\n3,4\0\n", "data.csv"), "<no error>");  // the std::string stops at the NUL
    // A NUL in the file shows as \x00 and does not cut the message short.
    CHECK(error_of([] { csv(std::string("1,2\n3,4\0x\n", 10)); }) == "data.csv:2:3: '4\\x00x' is not a number");
    CHECK_ERROR_HAS(csv("++1\n"), "'++1' is not a number");
    CHECK_ERROR_HAS(csv("+-1\n"), "'+-1' is not a number");
    CHECK_ERROR_HAS(csv("a,b,c\n1,2,3\n"), "data.csv:1:1: 'a' is not a number");
}

TEST_CASE("io: csv writer refuses rank 3 and leaves an existing file untouched") {
    TempDir dir;
    const std::string path = dir / "out.csv";
    write_bytes(path, "previous contents\n");
    const auto values = ramp(24);
    CHECK(error_of([&] { qs::save_floats(path, {2, 3, 4}, values.data()); }) ==
          path + ": cannot write a 3-D tensor (2x3x4) as CSV; use .npy");
    CHECK(read_bytes(path) == "previous contents\n");
    CHECK(dir.files() == std::vector<std::string>{"out.csv"});
}

// -------------------------------------------------------------------------------------------- safetensors

TEST_CASE("io: safetensors list and read F32 / F16 / BF16 / F64") {
    const std::string data = le_bytes(std::vector<float>{1, 2, 3, 4, 5, 6}) +      // a: F32 [2, 3], 0..24
                             u16_bytes({0x3C00, 0x0001, 0xC000, 0x7BFF}) +          // b: F16 [4], 24..32
                             u16_bytes({0x3F80, 0x0001, 0xBF80, 0x4049}) +          // c: BF16 [2, 2], 32..40
                             le_bytes(std::vector<double>{0.1, -1e-3});             // d: F64 [2], 40..56
    const std::string header =
        R"({"__metadata__": {"format": "pt", "n": "1"},
            "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
            "b": {"dtype": "F16", "shape": [4], "data_offsets": [24, 32]},
            "c": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [32, 40]},
            "d": {"dtype": "F64", "shape": [2], "data_offsets": [40, 56]}})";
    const std::string bytes = safetensors_file(header, data);
    const auto file = safetensors(bytes);
    REQUIRE(file.list().size() == 4);
    CHECK(file.list()[0].name == "a");
    CHECK(file.list()[0].dtype == "F32");
    CHECK(file.list()[0].shape == qs::Shape{2, 3});
    CHECK(file.list()[1].begin == 24);
    CHECK(file.list()[1].end == 32);
    CHECK(file.metadata() == std::vector<std::pair<std::string, std::string>>{{"format", "pt"}, {"n", "1"}});

    const qs::Tensor a = file.read("a");
    CHECK(a.shape == qs::Shape{2, 3});
    CHECK(a.values == std::vector<float>{1, 2, 3, 4, 5, 6});
    const qs::Tensor b = file.read("b");
    CHECK(b.values == std::vector<float>{1.0f, std::ldexp(1.0f, -24), -2.0f, 65504.0f});
    const qs::Tensor c = file.read("c");
    CHECK(c.values == std::vector<float>{1.0f, std::ldexp(1.0f, -133), -1.0f, 3.140625f});  // bf16 subnormal too
    const qs::Tensor d = file.read("d");
    CHECK(d.values == std::vector<float>{0.1f, -1e-3f});

    CHECK(error_of([&] { file.read("zz"); }) == "m.safetensors: no tensor named 'zz' (it has: a, b, c, d)");
}

TEST_CASE("io: safetensors rank > 3 folds to 3-D / rank 0 and empty are refused") {
    const std::string header =
        R"({"w": {"dtype": "F32", "shape": [2, 1, 2, 2], "data_offsets": [0, 32]},
            "s": {"dtype": "F32", "shape": [], "data_offsets": [32, 36]},
            "e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [36, 36]},
            "i": {"dtype": "I64", "shape": [1], "data_offsets": [36, 44]}})";
    const std::string bytes = safetensors_file(header, le_bytes(ramp(9)) + std::string(8, '\0'));
    const auto file = safetensors(bytes);
    std::string note = "stale";
    const qs::Tensor w = file.read("w", &note);
    CHECK(w.shape == qs::Shape{2, 2, 2});
    CHECK(w.values == ramp(8));
    CHECK(note == "2x1x2x2 viewed as 2x2x2");
    qs::fold_to_rank3({2, 3}, &note);
    CHECK(note.empty());
    CHECK(qs::fold_to_rank3({2, 3, 4, 5}) == qs::Shape{6, 4, 5});
    std::string fold;
    qs::fold_to_rank3({2, 3, 4, 5}, &fold);
    CHECK(fold == "2x3x4x5 viewed as 6x4x5");
    CHECK_ERROR_HAS(file.read("s"), "m.safetensors: tensor 's' is a scalar (rank 0)");
    CHECK_ERROR_HAS(file.read("e"), "m.safetensors: tensor 'e' is empty (shape [0, 3])");
    CHECK(error_of([&] { file.read("i"); }) ==
          "m.safetensors: tensor 'i' has dtype I64; QuantScope reads F32, F16, BF16 and F64");
}

TEST_CASE("io: safetensors Inf / NaN and float32 overflow are rejected") {
    const std::string header =
        R"({"h": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
            "b": {"dtype": "BF16", "shape": [2], "data_offsets": [4, 8]},
            "d": {"dtype": "F64", "shape": [1], "data_offsets": [8, 16]}})";
    const std::string bytes = safetensors_file(header, u16_bytes({0x3C00, 0x7C00, 0x7FC0, 0}) +
                                                           le_bytes(std::vector<double>{-1e200}));
    const auto file = safetensors(bytes);
    CHECK_ERROR_HAS(file.read("h"), "tensor 'h': +Inf at index [1]");
    CHECK_ERROR_HAS(file.read("b"), "tensor 'b': NaN at index [0]");
    CHECK_ERROR_HAS(file.read("d"), "is outside the float32 range");
}

TEST_CASE("io: malformed safetensors files") {
    const std::string data = le_bytes(ramp(4));
    const auto one = [&](const std::string& entry) { return safetensors_file("{\"t\": " + entry + "}", data); };
    CHECK_ERROR_HAS(safetensors("1234"), "too short to be a .safetensors file (4 bytes)");
    // Header length past the end of the file.
    std::string past = safetensors_file("{}", "");
    past[0] = 100;
    CHECK_ERROR_HAS(safetensors(past), "the header length 100 runs past the end of the file (10 bytes)");
    std::string huge = safetensors_file("{}", "");
    huge[7] = '\x80';
    CHECK_ERROR_HAS(safetensors(huge), "runs past the end of the file");
    CHECK_ERROR_HAS(safetensors(safetensors_file("{\"t\": ", "")), "invalid JSON at line 1, column 7");
    CHECK_ERROR_HAS(safetensors(safetensors_file("[1, 2]", "")), "the header is a JSON array, not an object");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 32]})")),
                    "tensor 't': data_offsets [0, 32] run past the end of the data (16 bytes)");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [16, 0]})")),
                    "end before they begin");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 16]})")),
                    "tensor 't': shape [3] of F32 needs 12 bytes, data_offsets give 16");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [4294967296, 4294967296, 16], "data_offsets": [0, 16]})")),
                    "needs more than 2^64 bytes");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]})")),
                    "\"shape\" must hold non-negative integers");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [4.0], "data_offsets": [0, 16]})")),
                    "\"shape\" must hold non-negative integers");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0, -16]})")),
                    "must be non-negative integers");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "F32", "shape": [4], "data_offsets": [0]})")),
                    "\"data_offsets\" must be [begin, end]");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": "Q7", "shape": [4], "data_offsets": [0, 16]})")),
                    "tensor 't': unknown dtype 'Q7'");
    CHECK_ERROR_HAS(safetensors(one(R"({"dtype": 4, "shape": [4], "data_offsets": [0, 16]})")), "non-string \"dtype\"");
    CHECK_ERROR_HAS(safetensors(one(R"({"shape": [4], "data_offsets": [0, 16]})")), "missing or non-string \"dtype\"");
    CHECK_ERROR_HAS(safetensors(one(R"([1])")), "expected an object");
    CHECK_ERROR_HAS(safetensors(safetensors_file(R"({"__metadata__": 3})", "")), "\"__metadata__\" must be an object");
    CHECK_ERROR_HAS(safetensors(safetensors_file(
                        R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                            "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                        data)),
                    "tensors 'a' and 'b' overlap (bytes 4 to 8)");
    CHECK_ERROR_HAS(safetensors(safetensors_file(
                        R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                            "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                        data)),
                    "duplicate key 'a'");
    // Zero-length tensors overlap nothing; the format pads headers with spaces.
    CHECK(safetensors(safetensors_file(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                            "z": {"dtype": "F32", "shape": [0], "data_offsets": [8, 8]}}    )",
                                       data))
              .list()
              .size() == 2);
}

TEST_CASE("io: load_tensor picks the reader by extension") {
    TempDir dir;
    const std::string single = safetensors_file(R"({"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})",
                                                le_bytes(ramp(4)));
    write_bytes(dir / "one.safetensors", single);
    CHECK(qs::load_tensor(dir / "one.safetensors").values == ramp(4));
    CHECK(qs::load_tensor(dir / "one.safetensors", "w").values == ramp(4));
    write_bytes(dir / "UPPER.SafeTensors", single);
    CHECK(qs::load_tensor(dir / "UPPER.SafeTensors").shape == qs::Shape{2, 2});

    write_bytes(dir / "two.safetensors",
                safetensors_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                     "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                                 le_bytes(ramp(4))));
    CHECK(error_of([&] { qs::load_tensor(dir / "two.safetensors"); }) ==
          dir / "two.safetensors" + ": the file holds 2 tensors (a, b); choose one with --tensor NAME");
    CHECK(qs::load_tensor(dir / "two.safetensors", "b").values == std::vector<float>{-1.0f, -0.75f});
    write_bytes(dir / "none.safetensors", safetensors_file("{}", ""));
    CHECK_ERROR_HAS(qs::load_tensor(dir / "none.safetensors"), "the file holds no tensors");

    write_bytes(dir / "x.NPY", npy_file(f4_dict("(2,)"), le_bytes(std::vector<float>{1, 2})));
    CHECK(qs::load_tensor(dir / "x.NPY").values == std::vector<float>{1, 2});
    CHECK_ERROR_HAS(qs::load_tensor(dir / "x.NPY", "w"), "--tensor 'w' applies only to .safetensors and .gguf files");
    write_bytes(dir / "data.txt", "1,2\n");
    CHECK(error_of([&] { qs::load_tensor(dir / "data.txt"); }) ==
          dir / "data.txt" + ": unknown file type '.txt'; QuantScope reads .npy, .csv, .safetensors and .gguf");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "noext"), "no file extension");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "missing.npy"), "cannot read '" + dir / "missing.npy" + "': No such file");
    fs::create_directory(dir / "folder.npy");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "folder.npy"), "it is a directory");
    write_bytes(dir / "empty.npy", "");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "empty.npy"), "not a .npy file");
    write_bytes(dir / "empty.safetensors", "");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "empty.safetensors"), "too short");
    const std::vector<float> v = {1, 2};
    CHECK_ERROR_HAS(qs::save_floats(dir / "out.bin", {2}, v.data()), "QuantScope writes .npy and .csv");
}

// --------------------------------------------------------------------------------------------------- json

TEST_CASE("io: json reader") {
    const qs::JsonValue v = qs::parse_json(
        R"( {"a": [1, -2.5e3, true, false, null], "s": "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00é", "big": 18446744073709551615} )",
        "t.json");
    REQUIRE(v.is_object());
    const qs::JsonValue* a = v.find("a");
    REQUIRE(a != nullptr);
    REQUIRE(a->items.size() == 5);
    CHECK(a->items[1].number == -2500.0);
    std::int64_t i = 0;
    CHECK(a->items[0].to_int64(i));
    CHECK(i == 1);
    CHECK_FALSE(a->items[1].to_int64(i));
    CHECK(a->items[2].is_bool());
    CHECK(a->items[2].boolean);
    CHECK(a->items[4].is_null());
    CHECK(v.find("s")->text == "x\"\\/\b\f\n\r\t\xC3\xA9\xF0\x9F\x98\x80\xC3\xA9");
    std::uint64_t big = 0;
    CHECK(v.find("big")->to_uint64(big));
    CHECK(big == 18446744073709551615ull);
    CHECK(v.find("missing") == nullptr);
    CHECK(qs::parse_json("1e-400", "t").number == 0.0);

    for (const auto& [text, part] : std::vector<std::pair<std::string, std::string>>{
             {"", "unexpected end of input"},
             {"{\"a\": 1,}", "expected a string key"},
             {"[1, 2,]", "expected a value"},
             {"[1 2]", "expected ',' or ']'"},
             {"{\"a\" 1}", "expected ':'"},
             {"{\"a\": 1} x", "unexpected text after"},
             {"01", "leading zeros"},
             {"1.", "expected digits after '.'"},
             {"-", "expected digits"},
             {"1e", "exponent"},
             {"1e400", "number out of range"},
             {"\"abc", "unterminated string"},
             {"\"a\nb\"", "control character"},
             {"\"\\x\"", "bad escape"},
             {"\"\\u12\"", "\\u escape"},
             {"\"\\u12g4\"", "bad \\u escape"},
             {"\"\\ud800\"", "lone high surrogate"},
             {"\"\\udc00\"", "lone low surrogate"},
             {"\"\xC0\xAF\"", "invalid UTF-8"},
             {"\"\xED\xA0\x80\"", "invalid UTF-8"},
             {"\"\xF4\x90\x80\x80\"", "invalid UTF-8"},
             {"\"\xE2\x82\"", "invalid UTF-8"},
             {"tru", "expected a value"},
             {"NaN", "expected a value"},
             {"{\"k\": 1, \"k\": 2}", "line 1, column 10: duplicate key 'k'"},
             {"{\n  \"a\": [1,\n  2,,]}", "line 3, column 5"},
         }) {
        INFO(text);
        CHECK_ERROR_HAS(qs::parse_json(text, "t.json"), part);
    }
    CHECK_ERROR_HAS(qs::parse_json(std::string(100, '[') + std::string(100, ']'), "t.json"), "nested deeper than 64");
    CHECK(qs::parse_json(std::string(64, '[') + std::string(64, ']'), "t.json").is_array());
    qs::JsonLimits small;
    small.max_values = 10;
    CHECK_ERROR_HAS(qs::parse_json("[1,2,3,4,5,6,7,8,9,10,11]", "t.json", small), "more than 10 values");
    small.max_bytes = 4;
    CHECK_ERROR_HAS(qs::parse_json("[1,2]", "t.json", small), "JSON too large");
}

// ------------------------------------------------------------------------------------------ atomic files

TEST_CASE("io: atomic writes replace on success and leave the old file on failure") {
    TempDir dir;
    const std::string path = dir / "out.npy";
    const auto values = ramp(6);
    qs::save_floats(path, {2, 3}, values.data());
    const std::string first = read_bytes(path);
    CHECK(qs::load_tensor(path).values == values);

    // A failure before commit: the writer is destroyed, the target keeps every byte, no temporary remains.
    {
        qs::AtomicFileWriter writer(path);
        writer.write("garbage", 7);
    }
    CHECK(read_bytes(path) == first);
    CHECK(dir.files() == std::vector<std::string>{"out.npy"});

    // Failures of the writers themselves.
    const std::vector<std::int32_t> codes = {1, 2, 999};
    CHECK_ERROR_HAS(qs::save_codes(path, {3}, codes.data(), qs::NpyDtype::I1), "does not fit int8");
    CHECK_ERROR_HAS(qs::save_floats(path, {0, 3}, values.data()), "is empty");
    CHECK_ERROR_HAS(qs::save_floats(path, {1, 1, 1, 6}, values.data()), "rank 4");
    CHECK(read_bytes(path) == first);
    CHECK(dir.files() == std::vector<std::string>{"out.npy"});

    // A directory that does not exist: nothing is created anywhere.
    CHECK_ERROR_HAS(qs::save_floats(dir / "no/such/dir/out.npy", {6}, values.data()), "No such file or directory");
    CHECK(dir.files() == std::vector<std::string>{"out.npy"});

    // Rename over a directory fails after the data was written: the temporary is removed.
    fs::create_directory(dir / "taken.npy");
    CHECK_ERROR_HAS(qs::save_floats(dir / "taken.npy", {6}, values.data()), "cannot write");
    CHECK(dir.files() == std::vector<std::string>{"out.npy", "taken.npy"});

    // Success replaces the contents.
    const auto other = ramp(4, 10.0f);
    qs::save_floats(path, {4}, other.data());
    CHECK(qs::load_tensor(path).values == other);
    CHECK(dir.files() == std::vector<std::string>{"out.npy", "taken.npy"});

    // Committing twice, or writing after commit, is an error rather than a silent no-op.
    qs::AtomicFileWriter writer(dir / "w.bin");
    writer.write("abc", 3);
    writer.commit();
    CHECK_ERROR_HAS(writer.commit(), "already closed");
    CHECK(read_bytes(dir / "w.bin") == "abc");
}

TEST_CASE("io: written files get the usual permissions") {
    TempDir dir;
    const mode_t old_mask = ::umask(022);
    qs::write_file_atomic(dir / "p.bin", "x", 1);
    ::umask(old_mask);
    const auto perms = fs::status(dir / "p.bin").permissions();
    CHECK((perms & fs::perms::others_read) != fs::perms::none);
    CHECK((perms & fs::perms::owner_write) != fs::perms::none);
}

TEST_CASE("io: MappedFile gives the real size and moves") {
    TempDir dir;
    write_bytes(dir / "a.bin", "hello");
    qs::MappedFile file(dir / "a.bin");
    CHECK(file.size() == 5);
    CHECK(std::string(reinterpret_cast<const char*>(file.data()), file.size()) == "hello");
    const std::uint8_t* before = file.data();
    qs::MappedFile moved(std::move(file));
    CHECK(moved.data() == before);
    CHECK(moved.size() == 5);
    CHECK(file.size() == 0);
    qs::MappedFile assigned;
    assigned = std::move(moved);
    CHECK(assigned.data() == before);
    write_bytes(dir / "empty.bin", "");
    qs::MappedFile empty(dir / "empty.bin");
    CHECK(empty.size() == 0);
    CHECK(empty.data() != nullptr);
    CHECK_ERROR_HAS(qs::MappedFile(dir / "nope.bin"), "No such file or directory");
    CHECK_ERROR_HAS(qs::MappedFile("/dev/null"), "not a regular file");
}

// ------------------------------------------------------------------------------------------- fuzz corpus

TEST_CASE("io: every fuzz corpus file ends in a tensor or a qs::Error") {
    const fs::path corpus = fs::path(QS_TESTS_DIR) / "fuzz" / "corpus";
    REQUIRE(fs::is_directory(corpus));
    std::size_t files = 0;
    for (const auto& entry : fs::recursive_directory_iterator(corpus)) {
        if (!entry.is_regular_file()) continue;
        const std::string kind = entry.path().parent_path().filename().string();
        const std::string bytes = read_bytes(entry.path().string());
        const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
        INFO(entry.path().string());
        ++files;
        try {
            if (kind == "npy") {
                qs::parse_npy(data, bytes.size(), "f.npy");
            } else if (kind == "csv") {
                qs::parse_csv(bytes.data(), bytes.size(), "f.csv");
            } else if (kind == "json") {
                qs::parse_json(bytes, "f.json");
            } else if (kind == "safetensors") {
                const qs::SafetensorsFile file(data, bytes.size(), "f.safetensors");
                for (const auto& tensor : file.list()) {
                    try {
                        file.read(tensor.name);
                    } catch (const qs::Error&) {
                    }
                }
            }
        } catch (const qs::Error&) {
        }
    }
    CHECK(files >= 20);
}
