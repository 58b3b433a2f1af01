// The Bits view's reading of one element (issue 12 item 5, cell_bits.hpp): a code's fields and value, its
// block's stored scales as bits, and the packed byte that holds a sub-byte code. Expected values are derived
// by hand from FORMATS.md (E8M0 of 2^-3 is 127 - 3 = 124; fp16 0.5 is 0 01110 0000000000 = 0x3800).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "quantscope/cell_bits.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

QuantConfig config_of(const std::string& dtype, Mode mode) {
    QuantConfig c;
    parse_dtype(dtype, c);
    if (c.format == FormatId::Int) c.mode = mode;
    else c = with_format(c, c.format);
    return c;
}

CellBits bits_of(const Tensor& t, const QuantConfig& c, std::int64_t flat) {
    return cell_bits(view_of(t), compute_params(t, c), c, flat, -1.0f);
}

Tensor row(std::vector<float> values) {
    Tensor t;
    t.shape = {1, static_cast<std::int64_t>(values.size())};
    t.values = std::move(values);
    return t;
}

// A block of 32: `first` then 31 small values.
std::vector<float> block_led_by(float first) {
    std::vector<float> v(32, 0.01f);
    v[0] = first;
    return v;
}

}  // namespace

TEST_CASE("cell bits: fp8-e4m3 448 and its smallest subnormal with the float32 scale 1") {
    const Tensor t = row({448.0f, -3.0f, std::ldexp(1.0f, -9), 0.0f});
    const QuantConfig c = config_of("fp8-e4m3", Mode::Symmetric);
    const CellBits top = bits_of(t, c, 0);
    CHECK(top.code.encoding == "fp8-e4m3");
    CHECK(top.code.is_float);
    CHECK(top.code.bits_value == 0x7E);
    CHECK(top.code.float_class == FloatClass::Normal);
    CHECK(top.code.value == 448);
    CHECK(top.code.weights.empty());
    CHECK(top.code_bits == 8);
    CHECK(top.packed.offset == -1);  // whole bytes: no packing to show
    REQUIRE(top.scales.size() == 1);  // s = 448 / 448 = 1, a float32
    CHECK(top.scales[0].encoding == "float32");
    CHECK(top.scales[0].bits_value == 0x3F800000u);
    CHECK(top.scales[0].value == 1.0);
    CHECK(top.scales[0].fields[1].text == "01111111");
    const CellBits tiny = bits_of(t, c, 2);
    CHECK(tiny.code.bits_value == 0x01);
    CHECK(tiny.code.float_class == FloatClass::Subnormal);
    CHECK(tiny.code.value == std::ldexp(1.0, -9));
    CHECK(bits_of(t, c, 3).code.float_class == FloatClass::Zero);
    // Cast mode stores no scale.
    QuantConfig cast = c;
    cast.mode = Mode::Cast;
    CHECK(bits_of(t, cast, 0).scales.empty());
}

TEST_CASE("cell bits: special codes are classified as their format defines them") {
    CHECK(classify_float_code(0x7F, format_info(FormatId::Fp8E4M3).element) == FloatClass::NaN);
    CHECK(classify_float_code(0x78, format_info(FormatId::Fp8E4M3).element) == FloatClass::Normal);  // 256
    CHECK(classify_float_code(0x7C, format_info(FormatId::Fp8E5M2).element) == FloatClass::Infinity);
    CHECK(classify_float_code(0x7D, format_info(FormatId::Fp8E5M2).element) == FloatClass::NaN);
    CHECK(classify_float_code(0x7C00, format_info(FormatId::Fp16).element) == FloatClass::Infinity);
    CHECK(classify_float_code(0x3F, format_info(FormatId::Fp6E3M2).element) == FloatClass::Normal);  // 28: no specials
    CHECK(std::string(to_string(FloatClass::Subnormal)) == "subnormal");
}

TEST_CASE("cell bits: int4 -3 is 1101 with weights -8 4 2 1 and shares its byte with the code before") {
    const Tensor t = row({7.0f, -3.0f, 1.0f, 0.0f});  // symmetric int4: s = 7 / 7 = 1, codes = values
    const CellBits b = bits_of(t, config_of("int4", Mode::Symmetric), 1);
    CHECK(b.code.encoding == "int4");
    CHECK(!b.code.is_float);
    CHECK(b.code.fields[0].text == "1101");
    CHECK(b.code.value == -3);
    CHECK(b.code.weights == std::vector<double>{-8, 4, 2, 1});
    REQUIRE(b.scales.size() == 1);  // symmetric: s only
    CHECK(b.scales[0].value == 1.0);
    // Byte 0 holds codes 7 (low nibble) and -3 = 1101 (high nibble): 0b11010111 = 215.
    CHECK(b.packed.offset == 0);
    CHECK(b.packed.value == 215);
    REQUIRE(b.packed.slots.size() == 2);
    CHECK(b.packed.slots[0].element == 0);
    CHECK(b.packed.slots[0].low_bit == 0);
    CHECK(b.packed.slots[1].element == 1);
    CHECK(b.packed.slots[1].code == -3);
    CHECK(b.packed.slots[1].low_bit == 4);
    // uint4 asymmetric stores z too, and its weights are all positive.
    const CellBits u = bits_of(t, config_of("uint4", Mode::Asymmetric), 0);
    CHECK(u.code.weights == std::vector<double>{8, 4, 2, 1});
    CHECK(u.scales.size() == 2);
}

