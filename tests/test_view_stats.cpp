// The histograms and calibrators of a view in its stored type (bf16/f16/f32/f64, e.g. a file's mapping too
// large for a float32 copy) give exactly the numbers of their float32 versions over the decoded values.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "quantscope/blocks.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/landscape.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

const ElementType kTypes[] = {ElementType::F32, ElementType::F16, ElementType::BF16, ElementType::F64};

// The stored bytes of a random tensor, one byte into a buffer: an f32 view is then misaligned and decoded in
// pieces, as a safetensors payload at an odd offset is.
struct Stored {
    std::string buffer;
    TensorView view;
    Tensor copy;  // what the float32 path reads
};
Stored make_stored(ElementType type, const Shape& shape, std::uint64_t seed) {
    Stored s;
    s.buffer = " " + test::random_elements(type, checked_numel(shape), seed);
    s.view.shape = shape;
    s.view.type = type;
    s.view.data = reinterpret_cast<const std::uint8_t*>(s.buffer.data()) + 1;
    s.copy = materialize(s.view);
    return s;
}

bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void check_same_histogram(const Histogram& a, const Histogram& b) {
    CHECK(a.lo == b.lo);
    CHECK(a.hi == b.hi);
    CHECK(a.counts == b.counts);
    CHECK(a.below == b.below);
    CHECK(a.above == b.above);
    CHECK(a.max_count == b.max_count);
}

std::vector<QuantConfig> calibrated_configs(const Shape& shape) {
    std::vector<QuantConfig> out;
    for (Calibration calibration : {Calibration::Percentile, Calibration::Mse}) {
        for (Mode mode : {Mode::Asymmetric, Mode::Symmetric}) {
            QuantConfig c;
            c.calibration = calibration;
            c.mode = mode;
            c.percentile = mode == Mode::Symmetric ? 99.9 : 97.5;
            c.dtype = {true, mode == Mode::Symmetric ? 4 : 8};
            out.push_back(c);
            for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
                QuantConfig ch = c;
                ch.granularity = Granularity::Channel;
                ch.axis = axis;
                out.push_back(ch);
            }
            if (shape.back() % 32 == 0) {
                QuantConfig g = c;
                g.granularity = Granularity::Group;
                g.group_size = 32;
                g.rounding = Rounding::HalfAway;
                out.push_back(g);
            }
        }
    }
    return out;
}

}  // namespace

TEST_CASE("view histograms equal the float32 histograms in every stored type") {
    std::uint64_t seed = 11;
    for (const Shape& shape : std::vector<Shape>{{1}, {7}, {130, 70}, {3, 257, 128}, {700, 1000}})
        for (ElementType type : kTypes) {
            CAPTURE(shape_to_string(shape));
            CAPTURE(static_cast<int>(type));
            const Stored s = make_stored(type, shape, seed++);
            const float* values = s.copy.values.data();
            const std::int64_t n = s.copy.numel();
            float lo = 0, hi = 0, vlo = 0, vhi = 0;
            value_range(values, n, lo, hi);
            value_range(s.view, vlo, vhi);
            CHECK(vlo == lo);
            CHECK(vhi == hi);
            check_same_histogram(histogram(s.view, 8192), histogram(values, n, 8192));
            // A display range wider and narrower than the data (values below and above it), odd bin counts.
            check_same_histogram(histogram(s.view, 37, lo - 1.0, hi + 0.5), histogram(values, n, 37, lo - 1.0, hi + 0.5));
            check_same_histogram(histogram(s.view, 400, lo / 3, hi / 5), histogram(values, n, 400, lo / 3, hi / 5));
            check_same_histogram(histogram(s.view, 16, 1.0, 1.0), histogram(values, n, 16, 1.0, 1.0));
            // One block's elements (the per-channel histogram) from the view.
            for (const QuantConfig& c : calibrated_configs(shape)) {
                QuantParams layout;
                set_block_layout(shape, c, layout);
                for (std::int64_t block : {std::int64_t{0}, layout.block_count / 2, layout.block_count - 1})
                    CHECK(block_elements(s.view, layout, block) == block_elements(values, n, layout, block));
            }
        }
}

TEST_CASE("view calibrators choose the float32 calibrators' scale and zero point in every stored type") {
    std::uint64_t seed = 101;
    int checked = 0;
    // {300, 257}: a whole tensor above 16384 values searches (mse) and selects (percentile) on the view.
    for (const Shape& shape : std::vector<Shape>{{7}, {3, 3}, {130, 70}, {300, 257}, {3, 40, 64}})
        for (ElementType type : kTypes) {
            const Stored s = make_stored(type, shape, seed++);
            for (const QuantConfig& c : calibrated_configs(shape)) {
                CAPTURE(shape_to_string(shape));
                CAPTURE(static_cast<int>(type));
                CAPTURE(std::string(to_string(c.calibration)));
                CAPTURE(std::string(to_string(c.mode)));
                CAPTURE(std::string(to_string(c.granularity)));
                CAPTURE(c.axis);
                const QuantParams want = compute_params(s.copy, c);
                const QuantParams got = compute_params(s.view, c);
                REQUIRE(got.block_count == want.block_count);
                if (want.on_demand()) {  // tiny blocks: computed when asked, from the same values
                    CHECK(got.scale_of(got.block_count - 1) == want.scale_of(want.block_count - 1));
                    continue;
                }
                CHECK(got.scale == want.scale);
                CHECK(got.zero_point == want.zero_point);
                if (c.calibration == Calibration::Percentile && c.granularity == Granularity::Tensor) {
                    std::vector<float> values = s.copy.values;
                    const ValueRange a = calibrate_block(values, c), b = percentile_range(s.view, c);
                    CHECK(same_double(a.lo + 0.0, b.lo + 0.0));
                    CHECK(same_double(a.hi + 0.0, b.hi + 0.0));
                }
                ++checked;
            }
        }
    CHECK(checked > 200);
}

