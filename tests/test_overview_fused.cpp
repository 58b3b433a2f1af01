// The window's overview of an integer quantization is one fused pass that folds each element's results as it
// computes them: its metrics must be quantize_view's to the bit, and its counts, block means and maxima those
// of quantize_view's full outputs folded by hand, for every stored type, ragged shapes (rows that are not a
// multiple of eight elements, blocks cut short at the edges, work items across rows) and layouts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

namespace {

// The tensor's values stored as `type` (bf16 and f16 by truncating float32's bits: any finite pattern will do).
std::vector<std::uint8_t> stored_as(const std::vector<float>& values, qs::ElementType type) {
    std::vector<std::uint8_t> out(values.size() * qs::element_size(type));
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &values[i], 4);
        if (type == qs::ElementType::F32) std::memcpy(&out[4 * i], &values[i], 4);
        if (type == qs::ElementType::F64) {
            const double d = values[i];
            std::memcpy(&out[8 * i], &d, 8);
        }
        if (type == qs::ElementType::BF16) {
            const auto h = static_cast<std::uint16_t>(bits >> 16);
            std::memcpy(&out[2 * i], &h, 2);
        }
        if (type == qs::ElementType::F16) {
            // |r| < 8 (normal, std 1) as a half: sign, a 5-bit exponent from float32's, 10 mantissa bits.
            const std::uint32_t exponent = (bits >> 23) & 0xff, sign = (bits >> 16) & 0x8000;
            const std::uint32_t e = exponent < 113 ? 0 : exponent - 112;  // tiny values: a half subnormal pattern
            const auto h = static_cast<std::uint16_t>(sign | (std::min<std::uint32_t>(e, 30) << 10) | ((bits >> 13) & 0x3ff));
            std::memcpy(&out[2 * i], &h, 2);
        }
    }
    return out;
}

struct Reference {
    qs::Metrics metrics;
    std::vector<std::int32_t> codes;
    std::vector<float> dequantized, error;
};

// What the overview is checked against: quantize_view's metrics and its full outputs.
Reference reference_of(const qs::TensorView& view, const qs::QuantParams& params, const qs::QuantConfig& config) {
    const auto n = static_cast<std::size_t>(view.numel());
    Reference ref;
    ref.codes.resize(n);
    ref.dequantized.resize(n);
    ref.error.resize(n);
    ref.metrics = qs::quantize_view(view, params, config,
                                    qs::QuantOutputs{ref.codes.data(), ref.dequantized.data(), ref.error.data()});
    return ref;
}

// The window's pass on a bf16/f16 tensor with one (s, z) adds the metrics' sums pattern by pattern (counts
// times terms): the same values up to the order of addition.
void check_metrics_close(const qs::Metrics& a, const qs::Metrics& b) {
    const auto close = [](double x, double y) { return x == doctest::Approx(y).epsilon(1e-12); };
    CHECK(a.count == b.count);
    CHECK(close(a.mse, b.mse));
    CHECK(close(a.mae, b.mae));
    CHECK(a.max_abs_error == b.max_abs_error);
    CHECK(close(a.l2_error, b.l2_error));
    CHECK(a.sqnr_db.has_value() == b.sqnr_db.has_value());
    if (a.sqnr_db && b.sqnr_db) CHECK(close(*a.sqnr_db, *b.sqnr_db));
    CHECK(a.clipped == b.clipped);
    CHECK(a.levels_used == b.levels_used);
    CHECK(a.levels_total == b.levels_total);
    CHECK(close(a.sum, b.sum));
    CHECK(close(a.signal_energy, b.signal_energy));
}

void check_metrics_equal(const qs::Metrics& a, const qs::Metrics& b) {
    CHECK(a.count == b.count);
    CHECK(a.mse == b.mse);
    CHECK(a.rmse == b.rmse);
    CHECK(a.mae == b.mae);
    CHECK(a.max_abs_error == b.max_abs_error);
    CHECK(a.l2_error == b.l2_error);
    CHECK(a.sqnr_db == b.sqnr_db);
    CHECK(a.clipped == b.clipped);
    CHECK(a.levels_used == b.levels_used);
    CHECK(a.levels_total == b.levels_total);
    CHECK(a.sum == b.sum);
    CHECK(a.signal_energy == b.signal_energy);
    CHECK(a.error_energy == b.error_energy);
}

