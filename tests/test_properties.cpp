// Properties of the quantizer on many random tensors, dtypes and granularities.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "quantscope/error.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

struct Case {
    RandomSpec spec;
    QuantConfig config;
};

// A deterministic spread of shapes, distributions, types, modes and granularities.
std::vector<Case> cases() {
    std::vector<Case> out;
    const std::vector<Shape> shapes{{1}, {7}, {3, 3}, {5, 64}, {4, 16, 8}, {2, 3, 128}, {130, 70}, {64, 4096}};
    std::uint64_t seed = 1;
    for (const Shape& shape : shapes)
        for (int bits : {2, 4, 8, 12, 16})
            for (bool is_signed : {true, false})
                for (Mode mode : {Mode::Asymmetric, Mode::Symmetric}) {
                    if (mode == Mode::Symmetric && !is_signed) continue;
                    Case c;
                    c.spec.shape = shape;
                    c.spec.seed = seed++;
                    c.spec.distribution = seed % 2 ? Distribution::Normal : Distribution::Uniform;
                    c.spec.mean = (seed % 5) - 2.0;
                    c.spec.std = 0.01 + (seed % 7);
                    c.spec.low = -3.0 * (seed % 3);
                    c.spec.high = 1.0 + (seed % 4);
                    c.spec.outliers = seed % 4 == 0 ? std::min<std::int64_t>(3, checked_numel(shape)) : 0;
                    c.config.dtype = {is_signed, bits};
                    c.config.mode = mode;
                    c.config.rounding = seed % 3 == 0 ? Rounding::HalfAway : Rounding::HalfEven;
                    out.push_back(c);
                }
    return out;
}

// The reference: every element through the scalar formula with its block's (s, z).
void check_against_scalar(const Tensor& t, const QuantParams& p, const QuantConfig& c, const QuantResult& r) {
    std::int64_t clipped = 0;
    std::set<std::int32_t> codes;
    double sum_sq = 0;
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        double s_block;
        std::int32_t z;
        p.pair(p.block_of(i), s_block, z);
        const float s = static_cast<float>(s_block);
        bool clip = false;
        const std::int32_t q = quantize_value(t.values[i], s, z, c, &clip);
        clipped += clip;
        codes.insert(q);
        const float deq = s * (static_cast<float>(q) - static_cast<float>(z));
        if (r.codes[i] != q || r.dequantized[i] != deq || r.error[i] != std::abs(t.values[i] - deq)) {
            FAIL_CHECK("element " << i << ": got q=" << r.codes[i] << " r'=" << r.dequantized[i] << ", want q=" << q
                                  << " r'=" << deq);
            return;
        }
        sum_sq += double(r.error[i]) * r.error[i];
    }
    CHECK(r.metrics.clipped == clipped);
    CHECK(r.metrics.levels_used == static_cast<std::int64_t>(codes.size()));
    CHECK(r.metrics.mse == doctest::Approx(sum_sq / t.numel()).epsilon(1e-9));
}

}  // namespace

TEST_CASE("properties hold on random tensors for every type / mode and granularity") {
    int checked = 0;
    for (const Case& base : cases()) {
        const Tensor t = generate_random(base.spec);
        std::vector<QuantConfig> configs;
        QuantConfig c = base.config;
        configs.push_back(c);
        for (int axis = 0; axis < t.rank(); ++axis) {
            c = base.config;
            c.granularity = Granularity::Channel;
            c.axis = axis;
            configs.push_back(c);
        }
        for (std::int64_t g : {1, 2, 4, 8, 32, 64, 128}) {
            if (t.cols() % g) continue;
            c = base.config;
            c.granularity = Granularity::Group;
            c.group_size = g;
            configs.push_back(c);
        }
        for (const QuantConfig& config : configs) {
            CAPTURE(shape_to_string(t.shape));
            CAPTURE(config.dtype.name());
            CAPTURE(to_string(config.mode));
            CAPTURE(to_string(config.granularity));
            CAPTURE(config.axis);
            CAPTURE(config.group_size);
            QuantParams p;
            const QuantResult r = quantize(t, config, &p);
            const std::int32_t q_min = config.dtype.q_min(), q_max = config.dtype.q_max();
            // Codes within [q_min, q_max].
            CHECK(*std::min_element(r.codes.begin(), r.codes.end()) >= q_min);
            CHECK(*std::max_element(r.codes.begin(), r.codes.end()) <= q_max);
            // Parameters valid; symmetric means z = 0.
            for (std::int64_t b = 0; b < p.block_count; ++b) {
                double s;
                std::int32_t z;
                p.pair(b, s, z);
                CHECK((std::isfinite(s) && s > 0));
                CHECK((z >= q_min && z <= q_max));
                if (config.mode == Mode::Symmetric) CHECK(z == 0);
            }
            // |r - r'| <= s/2 where nothing clipped (plus float32 rounding of r / s + z and s (q - z)).
            for (std::int64_t i = 0; i < t.numel(); ++i) {
                double s;
                std::int32_t z;
                p.pair(p.block_of(i), s, z);
                bool clipped = false;
                quantize_value(t.values[i], static_cast<float>(s), z, config, &clipped);
                if (clipped) continue;
                const double slack = 1e-5 * (std::abs(t.values[i]) + s * (std::abs(z) + q_max - q_min));
                if (!(r.error[i] <= s / 2 + slack)) {
                    FAIL_CHECK("element " << i << ": error " << r.error[i] << " > s/2 = " << s / 2);
                    break;
                }
            }
            check_against_scalar(t, p, config, r);
            ++checked;
        }
    }
    CHECK(checked > 500);
}

