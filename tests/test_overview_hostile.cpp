// Hostile property tests of the window's slider step on bf16/f16 tensors (the fused pass by bit patterns, its
// AVX-512 and AVX2 kernels) and of the exact landscape by patterns: random shapes whose rows and items end
// anywhere (vector tails of 8 and 16, rows of one column), random 16-bit patterns (subnormals, +-0, the largest
// finite), every int width, (s, z) at the extremes and ties r / s + z = k + 1/2 exactly. Each result must equal
// quantize_view's (what `quantscope quantize` reports) element by element, folded.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"
#include "quantscope/landscape.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"

namespace {

using Rng = std::mt19937_64;

std::int64_t pick(Rng& rng, std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); }

bool finite16(qs::ElementType type, std::uint16_t b) {
    return type == qs::ElementType::BF16 ? (b & 0x7f80u) != 0x7f80u : (b & 0x7c00u) != 0x7c00u;
}
// The pattern of v when it is exactly representable (else 0xffff, a NaN in both types); -0 gives +0's.
std::uint16_t exact16(qs::ElementType type, float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    if (type == qs::ElementType::BF16) return (u & 0xffffu) == 0 ? static_cast<std::uint16_t>(u >> 16) : 0xffff;
    static const std::vector<std::pair<float, std::uint16_t>> halves = [] {  // every finite half, ascending
        std::vector<std::pair<float, std::uint16_t>> t;
        for (std::uint32_t b = 0; b < 0x10000u; ++b)
            if (finite16(qs::ElementType::F16, static_cast<std::uint16_t>(b)))
                t.emplace_back(qs::half_to_float(static_cast<std::uint16_t>(b)), static_cast<std::uint16_t>(b));
        std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        return t;
    }();
    const auto it = std::lower_bound(halves.begin(), halves.end(), v, [](const auto& a, float x) { return a.first < x; });
    return it != halves.end() && it->first == v ? it->second : 0xffff;
}

// A random finite pattern of one of several kinds.
std::uint16_t random_pattern(qs::ElementType type, Rng& rng, int kind) {
    const bool bf = type == qs::ElementType::BF16;
    const std::uint16_t max_finite = bf ? 0x7f7f : 0x7bff;
    for (;;) {
        std::uint16_t b = 0;
        switch (kind) {
            case 0: b = static_cast<std::uint16_t>(pick(rng, 0, 0xffff)); break;  // anything finite
            case 1: b = static_cast<std::uint16_t>(pick(rng, 0, bf ? 0x7f : 0x3ff) | (pick(rng, 0, 1) << 15)); break;  // subnormal, 0
            case 2: {  // near 1 in magnitude, both signs
                const float v = std::ldexp(static_cast<float>(pick(rng, -255, 255)), -static_cast<int>(pick(rng, 6, 9)));
                b = exact16(type, v);
                break;
            }
            default: b = pick(rng, 0, 3) == 0 ? static_cast<std::uint16_t>(max_finite | (pick(rng, 0, 1) << 15))
                                               : static_cast<std::uint16_t>(pick(rng, 0, 0xffff));
        }
        if (finite16(type, b)) return b;
    }
}

qs::Shape random_shape(Rng& rng) {
    const std::int64_t cols[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 1000};
    switch (pick(rng, 0, 3)) {
        case 0: return {pick(rng, 1, 5000)};
        case 1: return {pick(rng, 1, 300), cols[pick(rng, 0, 16)]};
        case 2: return {pick(rng, 1, 4), pick(rng, 1, 40), cols[pick(rng, 0, 16)]};
        default: return {1, pick(rng, 1, 9000)};
    }
}

struct Case {
    qs::ElementType type = qs::ElementType::BF16;
    qs::Shape shape;
    std::vector<std::uint16_t> bits;
    qs::QuantConfig config;
    qs::TensorView view() const {
        qs::TensorView v;
        v.shape = shape;
        v.type = type;
        v.data = reinterpret_cast<const std::uint8_t*>(bits.data());
        return v;
    }
};

