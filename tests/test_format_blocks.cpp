// Block formats (FORMATS.md "Block formats") bit-exact on fixed inputs, each expectation derived by hand from
// the definitions in the comment above it; element formats' scales; the cost in bits; packing.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/packing.hpp"

using namespace qs;

namespace {

struct Run {
    FormatParams params;
    Metrics metrics;
    std::vector<std::int32_t> codes;
    std::vector<float> deq;
};

// `head` then zeros up to `n` elements, one row.
Run run(FormatId format, std::vector<float> head, std::int64_t n, ElementScaling scaling = ElementScaling::Symmetric) {
    Tensor t{{n}, head};
    t.values.resize(static_cast<std::size_t>(n), 0.0f);
    FormatConfig c;
    c.format = format;
    c.scaling = scaling;
    Run r;
    r.codes.resize(static_cast<std::size_t>(n));
    r.deq.resize(static_cast<std::size_t>(n));
    std::vector<float> err(static_cast<std::size_t>(n));
    const FormatQuantization q = quantize_format(view_of(t), c, {r.codes.data(), r.deq.data(), err.data()});
    r.params = q.params;
    r.metrics = q.metrics;
    return r;
}

std::vector<float> first(const std::vector<float>& v, std::size_t k) { return {v.begin(), v.begin() + k}; }
std::vector<std::int32_t> first(const std::vector<std::int32_t>& v, std::size_t k) { return {v.begin(), v.begin() + k}; }

}  // namespace

TEST_CASE("mxfp4: X from the block's largest exponent and E2M1 elements with ties to even") {
    // amax = 56, floor(log2 56) = 5, emax(E2M1) = 2: X = 2^3 = 8, stored E8M0 = 3 + 127 = 130.
    // r / X = 1, -2.5, 0.3, 7 -> 1 (0 01 0 = 0x2), -2 (tie 2 | 3: even mantissa; 2 = 1.0 * 2^(2 - 1): 1 10 0 = 0xC),
    // 0.5 (0.3 is nearer 0.5 than 0; 0x1), 6 (7 > 6 saturates: clipped; 0 11 1 = 0x7). r' = v * 8.
    const Run r = run(FormatId::MxFp4, {8, -20, 2.4f, 56}, 32);
    CHECK(r.params.scale == std::vector<float>{8});
    CHECK(r.params.stored == std::vector<std::uint16_t>{130});
    CHECK(first(r.codes, 5) == std::vector<std::int32_t>{0x2, 0xc, 0x1, 0x7, 0x0});
    CHECK(first(r.deq, 4) == std::vector<float>{8, -16, 4, 48});
    CHECK(r.metrics.clipped == 1);
    CHECK(r.metrics.levels_used == 5);
    CHECK(r.metrics.levels_total == 16);
}

TEST_CASE("mxfp8-e4m3: a block past 448 saturates and an all-zero block has X = 1") {
    // amax = 500: floor(log2 500) = 8 = emax(E4M3), X = 2^0 = 1. 500 > 448: 448 (0x7E), clipped.
    // 1.0 = 0 0111 000 = 0x38. The second block is zeros: X = 1 (stored 127), codes 0.
    const Run r = run(FormatId::MxFp8E4M3, {1.0f, 500}, 64);
    CHECK(r.params.scale == std::vector<float>{1, 1});
    CHECK(r.params.stored == std::vector<std::uint16_t>{127, 127});
    CHECK(first(r.codes, 2) == std::vector<std::int32_t>{0x38, 0x7e});
    CHECK(first(r.deq, 2) == std::vector<float>{1, 448});
    CHECK(r.metrics.clipped == 1);
}

TEST_CASE("mx: denormal inputs clamp X to 2^-127 and large ones stay finite") {
    // amax = 2^-149 (the smallest float32): floor(log2) - 2 = -151 is below E8M0's 2^-127: X = 2^-127 (stored
    // 0); r / X = 2^-22 is far below E2M1's 0.5, so the element is 0 and r' = 0 (an honest loss, no NaN).
    const float tiny = std::ldexp(1.0f, -149);
    const Run small = run(FormatId::MxFp4, {tiny, -tiny}, 32);
    CHECK(small.params.stored[0] == 0);
    CHECK(small.params.scale[0] == std::ldexp(1.0f, -127));
    CHECK(small.deq[0] == 0.0f);
    // amax = 3e38: floor(log2) = 127, X = 2^125, r / X = 3e38 / 2^125 = 7.05 saturates to 6: r' = 6 * 2^125.
    const Run big = run(FormatId::MxFp4, {3e38f}, 32);
    CHECK(big.params.stored[0] == 125 + 127);
    CHECK(big.deq[0] == std::ldexp(6.0f, 125));
    CHECK(big.metrics.clipped == 1);
}

