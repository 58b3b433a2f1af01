// The calibrators and histograms of a bf16/f16 view from its bit patterns' counts: the numbers of the element
// passes they replace (test_bit_patterns.cpp holds the landscape and quantize's metrics).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "quantscope/calibrate.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "test_stored16.hpp"

using namespace qs;
using namespace qs::test16;

namespace {

bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<std::int64_t> counts_of(const TensorView& view) {
    return overview_values(view, overview_grid(view.shape, 1024)).bit_counts;
}

// Two (s, z) the MSE search chose: the same, or a tie broken by the last bits of the sums (the element path
// adds the squared errors in element order, the patterns in pattern order, ~1e-13 apart).
void check_same_or_tie(const Tensor& values, const QuantConfig& c, double s1, std::int32_t z1, double s2, std::int32_t z2,
                       int& ties) {
    if (s1 == s2 && z1 == z2) return;
    ++ties;
    const double a = values_mse(values.values.data(), values.numel(), s1, z1, c);
    const double b = values_mse(values.values.data(), values.numel(), s2, z2, c);
    CHECK(a == doctest::Approx(b).epsilon(1e-11));
}

}  // namespace

TEST_CASE("the histogram of a bf16 or f16 view from its bit counts equals the counting pass") {
    std::uint64_t seed = 70;
    for (ElementType type : {ElementType::BF16, ElementType::F16}) {
        const Stored16 s = make16(type, 50000, seed++, 0.3);
        const std::vector<std::int64_t> bits = counts_of(s.view);
        for (const auto& [lo, hi, bins] : {std::tuple<double, double, int>{-10.0, 12.0, 8192}, {-0.2, 0.3, 77}, {0.5, 0.5, 16}}) {
            CAPTURE(lo);
            CAPTURE(bins);
            const Histogram want = histogram(s.view, bins, lo, hi), got = histogram(s.view, bits, bins, lo, hi);
            CHECK(got.counts == want.counts);
            CHECK(got.below == want.below);
            CHECK(got.above == want.above);
            CHECK(got.lo == want.lo);
            CHECK(got.hi == want.hi);
            CHECK(got.max_count == want.max_count);
        }
    }
}

TEST_CASE("the percentile and mse calibrators of a bf16 or f16 view choose the decoded values' scale and zero point") {
    std::uint64_t seed = 90;
    int ties = 0, checked = 0;
    for (ElementType type : {ElementType::BF16, ElementType::F16})
        for (Calibration calibration : {Calibration::Percentile, Calibration::Mse})
            for (Mode mode : {Mode::Asymmetric, Mode::Symmetric})
                for (std::int64_t n : {3000, 40000}) {  // the MSE search: on the values, and on the patterns
                    CAPTURE(static_cast<int>(type));
                    CAPTURE(static_cast<int>(calibration));
                    CAPTURE(static_cast<int>(mode));
                    CAPTURE(n);
                    ++seed;
                    const Stored16 s = make16(type, n, seed, seed % 2 ? 0.05 : 2.0);
                    QuantConfig c;
                    c.calibration = calibration;
                    c.mode = mode;
                    c.percentile = mode == Mode::Symmetric ? 99.9 : 97.5;
                    c.dtype = {true, mode == Mode::Symmetric ? 4 : 8};
                    const QuantParams want = compute_params(s.decoded, c);
                    const QuantParams got = compute_params(s.view, c);
                    if (calibration == Calibration::Percentile) {
                        CHECK(got.scale == want.scale);
                        CHECK(got.zero_point == want.zero_point);
                        std::vector<float> values = s.decoded.values;
                        const ValueRange a = calibrate_block(values, c), b = percentile_range(s.view, c);
                        CHECK(same_double(a.lo + 0.0, b.lo + 0.0));
                        CHECK(same_double(a.hi + 0.0, b.hi + 0.0));
                    } else {
                        check_same_or_tie(s.decoded, c, got.scale[0], got.zero_point[0], want.scale[0], want.zero_point[0], ties);
                    }
                    // quantize of the view: the same pair from the patterns alone.
                    const Quantization q = quantize_checked(s.view, c);
                    CHECK(q.params.scale == got.scale);
                    CHECK(q.params.zero_point == got.zero_point);
                    ++checked;
                }
    CHECK(checked == 16);
    MESSAGE("MSE searches that broke a tie otherwise than the element path: " << ties);
}

TEST_CASE("the calibrator table of a bf16 or f16 view from its bit counts is quantize's row by row") {
    std::uint64_t seed = 120;
    int ties = 0;
    for (ElementType type : {ElementType::BF16, ElementType::F16})
        for (Mode mode : {Mode::Asymmetric, Mode::Symmetric}) {
            CAPTURE(static_cast<int>(type));
            CAPTURE(static_cast<int>(mode));
            Stored16 s = make16(type, 300 * 257, seed++, 0.4);
            s.view.shape = {300, 257};
            QuantConfig base;
            base.mode = mode;
            const std::vector<std::int64_t> bits = counts_of(s.view);
            const std::vector<CalibrationRow> want = compare_calibrators(s.decoded, base);
            const std::vector<CalibrationRow> given = compare_calibrators(s.view, base, {}, &bits);
            const std::vector<CalibrationRow> counted = compare_calibrators(s.view, base);
            REQUIRE(given.size() == want.size());
            REQUIRE(counted.size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i) {
                CAPTURE(i);
                CHECK(counted[i].params.scale == given[i].params.scale);
                CHECK(same_double(counted[i].metrics.mse, given[i].metrics.mse));
                check_same_or_tie(s.decoded, want[i].config, given[i].params.scale[0], given[i].params.zero_point[0],
                                  want[i].params.scale[0], want[i].params.zero_point[0], ties);
                // The metrics: quantize's of the row's config, to the bit; the float32 pass's to 1e-11.
                const Quantization q = quantize_checked(s.view, given[i].config);
                CHECK(q.params.scale == given[i].params.scale);
                CHECK(same_double(q.metrics.mse, given[i].metrics.mse));
                CHECK(q.metrics.clipped == given[i].metrics.clipped);
                if (given[i].params.scale == want[i].params.scale && given[i].params.zero_point == want[i].params.zero_point) {
                    CHECK(given[i].metrics.mse == doctest::Approx(want[i].metrics.mse).epsilon(1e-11));
                    CHECK(given[i].metrics.clipped == want[i].metrics.clipped);
                    CHECK(given[i].metrics.levels_used == want[i].metrics.levels_used);
                    CHECK(given[i].same_as_twin == want[i].same_as_twin);
                }
            }
        }
    MESSAGE("rows whose MSE search broke a tie otherwise: " << ties);
}
