// The golden values of SPEC.md, through the library.
#include <doctest/doctest.h>

#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/quantize.hpp"
#include "test_helpers.hpp"

using namespace qs;

TEST_CASE("int8 manual s = 3.5 / z = -70 on the lessons' tensor") {
    Preset p = make_preset("lesson-manual");
    QuantParams params;
    QuantResult r = quantize(p.tensor, p.config, &params);
    test::check_equal(r.codes, std::vector<int>{-15, -74, 127, -44, 14, -123, -70, 126, 0});
    test::check_equal(r.dequantized, std::vector<float>{192.5f, -14, 689.5f, 91, 294, -185.5f, 0, 686, 245});
    CHECK(r.metrics.mse == doctest::Approx(170.8753).epsilon(1e-6));
    CHECK(r.metrics.l2_error == doctest::Approx(39.2158).epsilon(1e-6));
    CHECK(params.scale == std::vector<double>{3.5});
    CHECK(params.zero_point == std::vector<std::int32_t>{-70});
    CHECK(r.metrics.clipped == 1);  // 728.6 -> 138 before the clamp
}

TEST_CASE("int8 asymmetric on the lessons' tensor") {
    Preset p = make_preset("lesson");
    QuantParams params;
    QuantResult r = quantize(p.tensor, p.config, &params);
    REQUIRE(params.scale.size() == 1);
    CHECK(params.scale[0] == 3.578823433670343);
    CHECK(params.zero_point[0] == -77);
    test::check_equal(r.codes, std::vector<int>{-23, -81, 127, -51, 6, -128, -77, 114, -8});
    // The lesson prints r' to 4 decimals.
    const std::vector<float> printed{193.2565f, -14.3153f, 730.0800f, 93.0494f, 297.0423f,
                                     -182.5200f, 0.0000f, 683.5552f, 246.9388f};
    for (std::size_t i = 0; i < printed.size(); ++i) CHECK(r.dequantized[i] == doctest::Approx(printed[i]).epsilon(1e-6));
    CHECK(r.metrics.mse == doctest::Approx(1.5730).epsilon(1e-4));
    CHECK(r.metrics.clipped == 0);
    CHECK(r.metrics.levels_used == 9);
    CHECK(r.metrics.levels_total == 256);
}

TEST_CASE("without the clamp 728.6 at s = 3.5 / z = -70 is 138 / and the clamp keeps it at 127") {
    const float v = 728.6f / 3.5f + (-70.0f);
    CHECK(std::nearbyint(v) == 138.0f);
    QuantConfig config = make_preset("lesson-manual").config;
    bool clipped = false;
    CHECK(quantize_value(728.6f, 3.5f, -70, config, &clipped) == 127);
    CHECK(clipped);
    // The naive cast with no clamp wraps 138 to 138 - 256 = -118: the pitfall the app shows.
    config.overflow = Overflow::Wrap;
    CHECK(quantize_value(728.6f, 3.5f, -70, config, &clipped) == -118);
    CHECK(clipped);
}

TEST_CASE("the naive 'divide by max / times 255 / cast to int8' wraps 255 to -1") {
    // r / max * 255 is r / (max / 255): the max element lands on 255, which a cast to int8 wraps to -1.
    QuantConfig config;
    config.overflow = Overflow::Wrap;
    const float max = 728.6f;
    CHECK(quantize_value(max, max / 255.0f, 0, config) == -1);
    CHECK(quantize_value(191.6f, max / 255.0f, 0, config) == 67);    // the lesson's printed codes
    CHECK(quantize_value(684.6f, max / 255.0f, 0, config) == -16);   // 240 wrapped
    // The same through the core's recipe and the whole pipeline: the lesson's printed codes.
    config.mode = Mode::Manual;
    config.manual_scale = naive_max_scale(lesson_tensor());
    CHECK(config.manual_scale == doctest::Approx(728.6 / 255));
    CHECK(quantize(lesson_tensor(), config).codes == std::vector<std::int32_t>{67, -5, -1, 32, 103, -64, 0, -16, 86});
}

TEST_CASE("the naive cast wraps huge finite values exactly: every float past 2^31 is a multiple of 256") {
    QuantConfig config;
    config.overflow = Overflow::Wrap;
    for (float big : {0x1p31f, -0x1p31f, 0x1p60f, -0x1p60f, 0x1p100f, 7.286e19f}) {
        CAPTURE(big);
        CHECK(quantize_value(big, 1.0f, 0, config) == 0);
    }
    config.dtype = IntType{true, 16};
    CHECK(quantize_value(0x1p31f + 768.0f, 1.0f, 0, config) == 768);
    CHECK(quantize_value(0x1p60f, 1.0f, 0, config) == 0);
    // The whole pass (the repro: the lesson tensor at s = 1e-17 came out as q_min, not 0).
    config = make_preset("lesson").config;
    config.mode = Mode::Manual;
    config.manual_scale = 1e-17;
    config.manual_zero_point = 0;
    config.overflow = Overflow::Wrap;
    CHECK(quantize(lesson_tensor(), config).codes == std::vector<std::int32_t>(9, 0));
}

TEST_CASE("the naive cast of an overflowing r / s stays inside [q_min / q_max]") {
    // s = 1.2e-38 (a valid manual scale): r / s is +-Inf in float32 for every |r| >= 1. A wrap of Inf used to
    // go through NaN, cast to INT_MIN, and write the level table out of bounds.
    Tensor t{{2, 9}, {191.6f, -13.5f, 728.6f, 92.14f, 295.5f, -184, 0, 684.6f, 245.5f,
                      1, -1, 2, -2, 3, -3, 4, -4, 5}};
    QuantConfig config;
    config.mode = Mode::Manual;
    config.manual_scale = 1.2e-38;
    config.manual_zero_point = 0;
    config.overflow = Overflow::Wrap;
    bool clipped = false;
    CHECK(quantize_value(728.6f, 1.2e-38f, 0, config, &clipped) == 127);
    CHECK(clipped);
    CHECK(quantize_value(-184.0f, 1.2e-38f, 0, config, &clipped) == -128);
    const QuantResult r = quantize(t, config);
    for (std::size_t i = 0; i < r.codes.size(); ++i) {
        CAPTURE(i);
        CHECK(r.codes[i] >= -128);
        CHECK(r.codes[i] <= 127);
        CHECK(r.codes[i] == quantize_value(t.values[i], 1.2e-38f, 0, config));
    }
    CHECK(r.metrics.levels_used == 3);  // -128, 0, 127
    CHECK(r.metrics.clipped == 17);  // every element but the 0
}