TEST_CASE("nvfp4: g per tensor then sb = E4M3(amax_block / 6g) per block of 16") {
    // amax_tensor = 672: g = 672 / 2688 = 0.25, 6g = 1.5 (float32, exact).
    // Block 0: amax 672 -> 672 / 1.5 = 448 -> sb = 448 (0x7E); scale sb * g = 112.
    //   672 / 112 = 6 (0x7), -336 / 112 = -3 (0xD), 100 / 112 = 0.89 -> 1 (0x2), 56 / 112 = 0.5 (0x1).
    // Block 1: amax 3 -> 3 / 1.5 = 2 -> sb = 2 (0 1000 000 = 0x40); scale 0.5.
    //   3 / 0.5 = 6 (0x7), 1.1 / 0.5 = 2.2 -> 2 (0x4), -0.2 / 0.5 = -0.4 -> -0.5 (0x9), 0.125 / 0.5 = 0.25 -> tie
    //   0 | 0.5 -> 0 (0x0).
    std::vector<float> v(32, 0.0f);
    v[0] = 672, v[1] = -336, v[2] = 100, v[3] = 56;
    v[16] = 3, v[17] = 1.1f, v[18] = -0.2f, v[19] = 0.125f;
    const Run r = run(FormatId::NvFp4, v, 32);
    CHECK(r.params.global_scale == 0.25f);
    CHECK(r.params.scale == std::vector<float>{112, 0.5f});
    CHECK(r.params.stored == std::vector<std::uint16_t>{0x7e, 0x40});
    CHECK(first(r.codes, 4) == std::vector<std::int32_t>{0x7, 0xd, 0x2, 0x1});
    CHECK(first(r.deq, 4) == std::vector<float>{672, -336, 112, 56});
    CHECK(std::vector<std::int32_t>(r.codes.begin() + 16, r.codes.begin() + 20) == std::vector<std::int32_t>{0x7, 0x4, 0x9, 0x0});
    CHECK(std::vector<float>(r.deq.begin() + 16, r.deq.begin() + 20) == std::vector<float>{3, 1, -0.25f, 0});
    CHECK(r.metrics.clipped == 0);
    // An all-zero tensor: g = 1, every sb 0, r' = 0.
    const Run zero = run(FormatId::NvFp4, {}, 16);
    CHECK(zero.params.global_scale == 1.0f);
    CHECK(zero.params.scale == std::vector<float>{0});
    CHECK(zero.metrics.mse == 0);
}

TEST_CASE("q8_0: d = amax / 127 stored as fp16 and codes roundf(r / d) half away from zero") {
    // Block 0: amax 127 -> d = 1, id = 1: 127, -50, 0.5 -> 1 (half away), -2.5 -> -3, 1.5 -> 2.
    // Block 1: amax = 127 (1 + 2^-12) -> d = 1 + 2^-12 in float32, but fp16(d) = 1 (below the midpoint
    // 1 + 2^-11): codes use id = 1 / d (float32), so 127.031 -> 127, and r' = 127 * fp16(d) = 127.
    std::vector<float> v(64, 0.0f);
    v[0] = 127, v[1] = -50, v[2] = 0.5f, v[3] = -2.5f, v[4] = 1.5f;
    v[32] = 127.031005859375f;
    const Run r = run(FormatId::Q8_0, v, 64);
    CHECK(r.params.scale == std::vector<float>{1, 1});
    CHECK(r.params.stored == std::vector<std::uint16_t>{0x3c00, 0x3c00});
    CHECK(first(r.codes, 5) == std::vector<std::int32_t>{127, -50, 1, -3, 2});
    CHECK(first(r.deq, 5) == std::vector<float>{127, -50, 1, -3, 2});
    CHECK(r.codes[32] == 127);
    CHECK(r.deq[32] == 127.0f);
    CHECK_FALSE(std::signbit(r.deq[5]));  // a dequantized 0 is +0
}

