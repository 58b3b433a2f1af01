// The MSE landscape's numerics in the core (issue 9) and the MSE calibrator that searches the same plane
// (issue 8, item 14): never worse than the map's "best on grid".
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "quantscope/calibrate.hpp"
#include "quantscope/landscape.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/random.hpp"

using namespace qs;

namespace {

// The window's final map of a per-tensor asymmetric quantization (no current point unless given).
LandscapeResult final_map(const Tensor& t, const QuantConfig& config, const LandscapePoint* current = nullptr) {
    LandscapeRequest request;
    request.config = config;
    if (current) {
        request.has_current = true;
        request.current = *current;
    }
    LandscapeResult last;
    LandscapeCallbacks callbacks;
    callbacks.publish = [&last](LandscapeResult r) { last = std::move(r); };
    REQUIRE(compute_landscape(t, request, callbacks));
    REQUIRE(last.exact);
    return last;
}

double mse_calibrated(const Tensor& t, QuantConfig config, QuantParams& params) {
    config.calibration = Calibration::Mse;
    return quantize(t, config, &params).metrics.mse;
}

}  // namespace

TEST_CASE("log_spaced_through holds its anchor exactly and spans the range in equal ratios") {
    const std::vector<double> v = log_spaced_through(0.25, 16.0, 1.7, 64);
    REQUIRE(v.size() == 64);
    CHECK(std::count(v.begin(), v.end(), 1.7) == 1);
    CHECK(std::is_sorted(v.begin(), v.end()));
    for (std::size_t i = 2; i < v.size(); ++i) CHECK(v[i] / v[i - 1] == doctest::Approx(v[1] / v[0]));
    CHECK(v.front() == doctest::Approx(0.25).epsilon(0.05));
    CHECK(v.back() == doctest::Approx(16.0).epsilon(0.05));
}

TEST_CASE("int_spread_through holds its anchor and stays inside the type") {
    const std::vector<std::int32_t> v = int_spread_through(-128, -13, -77, -128, 127, 64);
    CHECK(std::count(v.begin(), v.end(), -77) == 1);
    CHECK(std::is_sorted(v.begin(), v.end()));
    CHECK(v.front() >= -128);
    CHECK(v.back() <= 127);
    CHECK(v.size() == 64);
    // A type with fewer levels than points: every level once.
    const std::vector<std::int32_t> small = int_spread_through(-8, 7, 2, -8, 7, 64);
    CHECK(small.size() == 16);
    CHECK(small.front() == -8);
    CHECK(small.back() == 7);
}

TEST_CASE("landscape_grid holds the min/max point and the current point's neighbourhood") {
    std::vector<double> scales;
    std::vector<std::int32_t> zps;
    const IntType int8{true, 8};
    const LandscapePoint minmax{3.5788, -77}, current{10.0, 20};
    landscape_grid(int8, minmax, &current, kLandscapeFine, scales, zps);
    CHECK(std::count(scales.begin(), scales.end(), minmax.scale) == 1);
    CHECK(std::count(zps.begin(), zps.end(), minmax.zero_point) == 1);
    CHECK(scales.front() <= minmax.scale / 4 * 1.1);
    CHECK(scales.back() >= current.scale * 4 / 1.1);
    CHECK(zps.front() <= -120);  // the window reaches q_min
    CHECK(zps.back() >= current.zero_point + 60);
}

TEST_CASE("the lesson's map: best on grid s 3.740 z -79 and the MSE calibrator does at least as well") {
    const Preset p = make_preset("lesson");
    const LandscapeResult map = final_map(p.tensor, p.config);
    CHECK(map.best_scale == doctest::Approx(3.740).epsilon(1e-3));
    CHECK(map.best_zero_point == -79);
    CHECK(map.best_mse == doctest::Approx(0.838).epsilon(1e-3));
    CHECK(map.minmax_mse == doctest::Approx(1.5730).epsilon(1e-4));
    QuantParams params;
    const double mse = mse_calibrated(p.tensor, p.config, params);
    CHECK(mse <= map.best_mse * (1 + 1e-6));  // the calibrator alone found 0.878 (s 3.568, z -77)
    // The map the window draws once the calibrator's (s, z) is applied spans it too: still not beaten.
    const LandscapePoint current{params.scale[0], params.zero_point[0]};
    CHECK(mse <= final_map(p.tensor, p.config, &current).best_mse * (1 + 1e-6));
}

TEST_CASE("the asymmetric MSE calibrator is never worse than the landscape's best on grid") {
    for (std::uint64_t seed = 0; seed < 4; ++seed)
        for (std::int64_t n : {7, 100, 3000, 16384})
            for (IntType dtype : {IntType{true, 4}, IntType{true, 8}, IntType{false, 8}}) {
                RandomSpec spec;
                spec.shape = {n};
                spec.seed = seed;
                spec.mean = seed % 2 ? 3.0 : 0.0;  // all-positive tensors clamp z
                spec.pin_range = static_cast<std::int64_t>(seed % 3);
                const Tensor t = generate_random(spec);
                QuantConfig config;
                config.dtype = dtype;
                QuantParams params;
                const double mse = mse_calibrated(t, config, params);
                CAPTURE(seed);
                CAPTURE(n);
                CAPTURE(dtype.name());
                CHECK(mse <= final_map(t, config).best_mse * (1 + 1e-6));
            }
}

TEST_CASE("compare_calibrators marks a recompute-s row that changes nothing") {
    // The lesson's range contains 0: z is not clamped, so recompute s gives min/max's own (s, z).
    const Preset p = make_preset("lesson");
    const auto rows = compare_calibrators(p.tensor, p.config);
    REQUIRE(rows.size() == 8);
    for (std::size_t i = 0; i < 4; ++i) {
        CHECK_FALSE(rows[i].same_as_twin);
        const bool same = rows[i + 4].params.scale == rows[i].params.scale &&
                          rows[i + 4].params.zero_point == rows[i].params.zero_point;
        CHECK(rows[i + 4].same_as_twin == same);
    }
    CHECK(rows[4].same_as_twin);  // min/max
    // All positive with uint8's z clamped to 0: recompute s widens s, a real second row.
    const Tensor positive{{4}, {10, 12, 15, 20}};
    QuantConfig c;
    c.dtype = {false, 8};
    const auto clamped = compare_calibrators(positive, c);
    CHECK_FALSE(clamped[4].same_as_twin);
}

TEST_CASE("the MSE calibrator's scale stays a normal finite float32 on denormal and huge ranges") {
    for (const Tensor& t : {Tensor{{4}, {1e-39f, -2e-39f, 3e-40f, 0.0f}}, Tensor{{4}, {3e38f, -3e38f, 1e38f, 0.0f}}})
        for (int bits : {2, 8})
            for (Mode mode : {Mode::Asymmetric, Mode::Symmetric}) {
                QuantConfig config;
                config.dtype = {true, bits};
                config.mode = mode;
                QuantParams params;
                mse_calibrated(t, config, params);
                CAPTURE(bits);
                CHECK(params.scale[0] >= static_cast<double>(std::numeric_limits<float>::min()));
                CHECK(params.scale[0] <= static_cast<double>(std::numeric_limits<float>::max()));
            }
}
