// Number formats (FORMATS.md "Element formats"): the tables as tests, rounding to nearest with ties to even
// on the grid, saturation, bit patterns, fp16 / bf16 against a brute-force enumeration of all 65536 patterns
// and against values PyTorch prints, NF4's codebook and ties.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "quantscope/element_type.hpp"
#include "quantscope/number_format.hpp"

using namespace qs;

namespace {

FloatSpec spec_of(const char* name) { return format_info(*parse_format_name(name)).element; }

std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// The nearest grid value by brute force: the smallest distance, a tie to the code whose mantissa is even.
float nearest_by_search(float x, const std::vector<float>& grid, const FloatSpec& spec) {
    float best = grid[0];
    double best_d = std::fabs(static_cast<double>(x) - grid[0]);
    for (float g : grid) {
        const double d = std::fabs(static_cast<double>(x) - g);
        const bool even = (float_code(g, spec) & 1u) == 0;
        if (d < best_d || (d == best_d && even)) best = g, best_d = d;
    }
    return best;
}

}  // namespace

TEST_CASE("formats table: largest finite and smallest subnormal and bits as FORMATS.md lists them") {
    struct Row {
        const char* name;
        int e, m, bias;
        double largest, smallest;
        int bits;
    };
    const Row rows[] = {
        {"fp16", 5, 10, 15, 65504, std::ldexp(1.0, -24), 16},
        {"bf16", 8, 7, 127, 3.3895313892515355e38, std::ldexp(1.0, -133), 16},
        {"fp8-e4m3", 4, 3, 7, 448, std::ldexp(1.0, -9), 8},
        {"fp8-e5m2", 5, 2, 15, 57344, std::ldexp(1.0, -16), 8},
        {"fp6-e3m2", 3, 2, 3, 28, std::ldexp(1.0, -4), 6},
        {"fp6-e2m3", 2, 3, 1, 7.5, std::ldexp(1.0, -3), 6},
        {"fp4-e2m1", 2, 1, 1, 6, 0.5, 4},
    };
    for (const Row& row : rows) {
        CAPTURE(row.name);
        const FormatInfo& info = format_info(*parse_format_name(row.name));
        CHECK(info.kind == FormatKind::Float);
        CHECK(info.element.exponent_bits == row.e);
        CHECK(info.element.mantissa_bits == row.m);
        CHECK(info.element.bias == row.bias);
        CHECK(info.element.largest() == row.largest);
        CHECK(info.element.smallest_subnormal() == row.smallest);
        CHECK(info.element_bits == row.bits);
        CHECK(static_cast<double>(float_grid(info.element).back()) == row.largest);
    }
    // fp4-e2m1's magnitudes are exactly {0, 0.5, 1, 1.5, 2, 3, 4, 6}.
    const std::vector<float> fp4 = float_grid(spec_of("fp4-e2m1"));
    CHECK(std::vector<float>(fp4.begin() + 8, fp4.end()) == std::vector<float>{0, 0.5f, 1, 1.5f, 2, 3, 4, 6});
    // MX emax: the exponent of each element's largest normal.
    CHECK(spec_of("fp8-e4m3").max_normal_exponent() == 8);
    CHECK(spec_of("fp8-e5m2").max_normal_exponent() == 15);
    CHECK(spec_of("fp6-e3m2").max_normal_exponent() == 4);
    CHECK(spec_of("fp6-e2m3").max_normal_exponent() == 2);
    CHECK(spec_of("fp4-e2m1").max_normal_exponent() == 2);
}

TEST_CASE("format names: every FORMATS.md name parses case-insensitively and nothing else does") {
    for (FormatId id : all_formats()) {
        std::string upper = format_name(id);
        std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
        CHECK(parse_format_name(upper) == id);
        CHECK(parse_format_name(format_name(id)) == id);
    }
    CHECK(all_formats().size() == 28);  // 17 and ggml's q5_0 ... tq2_0
    CHECK_FALSE(parse_format_name("fp8"));
    CHECK_FALSE(parse_format_name("int8"));
    CHECK_FALSE(parse_format_name(""));
    CHECK(parse_format_name("MXFP4") == FormatId::MxFp4);
    CHECK(format_levels(FormatId::Fp8E4M3) == 254);  // 256 less S.1111.111
    CHECK(format_levels(FormatId::Fp8E5M2) == 248);  // less 2 x (Inf + 3 NaN)
    CHECK(format_levels(FormatId::Fp6E3M2) == 64);
    CHECK(format_levels(FormatId::Q8_0) == 255);
}