TEST_CASE("per-channel equals per-tensor applied to each channel") {
    RandomSpec spec;
    spec.shape = {3, 5, 70};
    spec.seed = 42;
    const Tensor t = generate_random(spec);
    for (int axis = 0; axis < 3; ++axis)
        for (Mode mode : {Mode::Asymmetric, Mode::Symmetric}) {
            CAPTURE(axis);
            QuantConfig config;
            config.mode = mode;
            config.dtype = {true, 4};
            config.granularity = Granularity::Channel;
            config.axis = axis;
            const QuantResult whole = quantize(t, config);
            QuantConfig per_tensor = config;
            per_tensor.granularity = Granularity::Tensor;
            const std::int64_t channels = t.shape[axis];
            std::int64_t stride = 1;
            for (int k = axis + 1; k < 3; ++k) stride *= t.shape[k];
            for (std::int64_t ch = 0; ch < channels; ++ch) {
                // Gather the channel as its own tensor, quantize it per tensor, compare element by element.
                Tensor channel;
                std::vector<std::int64_t> index;
                for (std::int64_t i = 0; i < t.numel(); ++i)
                    if ((i / stride) % channels == ch) {
                        channel.values.push_back(t.values[i]);
                        index.push_back(i);
                    }
                channel.shape = {channel.numel()};
                const QuantResult alone = quantize(channel, per_tensor);
                std::vector<std::int32_t> from_whole;
                std::vector<float> deq_whole;
                for (auto i : index) {
                    from_whole.push_back(whole.codes[i]);
                    deq_whole.push_back(whole.dequantized[i]);
                }
                test::check_equal(from_whole, alone.codes);
                test::check_equal(deq_whole, alone.dequantized);
            }
        }
}

TEST_CASE("group size G equals per-channel on the reshaped (-1 / G) view") {
    RandomSpec spec;
    spec.shape = {6, 4, 96};
    spec.seed = 7;
    const Tensor t = generate_random(spec);
    for (std::int64_t g : {1, 3, 32, 96}) {
        CAPTURE(g);
        QuantConfig grouped;
        grouped.granularity = Granularity::Group;
        grouped.group_size = g;
        QuantParams pg, pc;
        const QuantResult a = quantize(t, grouped, &pg);
        Tensor reshaped = t;
        reshaped.shape = {t.numel() / g, g};
        QuantConfig channel;
        channel.granularity = Granularity::Channel;
        channel.axis = 0;
        const QuantResult b = quantize(reshaped, channel, &pc);
        test::check_equal(a.codes, b.codes);
        test::check_equal(a.dequantized, b.dequantized);
        CHECK(pg.scale == pc.scale);
        CHECK(pg.zero_point == pc.zero_point);
    }
}

