// The slider's blocks-only pass with the layout's ranges (quantize_overview_blocks(..., ranges)): a bf16 row with
// its own (s, z) takes a lean kernel (a reciprocal verified from the row's range, no per-element check or clamp)
// or quantize's division. Each element must still get quantize's code: rows are filled with the bf16 values
// nearest every code boundary (where a reciprocal and the true division round apart, and where a boundary falls
// exactly on a bf16 value: a tie) and checked one element per heatmap cell against the full pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/random.hpp"

namespace {

std::uint16_t bf16_bits(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return static_cast<std::uint16_t>(b >> 16);
}

// Rows of `cols` bf16 values: each row's range [lo, hi] first (some with a "round" range, whose scale is a
// short binary fraction and whose boundaries land on bf16 values), random values between, then around every
// boundary of that row's (s, z) the five bf16 patterns nearest it.
std::vector<std::uint16_t> boundary_rows(std::int64_t rows, std::int64_t cols, const qs::QuantConfig& config, unsigned seed) {
    qs::RandomSpec spec;
    spec.shape = {rows, cols};
    spec.seed = seed;
    const qs::Tensor noise = qs::generate_random(spec);
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * cols));
    for (std::int64_t r = 0; r < rows; ++r) {
        const auto at = [&](std::int64_t c) -> std::uint16_t& { return bits[static_cast<std::size_t>(r * cols + c)]; };
        // Ranges: random, symmetric round (+-k/32), or one-sided.
        float lo = -1.0f - static_cast<float>(r % 7) * 0.37f, hi = 0.5f + static_cast<float>(r % 5) * 0.61f;
        if (r % 3 == 0) hi = static_cast<float>(8 + r % 40) / 32.0f, lo = -hi;
        if (r % 11 == 0) lo = 0.25f, hi = 3.0f;
        lo = qs::bf16_to_float(bf16_bits(lo)), hi = qs::bf16_to_float(bf16_bits(hi));
        for (std::int64_t c = 0; c < cols; ++c) {
            const float v = lo + (hi - lo) * (0.5f + 0.15f * noise.values[static_cast<std::size_t>(r * cols + c)]);
            at(c) = bf16_bits(std::fmin(std::fmax(v, lo), hi));
        }
        at(0) = bf16_bits(lo);
        at(1) = bf16_bits(hi);
        // This row's (s, z) as the layout computes them (per tensor on the row alone gives the same pair).
        qs::Tensor row;
        row.shape = {2};
        row.values = {lo, hi};
        qs::QuantConfig one = config;
        one.granularity = qs::Granularity::Tensor;
        const qs::QuantParams p = qs::compute_params(row, one);
        const double s = p.scale[0], z = p.zero_point[0];
        std::int64_t c = 2;
        for (std::int32_t k = config.dtype.q_min(); k < config.dtype.q_max() && c + 5 <= cols; ++k) {
            const float b = static_cast<float>(s * (k + 0.5 - z));
            const std::uint16_t t = bf16_bits(b);
            for (int step = -2; step <= 2; ++step) {
                const std::uint16_t pattern = static_cast<std::uint16_t>(t + step);
                const float v = qs::bf16_to_float(pattern);
                if (v >= lo && v <= hi) at(c++) = pattern;
            }
        }
    }
    return bits;
}

// The lean kernel adds up to 8 rows' r' in float32 before the float64 column sums: a block's mean r' may differ from
// the full pass's by float32 rounding, at most 2^-21 of the largest |r'| (7 additions of terms up to 8 max|r'|, each
// rounded by 2^-24, over the 8 elements a column adds per group), plus the mean's own float rounding; the tightest
// bound is about 4.4 2^-24, and what is measured is 100 to 1000 times under this one: the check catches a row lost
// or added twice, not a little more rounding. Everything else keeps the full pass's bits.
void check_dequantized_means(const qs::QuantOverview& lean, const qs::QuantOverview& full) {
    REQUIRE(lean.dequantized_mean.size() == full.dequantized_mean.size());
    const double largest = std::max(std::abs(full.dequantized_lo), std::abs(full.dequantized_hi));
    if (largest == 0) {  // every r' is 0: nothing to round
        CHECK(lean.dequantized_mean == full.dequantized_mean);
        return;
    }
    double worst = 0;
    int differ = 0;
    for (std::size_t k = 0; k < full.dequantized_mean.size(); ++k) {
        const double a = lean.dequantized_mean[k], b = full.dequantized_mean[k];
        const double ulp = std::nextafter(static_cast<float>(std::abs(b)), INFINITY) - std::abs(b);
        worst = std::max(worst, (std::abs(a - b) - ulp) / largest);
        differ += a != b;
    }
    CHECK(worst <= 0x1p-21);
    MESSAGE("blocks whose mean r' differs from the full pass's: " << differ << " of " << full.dequantized_mean.size());
}

}  // namespace