// A manual (s, z): powers of two (ties wherever r / s has a half), random, or the extremes; z anywhere in range.
void random_manual(Case& c, Rng& rng) {
    const qs::IntType dtypes[] = {{true, 2}, {true, 3}, {true, 4}, {false, 4}, {true, 8}, {false, 8}, {true, 16}, {false, 2}};
    c.config.dtype = dtypes[pick(rng, 0, 7)];
    c.config.mode = qs::Mode::Manual;
    c.config.rounding = pick(rng, 0, 1) ? qs::Rounding::HalfEven : qs::Rounding::HalfAway;
    const double extremes[] = {static_cast<double>(std::numeric_limits<float>::min()), 1e-30, 1e30, 1e38,
                               static_cast<double>(std::numeric_limits<float>::max())};
    switch (pick(rng, 0, 3)) {
        case 0:
        case 1: c.config.manual_scale = std::ldexp(1.0, static_cast<int>(pick(rng, -24, 8))); break;
        case 2: c.config.manual_scale = std::exp(std::uniform_real_distribution<double>(-12, 4)(rng)); break;
        default: c.config.manual_scale = extremes[pick(rng, 0, 4)];
    }
    const std::int32_t q_min = c.config.dtype.q_min(), q_max = c.config.dtype.q_max();
    const std::int64_t zk = pick(rng, 0, 3);
    c.config.manual_zero_point = zk == 0 ? q_min : zk == 1 ? q_max : zk == 2 ? 0 : static_cast<std::int32_t>(pick(rng, q_min, q_max));
    if (c.config.manual_zero_point < q_min) c.config.manual_zero_point = q_min;  // unsigned: 0 is q_min
}

// Elements planted exactly on ties: r = (k + 1/2) s with r / s + z = k + z + 1/2.
void plant_ties(Case& c, Rng& rng) {
    const auto s = static_cast<float>(c.config.manual_scale);
    for (int t = 0; t < 40 && !c.bits.empty(); ++t) {
        const auto k = static_cast<float>(pick(rng, -70, 70));
        const std::uint16_t b = exact16(c.type, (k + 0.5f) * s);
        if (b == 0xffff || !std::isfinite((k + 0.5f) * s)) continue;
        c.bits[static_cast<std::size_t>(pick(rng, 0, static_cast<std::int64_t>(c.bits.size()) - 1))] = b;
    }
}

Case random_case(Rng& rng) {
    Case c;
    c.type = pick(rng, 0, 1) ? qs::ElementType::BF16 : qs::ElementType::F16;
    c.shape = random_shape(rng);
    std::int64_t n = 1;
    for (const std::int64_t d : c.shape) n *= d;
    const int kind = static_cast<int>(pick(rng, 0, 4));
    const std::uint16_t one = random_pattern(c.type, rng, 2);
    for (std::int64_t i = 0; i < n; ++i) c.bits.push_back(kind == 4 ? one : random_pattern(c.type, rng, kind));
    random_manual(c, rng);
    if (pick(rng, 0, 1)) plant_ties(c, rng);
    if (pick(rng, 0, 3) == 0) {  // the calibrated (s, z) of the whole tensor: z anywhere in range
        c.config.mode = pick(rng, 0, 1) && c.config.dtype.is_signed ? qs::Mode::Symmetric : qs::Mode::Asymmetric;
        c.config.recompute_scale = pick(rng, 0, 1) == 1;
    }
    return c;
}