TEST_CASE("q4_0: d from the first value of largest magnitude with its sign and the MIN 15 clamp") {
    // max = -4 (the first of |-4| = |4|): d = -4 / -8 = 0.5, id = 2. q = min(15, trunc(r * 2 + 8.5)):
    // -4 -> 0.5 -> 0; 1 -> 10.5 -> 10; 2.5 -> 13.5 -> 13; 3.9 -> 16.3 -> 15 (clamped); 4 -> 16.5 -> 15 (clamped);
    // 0 -> 8.5 -> 8. r' = (q - 8) * 0.5 = -4, 1, 2.5, 3.5, 3.5, 0.
    const Run r = run(FormatId::Q4_0, {-4, 1, 2.5f, 3.9f, 4}, 32);
    CHECK(r.params.scale == std::vector<float>{0.5f});
    CHECK(first(r.codes, 6) == std::vector<std::int32_t>{0, 10, 13, 15, 15, 8});
    CHECK(first(r.deq, 6) == std::vector<float>{-4, 1, 2.5f, 3.5f, 3.5f, 0});
    CHECK(r.metrics.clipped == 2);
    CHECK_FALSE(std::signbit(r.deq[5]));
    // max = +4 first: d = -0.5, id = -2: 4 -> 0.5 -> 0 -> r' = -8 * -0.5 = 4; -4 -> 16.5 -> 15 -> r' = -3.5.
    const Run s = run(FormatId::Q4_0, {4, -4}, 32);
    CHECK(s.params.scale == std::vector<float>{-0.5f});
    CHECK(first(s.codes, 3) == std::vector<std::int32_t>{0, 15, 8});
    CHECK(first(s.deq, 3) == std::vector<float>{4, -3.5f, 0});
    CHECK_FALSE(std::signbit(s.deq[2]));  // 0 * -0.5 would be -0: a code is an integer, r' = +0
}

TEST_CASE("q4_1: d = (max - min) / 15 and m = min stored as fp16 and codes trunc((r - min) / d + 0.5)") {
    // min -5, max 10: d = 1, id = 1, m = -5. -5 -> 0.5 -> 0; 10 -> 15.5 -> 15; 0 -> 5.5 -> 5; 0.49 -> 5.99 -> 5;
    // 0.5 -> 6; r' = q * 1 + (-5) = -5, 10, 0, 0, 1.
    const Run r = run(FormatId::Q4_1, {-5, 10, 0, 0.49f, 0.5f}, 32);
    CHECK(r.params.scale == std::vector<float>{1});
    CHECK(r.params.offset == std::vector<float>{-5});
    CHECK(first(r.codes, 5) == std::vector<std::int32_t>{0, 15, 5, 5, 6});
    CHECK(first(r.deq, 5) == std::vector<float>{-5, 10, 0, 0, 1});
    CHECK(r.metrics.clipped == 0);
    // m beyond fp16 saturates to -65504 (ggml would store -inf); r' stays finite.
    const Run big = run(FormatId::Q4_1, {-1e6f, 1e6f}, 32);
    CHECK(big.params.offset[0] == -65504.0f);
    CHECK(big.params.scale[0] == 65504.0f);  // d = 2e6 / 15 saturates too
    for (float d : big.deq) CHECK(std::isfinite(d));
}

TEST_CASE("block formats refuse a block that does not divide the last axis naming the format") {
    FormatConfig c;
    c.format = FormatId::NvFp4;
    CHECK_THROWS_WITH_AS(check_format_config(c, {4, 30}), doctest::Contains("nvfp4"), Error);
    c.format = FormatId::Q4_0;
    CHECK_THROWS_WITH_AS(check_format_config(c, {40}), doctest::Contains("32"), Error);
    check_format_config(c, {2, 64});
    c.granularity = Granularity::Channel;
    CHECK_THROWS_WITH_AS(check_format_config(c, {2, 64}), doctest::Contains("q4_0"), Error);
    c = {};
    c.format = FormatId::Nf4;
    c.scaling = ElementScaling::Cast;
    CHECK_THROWS_WITH_AS(check_format_config(c, {2, 64}), doctest::Contains("nf4"), Error);
    c.scaling = ElementScaling::Manual;
    c.manual_scale = 1e300;
    CHECK_THROWS_AS(check_format_config(c, {2, 64}), Error);
}

