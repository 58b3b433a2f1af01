// The calibrators (issue 5): min/max, percentile and mse, for both modes and every granularity.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/random.hpp"

using namespace qs;

TEST_CASE("percentile follows numpy.percentile's linear interpolation") {
    std::vector<float> v;
    for (int i = 0; i <= 100; ++i) v.push_back(static_cast<float>(100 - i));  // 100..0, unsorted order
    QuantConfig c;
    c.calibration = Calibration::Percentile;
    c.percentile = 90;
    std::vector<float> copy = v;
    ValueRange r = calibrate_block(copy, c);
    CHECK(r.lo == doctest::Approx(10));
    CHECK(r.hi == doctest::Approx(90));
    c.percentile = 99.5;  // index 99.5: halfway between 99 and 100
    copy = v;
    r = calibrate_block(copy, c);
    CHECK(r.hi == doctest::Approx(99.5));
    CHECK(r.lo == doctest::Approx(0.5));
    c.mode = Mode::Symmetric;
    copy = {-10, 1, 2, 3};
    c.percentile = 100;
    r = calibrate_block(copy, c);
    CHECK(r.hi == 10);
    CHECK(r.lo == -10);
}

TEST_CASE("percentile 100 equals min/max") {
    RandomSpec spec;
    spec.shape = {16, 40};
    const Tensor t = generate_random(spec);
    for (Mode mode : {Mode::Asymmetric, Mode::Symmetric})
        for (Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Group}) {
            QuantConfig a;
            a.mode = mode;
            a.granularity = g;
            a.axis = 1;
            a.group_size = 8;
            QuantConfig b = a;
            b.calibration = Calibration::Percentile;
            b.percentile = 100;
            QuantParams pa, pb;
            quantize(t, a, &pa);
            quantize(t, b, &pb);
            CHECK(pa.scale == pb.scale);
            CHECK(pa.zero_point == pb.zero_point);
        }
}

TEST_CASE("mse is never worse than min/max / and clearly better with an outlier") {
    for (std::uint64_t seed = 0; seed < 6; ++seed)
        for (Mode mode : {Mode::Asymmetric, Mode::Symmetric})
            for (Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Group})
                for (int bits : {3, 4, 8}) {
                    RandomSpec spec;
                    spec.shape = {8, 64};
                    spec.seed = seed;
                    spec.pin_range = static_cast<std::int64_t>(seed % 3);
                    const Tensor t = generate_random(spec);
                    QuantConfig minmax;
                    minmax.mode = mode;
                    minmax.granularity = g;
                    minmax.axis = 0;
                    minmax.group_size = 16;
                    minmax.dtype = {true, bits};
                    QuantConfig mse = minmax;
                    mse.calibration = Calibration::Mse;
                    const double a = quantize(t, minmax).metrics.mse, b = quantize(t, mse).metrics.mse;
                    CAPTURE(seed);
                    CAPTURE(bits);
                    CHECK(b <= a * (1 + 1e-12));
                }
    // A normal tensor with one huge outlier: clipping it wins by far at 4 bits.
    RandomSpec spec;
    spec.shape = {10000};
    Tensor t = generate_random(spec);
    t.values[17] = 50;
    QuantConfig c;
    c.dtype = {true, 4};
    c.mode = Mode::Symmetric;
    const double minmax_mse = quantize(t, c).metrics.mse;
    c.calibration = Calibration::Mse;
    const double mse_mse = quantize(t, c).metrics.mse;
    CHECK(mse_mse < minmax_mse / 4);
}

TEST_CASE("the mse answer is a local minimum of the exact MSE") {
    RandomSpec spec;
    spec.shape = {4096};
    spec.seed = 5;
    const Tensor t = generate_random(spec);
    QuantConfig c;
    c.dtype = {true, 4};
    c.mode = Mode::Symmetric;
    c.calibration = Calibration::Mse;
    QuantParams p;
    const double best = quantize(t, c, &p).metrics.mse;
    for (double f : {0.97, 0.99, 1.01, 1.03}) {
        const double m = values_mse(t.values.data(), t.numel(), p.scale[0] * f, 0, c);
        CHECK(m >= best * (1 - 1e-9));
    }
}