// The overview must be quantize_view's outputs folded: codes, per-block mean code and largest error, the
// first largest error, the code counts, the clipped count and levels; the sums within a few ulps (added by
// pattern, not in element order).
int differences(const qs::QuantOverview& o, const qs::TensorView& view, const qs::QuantParams& params, const qs::QuantConfig& config) {
    const auto n = static_cast<std::size_t>(view.numel());
    std::vector<std::int32_t> codes(n);
    std::vector<float> deq(n), err(n);
    const qs::Metrics m = qs::quantize_view(view, params, config, qs::QuantOutputs{codes.data(), deq.data(), err.data()});
    int bad = 0;
    const auto expect = [&bad](bool ok, const std::string& what) {
        if (!ok) MESSAGE("differs: " << what);
        bad += ok ? 0 : 1;
    };
    expect(o.metrics.count == m.count && o.metrics.clipped == m.clipped && o.metrics.levels_used == m.levels_used, "counts");
    expect(o.metrics.max_abs_error == m.max_abs_error || (std::isnan(o.metrics.max_abs_error) && std::isnan(m.max_abs_error)), "max error");
    const auto close = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)) || a == doctest::Approx(b).epsilon(1e-12); };
    expect(close(o.metrics.mse, m.mse) && close(o.metrics.mae, m.mae) && close(o.metrics.sum, m.sum), "sums");
    std::vector<std::int64_t> counts(static_cast<std::size_t>(config.dtype.levels()), 0);
    for (const std::int32_t q : codes) ++counts[static_cast<std::size_t>(q - config.dtype.q_min())];
    expect(o.code_counts == counts, "code counts");
    std::size_t worst = 0;
    for (std::size_t i = 0; i < n; ++i)
        if (err[i] > err[worst]) worst = i;
    expect(o.error_argmax == static_cast<std::int64_t>(worst), "argmax");
    const qs::OverviewGrid& g = o.grid;
    int bad_blocks = 0;
    for (std::int64_t s = 0; s < g.slices; ++s)
        for (std::int64_t orow = 0; orow < g.out_rows(); ++orow)
            for (std::int64_t oc = 0; oc < g.out_cols(); ++oc) {
                double sum = 0;
                float e = 0;
                std::int64_t cells = 0;
                for (std::int64_t r = orow * g.fy; r < std::min(g.rows, (orow + 1) * g.fy); ++r)
                    for (std::int64_t c = oc * g.fx; c < std::min(g.cols, (oc + 1) * g.fx); ++c, ++cells) {
                        const auto i = static_cast<std::size_t>((s * g.rows + r) * g.cols + c);
                        sum += codes[i];
                        e = std::max(e, err[i]);
                    }
                const auto b = static_cast<std::size_t>(s * g.cells_per_slice() + orow * g.out_cols() + oc);
                bad_blocks += o.codes_mean[b] == static_cast<float>(sum / static_cast<double>(cells)) && o.error_max[b] == e ? 0 : 1;
            }
    expect(bad_blocks == 0, "blocks");
    return bad;
}

}  // namespace

TEST_CASE("hostile random bf16 and f16 tensors: the slider step's AVX-512 and AVX2 kernels equal quantize_view") {
    Rng rng(20261123);
    int checked = 0, failed = 0;
    for (int round = 0; round < 400; ++round) {
        const Case c = random_case(rng);
        const qs::TensorView view = c.view();
        qs::QuantParams params;
        try {
            params = qs::compute_params(view, c.config);
        } catch (const qs::Error&) {
            continue;
        }
        const std::int64_t max_cells = pick(rng, 0, 1) ? 999 : std::int64_t{1} << 20;
        const qs::OverviewGrid grid = qs::overview_grid(c.shape, max_cells);
        const qs::ValueOverview values = qs::overview_values(view, grid);
        for (const bool avx2 : {false, true}) {
            CAPTURE(round);
            CAPTURE(avx2);
            CAPTURE(static_cast<int>(c.type));
            CAPTURE(c.config.dtype.name());
            CAPTURE(c.config.manual_scale);
            CAPTURE(c.config.manual_zero_point);
            CAPTURE(static_cast<int>(c.config.rounding));
            CAPTURE(view.numel());
            qs::use_avx2_overview(avx2);
            const qs::QuantOverview o = qs::quantize_overview(view, params, c.config, grid, &values);
            qs::use_avx2_overview(false);
            const int bad = differences(o, view, params, c.config);
            CHECK(bad == 0);
            failed += bad ? 1 : 0;
            ++checked;
        }
    }
    MESSAGE(checked << " overviews, " << failed << " differ");
    CHECK(checked > 400);
}

namespace {

bool same_or_close(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b || a == doctest::Approx(b).epsilon(1e-11);
}

// Every landscape the request publishes last, or the one line it refuses with.
struct Outcome {
    qs::LandscapeResult result;
    std::string error;
};
Outcome landscape_of(const qs::TensorView& view, const qs::LandscapeRequest& rq) {
    Outcome out;
    qs::LandscapeCallbacks cb;
    cb.publish = [&out](qs::LandscapeResult r) { out.result = std::move(r); };
    try {
        REQUIRE(qs::compute_landscape(view, rq, cb));
    } catch (const qs::Error& e) {
        out.error = e.what();
    }
    return out;
}

}  // namespace

