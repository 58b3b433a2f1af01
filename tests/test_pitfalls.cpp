// The lessons' pitfalls through the library: the naive /max * 255 recipe reproduces the lesson's codes and
// error, and the overflow example is found on this tensor, not written down once.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "quantscope/error.hpp"
#include "quantscope/pitfalls.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/quantize.hpp"
#include "test_helpers.hpp"

using namespace qs;

TEST_CASE("naive-max255 recipe: the lesson's torch.round(r / max * 255).to(int8)") {
    const Preset p = make_preset("lesson");
    const QuantConfig c = recipe_config(parse_recipe("naive-max255"), view_of(p.tensor), p.config);
    CHECK(c.dtype.name() == "int8");
    CHECK(c.mode == Mode::Manual);
    CHECK(c.overflow == Overflow::Wrap);
    CHECK(c.manual_zero_point == 0);
    CHECK(c.manual_scale == doctest::Approx(728.6 / 255.0).epsilon(1e-7));
    QuantParams params;
    const QuantResult r = quantize(p.tensor, c, &params);
    // The notebook's output: 728.6 -> 255 -> -1 and 684.6 -> 240 -> -16.
    test::check_equal(r.codes, std::vector<int>{67, -5, -1, 32, 103, -64, 0, -16, 86});
    CHECK(r.dequantized[0] == doctest::Approx(191.4361).epsilon(1e-6));
    CHECK(r.dequantized[5] == doctest::Approx(-182.8643).epsilon(1e-6));
    CHECK(r.dequantized[7] == doctest::Approx(-45.7161).epsilon(1e-6));
    CHECK(r.metrics.l2_error == doctest::Approx(1033.6320).epsilon(1e-6));
    CHECK(r.metrics.clipped == 2);
    CHECK_THROWS_AS(parse_recipe("naive"), Error);
}

// torch computes round(r / norm * 255) in float32, in that order; r / (norm / 255) rounds differently for
// some values near .5. Every code and r' must be the lesson's, bit for bit, on random tensors, in the fused
// pass and in the single-element trace.
TEST_CASE("naive-max255 recipe follows torch's float32 order on random tensors") {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 100.0f);
    Tensor t;
    t.shape = {1, 200000};
    t.values.resize(200000);
    for (float& v : t.values) v = normal(rng);
    const QuantConfig c = recipe_config(Recipe::NaiveMax255, view_of(t), QuantConfig{});
    float norm = 0;
    for (float v : t.values) norm = std::max(norm, std::fabs(v));
    CHECK(c.naive_norm == norm);
    QuantParams params;
    const QuantResult r = quantize(t, c, &params);
    std::int64_t code_mismatches = 0, deq_mismatches = 0, trace_mismatches = 0, spec_order_differs = 0;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
        const float v = std::nearbyint(t.values[i] / norm * 255.0f);
        const auto q = static_cast<std::int8_t>(static_cast<std::int32_t>(v));  // the int8 cast wraps
        const float deq = static_cast<float>(q) / 255.0f * norm;
        code_mismatches += r.codes[i] != q;
        deq_mismatches += r.dequantized[i] != deq;
        if (i % 97 == 0) {
            const ElementTrace tr = trace_element(t, params, c, static_cast<std::int64_t>(i));
            trace_mismatches += tr.code != q || tr.dequantized != deq;
        }
        const float spec_q = std::nearbyint(t.values[i] / static_cast<float>(c.manual_scale));
        spec_order_differs += spec_q != v || static_cast<float>(c.manual_scale) * static_cast<float>(q) != deq;
    }
    CHECK(code_mismatches == 0);
    CHECK(deq_mismatches == 0);
    CHECK(trace_mismatches == 0);
    // The test means something: the SPEC order r / s, s (q - z) gives other bits for some values.
    CHECK(spec_order_differs > 0);
}

TEST_CASE("naive recipe: its norm applies in manual int8 mode only") {
    QuantConfig c;
    c.naive_norm = 2.0f;
    CHECK_NOTHROW(check_config(c, Shape{4}));  // asymmetric: the SPEC formula, the norm unused
    CHECK(c.active_naive_norm() == 0);
    c.mode = Mode::Manual;
    c.manual_scale = 2.0 / 255;
    CHECK_NOTHROW(check_config(c, Shape{4}));
    c.dtype = IntType{true, 4};
    CHECK_THROWS_AS(check_config(c, Shape{4}), Error);
    c.dtype = IntType{true, 8};
    c.naive_norm = std::numeric_limits<float>::infinity();
    CHECK_THROWS_AS(check_config(c, Shape{4}), Error);
    Tensor zeros;
    zeros.shape = {3};
    zeros.values = {0, 0, 0};
    CHECK(recipe_config(Recipe::NaiveMax255, view_of(zeros), QuantConfig{}).naive_norm == 0);
}