TEST_CASE("element formats: symmetric s maps the block's maximum onto the largest value and cast is s = 1") {
    // fp8-e4m3: s = 1 / 448 in float32 rounded to nearest (test_format_scale_nearest.cpp): no element clipped.
    const Run r = run(FormatId::Fp8E4M3, {1.0f, -0.3f, 0.001f}, 3);
    CHECK(r.params.scale[0] == 1.0f / 448.0f);
    CHECK(r.metrics.clipped == 0);
    CHECK(r.deq[0] == r.params.scale[0] * 448.0f);
    // nf4: s = max|r| (QLoRA absmax).
    const Run n = run(FormatId::Nf4, {2.0f, -1.0f, 0.1f}, 3);
    CHECK(n.params.scale == std::vector<float>{2});
    CHECK(n.codes == std::vector<std::int32_t>{15, 2, 8});  // -0.5 nearest -0.525 (index 2); 0.05 -> 0.0796
    // bf16 cast: the plain downcast, no scale stored.
    const Run b = run(FormatId::Bf16, {0.1f, 1.0f / 3}, 2, ElementScaling::Cast);
    CHECK(b.deq == std::vector<float>{0.10009765625f, 0.333984375f});
    CHECK(b.codes == std::vector<std::int32_t>{0x3dcd, 0x3eab});
    CHECK_FALSE(b.params.scaled);
}

TEST_CASE("cost: bits per weight and bytes as FORMATS.md counts them") {
    FormatConfig c;
    const std::int64_t n = 4096;
    const auto bpw = [&](FormatId f) {
        c.format = f;
        return format_cost(c, n, 1).bits_per_weight;
    };
    CHECK(bpw(FormatId::MxFp4) == 4.25);
    CHECK(bpw(FormatId::MxFp8E4M3) == 8.25);
    CHECK(bpw(FormatId::MxFp6E2M3) == 6.25);
    CHECK(bpw(FormatId::NvFp4) == 4.5 + 32.0 / n);
    CHECK(bpw(FormatId::Q8_0) == 8.5);
    CHECK(bpw(FormatId::Q4_0) == 4.5);
    CHECK(bpw(FormatId::Q4_1) == 5.0);
    CHECK(bpw(FormatId::Fp8E4M3) == 8 + 32.0 / n);
    c.format = FormatId::Q4_0;
    CHECK(format_cost(c, n, 1).bytes == n / 2 + 2 * n / 32);
    c.format = FormatId::Bf16;
    c.scaling = ElementScaling::Cast;
    CHECK(format_cost(c, n, 1).bits_per_weight == 16);
    CHECK(format_cost(c, 3, 1).bytes == 6);
    c.format = FormatId::Fp4E2M1;
    CHECK(format_cost(c, 3, 1).bytes == 2);  // 12 bits, rounded up
    QuantConfig q;  // int8 asymmetric per tensor: a float32 s and z
    CHECK(int_cost(q, n, 1).bits_per_weight == 8 + 64.0 / n);
    q.mode = Mode::Symmetric;
    CHECK(int_cost(q, n, 1).bits_per_weight == 8 + 32.0 / n);
    CHECK(int_cost(q, n, 1).bytes == n + 4);
}

TEST_CASE("code bits: sign exponent and mantissa fields") {
    CHECK(code_bits_text(FormatId::Fp8E4M3, 0x7e) == "0 1111 110");
    CHECK(code_bits_text(FormatId::MxFp4, 0xa) == "1 01 0");
    CHECK(code_bits_text(FormatId::Nf4, 7) == "0111");
    CHECK(code_bits_text(FormatId::Q8_0, -1) == "11111111");
}

TEST_CASE("packing: the course's pack_weights example and a round trip at every width") {
    const std::vector<std::int32_t> codes = {1, 0, 3, 2};
    CHECK(pack_codes(codes.data(), 4, 2) == std::vector<std::uint8_t>{177});  // 0b10110001
    const std::vector<std::uint8_t> packed = {177};
    CHECK(unpack_codes(packed.data(), 1, 4, 2, false) == codes);
    for (int bits = 1; bits <= 16; ++bits) {
        CAPTURE(bits);
        std::vector<std::int32_t> v(37);
        for (std::size_t i = 0; i < v.size(); ++i)
            v[i] = static_cast<std::int32_t>((i * 2654435761u) & ((1u << bits) - 1)) - (bits > 1 ? (1 << (bits - 1)) : 0);
        const auto bytes = pack_codes(v.data(), 37, bits);
        CHECK(static_cast<std::int64_t>(bytes.size()) == (37 * bits + 7) / 8);
        CHECK(unpack_codes(bytes.data(), static_cast<std::int64_t>(bytes.size()), 37, bits, bits > 1) == v);
    }
    CHECK_THROWS_AS(unpack_codes(packed.data(), 1, 5, 2, false), Error);
}