// The overview folded by hand from full outputs: per block the sums over its columns of each column's sum over
// the block's rows (in double, the order the pass adds r'), the largest error, the code counts.
void check_against_outputs(const qs::QuantOverview& o, const Reference& ref, const qs::OverviewGrid& g,
                           const qs::QuantConfig& config, bool one_block) {
    const std::int32_t q_min = config.dtype.q_min();
    std::vector<std::int64_t> counts(static_cast<std::size_t>(config.dtype.levels()), 0);
    for (std::int32_t q : ref.codes) ++counts[static_cast<std::size_t>(q - q_min)];
    CHECK(o.code_counts == counts);
    std::size_t worst = 0;
    for (std::size_t i = 0; i < ref.error.size(); ++i)
        if (ref.error[i] > ref.error[worst]) worst = i;
    CHECK(o.error_argmax == static_cast<std::int64_t>(worst));
    CHECK(o.code_lo == *std::min_element(ref.codes.begin(), ref.codes.end()));
    CHECK(o.code_hi == *std::max_element(ref.codes.begin(), ref.codes.end()));
    if (!one_block) {
        CHECK(o.dequantized_lo == *std::min_element(ref.dequantized.begin(), ref.dequantized.end()));
        CHECK(o.dequantized_hi == *std::max_element(ref.dequantized.begin(), ref.dequantized.end()));
    }
    int bad_blocks = 0;
    for (std::int64_t s = 0; s < g.slices; ++s)
        for (std::int64_t orow = 0; orow < g.out_rows(); ++orow)
            for (std::int64_t oc = 0; oc < g.out_cols(); ++oc) {
                const std::int64_t r0 = orow * g.fy, r1 = std::min(g.rows, r0 + g.fy);
                const std::int64_t c0 = oc * g.fx, c1 = std::min(g.cols, c0 + g.fx);
                double codes = 0, deq = 0;
                float err = 0;
                for (std::int64_t c = c0; c < c1; ++c) {
                    double column = 0;
                    for (std::int64_t r = r0; r < r1; ++r) {
                        const auto i = static_cast<std::size_t>((s * g.rows + r) * g.cols + c);
                        codes += ref.codes[i];
                        column += ref.dequantized[i];
                        err = std::max(err, ref.error[i]);
                    }
                    deq += column;
                }
                const double cells = static_cast<double>((r1 - r0) * (c1 - c0));
                const auto b = static_cast<std::size_t>(s * g.cells_per_slice() + orow * g.out_cols() + oc);
                const bool same = o.codes_mean[b] == static_cast<float>(codes / cells) && o.error_max[b] == err &&
                                  (one_block || o.dequantized_mean[b] == static_cast<float>(deq / cells));
                bad_blocks += same ? 0 : 1;
            }
    CHECK(bad_blocks == 0);
}

qs::QuantConfig config_named(int which) {
    qs::QuantConfig c;
    switch (which) {
        case 0: break;  // int8 asymmetric per tensor
        case 1:
            c.dtype = qs::IntType{true, 4};
            c.mode = qs::Mode::Symmetric;
            c.rounding = qs::Rounding::HalfAway;
            break;
        case 2:
            c.dtype = qs::IntType{false, 8};
            c.granularity = qs::Granularity::Channel;
            c.axis = 0;
            break;
        case 3:
            c.granularity = qs::Granularity::Group;
            c.group_size = 64;
            break;
        case 4: c.dtype = qs::IntType{true, 16}; break;
        case 5:  // manual, a scale small enough to clip most values
            c.mode = qs::Mode::Manual;
            c.manual_scale = 0.004;
            c.manual_zero_point = 3;
            break;
        default:  // manual, a power of two: many r / s + z exactly halfway between two codes (ties)
            c.mode = qs::Mode::Manual;
            c.manual_scale = which == 6 ? 0.125 : 0.25;
            c.manual_zero_point = which == 6 ? 0 : -5;
            c.rounding = which == 6 ? qs::Rounding::HalfEven : qs::Rounding::HalfAway;
    }
    return c;
}

}  // namespace