TEST_CASE("half-even and half-away differ only on ties") {
    // With s = 1 and z = 0, r / s + z = r: halves are ties, everything else rounds the same both ways.
    Tensor t;
    for (int k = -40; k <= 40; ++k) t.values.push_back(k * 0.25f);
    t.shape = {t.numel()};
    QuantConfig even;
    even.mode = Mode::Manual;
    even.manual_scale = 1.0;
    even.manual_zero_point = 0;
    QuantConfig away = even;
    away.rounding = Rounding::HalfAway;
    const QuantResult a = quantize(t, even), b = quantize(t, away);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
        const float r = t.values[i];
        const bool tie = r - std::floor(r) == 0.5f;
        CAPTURE(r);
        // On a tie they differ exactly when the even neighbour is the one nearer zero (0.5, 2.5, -2.5...).
        CHECK((a.codes[i] != b.codes[i]) == (tie && std::nearbyint(r) != std::round(r)));
        CHECK(a.codes[i] == static_cast<int>(std::nearbyint(r)));
        CHECK(b.codes[i] == static_cast<int>(std::round(r)));
        if (tie) CHECK(a.codes[i] % 2 == 0);
    }
    // And on random values without ties (the vectorised rounding matches std::round / nearbyint).
    RandomSpec spec;
    spec.shape = {100000};
    spec.std = 300;
    const Tensor big = generate_random(spec);
    even.manual_scale = away.manual_scale = 0.37;
    even.dtype = away.dtype = {true, 16};
    const QuantResult c = quantize(big, even), d = quantize(big, away);
    for (std::int64_t i = 0; i < big.numel(); ++i) {
        const float v = big.values[i] / 0.37f;
        const bool tie = v - std::floor(v) == 0.5f;
        if (c.codes[i] != d.codes[i]) CHECK(tie);
        CHECK(d.codes[i] == std::clamp(static_cast<int>(std::round(v)), -32768, 32767));
    }
}

TEST_CASE("degenerate tensors give finite parameters") {
    for (float value : {0.0f, 5.0f, -5.0f, 1e-30f, 3e38f}) {
        CAPTURE(value);
        Tensor t{{2, 2}, {value, value, value, value}};
        for (IntType type : {IntType{true, 8}, IntType{false, 8}, IntType{true, 2}}) {
            QuantConfig c;
            c.dtype = type;
            QuantParams p;
            const QuantResult r = quantize(t, c, &p);
            CHECK(std::isfinite(p.scale[0]));
            CHECK(p.scale[0] > 0);
            CHECK(std::isfinite(r.dequantized[0]));
            if (value == 0.0f) {
                CHECK(p.scale[0] == 1.0);
                CHECK(p.zero_point[0] == std::clamp(0, type.q_min(), type.q_max()));
                CHECK(r.metrics.mse == 0);
                CHECK(!r.metrics.sqnr_db.has_value());
            } else if (std::abs(value) < 1e30f) {
                // A constant is representable: the range was widened to include 0.
                CHECK(r.dequantized[0] == doctest::Approx(value).epsilon(1e-5));
            }
            if (type.is_signed) {
                c.mode = Mode::Symmetric;
                CHECK_NOTHROW(quantize(t, c, &p));
                CHECK(p.zero_point[0] == 0);
                CHECK(p.scale[0] == (value == 0.0f ? 1.0 : std::max<double>(double(std::abs(value)) / type.q_max(), 1.1754943508222875e-38)));
            }
        }
    }
}

TEST_CASE("asymmetric parameters follow the lessons' formula / clamping the zero point") {
    double s;
    std::int32_t z;
    asymmetric_params(10, 20, {true, 8}, s, z);  // all positive: z = -128 - 10/s < q_min, clamped
    CHECK(s == doctest::Approx(10.0 / 255));
    CHECK(z == -128);
    asymmetric_params(-20, -10, {true, 8}, s, z);  // all negative: z > q_max, clamped
    CHECK(z == 127);
    asymmetric_params(-1, 1, {false, 8}, s, z);
    CHECK(z == 128);  // 0 - (-1)/(2/255) = 127.5 rounds half to even
}