TEST_CASE("cell bits: the course's uint2 codes 1 0 3 2 are the byte 177 = 0b10110001") {
    const Tensor t = row({1.0f, 0.0f, 3.0f, 2.0f});  // uint2 asymmetric over [0, 3]: s = 1, z = 0
    const QuantConfig c = config_of("uint2", Mode::Asymmetric);
    for (std::int64_t i = 0; i < 4; ++i) {
        const CellBits b = bits_of(t, c, i);
        CHECK(b.packed.offset == 0);
        CHECK(b.packed.value == 177);
        REQUIRE(b.packed.slots.size() == 4);
        CHECK(b.packed.slots[static_cast<std::size_t>(i)].low_bit == 2 * i);
    }
    const CellBits b = bits_of(t, c, 2);
    CHECK(b.code.fields[0].text == "11");
    CHECK(b.packed.slots[3].code == 2);
    CHECK(int_bit_fields(b.packed.value, 8, false)[0].text == "10110001");
}

TEST_CASE("cell bits: an mxfp4 block of amax 0.75 stores the E8M0 byte 124 = 2^-3") {
    // X = 2^(floor(log2 0.75) - emax 2) = 2^(-1 - 2) = 2^-3; E8M0 = -3 + 127 = 124.
    const Tensor t = row(block_led_by(0.75f));
    const CellBits b = bits_of(t, config_of("mxfp4", Mode::Symmetric), 0);
    REQUIRE(b.scales.size() == 1);
    CHECK(b.scales[0].encoding == "E8M0");
    CHECK(b.scales[0].role == BitRowRole::BlockScale);
    CHECK(b.scales[0].bits_value == 124);
    CHECK(b.scales[0].fields[0].text == "01111100");
    CHECK(b.scales[0].value == 0.125);
    CHECK(b.code.encoding == "fp4-e2m1");
    CHECK(b.code.value == 6);  // 0.75 / 0.125 = 6, E2M1's largest: 0 11 1
    CHECK(b.code.fields[1].text == "11");
    CHECK(b.code_bits == 4);
    CHECK(b.packed.offset == 0);
}

TEST_CASE("cell bits: q8_0 and q4_0 store d as fp16 and q4_0's code stands for q - 8") {
    // q8_0: d = 63.5 / 127 = 0.5 = fp16 0x3800.
    const CellBits q8 = bits_of(row(block_led_by(63.5f)), config_of("q8_0", Mode::Symmetric), 0);
    REQUIRE(q8.scales.size() == 1);
    CHECK(q8.scales[0].encoding == "fp16");
    CHECK(q8.scales[0].bits_value == 0x3800);
    CHECK(q8.scales[0].value == 0.5);
    CHECK(q8.code.fields[0].text == "01111111");  // 127
    CHECK(q8.code.value == 127);
    CHECK(q8.packed.offset == -1);
    // q4_0: d = -4 / -8 = 0.5 (the first value of largest magnitude, with its sign); -4 / 0.5 + 8.5 = 0.5 -> 0.
    const CellBits q4 = bits_of(row(block_led_by(-4.0f)), config_of("q4_0", Mode::Symmetric), 0);
    CHECK(q4.scales[0].bits_value == 0x3800);
    CHECK(q4.code.fields[0].text == "0000");
    CHECK(q4.code.value == -8);
    CHECK(q4.code.weights == std::vector<double>{8, 4, 2, 1});
    // q4_1 also stores m as fp16.
    const CellBits q41 = bits_of(row(block_led_by(-4.0f)), config_of("q4_1", Mode::Symmetric), 0);
    REQUIRE(q41.scales.size() == 2);
    CHECK(q41.scales[1].role == BitRowRole::Offset);
    CHECK(q41.scales[1].value == -4.0);
}