TEST_CASE("the view's calibrator table equals the float32 table row by row") {
    std::uint64_t seed = 7;
    for (ElementType type : kTypes)
        for (Mode mode : {Mode::Asymmetric, Mode::Symmetric}) {
            CAPTURE(static_cast<int>(type));
            const Stored s = make_stored(type, {300, 257}, seed++);
            QuantConfig base;
            base.mode = mode;
            const std::vector<CalibrationRow> want = compare_calibrators(s.copy, base);
            std::vector<float> progress;
            PassControl control;
            control.progress = [&progress](float f) { progress.push_back(f); };
            const std::vector<CalibrationRow> got = compare_calibrators(s.view, base, control);
            REQUIRE(got.size() == want.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                CAPTURE(i);
                CHECK(got[i].params.scale == want[i].params.scale);
                CHECK(got[i].params.zero_point == want[i].params.zero_point);
                // bf16/f16 per tensor: the metrics from the bit patterns, the same terms in pattern order
                // (test_bit_patterns_calibrate.cpp).
                if (type == ElementType::F16 || type == ElementType::BF16)
                    CHECK(got[i].metrics.mse == doctest::Approx(want[i].metrics.mse).epsilon(1e-11));
                else
                    CHECK(same_double(got[i].metrics.mse, want[i].metrics.mse));
                CHECK(got[i].metrics.clipped == want[i].metrics.clipped);
                CHECK(got[i].metrics.levels_used == want[i].metrics.levels_used);
                CHECK(got[i].same_as_twin == want[i].same_as_twin);
            }
            REQUIRE_FALSE(progress.empty());
            CHECK(progress.back() == 1.0f);
        }
}

TEST_CASE("a cancelled view calibrator table stops before its first row") {
    const Stored s = make_stored(ElementType::BF16, {300, 257}, 3);
    std::atomic<bool> cancel{true};
    PassControl control;
    control.cancel = &cancel;
    CHECK(compare_calibrators(s.view, QuantConfig{}, control).empty());
}

// bf16 and f16 views get their exact pass from their bit patterns instead (test_bit_patterns.cpp).
TEST_CASE("the landscape of a view equals the float32 landscape pass by pass") {
    std::uint64_t seed = 31;
    for (ElementType type : {ElementType::F32, ElementType::F64})
        for (bool curve : {false, true}) {
            CAPTURE(static_cast<int>(type));
            CAPTURE(curve);
            // 77100 values: a coarse pass on every 2nd element, then the exact pass on the view itself.
            const Stored s = make_stored(type, {300, 257}, seed++);
            LandscapeRequest rq;
            rq.curve = curve;
            rq.config.mode = curve ? Mode::Symmetric : Mode::Asymmetric;
            rq.config.dtype = {true, curve ? 4 : 8};
            std::vector<LandscapeResult> want, got;
            LandscapeCallbacks to_want, to_got;
            to_want.publish = [&want](LandscapeResult r) { want.push_back(std::move(r)); };
            to_got.publish = [&got](LandscapeResult r) { got.push_back(std::move(r)); };
            REQUIRE(compute_landscape(s.copy, rq, to_want));
            REQUIRE(compute_landscape(s.view, rq, to_got));
            REQUIRE(got.size() == want.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                CAPTURE(i);
                CHECK(got[i].mse == want[i].mse);
                CHECK(got[i].scales == want[i].scales);
                CHECK(got[i].zero_points == want[i].zero_points);
                CHECK(got[i].stride == want[i].stride);
                CHECK(same_double(got[i].minmax_mse, want[i].minmax_mse));
                CHECK(got[i].best_scale == want[i].best_scale);
            }
            CHECK(got.back().exact);
        }
}

TEST_CASE("mse_grid over a view reports its progress and stops when cancelled") {
    const Stored s = make_stored(ElementType::BF16, {1100, 1000}, 5);  // two blocks of 2^20 elements
    const std::vector<double> scales{0.01, 0.02, 0.05};
    const std::vector<std::int32_t> zps{-3, 0, 4};
    std::vector<double> want, got;
    REQUIRE(mse_grid(s.copy.values.data(), s.copy.numel(), QuantConfig{}, scales, zps, want));
    std::vector<float> progress;
    REQUIRE(mse_grid(s.view, QuantConfig{}, scales, zps, got, nullptr, [&](float f) { progress.push_back(f); }));
    CHECK(got == want);
    REQUIRE(progress.size() == 2);
    CHECK(progress.back() == 1.0f);
    std::atomic<bool> cancel{true};
    CHECK_FALSE(mse_grid(s.view, QuantConfig{}, scales, zps, got, &cancel, nullptr));
}
