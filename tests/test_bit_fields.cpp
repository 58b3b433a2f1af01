// The Bits view's reading of a code (issue 12 item 5): float fields, integer codes, block scales.
#include <doctest/doctest.h>

#include <cmath>

#include "quantscope/bit_fields.hpp"
#include "quantscope/packing.hpp"

using namespace qs;

namespace {

// The value the fields of a float code stand for: sign * 2^exponent * significand.
double float_value(const std::vector<BitField>& f) {
    const double significand = f.size() > 2 ? f[2].value : 1.0;
    return f[0].value * std::ldexp(1.0, static_cast<int>(f[1].value)) * significand;
}

}  // namespace

TEST_CASE("bit fields of fp8-e4m3: 448 is 0 1111 110 and the smallest subnormal 0 0000 001") {
    const std::vector<BitField> top = format_code_bit_fields(FormatId::Fp8E4M3, 0x7E);
    REQUIRE(top.size() == 3);
    CHECK(top[0].kind == BitFieldKind::Sign);
    CHECK(top[0].text == "0");
    CHECK(top[1].text == "1111");
    CHECK(top[1].raw == 15);
    CHECK(top[1].value == 8);  // 15 - bias 7
    CHECK(top[2].text == "110");
    CHECK(top[2].value == 1.75);
    CHECK(float_value(top) == 448);
    const std::vector<BitField> tiny = format_code_bit_fields(FormatId::Fp8E4M3, 0x81);  // -2^-9
    CHECK(tiny[0].value == -1);
    CHECK(tiny[1].value == -6);     // a subnormal keeps the smallest normal's power
    CHECK(tiny[2].value == 0.125);  // and has no implicit 1
    CHECK(float_value(tiny) == -std::ldexp(1.0, -9));
}

TEST_CASE("bit fields of bf16: -2.5 is 1 10000000 0100000") {
    const std::vector<BitField> f = format_code_bit_fields(FormatId::Bf16, 0xC020);
    REQUIRE(f.size() == 3);
    CHECK(f[0].text + " " + f[1].text + " " + f[2].text == "1 10000000 0100000");
    CHECK(f[1].value == 1);
    CHECK(f[2].value == 1.25);
    CHECK(float_value(f) == -2.5);
    CHECK(float_value(format_code_bit_fields(FormatId::Bf16, 0x3F80)) == 1.0);
}

TEST_CASE("bit fields of int4: -3 is the two's complement 1101 and an offset code reads as itself") {
    const std::vector<BitField> s = int_bit_fields(-3, 4, true);
    REQUIRE(s.size() == 1);
    CHECK(s[0].kind == BitFieldKind::Code);
    CHECK(s[0].text == "1101");
    CHECK(s[0].raw == 13);
    CHECK(s[0].value == -3);
    CHECK(int_bit_fields(7, 4, true)[0].value == 7);
    CHECK(int_bit_fields(-8, 4, true)[0].text == "1000");
    const std::vector<BitField> u = format_code_bit_fields(FormatId::Q4_0, 13);  // offset code 0..15
    CHECK(u[0].text == "1101");
    CHECK(u[0].value == 13);
    CHECK(format_code_bit_fields(FormatId::Q8_0, -127)[0].text == "10000001");
}

TEST_CASE("bit fields of block scales: an E8M0 byte an E4M3 sb and an fp16 d") {
    const std::vector<BitField> e8m0 = block_scale_bit_fields(FormatId::MxFp4, 130);
    REQUIRE(e8m0.size() == 1);
    CHECK(e8m0[0].kind == BitFieldKind::Exponent);
    CHECK(e8m0[0].text == "10000010");
    CHECK(e8m0[0].value == 3);  // 2^(130 - 127)
    CHECK(float_value(block_scale_bit_fields(FormatId::NvFp4, 0x7E)) == 448);
    CHECK(float_value(block_scale_bit_fields(FormatId::Q4_0, 0x3C00)) == 1.0);  // fp16 1.0
    CHECK(block_scale_bit_fields(FormatId::Fp8E4M3, 0).empty());
}

TEST_CASE("the course's pack_weights example: uint2 codes 1 0 3 2 are the byte 177") {
    const std::int32_t codes[] = {1, 0, 3, 2};
    const std::vector<std::uint8_t> bytes = pack_codes(codes, 4, 2);
    REQUIRE(bytes.size() == 1);
    CHECK(bytes[0] == 177);
    CHECK(int_bit_fields(bytes[0], 8, false)[0].text == "10110001");
}