TEST_CASE("hostile random bf16 and f16 tensors: the landscape by patterns equals the element loop") {
    Rng rng(77);
    const qs::IntType dtypes[] = {{true, 2}, {true, 3}, {true, 4}, {false, 4}, {true, 8}, {false, 8}, {true, 16}};
    int checked = 0;
    for (int round = 0; round < 60; ++round) {
        Case c;
        c.type = pick(rng, 0, 1) ? qs::ElementType::BF16 : qs::ElementType::F16;
        c.shape = {pick(rng, 1, 3000)};
        const int kind = static_cast<int>(pick(rng, 0, 4));
        const std::uint16_t one = random_pattern(c.type, rng, 2);
        for (std::int64_t i = 0; i < c.shape[0]; ++i) c.bits.push_back(kind == 4 ? one : random_pattern(c.type, rng, kind));
        const qs::TensorView view = c.view();
        const qs::Tensor decoded = qs::materialize(view);
        qs::LandscapeRequest rq;
        rq.curve = pick(rng, 0, 2) == 0;
        rq.config.dtype = dtypes[pick(rng, 0, rq.curve ? 4 : 6)];
        if (rq.curve && !rq.config.dtype.is_signed) rq.config.dtype.is_signed = true;
        rq.config.rounding = pick(rng, 0, 1) ? qs::Rounding::HalfEven : qs::Rounding::HalfAway;
        rq.config.mode = rq.curve ? qs::Mode::Symmetric : qs::Mode::Asymmetric;
        CAPTURE(round);
        CAPTURE(kind);
        CAPTURE(static_cast<int>(c.type));
        CAPTURE(rq.config.dtype.name());
        CAPTURE(rq.curve);
        const Outcome by_patterns = landscape_of(view, rq);
        const Outcome element = landscape_of(qs::view_of(decoded), rq);  // float32: the element loops
        CHECK(by_patterns.error == element.error);
        if (!element.error.empty() || !by_patterns.error.empty()) continue;
        const qs::LandscapeResult& p = by_patterns.result;
        const qs::LandscapeResult& e = element.result;
        CHECK(p.minmax_scale == e.minmax_scale);
        CHECK(p.minmax_zero_point == e.minmax_zero_point);
        CHECK(same_or_close(p.minmax_mse, e.minmax_mse));
        CHECK(p.alphas == e.alphas);
        CHECK(p.scales == e.scales);
        CHECK(p.zero_points == e.zero_points);
        REQUIRE(p.mse.size() == e.mse.size());
        int bad = 0;
        for (std::size_t i = 0; i < p.mse.size(); ++i) {  // values_mse: the element loop in double
            const double s = p.curve ? p.scales[i] : p.scales[i % p.scales.size()];
            const std::int32_t z = p.curve ? 0 : p.zero_points[i / p.scales.size()];
            bad += same_or_close(p.mse[i], qs::values_mse(decoded.values.data(), decoded.numel(), s, z, rq.config)) ? 0 : 1;
        }
        CHECK(bad == 0);
        ++checked;
    }
    CHECK(checked > 30);
}

TEST_CASE("hostile bf16 and f16 shapes: bands past the column sums' flush and one row of 2^20 columns") {
    Rng rng(5);
    const qs::Shape shapes[] = {{20000, 17}, {16385, 16}, {1, std::int64_t{1} << 20}, {1, (std::int64_t{1} << 20) + 1},
                                {(std::int64_t{1} << 20) + 3, 1}, {3, 33333}};
    for (const qs::Shape& shape : shapes)
        for (const qs::ElementType type : {qs::ElementType::BF16, qs::ElementType::F16}) {
            Case c;
            c.type = type;
            c.shape = shape;
            std::int64_t n = 1;
            for (const std::int64_t d : shape) n *= d;
            for (std::int64_t i = 0; i < n; ++i) c.bits.push_back(random_pattern(type, rng, 2));
            c.config.dtype = qs::IntType{false, 16};  // the largest codes: the int32 column sums' limit
            c.config.mode = qs::Mode::Manual;
            c.config.manual_scale = 1.0 / 256;
            c.config.manual_zero_point = pick(rng, 0, 1) ? 65535 : 32768;
            plant_ties(c, rng);
            const qs::TensorView view = c.view();
            const qs::QuantParams params = qs::compute_params(view, c.config);
            for (const std::int64_t max_cells : {std::int64_t{8}, std::int64_t{1} << 20}) {
                const qs::OverviewGrid grid = qs::overview_grid(shape, max_cells);
                const qs::ValueOverview values = qs::overview_values(view, grid);
                for (const bool avx2 : {false, true}) {
                    CAPTURE(shape[0]);
                    CAPTURE(static_cast<int>(type));
                    CAPTURE(max_cells);
                    CAPTURE(avx2);
                    qs::use_avx2_overview(avx2);
                    const qs::QuantOverview o = qs::quantize_overview(view, params, c.config, grid, &values);
                    qs::use_avx2_overview(false);
                    CHECK(differences(o, view, params, c.config) == 0);
                }
            }
        }
}
