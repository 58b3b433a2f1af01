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
#include "quantscope/landscape.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

using namespace qs;

namespace {

// The nearest 16-bit pattern of v (round to nearest even), as a checkpoint stores it.
std::uint16_t to_bf16(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
}
std::uint16_t to_f16(float v) {  // normal and subnormal halves; |v| < 65504 here
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const float a = std::abs(v);
    if (a < 6.103515625e-05f) return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f)));
    int e = 0;
    const float m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
    auto mant = static_cast<std::uint32_t>(std::nearbyint((m * 2 - 1) * 1024));
    std::uint32_t exp = static_cast<std::uint32_t>(e - 1 + 15);
    if (mant == 1024) mant = 0, ++exp;
    return static_cast<std::uint16_t>(sign | exp << 10 | mant);
}

// A random 16-bit tensor with repeated patterns (a normal bulk, a few outliers, zeros of both signs).
struct Stored16 {
    std::vector<std::uint16_t> bits;
    TensorView view;
    Tensor decoded;
};
Stored16 make16(ElementType type, std::int64_t n, std::uint64_t seed, double spread) {
    Stored16 s;
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.1, spread);
    for (std::int64_t i = 0; i < n; ++i) {
        double v = normal(rng);
        if (i % 1009 == 0) v *= 30;
        if (i % 4001 == 7) v = (i % 2 ? -0.0 : 0.0);
        s.bits.push_back(type == ElementType::BF16 ? to_bf16(static_cast<float>(v)) : to_f16(static_cast<float>(v)));
    }
    s.view.shape = {n};
    s.view.type = type;
    s.view.data = reinterpret_cast<const std::uint8_t*>(s.bits.data());
    s.decoded = materialize(s.view);
    return s;
}

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
                const Stored16 s = make16(type, 20000 + static_cast<std::int64_t>(seed % 7) * 1111, seed, seed % 2 ? 0.02 : 1.5);
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
                // Every point: the element loop's terms in pattern order to the bit; the element loop's own
                // sums (values_mse: chunks of 4096 in Eigen's order) to the rounding of a sum of positive terms,
                // at most (65536 - 1) x 2^-53 relative whatever the order: 1e-11.
                for (std::size_t i = 0; i < r.mse.size(); ++i) {
                    const double scale = r.curve ? r.scales[i] : r.scales[i % r.scales.size()];
                    std::int32_t z = 0;
                    if (!r.curve) z = r.zero_points[i / r.scales.size()];
                    CAPTURE(i);
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