TEST_CASE("fp16: every one of the 65536 patterns round-trips and every midpoint rounds to the even neighbour") {
    const FloatSpec half = spec_of("fp16");
    std::vector<float> positive;
    for (std::uint32_t code = 0; code < 65536; ++code) {
        const float v = half_to_float(static_cast<std::uint16_t>(code));  // the file reader's independent decoder
        if (!std::isfinite(v)) {
            CHECK(std::isnan(float_from_code(code, half)) == std::isnan(v));
            continue;
        }
        bool clipped = true;
        REQUIRE(round_to_float(v, half, &clipped) == v);
        CHECK_FALSE(clipped);
        REQUIRE(float_code(v, half) == code);
        REQUIRE(bits_of(float_from_code(code, half)) == bits_of(v));
        if (code < 0x7c00) positive.push_back(v);
    }
    for (std::size_t k = 0; k + 1 < positive.size(); ++k) {
        const float a = positive[k], b = positive[k + 1];
        const float mid = a + (b - a) / 2;  // 12 significant bits: exact in float32 (a + b could overflow)
        const float even = (float_code(a, half) & 1u) == 0 ? a : b;
        REQUIRE(round_to_float(mid, half) == even);
        REQUIRE(round_to_float(std::nextafter(mid, 0.0f), half) == a);
        REQUIRE(round_to_float(std::nextafter(mid, INFINITY), half) == b);
        REQUIRE(round_to_float(-mid, half) == -even);
    }
}

TEST_CASE("bf16: every one of the 65536 patterns round-trips and every midpoint rounds to the even neighbour") {
    const FloatSpec bf = spec_of("bf16");
    std::vector<float> positive;
    for (std::uint32_t code = 0; code < 65536; ++code) {
        const float v = bf16_to_float(static_cast<std::uint16_t>(code));
        if (!std::isfinite(v)) continue;
        REQUIRE(round_to_float(v, bf) == v);
        REQUIRE(float_code(v, bf) == code);
        if (code < 0x7f80) positive.push_back(v);
    }
    for (std::size_t k = 0; k + 1 < positive.size(); ++k) {
        const float a = positive[k], b = positive[k + 1];
        const float mid = a + (b - a) / 2;  // 9 significant bits (or a float32 subnormal): exact
        const float even = (float_code(a, bf) & 1u) == 0 ? a : b;
        REQUIRE(round_to_float(mid, bf) == even);
        REQUIRE(round_to_float(std::nextafter(mid, 0.0f), bf) == a);
        REQUIRE(round_to_float(std::nextafter(mid, INFINITY), bf) == b);
    }
}

TEST_CASE("fp16 and bf16 equal PyTorch's casts on known values") {
    const FloatSpec half = spec_of("fp16"), bf = spec_of("bf16");
    // torch.tensor(x).to(torch.float16).item() / .to(torch.bfloat16).item()
    CHECK(round_to_float(0.1f, half) == 0.0999755859375f);
    CHECK(float_code(round_to_float(0.1f, half), half) == 0x2e66);
    CHECK(round_to_float(1.0f / 3, half) == 0.333251953125f);
    CHECK(round_to_float(3.14159265f, half) == 3.140625f);
    CHECK(round_to_float(65519.0f, half) == 65504.0f);  // below the midpoint to 65536: rounds down
    CHECK(round_to_float(3e-8f, half) == std::ldexp(1.0f, -24));
    CHECK(round_to_float(2e-8f, half) == 0.0f);
    CHECK(std::signbit(round_to_float(-2e-8f, half)));  // -0, as torch keeps the sign
    CHECK(round_to_float(0.1f, bf) == 0.10009765625f);
    CHECK(float_code(round_to_float(0.1f, bf), bf) == 0x3dcd);
    CHECK(round_to_float(1.0f / 3, bf) == 0.333984375f);
    CHECK(round_to_float(3.14159265f, bf) == 3.140625f);
    CHECK(round_to_float(-1e-40f, bf) == bf16_to_float(0x8001));  // a float32 subnormal: bf16's too
    // Saturation: beyond the largest finite value (torch would give inf), counted as clipped.
    bool clipped = false;
    CHECK(round_to_float(70000.0f, half, &clipped) == 65504.0f);
    CHECK(clipped);
    CHECK(round_to_float(-3.4e38f, bf, &clipped) == -3.3895313892515355e38f);
    CHECK(clipped);
}

#if defined(__F16C__)
TEST_CASE("fp16: random float32s round as the CPU's own IEEE conversion does") {
    const FloatSpec half = spec_of("fp16");
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::uint32_t> any_bits(0, 0x477fefffu);  // up to 65503.99
    for (int i = 0; i < 200000; ++i) {
        std::uint32_t u = any_bits(rng) | (i % 2 == 0 ? 0u : 0x80000000u);
        float x;
        std::memcpy(&x, &u, sizeof x);
        const auto hw = static_cast<std::uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT));
        REQUIRE(float_code(round_to_float(x, half), half) == hw);
    }
}
#endif