TEST_CASE("overview of an int quantization folds the outputs of quantize_view in one pass") {
    const std::vector<qs::Shape> shapes = {{300, 1003}, {3, 129, 640}, {130001}, {64, 64}};
    const qs::ElementType types[] = {qs::ElementType::F32, qs::ElementType::BF16, qs::ElementType::F16, qs::ElementType::F64};
    int checked = 0, blocks_checked = 0;
    for (std::size_t si = 0; si < shapes.size(); ++si) {
        qs::RandomSpec spec;
        spec.shape = shapes[si];
        spec.seed = 11 + si;
        spec.outliers = 3;
        const qs::Tensor t = qs::generate_random(spec);
        for (const qs::ElementType type : types) {
            const std::vector<std::uint8_t> bytes = stored_as(t.values, type);
            qs::TensorView view;
            view.shape = t.shape;
            view.type = type;
            view.data = bytes.data();
            for (int which = 0; which < 8; ++which) {
                const qs::QuantConfig config = config_named(which);
                qs::QuantParams params;
                try {
                    params = qs::compute_params(view, config);
                } catch (const qs::Error&) {
                    continue;  // a layout this shape does not have (groups of 64 of 1003 columns)
                }
                for (const std::int64_t max_cells : {std::int64_t{1} << 20, std::int64_t{999}}) {
                    CAPTURE(si);
                    CAPTURE(static_cast<int>(type));
                    CAPTURE(which);
                    CAPTURE(max_cells);
                    const qs::OverviewGrid grid = qs::overview_grid(t.shape, max_cells);
                    const Reference ref = reference_of(view, params, config);
                    const qs::ValueOverview values = qs::overview_values(view, grid);
                    const bool one_block = params.block_count == 1;
                    for (const bool avx2 : {false, true})  // AVX-512 kernels where the machine has them, then AVX2
                        for (const qs::ValueOverview* with : {static_cast<const qs::ValueOverview*>(nullptr), &values}) {
                            CAPTURE(avx2);
                            qs::use_avx2_overview(avx2);
                            const qs::QuantOverview o = qs::quantize_overview(view, params, config, grid, with);
                            qs::use_avx2_overview(false);
                            const bool by_patterns = with && one_block && !with->bit_counts.empty();
                            if (by_patterns) check_metrics_close(o.metrics, ref.metrics);
                            else check_metrics_equal(o.metrics, ref.metrics);
                            check_against_outputs(o, ref, grid, config, one_block);
                        }
                    // The slider's blocks-only pass: the full pass's heatmaps and ranges to the bit, where it applies
                    // (AVX-512; (s, z) constant over runs of 64; not float64), and nothing else.
                    if (qs::QuantOverview b; qs::quantize_overview_blocks(view, params, config, grid, values, b)) {
                        CHECK(type != qs::ElementType::F64);
                        CHECK(b.blocks_only);
                        const qs::QuantOverview full = qs::quantize_overview(view, params, config, grid, &values);
                        CHECK(b.codes_mean == full.codes_mean);
                        CHECK(b.dequantized_mean == full.dequantized_mean);
                        CHECK(b.error_max == full.error_max);
                        CHECK(b.code_lo == full.code_lo);
                        CHECK(b.code_hi == full.code_hi);
                        CHECK(b.dequantized_lo == full.dequantized_lo);
                        CHECK(b.dequantized_hi == full.dequantized_hi);
                        CHECK(b.metrics.max_abs_error == full.metrics.max_abs_error);
                        CHECK(b.code_counts.empty());
                        ++blocks_checked;
                    }
                    // The general pass (the portable kernel turns the fused one off) folds the same figures.
                    // (Its piece cutter refuses channels of axis 0 of a 3-D tensor whose slices are smaller
                    // than a piece, a known defect of that pass: skipped here.)
                    qs::use_portable_kernel(true);
                    try {
                        const qs::QuantOverview general = qs::quantize_overview(view, params, config, grid);
                        check_against_outputs(general, ref, grid, config, one_block);
                    } catch (const qs::Error&) {
                        CHECK((shapes[si].size() == 3 && config.granularity == qs::Granularity::Channel));
                    }
                    qs::use_portable_kernel(false);
                    ++checked;
                }
            }
        }
    }
    CHECK(checked > 100);
#ifdef __AVX512F__
    CHECK(blocks_checked > 50);  // the blocks-only pass ran on this machine
#endif
}

TEST_CASE("values overview of a 16-bit view counts every bit pattern") {
    qs::RandomSpec spec;
    spec.shape = {77, 301};
    spec.seed = 5;
    const qs::Tensor t = qs::generate_random(spec);
    for (const qs::ElementType type : {qs::ElementType::BF16, qs::ElementType::F16, qs::ElementType::F32}) {
        const std::vector<std::uint8_t> bytes = stored_as(t.values, type);
        qs::TensorView view;
        view.shape = t.shape;
        view.type = type;
        view.data = bytes.data();
        const qs::ValueOverview v = qs::overview_values(view, qs::overview_grid(t.shape, 500));
        if (type == qs::ElementType::F32) {
            CHECK(v.bit_counts.empty());
            continue;
        }
        std::vector<std::int64_t> counts(std::size_t{1} << 16, 0);
        for (std::size_t i = 0; i < t.values.size(); ++i) ++counts[bytes[2 * i] | (bytes[2 * i + 1] << 8)];
        CHECK(v.bit_counts == counts);
        const qs::Tensor decoded = qs::materialize(view);
        const auto lo = std::min_element(decoded.values.begin(), decoded.values.end());
        const auto hi = std::max_element(decoded.values.begin(), decoded.values.end());
        CHECK(v.lo == *lo);
        CHECK(v.hi == *hi);
        CHECK(v.argmin == lo - decoded.values.begin());
        CHECK(v.argmax == hi - decoded.values.begin());
    }
}