TEST_CASE("slider pass with the ranges: every bf16 value near a code boundary gets quantize's code") {
    const std::int64_t rows = 512, cols = 2048;  // one element per heatmap cell: 2^20 cells
    std::vector<qs::QuantConfig> configs;
    for (const int bits : {2, 4, 8})
        for (const bool is_signed : {true, false})
            for (const qs::Mode mode : {qs::Mode::Asymmetric, qs::Mode::Symmetric})
                for (const qs::Rounding rounding : {qs::Rounding::HalfEven, qs::Rounding::HalfAway}) {
                    if (mode == qs::Mode::Symmetric && !is_signed) continue;
                    qs::QuantConfig c;
                    c.dtype = qs::IntType{is_signed, bits};
                    c.mode = mode;
                    c.rounding = rounding;
                    c.granularity = qs::Granularity::Channel;
                    c.axis = 0;
                    configs.push_back(c);
                }
    int compared = 0;
    for (std::size_t i = 0; i < configs.size(); ++i) {
        const qs::QuantConfig& config = configs[i];
        CAPTURE(config.dtype.name());
        CAPTURE(static_cast<int>(config.mode));
        CAPTURE(static_cast<int>(config.rounding));
        const std::vector<std::uint16_t> bits = boundary_rows(rows, cols, config, 40 + static_cast<unsigned>(i));
        qs::TensorView view;
        view.shape = {rows, cols};
        view.type = qs::ElementType::BF16;
        view.data = reinterpret_cast<const std::uint8_t*>(bits.data());
        const std::shared_ptr<const qs::BlockRanges> ranges = qs::block_ranges_for(view, config);
        REQUIRE(ranges.get() != nullptr);
        const qs::QuantParams params = qs::params_from_ranges(*ranges, view.shape, config);
        // Coarse blocks too (16 rows a block): a band's rows sorted by way and run 8 at a time, fixes and divisions
        // among them; there r' is compared within check_dequantized_means' bound, the rest to the bit.
        const qs::OverviewGrid coarse = qs::overview_grid(view.shape, std::int64_t{1} << 11);
        REQUIRE(coarse.fy >= 8);
        const qs::ValueOverview coarse_values = qs::overview_values(view, coarse);
        qs::QuantOverview grouped;
        if (!qs::quantize_overview_blocks(view, params, config, coarse, coarse_values, grouped, ranges.get())) continue;  // no AVX-512
        const qs::QuantOverview coarse_full = qs::quantize_overview(view, params, config, coarse, &coarse_values);
        CHECK(grouped.codes_mean == coarse_full.codes_mean);
        CHECK(grouped.error_max == coarse_full.error_max);
        CHECK(grouped.code_lo == coarse_full.code_lo);
        CHECK(grouped.code_hi == coarse_full.code_hi);
        CHECK(grouped.dequantized_lo == coarse_full.dequantized_lo);
        CHECK(grouped.dequantized_hi == coarse_full.dequantized_hi);
        CHECK(grouped.metrics.max_abs_error == coarse_full.metrics.max_abs_error);
        check_dequantized_means(grouped, coarse_full);
        const qs::OverviewGrid grid = qs::overview_grid(view.shape, std::int64_t{1} << 20);
        REQUIRE(grid.cells() == rows * cols);
        const qs::ValueOverview values = qs::overview_values(view, grid);
        qs::QuantOverview lean;
        if (!qs::quantize_overview_blocks(view, params, config, grid, values, lean, ranges.get())) continue;  // no AVX-512
        const qs::QuantOverview full = qs::quantize_overview(view, params, config, grid, &values);
        std::int64_t wrong_codes = 0, wrong_deq = 0, wrong_err = 0;
        for (std::size_t k = 0; k < full.codes_mean.size(); ++k) {
            wrong_codes += lean.codes_mean[k] != full.codes_mean[k];
            wrong_deq += lean.dequantized_mean[k] != full.dequantized_mean[k];
            wrong_err += lean.error_max[k] != full.error_max[k];
        }
        CHECK(wrong_codes == 0);
        CHECK(wrong_deq == 0);  // one row a block: r' too to the bit
        CHECK(wrong_err == 0);
        CHECK(lean.code_lo == full.code_lo);
        CHECK(lean.code_hi == full.code_hi);
        CHECK(lean.dequantized_lo == full.dequantized_lo);
        CHECK(lean.dequantized_hi == full.dequantized_hi);
        CHECK(lean.metrics.max_abs_error == full.metrics.max_abs_error);
        ++compared;
    }
#ifdef __AVX512F__
    CHECK(compared == static_cast<int>(configs.size()));
#endif
}

