// An element format's symmetric scale (FORMATS.md "Scale for element formats"): s = max|r| / largest as the
// float32 division rounded to nearest (torchao's and ModelOpt's `amax / max_pos`), not the float32 above;
// the block's maximum that lands a hair past the largest saturates and is not counted as clipped.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "quantscope/blocks.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"

using namespace qs;

namespace {

QuantConfig element_config(FormatId format, Granularity granularity = Granularity::Tensor, std::int64_t group = 0) {
    QuantConfig c;
    c.format = format;
    c.mode = Mode::Symmetric;
    c.granularity = granularity;
    if (granularity == Granularity::Group) c.axis = 1, c.group_size = group;
    return c;
}

struct Run {
    Quantization q;
    std::vector<float> deq;
};

Run run(const Tensor& t, const QuantConfig& c) {
    Run r;
    r.deq.resize(t.values.size());
    std::vector<std::int32_t> codes(t.values.size());
    std::vector<float> err(t.values.size());
    const QuantParams p = compute_params(t, c);
    r.q.params = p;
    r.q.metrics = quantize_view(view_of(t), p, c, QuantOutputs{codes.data(), r.deq.data(), err.data()});
    return r;
}

// The scale main had: the float32 at or above the exact quotient.
float rounded_up_scale(float amax, float largest) {
    const float s = amax / largest;
    return static_cast<double>(s) < static_cast<double>(amax) / largest ? std::nextafter(s, 1.0f) : s;
}

}  // namespace

TEST_CASE("element formats: symmetric s is the float32 quotient rounded to nearest (hand-computed)") {
    struct Case {
        FormatId format;
        float amax, s;  // s = amax / largest worked out in float32, round to nearest even
    };
    const Case cases[] = {
        {FormatId::Fp8E4M3, 0x1.cb3334p-1f, 0x1.066666p-9f},  // exact 0x1.0666670p-9...: nearest is below (main: ...668p-9)
        {FormatId::Fp8E4M3, 0x1.13851ep+0f, 0x1.3ae146p-9f},  // below too (main: 0x1.3ae148p-9)
        {FormatId::Fp8E4M3, 1.0f, 0x1.24924ap-9f},            // 1 / 448: nearest is above
        {FormatId::Fp8E4M3, 7.0f, 0x1p-6f},                   // exact
        {FormatId::Fp8E5M2, 1.0f, 0x1.24924ap-16f},           // 1 / 57344
        {FormatId::Fp4E2M1, 0.7f, 0x1.dddddep-4f},            // 0.7f / 6
        {FormatId::Fp6E2M3, 1.0f, 0x1.111112p-3f},            // 1 / 7.5
        {FormatId::Nf4, 0x1.cb3334p-1f, 0x1.cb3334p-1f},      // nf4: the absmax itself
        {FormatId::Fp16, 0x1p-137f, 0x1p-149f},               // 2^-137 / 65504 underflows to 0: the float above
    };
    for (const Case& k : cases) {
        CAPTURE(format_name(k.format));
        CAPTURE(k.amax);
        const Tensor t{{4}, {0.25f * k.amax, -k.amax, 0.0f, 0.5f * k.amax}};
        const Run r = run(t, element_config(k.format));
        REQUIRE(r.q.params.scale.size() == 1);
        CHECK(static_cast<float>(r.q.params.scale[0]) == k.s);
        CHECK(r.q.metrics.clipped == 0);
    }
}

TEST_CASE("element formats: the block maximum a hair past the largest saturates and is not clipped") {
    // 0x1.cb3334p-1 / 0x1.066666p-9 = 0x1.c00002p+8, one ulp past 448: it saturates to 448 (code 0x7e).
    const float amax = 0x1.cb3334p-1f, s = 0x1.066666p-9f;
    const Tensor t{{3}, {amax, -0.25f, 0.125f}};
    const QuantConfig c = element_config(FormatId::Fp8E4M3);
    const Run r = run(t, c);
    CHECK(r.q.metrics.clipped == 0);
    CHECK(r.deq[0] == s * 448.0f);
    const ElementTrace e = trace_element(t, r.q.params, c, 0);
    CHECK(e.scaled > 448.0f);
    CHECK(e.rounded == 448.0f);
    CHECK_FALSE(e.clipped);
    CHECK(count_clipped(t.values, s, 0, c) == 0);
    // The same scale given by hand cuts a value past s * 448: counted, as FORMATS.md counts saturation.
    QuantConfig manual = c;
    manual.mode = Mode::Manual;
    manual.manual_scale = s;
    const Run m = run(t, manual);
    CHECK(m.q.metrics.clipped == 1);
    CHECK(trace_element(t, m.q.params, manual, 0).clipped);
    CHECK(count_clipped(t.values, s, 0, manual) == 1);
}

TEST_CASE("element formats: a Laplace tensor in fp8-e4m3 groups of 32 takes each group's nearest quotient") {
    std::mt19937 gen(25);
    std::exponential_distribution<float> magnitude(1.0f);
    std::bernoulli_distribution negative(0.5);
    const std::int64_t rows = 16, cols = 256, group = 32;
    Tensor t{{rows, cols}, {}};
    for (std::int64_t i = 0; i < rows * cols; ++i) t.values.push_back(negative(gen) ? -magnitude(gen) : magnitude(gen));
    const Run r = run(t, element_config(FormatId::Fp8E4M3, Granularity::Group, group));
    REQUIRE(r.q.params.scale.size() == static_cast<std::size_t>(rows * cols / group));
    int differs = 0, past_largest = 0;
    for (std::int64_t b = 0; b < rows * cols / group; ++b) {
        float amax = 0;
        for (std::int64_t k = 0; k < group; ++k) amax = std::max(amax, std::fabs(t.values[static_cast<std::size_t>(b * group + k)]));
        const float s = static_cast<float>(r.q.params.scale[static_cast<std::size_t>(b)]);
        CHECK(s == amax / 448.0f);
        differs += s != rounded_up_scale(amax, 448.0f) ? 1 : 0;
        past_largest += amax / s > 448.0f ? 1 : 0;
    }
    // About half the groups' quotients round down; each of those groups' maximum lands past 448 or on it.
    CHECK(differs > rows * cols / group / 4);
    CHECK(past_largest > 0);
    CHECK(r.q.metrics.clipped == 0);
}