TEST_CASE("cell bits: nvfp4 stores the E4M3 sb per block and the float32 g per tensor") {
    // amax 2688 gives g = 2688 / 2688 = 1; block 0's sb = e4m3(2688 / 6) = 448 = 0 1111 110; block 1's
    // amax 12 gives sb = e4m3(12 / 6) = 2 = 0 1000 000.
    std::vector<float> v(32, 0.5f);
    v[0] = 2688.0f;
    v[16] = 12.0f;
    Tensor t = row(v);
    const QuantConfig c = config_of("nvfp4", Mode::Symmetric);
    const QuantParams p = compute_params(t, c);
    const CellBits b0 = cell_bits(view_of(t), p, c, 0, 2688.0f);
    REQUIRE(b0.scales.size() == 2);
    CHECK(b0.scales[0].encoding == "E4M3");
    CHECK(b0.scales[0].bits_value == 0x7E);
    CHECK(b0.scales[0].value == 448);
    CHECK(b0.scales[1].role == BitRowRole::TensorScale);
    CHECK(b0.scales[1].encoding == "float32");
    CHECK(b0.scales[1].value == 1.0);
    const CellBits b1 = bits_of(t, c, 20);  // amax computed from the view
    CHECK(b1.block == 1);
    CHECK(b1.scales[0].bits_value == 0x40);
    CHECK(b1.scales[0].value == 2.0);
    CHECK(static_cast<float>(b1.scales[0].value * b1.scales[1].value) == static_cast<float>(p.scale[1]));
}

TEST_CASE("cell bits: nvfp4's g from the values overview's amax is the one quantize used") {
    // The window passes ValueOverview::amax(); here the largest |r| is the minimum, -2688: g = 2688 / 2688 = 1.
    std::vector<float> v(32, 0.5f);
    v[3] = -2688.0f;
    v[16] = 12.0f;
    const Tensor t = row(v);
    const ValueOverview values = overview_values(view_of(t), overview_grid(t.shape, 1 << 20));
    CHECK(values.amax() == 2688.0f);
    const QuantConfig c = config_of("nvfp4", Mode::Symmetric);
    const QuantParams p = compute_params(t, c);
    for (std::int64_t flat : {0, 20}) {
        const CellBits b = cell_bits(view_of(t), p, c, flat, values.amax());
        REQUIRE(b.scales.size() == 2);
        CHECK(b.scales[1].value == 1.0);
        CHECK(static_cast<float>(b.scales[0].value * b.scales[1].value) == static_cast<float>(p.scale[static_cast<std::size_t>(b.block)]));
    }
}

TEST_CASE("cell bits: nf4 shows the 4-bit index its codebook level and the block's absmax") {
    const Tensor t = row({1.0f, -0.5f, 0.0f, 0.3f});  // absmax 1: s = 1
    const CellBits b = bits_of(t, config_of("nf4", Mode::Symmetric), 1);
    CHECK(b.code.encoding == "nf4 index");
    CHECK(b.code.fields[0].text == "0010");  // -0.5 is nearest -0.5250730514526367, index 2
    CHECK(b.code.value == doctest::Approx(-0.5250730514526367));
    CHECK(b.code.weights == std::vector<double>{8, 4, 2, 1});
    REQUIRE(b.scales.size() == 1);
    CHECK(b.scales[0].encoding == "float32");
    CHECK(b.scales[0].value == 1.0);
    CHECK(b.packed.slots.size() == 2);
}

TEST_CASE("cell bits: the packed byte is the byte --out-packed writes at its offset") {
    test::TempDir dir;
    // 3 x 20 values (odd byte counts, fp6 codes that straddle bytes), written as CSV for the command line.
    std::vector<float> values(60);
    std::string csv;
    for (std::size_t i = 0; i < values.size(); ++i) {
        values[i] = std::sin(0.7f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 7));
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(values[i]));
        csv += buf;
        csv += (i + 1) % 20 == 0 ? "\n" : ", ";
    }
    test::write_bytes(dir / "w.csv", csv);
    Tensor t;
    t.shape = {3, 20};
    t.values = values;
    for (const char* dtype : {"uint2", "int4", "int3", "fp4-e2m1", "nf4", "fp6-e3m2", "int8"}) {
        INFO(dtype);
        const test::Run r = test::run("quantize " + test::shell_quote(dir / "w.csv") + " --dtype " + dtype +
                                          " --out-packed " + test::shell_quote(dir / "p.bin"),
                                      dir);
        REQUIRE(r.exit_code == 0);
        const std::string file = test::read_bytes(dir / "p.bin");
        const QuantConfig c = config_of(dtype, Mode::Asymmetric);
        const QuantParams p = compute_params(t, c);
        for (std::int64_t i = 0; i < t.numel(); ++i) {
            const PackedByte b = packed_byte_of(view_of(t), p, c, i);
            if (std::string(dtype) == "int8") {
                CHECK(b.offset == -1);
                continue;
            }
            REQUIRE(b.offset >= 0);
            REQUIRE(b.offset < static_cast<std::int64_t>(file.size()));
            CHECK(static_cast<unsigned char>(file[static_cast<std::size_t>(b.offset)]) == b.value);
            bool found = false;  // the element is among the codes of its byte
            for (const PackedSlot& s : b.slots) found = found || s.element == i;
            CHECK(found);
        }
    }
}