TEST_CASE("bad configurations are refused with clear messages") {
    const Tensor t{{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}};
    auto message = [&](QuantConfig c) -> std::string {
        try {
            quantize(t, c);
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    QuantConfig c;
    c.mode = Mode::Symmetric;
    c.dtype = {false, 8};
    CHECK(message(c).find("signed") != std::string::npos);
    c = {};
    c.mode = Mode::Manual;
    for (double bad : {0.0, -1.0, double(NAN), double(INFINITY), 1e-50}) {
        c.manual_scale = bad;
        CHECK(message(c).find("scale") != std::string::npos);
    }
    c.manual_scale = 1;
    c.manual_zero_point = 128;
    CHECK(message(c).find("zero point 128 is outside [-128, 127]") != std::string::npos);
    c = {};
    c.granularity = Granularity::Group;
    c.group_size = 3;
    CHECK(message(c).find("does not divide") != std::string::npos);
    c = {};
    c.granularity = Granularity::Channel;
    c.axis = 2;
    CHECK(message(c).find("axis 2 is out of range") != std::string::npos);
    Tensor nan_tensor = t;
    nan_tensor.values[5] = NAN;
    CHECK_THROWS_WITH(quantize(nan_tensor, {}), doctest::Contains("NaN at index [1, 1]"));
    nan_tensor.values[5] = -INFINITY;
    CHECK_THROWS_WITH(quantize(nan_tensor, {}), doctest::Contains("-Inf at index [1, 1]"));
}

TEST_CASE("random tensors are reproducible and follow their spec") {
    RandomSpec spec;
    spec.distribution = Distribution::Uniform;
    spec.shape = {4, 128, 256};
    spec.low = -50;
    spec.high = 150;
    spec.pin_range = 3;  // seed 001's recipe
    spec.seed = 3;
    const Tensor a = generate_random(spec), b = generate_random(spec);
    CHECK(a.values == b.values);
    const float max = *std::max_element(a.values.begin() + 3, a.values.end());
    const float min = *std::min_element(a.values.begin() + 3, a.values.end());
    CHECK(min >= -50);
    CHECK(max < 150);
    CHECK(a.values[0] == doctest::Approx(max + 1));
    CHECK(a.values[1] == doctest::Approx(min - 1));
    CHECK(a.values[2] == 0);
    spec.seed = 4;
    CHECK(generate_random(spec).values != a.values);
    RandomSpec normal;
    normal.shape = {200000};
    normal.mean = 3;
    normal.std = 2;
    const Tensor n = generate_random(normal);
    double sum = 0, sq = 0;
    for (float v : n.values) sum += v, sq += double(v) * v;
    const double mean = sum / n.numel();
    CHECK(mean == doctest::Approx(3).epsilon(0.01));
    CHECK(std::sqrt(sq / n.numel() - mean * mean) == doctest::Approx(2).epsilon(0.01));
}

TEST_CASE("outliers are K values at the centre plus or minus F std at seeded positions and signs") {
    RandomSpec spec;
    spec.shape = {64, 64};
    spec.mean = 1;
    spec.std = 2;
    spec.outliers = 5;
    spec.outlier_scale = 8;
    const Tensor a = generate_random(spec);
    const auto outliers = [](const Tensor& t) {
        std::vector<std::int64_t> at;
        for (std::int64_t i = 0; i < t.numel(); ++i)
            if (std::fabs(t.values[static_cast<std::size_t>(i)] - 1.0f) == 16.0f) at.push_back(i);
        return at;
    };
    const std::vector<std::int64_t> where = outliers(a);
    CHECK(where.size() == 5);  // distinct positions, each at 1 +- 8 * 2
    bool up = false, down = false;
    for (std::int64_t i : where) (a.values[static_cast<std::size_t>(i)] > 1 ? up : down) = true;
    spec.outliers = 0;
    const Tensor plain = generate_random(spec);
    std::int64_t changed = 0;
    for (std::int64_t i = 0; i < a.numel(); ++i) changed += a.values[static_cast<std::size_t>(i)] != plain.values[static_cast<std::size_t>(i)];
    CHECK(changed == 5);  // the other values are the same draw
    spec.outliers = 5;
    CHECK(outliers(generate_random(spec)) == where);  // reproducible
    std::vector<std::vector<std::int64_t>> seen;
    for (std::uint64_t seed = 1; seed < 6; ++seed) {
        spec.seed = seed;
        const Tensor t = generate_random(spec);
        seen.push_back(outliers(t));
        for (std::int64_t i : seen.back()) (t.values[static_cast<std::size_t>(i)] > 1 ? up : down) = true;
    }
    CHECK(seen[0] != where);  // other seeds, other positions
    CHECK(up);
    CHECK(down);
    // Uniform: centre (low + high) / 2, std (high - low) / sqrt(12); every element an outlier works too.
    RandomSpec u;
    u.distribution = Distribution::Uniform;
    u.shape = {3, 4};
    u.low = -1;
    u.high = 3;
    u.outliers = 12;
    u.outlier_scale = 3;
    for (float v : generate_random(u).values)
        CHECK(std::fabs(v - 1.0f) == doctest::Approx(3 * 4 / std::sqrt(12.0)));
    u.outlier_scale = 0;
    CHECK_THROWS_AS(generate_random(u), Error);
    u.outlier_scale = 1e40;
    CHECK_THROWS_AS(generate_random(u), Error);
    u.outliers = 13;
    u.outlier_scale = 3;
    CHECK_THROWS_AS(generate_random(u), Error);
}

TEST_CASE("tensors larger than the caches (streaming stores) match the scalar formula") {
    RandomSpec spec;
    spec.shape = {2049, 1031};  // > 8 MiB of floats; not a multiple of 8 or 4096, so chunks have tails
    spec.seed = 11;
    spec.std = 40;
    const Tensor t = generate_random(spec);
    for (Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Group})
        for (Rounding rounding : {Rounding::HalfEven, Rounding::HalfAway}) {
            QuantConfig c;
            c.granularity = g;
            c.axis = 1;
            c.group_size = 1031;
            c.rounding = rounding;
            CAPTURE(to_string(g));
            QuantParams p;
            const QuantResult r = quantize(t, c, &p);
            check_against_scalar(t, p, c, r);
        }
}

TEST_CASE("random specs beyond float32's range are refused / not silently saturated") {
    RandomSpec spec;
    spec.distribution = Distribution::Uniform;
    spec.low = -1e308;  // finite doubles, but high - low overflows and neither is a float32
    spec.high = 1e308;
    CHECK_THROWS_WITH(generate_random(spec), doctest::Contains("float32"));
    spec.low = 0;
    spec.high = 1e39;
    CHECK_THROWS_WITH(generate_random(spec), doctest::Contains("float32"));
    spec.low = -3.4e38;  // the widest range that fits
    spec.high = 3.4e38;
    const Tensor wide = generate_random(spec);
    CHECK_NOTHROW(check_tensor(wide));
    CHECK(std::set<float>(wide.values.begin(), wide.values.end()).size() > 1);
    RandomSpec normal;
    normal.mean = 3.4e38;  // about half the values land beyond FLT_MAX
    normal.std = 1e37;
    CHECK_THROWS_WITH(generate_random(normal), doctest::Contains("outside float32's range"));
    normal.mean = 1e308;
    normal.std = 1;
    CHECK_THROWS_WITH(generate_random(normal), doctest::Contains("at index [0, 0]"));
}

TEST_CASE("the portable (Eigen) pass gives the same bits as the scalar formula") {
    use_portable_kernel(true);
    for (const Case& base : cases()) {
        if (checked_numel(base.spec.shape) > 4096) continue;
        const Tensor t = generate_random(base.spec);
        QuantConfig c = base.config;
        for (Granularity g : {Granularity::Tensor, Granularity::Channel}) {
            c.granularity = g;
            c.axis = t.rank() - 1;
            CAPTURE(shape_to_string(t.shape));
            CAPTURE(c.dtype.name());
            QuantParams p;
            const QuantResult r = quantize(t, c, &p);
            check_against_scalar(t, p, c, r);
        }
    }
    use_portable_kernel(false);
}

TEST_CASE("two configs are equal only when every field is") {
    // One change per field of QuantConfig. A field added to the struct must get a line here and a term in
    // operator== (the size check below fails until then): the window treats an equal config as "nothing
    // changed", so a forgotten field makes its control a silent no-op.
    using Change = void (*)(qs::QuantConfig&);
    const Change changes[] = {
        [](qs::QuantConfig& c) { c.dtype = qs::IntType{true, 4}; },
        [](qs::QuantConfig& c) { c.mode = qs::Mode::Symmetric; },
        [](qs::QuantConfig& c) { c.granularity = qs::Granularity::Channel; },
        [](qs::QuantConfig& c) { c.axis = 1; },
        [](qs::QuantConfig& c) { c.group_size = 32; },
        [](qs::QuantConfig& c) { c.rounding = qs::Rounding::HalfAway; },
        [](qs::QuantConfig& c) { c.overflow = qs::Overflow::Wrap; },
        [](qs::QuantConfig& c) { c.manual_scale = 2.5; },
        [](qs::QuantConfig& c) { c.manual_zero_point = -3; },
        [](qs::QuantConfig& c) { c.calibration = qs::Calibration::Mse; },
        [](qs::QuantConfig& c) { c.percentile = 99.9; },
        [](qs::QuantConfig& c) { c.recompute_scale = true; },
        [](qs::QuantConfig& c) { c.importance = std::make_shared<const std::vector<float>>(4, 1.0f); },
    };
    const qs::QuantConfig base;
    CHECK(base == qs::QuantConfig{});
    for (std::size_t i = 0; i < std::size(changes); ++i) {
        qs::QuantConfig changed = base;
        changes[i](changed);
        INFO("field change " << i);
        CHECK(changed != base);
        CHECK_FALSE(changed == base);
    }
    // Today's fields, padded as GCC lays them out on x86-64: update it together with the list above.
    CHECK(sizeof(qs::QuantConfig) == 88);
    // Importance is compared by its weights, not by which vector holds them.
    qs::QuantConfig a, b;
    a.importance = std::make_shared<const std::vector<float>>(4, 1.0f);
    b.importance = std::make_shared<const std::vector<float>>(4, 1.0f);
    CHECK(a == b);
    b.importance = std::make_shared<const std::vector<float>>(std::vector<float>{1, 1, 1, 2});
    CHECK(a != b);
}