TEST_CASE("slider pass with the ranges: the heatmaps of a large per-channel bf16 view agree with the full pass's") {
    // Many elements per cell, a ragged row (not a multiple of 16), and ranges of another layout (ignored).
    qs::RandomSpec spec;
    spec.shape = {700, 1003};
    spec.seed = 9;
    spec.outliers = 3;
    const qs::Tensor t = qs::generate_random(spec);
    std::vector<std::uint16_t> bits(t.values.size());
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = bf16_bits(t.values[i]);
    qs::TensorView view;
    view.shape = t.shape;
    view.type = qs::ElementType::BF16;
    view.data = reinterpret_cast<const std::uint8_t*>(bits.data());
    qs::QuantConfig config;
    config.dtype = qs::IntType{true, 4};
    config.granularity = qs::Granularity::Channel;
    config.axis = 0;
    qs::QuantConfig groups = config;
    groups.granularity = qs::Granularity::Group;
    groups.group_size = 17;
    const auto ranges = qs::block_ranges_for(view, config), other = qs::block_ranges_for(view, groups);
    const qs::QuantParams params = qs::params_from_ranges(*ranges, view.shape, config);
    for (const std::int64_t max_cells : {std::int64_t{999}, std::int64_t{40000}}) {
        const qs::OverviewGrid grid = qs::overview_grid(view.shape, max_cells);
        const qs::ValueOverview values = qs::overview_values(view, grid);
        qs::QuantOverview with, without, wrong_layout;
        if (!qs::quantize_overview_blocks(view, params, config, grid, values, with, ranges.get())) continue;  // no AVX-512
        REQUIRE(qs::quantize_overview_blocks(view, params, config, grid, values, without));
        REQUIRE(qs::quantize_overview_blocks(view, params, config, grid, values, wrong_layout, other.get()));
        check_dequantized_means(with, without);
        CHECK(wrong_layout.dequantized_mean == without.dequantized_mean);  // no ranges: the checked kernel
        for (const qs::QuantOverview* o : {&with, &wrong_layout}) {
            CHECK(o->codes_mean == without.codes_mean);
            CHECK(o->error_max == without.error_max);
            CHECK(o->code_lo == without.code_lo);
            CHECK(o->code_hi == without.code_hi);
            CHECK(o->dequantized_lo == without.dequantized_lo);
            CHECK(o->dequantized_hi == without.dequantized_hi);
            CHECK(o->metrics.max_abs_error == without.metrics.max_abs_error);
        }
    }
}

// The plan itself, against every bf16 value of a row's range: where it says the row is verified, the lean code
// (or the fix it keeps) is quantize's for each of them. Rows with round ranges (boundaries on bf16 values, ties)
// and random ones; the plan must verify most rows, keep fixes for some and refuse some, or this proves little.
#include "../core/view/src/overview_verified_rows.hpp"

TEST_CASE("a row's lean plan gives quantize's code for every bf16 value of its range") {
    int fast = 0, with_fixes = 0, refused = 0;
    qs::RandomSpec spec;
    spec.shape = {4000};
    spec.seed = 77;
    const qs::Tensor noise = qs::generate_random(spec);
    for (int row = 0; row < 400; ++row) {
        const float u = noise.values[static_cast<std::size_t>(row * 2)], w = noise.values[static_cast<std::size_t>(row * 2 + 1)];
        float lo = -0.5f - std::abs(u), hi = 0.3f + std::abs(w);
        if (row % 4 == 0) hi = static_cast<float>(8 + row % 40) / 32.0f, lo = -hi;  // round ranges: ties
        if (row % 9 == 0) lo = 0.125f, hi = 2.5f + std::abs(u);                   // one-sided
        lo = qs::bf16_to_float(bf16_bits(lo)), hi = qs::bf16_to_float(bf16_bits(hi));
        qs::QuantConfig config;
        config.dtype = qs::IntType{row % 3 != 2, row % 5 == 0 ? 8 : row % 5 == 1 ? 2 : 4};
        config.mode = row % 7 == 3 && config.dtype.is_signed ? qs::Mode::Symmetric : qs::Mode::Asymmetric;
        config.rounding = row % 2 ? qs::Rounding::HalfAway : qs::Rounding::HalfEven;
        qs::Tensor t;
        t.shape = {2};
        t.values = {lo, hi};
        const qs::QuantParams p = qs::compute_params(t, config);
        const auto s = static_cast<float>(p.scale[0]);
        const std::int32_t z = p.zero_point[0];
        const qs::detail::RowPlan plan = qs::detail::plan_bf16_row(lo, hi, s, z, config);
        CHECK(plan.code_lo == qs::quantize_value(lo, s, z, config));
        CHECK(plan.code_hi == qs::quantize_value(hi, s, z, config));
        if (!plan.fast) {
            ++refused;
            continue;
        }
        ++fast;
        with_fixes += plan.fixes();
        // Every bf16 pattern of [lo, hi], in value order: negative magnitudes down to 0, then positive up.
        std::int64_t wrong = 0;
        for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
            const float v = qs::bf16_to_float(static_cast<std::uint16_t>(bits));
            if (!(v >= lo && v <= hi)) continue;
            float code = qs::detail::lean_code(v, plan.inv, plan.z);
            for (int f = 0; f < 2; ++f)
                if (v == plan.fix_value[f]) code = plan.fix_offset[f] + plan.z;
            wrong += code != static_cast<float>(qs::quantize_value(v, s, z, config));
        }
        CAPTURE(row);
        CHECK(wrong == 0);
    }
    MESSAGE("rows verified " << fast << " (with fixes " << with_fixes << "), refused " << refused);
    CHECK(fast > 200);
    CHECK(with_fixes > 10);
    CHECK(refused > 0);
}
