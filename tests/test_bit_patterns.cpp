// A bf16/f16 tensor quantized with one (s, z): everything per element is a function of its 16 bits, so the
// exact landscape (and the window's metrics) are sums over the bit patterns that occur, each term times its
// count. These tests hold those sums to the element loops they replace.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"
#include "quantscope/landscape.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"
#include "test_stored16.hpp"

using namespace qs;
using namespace qs::test16;

namespace {

// The element loop's terms (quantize_value's code, r' = s (q - z) and |r - r'| in float32, squared in
// double), gathered by bit pattern and added in ascending pattern order: what the landscape must give to
// the bit.
double reference_pattern_mse(const Stored16& s, double scale, std::int32_t zero_point, const QuantConfig& config) {
    const float sf = static_cast<float>(scale), zf = static_cast<float>(zero_point);
    std::map<std::uint16_t, std::pair<std::int64_t, double>> by_bits;  // count, e^2
    for (std::size_t i = 0; i < s.bits.size(); ++i) {
        const float r = s.decoded.values[i];
        const std::int32_t q = quantize_value(r, sf, zero_point, config);
        const float e = std::abs(r - sf * (static_cast<float>(q) - zf));
        auto& entry = by_bits[s.bits[i]];
        ++entry.first;
        entry.second = static_cast<double>(e) * e;
    }
    double total = 0;
    for (const auto& [bits, entry] : by_bits) total += static_cast<double>(entry.first) * entry.second;
    return total / static_cast<double>(s.bits.size());
}

bool same_double(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

LandscapeResult exact_landscape(const TensorView& view, const LandscapeRequest& rq, std::size_t* passes = nullptr) {
    std::vector<LandscapeResult> got;
    LandscapeCallbacks cb;
    cb.publish = [&got](LandscapeResult r) { got.push_back(std::move(r)); };
    REQUIRE(compute_landscape(view, rq, cb));
    REQUIRE_FALSE(got.empty());
    if (passes) *passes = got.size();
    return got.back();
}

struct Case {
    IntType dtype;
    bool curve;
};
const Case kCases[] = {{{true, 8}, false}, {{false, 8}, false}, {{true, 4}, false}, {{true, 3}, true},
                       {{true, 8}, true}, {{false, 4}, false}};

}  // namespace

TEST_CASE("the exact landscape of a bf16 or f16 view is the element loop's summed by bit pattern") {
    std::uint64_t seed = 11;
    double worst = 0;
    for (ElementType type : {ElementType::BF16, ElementType::F16})
        for (Rounding rounding : {Rounding::HalfEven, Rounding::HalfAway})
            for (const Case& c : kCases) {
                CAPTURE(static_cast<int>(type));
                CAPTURE(static_cast<int>(rounding));
                CAPTURE(c.dtype.bits);
                CAPTURE(c.curve);
                const Stored16 s = make16(type, 4000 + static_cast<std::int64_t>(seed % 7) * 333, seed, seed % 2 ? 0.02 : 1.5);
                ++seed;
                LandscapeRequest rq;
                rq.curve = c.curve;
                rq.config.dtype = c.dtype;
                rq.config.rounding = rounding;
                rq.config.mode = c.curve ? Mode::Symmetric : Mode::Asymmetric;
                std::size_t passes = 0;
                const LandscapeResult r = exact_landscape(s.view, rq, &passes);
                CHECK(passes == 1);  // the exact pass at once: no sampled passes first
                CHECK(r.exact);
                CHECK(r.stride == 1);
                // The lessons' (s, z): compute_params' over the decoded values.
                QuantConfig mm = rq.config;
                mm.calibration = Calibration::MinMax;
                mm.recompute_scale = false;
                const QuantParams p = compute_params(s.decoded, mm);
                CHECK(r.minmax_scale == p.scale[0]);
                CHECK(r.minmax_zero_point == p.zero_point[0]);
                CHECK(same_double(r.minmax_mse, reference_pattern_mse(s, p.scale[0], p.zero_point[0], mm)));
                // The points (all of the curve's, every 7th of the map's, the best): the element loop's terms
                // in pattern order to the bit (every 41st of the map's); the element loop's own sums (values_mse:
                // chunks of 4096 in Eigen's order) to the rounding of a sum of positive terms, at most
                // (65536 - 1) x 2^-53 relative whatever the order: 1e-11.
                const std::size_t best = static_cast<std::size_t>(std::min_element(r.mse.begin(), r.mse.end()) - r.mse.begin());
                for (std::size_t i = 0; i < r.mse.size(); ++i) {
                    if (!r.curve && i % 7 != 0 && i != best) continue;
                    const double scale = r.curve ? r.scales[i] : r.scales[i % r.scales.size()];
                    std::int32_t z = 0;
                    if (!r.curve) z = r.zero_points[i / r.scales.size()];
                    CAPTURE(i);
                    if (r.curve || i % 41 == 0 || i == best)
                        CHECK(same_double(r.mse[i], reference_pattern_mse(s, scale, z, rq.config)));
                    const double element = values_mse(s.decoded.values.data(), s.decoded.numel(), scale, z, rq.config);
                    CHECK(r.mse[i] == doctest::Approx(element).epsilon(1e-11));
                    if (element > 0) worst = std::max(worst, std::abs(r.mse[i] - element) / element);
                }
                // The float32 tensor's landscape (element loops) finds the same grid.
                std::vector<LandscapeResult> passes32;
                LandscapeCallbacks cb;
                cb.publish = [&passes32](LandscapeResult x) { passes32.push_back(std::move(x)); };
                REQUIRE(compute_landscape(s.decoded, rq, cb));
                CHECK(passes32.back().scales == r.scales);
                CHECK(passes32.back().zero_points == r.zero_points);
                CHECK(passes32.back().alphas == r.alphas);
            }
    MESSAGE("largest relative difference to the element loop's order: " << worst);
}

TEST_CASE("the landscape from the overview's bit counts equals the one that counts them itself") {
    const Stored16 s = make16(ElementType::BF16, 300 * 257, 5, 0.7);
    TensorView view = s.view;
    view.shape = {300, 257};
    const ValueOverview values = overview_values(view, overview_grid(view.shape, 4096));
    LandscapeRequest rq;
    rq.config.dtype = {true, 8};
    const LandscapeResult counted = exact_landscape(view, rq);
    rq.bit_counts = &values.bit_counts;
    const LandscapeResult given = exact_landscape(view, rq);
    CHECK(given.mse == counted.mse);
    CHECK(same_double(given.minmax_mse, counted.minmax_mse));
    // The window's metrics at the lessons' (s, z) are the map's cell there, to the bit.
    QuantConfig mm = rq.config;
    const QuantParams p = compute_params(view, mm);
    REQUIRE(given.minmax_scale == p.scale[0]);
    const QuantOverview ov = quantize_overview(view, p, mm, values.grid, &values);
    CHECK(same_double(ov.metrics.mse, given.minmax_mse));
}

TEST_CASE("a cancelled landscape of a bf16 view stops") {
    const Stored16 s = make16(ElementType::BF16, 50000, 3, 1.0);
    std::atomic<bool> cancel{true};
    LandscapeCallbacks cb;
    cb.cancel = &cancel;
    int published = 0;
    cb.publish = [&published](LandscapeResult) { ++published; };
    CHECK_FALSE(compute_landscape(s.view, LandscapeRequest{}, cb));
    CHECK(published == 0);
}

TEST_CASE("quantize of a bf16 or f16 tensor with one pair prints the window's metrics to the bit") {
    std::uint64_t seed = 40;
    for (ElementType type : {ElementType::BF16, ElementType::F16})
        for (Mode mode : {Mode::Asymmetric, Mode::Symmetric, Mode::Manual})
            for (Rounding rounding : {Rounding::HalfEven, Rounding::HalfAway}) {
                CAPTURE(static_cast<int>(type));
                CAPTURE(static_cast<int>(mode));
                CAPTURE(static_cast<int>(rounding));
                Stored16 s = make16(type, 240 * 320, seed++, 0.5);
                s.view.shape = {240, 320};
                QuantConfig config;
                config.mode = mode;
                config.rounding = rounding;
                config.dtype = {true, mode == Mode::Symmetric ? 4 : 8};
                config.manual_scale = 0.01;
                config.manual_zero_point = 3;
                const Quantization q = quantize_checked(s.view, config);
                // compute_params' pair and range, from the patterns' range.
                TensorRange range;
                const QuantParams p = compute_params(s.view, config, &range);
                CHECK(q.params.scale == p.scale);
                CHECK(q.params.zero_point == p.zero_point);
                CHECK(q.params.block_stride == p.block_stride);
                CHECK(q.range.min == range.min);
                CHECK(q.range.max == range.max);
                // The window's overview (the slider's step) from the values pass's counts: the same bits.
                const ValueOverview values = overview_values(s.view, overview_grid(s.view.shape, 1024));
                const Metrics w = quantize_overview(s.view, q.params, config, values.grid, &values).metrics;
                CHECK(same_double(w.mse, q.metrics.mse));
                CHECK(same_double(w.mae, q.metrics.mae));
                CHECK(w.sqnr_db == q.metrics.sqnr_db);
                CHECK(same_double(w.sum, q.metrics.sum));
                CHECK(w.max_abs_error == q.metrics.max_abs_error);
                CHECK(w.clipped == q.metrics.clipped);
                CHECK(w.levels_used == q.metrics.levels_used);
                // The element pass (quantize_view) adds the same terms in element order.
                const Metrics e = quantize_view(s.view, q.params, config);
                CHECK(q.metrics.mse == doctest::Approx(e.mse).epsilon(1e-11));
                CHECK(q.metrics.mae == doctest::Approx(e.mae).epsilon(1e-11));
                CHECK(q.metrics.signal_energy == doctest::Approx(e.signal_energy).epsilon(1e-11));
                CHECK(q.metrics.max_abs_error == e.max_abs_error);
                CHECK(q.metrics.clipped == e.clipped);
                CHECK(q.metrics.levels_used == e.levels_used);
                CHECK(q.metrics.count == e.count);
                // Asking for outputs changes no metric (they come from one more pass, the metrics still from
                // the patterns), and the outputs are the element pass's.
                std::vector<std::int32_t> codes(static_cast<std::size_t>(s.view.numel()));
                const Quantization with = quantize_checked(s.view, config, OutputSelection{true, false, false},
                                                           [&codes](std::int64_t first, std::int64_t count, const QuantOutputs& b) {
                                                               if (b.codes) std::copy(b.codes, b.codes + count, codes.begin() + first);
                                                           });
                CHECK(same_double(with.metrics.mse, q.metrics.mse));
                std::vector<std::int32_t> want(codes.size());
                quantize_view(s.view, q.params, config, QuantOutputs{want.data(), nullptr, nullptr});
                CHECK(codes == want);
            }
}

TEST_CASE("quantize of a bf16 tensor holding a NaN names it as the element pass does") {
    Stored16 s = make16(ElementType::BF16, 5000, 9, 1.0);
    s.bits[1234] = 0x7fc0;  // NaN
    s.view.shape = {50, 100};
    std::string message;
    try {
        quantize_checked(s.view, QuantConfig{});
    } catch (const Error& e) {
        message = e.what();
    }
    CHECK(message.find("NaN at index [12, 34]") != std::string::npos);
}