TEST_CASE("recompute_scale keeps an all-positive range representable") {
    const Tensor t{{4}, {10, 12, 15, 20}};
    QuantConfig c;
    c.dtype = {false, 8};
    QuantParams p;
    QuantResult lessons = quantize(t, c, &p);
    CHECK(p.zero_point[0] == 0);  // clamped from -255
    CHECK(p.scale[0] == doctest::Approx(10.0 / 255));
    CHECK(lessons.metrics.clipped == 3);  // 12, 15 and 20 are beyond s * 255 = 10: the flaw
    c.recompute_scale = true;
    QuantResult fixed = quantize(t, c, &p);
    CHECK(p.scale[0] == doctest::Approx(20.0 / 255));
    CHECK(fixed.metrics.clipped == 0);
    CHECK(fixed.metrics.max_abs_error <= p.scale[0] / 2 + 1e-6);
}

TEST_CASE("compare_calibrators lists every calibrator with exact metrics") {
    const Preset p = make_preset("outliers-4x128x256");
    const auto rows = compare_calibrators(p.tensor, p.config);
    REQUIRE(rows.size() == 8);
    CHECK(rows[0].config.calibration == Calibration::MinMax);
    CHECK(rows[3].config.calibration == Calibration::Mse);
    CHECK(rows[4].config.recompute_scale);
    for (const auto& row : rows) CHECK(row.metrics.count == p.tensor.numel());
}

TEST_CASE("the MSE landscape matches per-point quantization") {
    const Tensor t = lesson_tensor();
    QuantConfig c;
    const std::vector<double> scales{2.5, 3.5, 3.578823433670343, 5};
    const std::vector<std::int32_t> zps{-80, -77, -70, 0};
    std::vector<double> mse;
    REQUIRE(mse_landscape(t, c, scales, zps, 1, mse));
    for (std::size_t zi = 0; zi < zps.size(); ++zi)
        for (std::size_t si = 0; si < scales.size(); ++si) {
            QuantConfig manual;
            manual.mode = Mode::Manual;
            manual.manual_scale = scales[si];
            manual.manual_zero_point = zps[zi];
            CHECK(mse[zi * scales.size() + si] == doctest::Approx(quantize(t, manual).metrics.mse).epsilon(1e-6));
        }
    CHECK(mse[2 * scales.size() + 1] == doctest::Approx(170.8753).epsilon(1e-6));  // s = 3.5, z = -70
}

TEST_CASE("the calibration label reads back as the same percentile") {
    QuantConfig c;
    for (double p : {99.9, 99.99, 100.0, 50.0000001, 99.9999999, 99.123456789}) {
        CAPTURE(p);
        c.calibration = Calibration::Percentile;
        c.percentile = p;
        const std::string label = calibration_label(c);
        QuantConfig back;
        parse_calibration(label, back);
        CHECK(back.percentile == p);
    }
    c.percentile = 99.9;
    CHECK(calibration_label(c) == "percentile:99.9");  // still the short form
}

TEST_CASE("an error inside the parallel calibration is thrown / not std::terminate") {
    // compute_params checks the config first; calibrated_params is public and may be called without it.
    RandomSpec spec;
    spec.shape = {8, 64};
    const Tensor t = generate_random(spec);
    for (Granularity g : {Granularity::Tensor, Granularity::Channel}) {
        QuantConfig c;
        c.mode = Mode::Symmetric;
        c.dtype = {false, 8};  // symmetric needs a signed type: symmetric_params throws
        c.granularity = g;
        c.calibration = Calibration::Percentile;
        c.percentile = 99;
        QuantParams p;
        set_block_layout(t.shape, c, p);
        p.scale.assign(static_cast<std::size_t>(p.block_count), 1.0);
        p.zero_point.assign(static_cast<std::size_t>(p.block_count), 0);
        CHECK_THROWS_WITH(calibrated_params(t, c, p), doctest::Contains("signed"));
    }
}