TEST_CASE("small floats: nearest on the grid with ties to even and saturation as a brute-force search says") {
    std::mt19937 rng(11);
    for (const char* name : {"fp8-e4m3", "fp8-e5m2", "fp6-e3m2", "fp6-e2m3", "fp4-e2m1"}) {
        CAPTURE(name);
        const FloatSpec spec = spec_of(name);
        const std::vector<float> grid = float_grid(spec);
        const float largest = static_cast<float>(spec.largest());
        std::vector<float> probes;
        for (std::size_t k = 0; k + 1 < grid.size(); ++k) {  // every midpoint and its neighbours
            const float mid = (grid[k] + grid[k + 1]) / 2;
            probes.insert(probes.end(), {mid, std::nextafter(mid, -1e9f), std::nextafter(mid, 1e9f), grid[k]});
        }
        std::uniform_real_distribution<float> wide(-2 * largest, 2 * largest);
        for (int i = 0; i < 2000; ++i) probes.push_back(wide(rng));
        for (float x : probes) {
            bool clipped = false;
            const float v = round_to_float(x, spec, &clipped);
            CAPTURE(x);
            CHECK(clipped == (std::fabs(x) > largest));
            CHECK(v == nearest_by_search(x, grid, spec));
            CHECK(float_from_code(float_code(v, spec), spec) == v);
            CHECK(float_code(v, spec) < (1u << spec.bits()));
        }
    }
}

TEST_CASE("fp8 and fp4 hand-picked values: the OCP limits and ties") {
    const FloatSpec e4m3 = spec_of("fp8-e4m3"), e5m2 = spec_of("fp8-e5m2"), fp4 = spec_of("fp4-e2m1");
    CHECK(float_code(448.0f, e4m3) == 0x7e);  // S.1111.110: 1.75 * 2^8
    CHECK(std::isnan(float_from_code(0x7f, e4m3)));
    CHECK(float_from_code(0x78, e4m3) == 256.0f);  // S.1111.000 is a number in E4M3
    CHECK(std::isinf(float_from_code(0x7c, e5m2)));
    CHECK(float_code(1.0f, e4m3) == 0x38);
    bool clipped = false;
    CHECK(round_to_float(449.0f, e4m3, &clipped) == 448.0f);
    CHECK(clipped);  // would round back to 448, still counted: it lay beyond the largest value
    CHECK(round_to_float(std::ldexp(1.0f, -10), e4m3) == 0.0f);  // tie between 0 and 2^-9: 0 is even
    CHECK(round_to_float(std::ldexp(1.5f, -9), e4m3) == std::ldexp(1.0f, -8));  // tie 1 and 2 subnormal units
    CHECK(round_to_float(2.5f, fp4) == 2.0f);
    CHECK(round_to_float(5.0f, fp4) == 4.0f);
    CHECK(round_to_float(0.25f, fp4) == 0.0f);
    CHECK(round_to_float(0.75f, fp4) == 1.0f);
    CHECK(round_to_float(-1.25f, fp4) == -1.0f);
    CHECK(float_code(-6.0f, fp4) == 0xf);
    CHECK(float_code(0.5f, fp4) == 0x1);
}

TEST_CASE("nf4: the codebook and nearest entry with a tie to the lower index") {
    const auto& cb = nf4_codebook();
    CHECK(cb[0] == -1.0f);
    CHECK(cb[7] == 0.0f);
    CHECK(cb[15] == 1.0f);
    CHECK(std::is_sorted(cb.begin(), cb.end()));
    for (std::uint32_t i = 0; i < 16; ++i) CHECK(nf4_index(cb[i]) == i);
    for (std::uint32_t i = 0; i + 1 < 16; ++i) {
        const float mid = static_cast<float>((static_cast<double>(cb[i]) + cb[i + 1]) / 2);
        if (static_cast<double>(mid) == (static_cast<double>(cb[i]) + cb[i + 1]) / 2) CHECK(nf4_index(mid) == i);
        CHECK(nf4_index(std::nextafter(mid, 2.0f)) == i + 1);
        CHECK(nf4_index(std::nextafter(mid, -2.0f)) == i);
    }
    CHECK(nf4_index(cb[8] / 2) == 7);  // exactly halfway between 0 and 0.0796: the lower index
    bool clipped = false;
    CHECK(nf4_index(1.5f, &clipped) == 15);
    CHECK(clipped);
    CHECK(nf4_index(-1.0f, &clipped) == 0);
    CHECK_FALSE(clipped);
}