TEST_CASE("overflow example: the farthest element and its sentence follow the tensor and the recipe") {
    const Preset p = make_preset("lesson-manual");  // s = 3.5, z = -70
    QuantConfig c = p.config;
    c.overflow = Overflow::Wrap;
    QuantParams params;
    quantize(p.tensor, c, &params);
    std::optional<ElementTrace> e = farthest_overflow(view_of(p.tensor), params, c);
    REQUIRE(e);
    CHECK(e->flat_index == 2);
    CHECK(e->rounded == 138.0f);
    CHECK(e->code == -118);
    CHECK(overflow_sentence(e, c) ==
          "Without the clamp, 728.6 at s = 3.5, z = -70 rounds to 138 and the int8 cast wraps it to -118.");
    c.overflow = Overflow::Clamp;
    e = farthest_overflow(view_of(p.tensor), params, c);
    REQUIRE(e);
    CHECK(overflow_sentence(e, c) == "728.6 at s = 3.5, z = -70 rounds to 138, outside int8's [-128, 127]: the clamp stores 127.");

    // The recipe: two elements wrap (255 and 240); the farther one is shown.
    const QuantConfig naive = recipe_config(Recipe::NaiveMax255, view_of(p.tensor), p.config);
    quantize(p.tensor, naive, &params);
    e = farthest_overflow(view_of(p.tensor), params, naive);
    REQUIRE(e);
    CHECK(e->flat_index == 2);
    CHECK(overflow_sentence(e, naive) ==
          "Without the clamp, 728.6 at s = 2.85725, z = 0 rounds to 255 and the int8 cast wraps it to -1.");

    // Nothing out of range (the lessons' asymmetric rule), and a low overflow per channel in uint4.
    const Preset lesson = make_preset("lesson");
    QuantConfig fit = lesson.config;
    fit.overflow = Overflow::Wrap;
    quantize(lesson.tensor, fit, &params);
    CHECK_FALSE(farthest_overflow(view_of(lesson.tensor), params, fit));
    CHECK(overflow_sentence(std::nullopt, fit) == "Every value rounds into int8's [-128, 127] here: nothing wraps on this tensor.");
    QuantConfig low;
    low.dtype = IntType{false, 4};
    low.mode = Mode::Manual;
    low.manual_scale = 10.0;
    low.manual_zero_point = 0;
    low.overflow = Overflow::Wrap;
    quantize(lesson.tensor, low, &params);
    e = farthest_overflow(view_of(lesson.tensor), params, low);
    REQUIRE(e);
    CHECK(e->flat_index == 2);  // 728.6 / 10 = 73 is farther above 15 than -184 / 10 = -18 is below 0
    QuantConfig per_channel = lesson.config;
    per_channel.granularity = Granularity::Channel;
    per_channel.axis = 0;
    per_channel.overflow = Overflow::Wrap;
    quantize(lesson.tensor, per_channel, &params);
    CHECK_FALSE(farthest_overflow(view_of(lesson.tensor), params, per_channel));

    // s so small that r / s is +Inf in float32: the cast saturates, and the sentence must not say it wraps.
    QuantConfig tiny = lesson.config;
    tiny.mode = Mode::Manual;
    tiny.manual_scale = 1.2e-38;
    tiny.manual_zero_point = 0;
    tiny.overflow = Overflow::Wrap;
    quantize(lesson.tensor, tiny, &params);
    e = farthest_overflow(view_of(lesson.tensor), params, tiny);
    REQUIRE(e);
    CHECK(e->code == 127);
    const std::string saturated = overflow_sentence(e, tiny);
    CHECK(saturated.find("wraps") == std::string::npos);
    CHECK(saturated.find("saturates it to 127") != std::string::npos);
}

TEST_CASE("farthest_overflow is the farthest element and the first on a tie over interleaved blocks") {
    // Reference: every element traced. Blocks interleave (stride 3, count 4 over 60 elements, each block
    // visited in several runs) and integer-valued r at s = 1 make many elements tie on their excess.
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> pick(-300, 300);
    Tensor t{{60}, std::vector<float>(60)};
    QuantParams params;
    params.block_stride = 3;
    params.block_count = 4;
    params.scale = {1.0, 2.0, 0.5, 1.0};
    params.zero_point = {0, -20, 5, 0};
    for (const Overflow overflow : {Overflow::Wrap, Overflow::Clamp})
        for (int round = 0; round < 50; ++round) {
            for (float& v : t.values) v = static_cast<float>(pick(rng) / (round % 2 ? 10 : 1));
            QuantConfig c;
            c.overflow = overflow;
            std::optional<ElementTrace> expected;
            double expected_excess = 0;
            for (std::int64_t i = 0; i < t.numel(); ++i) {
                const ElementTrace e = trace_element(t, params, c, i);
                if (!e.clipped) continue;
                const double excess = e.rounded > 127 ? e.rounded - 127 : -128 - e.rounded;
                if (!expected || excess > expected_excess) expected = e, expected_excess = excess;
            }
            const std::optional<ElementTrace> found = farthest_overflow(view_of(t), params, c);
            CAPTURE(round);
            REQUIRE(found.has_value() == expected.has_value());
            if (found) CHECK(found->flat_index == expected->flat_index);
        }
    // 300 / 2 - 20 and 301 / 2 - 20 both round (half to even) to 130: the first one is the answer, not the max.
    const Tensor tie{{2}, {300.0f, 301.0f}};
    QuantParams whole;
    whole.block_stride = 2;
    whole.scale = {2.0};
    whole.zero_point = {-20};
    const std::optional<ElementTrace> first = farthest_overflow(view_of(tie), whole, QuantConfig{});
    REQUIRE(first);
    CHECK(first->flat_index == 0);
}