namespace {

// A bf16 or f16 view of raw 16-bit patterns (so a test can plant subnormals, +-0, the largest finite).
struct Patterns {
    std::vector<std::uint16_t> bits;
    qs::TensorView view(const qs::Shape& shape, qs::ElementType type) const {
        qs::TensorView v;
        v.shape = shape;
        v.type = type;
        v.data = reinterpret_cast<const std::uint8_t*>(bits.data());
        return v;
    }
};

Patterns hostile_patterns(int which, std::size_t n, qs::ElementType type) {
    const bool bf = type == qs::ElementType::BF16;
    const std::uint16_t one = bf ? 0x3f80 : 0x3c00, max_finite = bf ? 0x7f7f : 0x7bff;
    Patterns p;
    p.bits.resize(n);
    qs::RandomSpec spec;
    spec.shape = {static_cast<std::int64_t>(n)};
    spec.seed = 3 + which;
    const qs::Tensor t = qs::generate_random(spec);
    for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t b = one;
        switch (which) {
            case 0: break;  // all equal
            case 1: b = i % 2 ? 0x8000 : 0x0000; break;  // +-0 only
            case 2: b = static_cast<std::uint16_t>((i % 127 + 1) | (i % 3 ? 0x8000 : 0)); break;  // subnormals
            case 3: b = static_cast<std::uint16_t>(i % 5 == 0 ? max_finite : i % 5 == 1 ? (max_finite | 0x8000) : one); break;
            default: {  // normal values, a few subnormals and the largest finite
                std::uint32_t f;
                std::memcpy(&f, &t.values[i], 4);
                b = bf ? static_cast<std::uint16_t>(f >> 16) : static_cast<std::uint16_t>(i % 2 ? 0x3555 : 0xb401);
                if (i % 97 == 5) b = 0x0003;
                if (i == 7) b = max_finite;
            }
        }
        p.bits[i] = b;
    }
    return p;
}

}  // namespace

TEST_CASE("overview by bit patterns equals quantize_view on hostile tensors and manual scales") {
    const double tiny = static_cast<double>(std::numeric_limits<float>::min());
    const double huge = static_cast<double>(std::numeric_limits<float>::max());
    const double scales[] = {tiny, 1e-30, 1e-3, 0.125, 1.0, 3.0, 1e30, 1e38, huge};
    const qs::IntType dtypes[] = {qs::IntType{true, 8}, qs::IntType{false, 4}, qs::IntType{true, 16}};
    int checked = 0;
    for (const qs::ElementType type : {qs::ElementType::BF16, qs::ElementType::F16})
        for (int which = 0; which < 5; ++which)
            for (const std::size_t n : {std::size_t{1}, std::size_t{4099}}) {
                const Patterns p = hostile_patterns(which, n, type);
                const qs::Shape shape = n == 1 ? qs::Shape{1} : qs::Shape{4099};
                const qs::TensorView view = p.view(shape, type);
                const qs::OverviewGrid grid = qs::overview_grid(shape, 999);
                const qs::ValueOverview values = qs::overview_values(view, grid);
                for (const qs::IntType dtype : dtypes)
                    for (const double s : scales)
                        for (const std::int32_t z : {dtype.q_min(), 0, dtype.q_max()})
                            for (const qs::Rounding rounding : {qs::Rounding::HalfEven, qs::Rounding::HalfAway}) {
                                qs::QuantConfig config;
                                config.dtype = dtype;
                                config.mode = qs::Mode::Manual;
                                config.manual_scale = s;
                                config.manual_zero_point = z;
                                config.rounding = rounding;
                                qs::QuantParams params;
                                try {
                                    params = qs::compute_params(view, config);
                                } catch (const qs::Error&) {
                                    continue;
                                }
                                CAPTURE(static_cast<int>(type));
                                CAPTURE(which);
                                CAPTURE(n);
                                CAPTURE(dtype.bits);
                                CAPTURE(s);
                                CAPTURE(z);
                                const Reference ref = reference_of(view, params, config);
                                for (const bool avx2 : {false, true}) {
                                    CAPTURE(avx2);
                                    qs::use_avx2_overview(avx2);
                                    const qs::QuantOverview o = qs::quantize_overview(view, params, config, grid, &values);
                                    qs::use_avx2_overview(false);
                                    check_metrics_close(o.metrics, ref.metrics);
                                    check_against_outputs(o, ref, grid, config, true);
                                }
                                ++checked;
                            }
            }
    CHECK(checked > 500);
}
