// A 16-bit tensor's sums from its bit patterns' counts (bit_patterns.hpp).
#include "bit_patterns.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "parallel.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/quantize.hpp"

namespace qs::detail {
namespace {

// Elements a thread counts into its 32-bit table before adding it to its 64-bit one (no count overflows).
constexpr std::int64_t kSpan = std::int64_t{1} << 30;
// Elements between two looks at the cancel flag.
constexpr std::int64_t kPiece = std::int64_t{1} << 20;

bool finite_pattern(ElementType type, std::uint32_t bits) {
    return type == ElementType::BF16 ? (bits & 0x7f80u) != 0x7f80u : (bits & 0x7c00u) != 0x7c00u;
}

// The squared errors' sum of one (s, z) over the table, x[i] = values[i] / s already computed: the quantizer's
// formula term by term (r / s + z, rounded, clamped, r' = s (q - z)), the terms formed in a loop the compiler
// vectorises, then added one after another in pattern order.
template <bool kHalfEven>
double row_sse(const PatternTable& t, const float* x, float s, float z, float q_min, float q_max, float* e) {
    const std::size_t n = t.values.size();
    const float* r = t.values.data();
    for (std::size_t i = 0; i < n; ++i) {
        float v = kHalfEven ? std::nearbyint(x[i] + z) : std::round(x[i] + z);
        v = v < q_min ? q_min : (v > q_max ? q_max : v);
        e[i] = r[i] - s * (v - z);
    }
    double total = 0;
    const double* c = t.counts.data();
    for (std::size_t i = 0; i < n; ++i) total += c[i] * (static_cast<double>(e[i]) * e[i]);
    return total;
}

double row_sse(const PatternTable& t, const float* x, float s, float z, const QuantConfig& config, float* e) {
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    return config.rounding == Rounding::HalfEven ? row_sse<true>(t, x, s, z, q_min, q_max, e)
                                                 : row_sse<false>(t, x, s, z, q_min, q_max, e);
}

void divide(const PatternTable& t, float s, float* x) {
    for (std::size_t i = 0; i < t.values.size(); ++i) x[i] = t.values[i] / s;
}

}  // namespace

std::vector<std::int64_t> count_bit_patterns(const TensorView& view, const PassControl& control) {
    const std::int64_t n = view.numel();
    if (!sixteen_bit(view.type)) return {};
    const int threads = pass_threads(n);
    std::vector<std::vector<std::int64_t>> partial(static_cast<std::size_t>(threads));
    parallel_guarded(view, threads, [&](int thread, int count) {
        std::int64_t begin, end;
        static_share(n, thread, count, begin, end);
        std::vector<std::int64_t>& total = partial[static_cast<std::size_t>(thread)];
        total.assign(kBitPatterns, 0);
        std::vector<std::uint32_t> local(kBitPatterns, 0);
        for (std::int64_t span = begin; span < end; span += kSpan) {
            const std::int64_t span_end = std::min(end, span + kSpan);
            for (std::int64_t piece = span; piece < span_end; piece += kPiece) {
                if (control.cancelled()) return;
                if (thread == 0) control.report(static_cast<float>(piece - begin) / static_cast<float>(end - begin));
                const std::uint8_t* p = view.data + 2 * piece;
                const std::int64_t len = std::min(kPiece, span_end - piece);
                for (std::int64_t i = 0; i < len; ++i) ++local[load_le16(p + 2 * i)];
            }
            for (std::size_t b = 0; b < kBitPatterns; ++b) total[b] += local[b], local[b] = 0;
        }
    });
    if (control.cancelled()) return {};
    std::vector<std::int64_t> counts(kBitPatterns, 0);
    for (const std::vector<std::int64_t>& p : partial)
        for (std::size_t b = 0; b < p.size(); ++b) counts[b] += p[b];
    for (std::size_t b = 0; b < kBitPatterns; ++b)
        if (counts[b] != 0 && !finite_pattern(view.type, static_cast<std::uint32_t>(b)))
            throw_nonfinite(view, first_nonfinite(view));
    control.report(1.0f);
    return counts;
}

PatternTable pattern_table(ElementType type, const std::vector<std::int64_t>& bit_counts) {
    PatternTable t;
    if (bit_counts.size() != kBitPatterns || !sixteen_bit(type)) return t;
    t.lo = std::numeric_limits<float>::infinity();
    t.hi = -t.lo;
    for (std::size_t b = 0; b < kBitPatterns; ++b) {
        if (bit_counts[b] == 0) continue;
        const auto bits = static_cast<std::uint16_t>(b);
        const float r = type == ElementType::BF16 ? bf16_to_float(bits) : half_to_float(bits);
        t.values.push_back(r);
        t.counts.push_back(static_cast<double>(bit_counts[b]));
        t.n += bit_counts[b];
        t.lo = std::min(t.lo, r);
        t.hi = std::max(t.hi, r);
    }
    if (t.values.empty()) t.lo = t.hi = 0;
    return t;
}

double pattern_sse(const PatternTable& table, float s, float z, const QuantConfig& config, std::vector<float>& scratch) {
    scratch.resize(2 * table.values.size());
    float* x = scratch.data();
    divide(table, s, x);
    return row_sse(table, x, s, z, config, x + table.values.size());
}

bool pattern_mse_grid(const PatternTable& table, const QuantConfig& config, const std::vector<double>& scales,
                      const std::vector<std::int32_t>& zero_points, std::vector<double>& mse,
                      const std::atomic<bool>* cancel, const std::function<void(float)>& progress) {
    const auto ns = static_cast<std::int64_t>(scales.size()), nz = static_cast<std::int64_t>(zero_points.size());
    mse.assign(static_cast<std::size_t>(ns * nz), 0.0);
    const auto n = static_cast<double>(table.n);
    const std::int64_t work = static_cast<std::int64_t>(table.values.size()) * ns * nz;
    const int threads = static_cast<int>(std::min<std::int64_t>(ns, pass_threads(work)));
    NextIndex rows(0, ns);
    std::atomic<std::int64_t> done{0};
    parallel_run(nullptr, threads, [&](int thread, int) {
        std::vector<float> x(table.values.size()), e(table.values.size());
        for (std::int64_t si; rows.take(si);) {
            if (cancel && cancel->load(std::memory_order_relaxed)) return;
            const float s = static_cast<float>(scales[static_cast<std::size_t>(si)]);
            divide(table, s, x.data());  // r / s once per scale, for every zero point
            for (std::int64_t zi = 0; zi < nz; ++zi) {
                const float z = static_cast<float>(zero_points[static_cast<std::size_t>(zi)]);
                mse[static_cast<std::size_t>(zi * ns + si)] = row_sse(table, x.data(), s, z, config, e.data()) / n;
            }
            const std::int64_t finished = done.fetch_add(1) + 1;
            if (thread == 0 && progress) progress(static_cast<float>(finished) / static_cast<float>(ns));
        }
    });
    return !(cancel && cancel->load());
}

PatternSummary count_by_patterns(ElementType type, const std::vector<std::int64_t>& bit_counts, const QuantParams& params,
                                 const QuantConfig& config, std::vector<std::int64_t>& counts) {
    const float s = static_cast<float>(params.scale[0]);
    const std::int32_t z = params.zero_point[0], q_min = config.dtype.q_min();
    PatternSummary out;
    for (std::size_t b = 0; b < bit_counts.size(); ++b) {
        if (bit_counts[b] == 0) continue;
        const auto bits = static_cast<std::uint16_t>(b);
        const float r = type == ElementType::BF16 ? bf16_to_float(bits) : half_to_float(bits);
        bool clipped = false;
        const std::int32_t q = quantize_value(r, s, z, config, &clipped);
        const float e = std::abs(r - s * (static_cast<float>(q) - static_cast<float>(z)));
        const auto c = static_cast<double>(bit_counts[b]);
        counts[static_cast<std::size_t>(q - q_min)] += bit_counts[b];
        if (clipped) out.clipped += bit_counts[b];
        out.sums.sum_sq_err += c * (static_cast<double>(e) * e);
        out.sums.sum_abs_err += c * e;
        out.sums.sum_sq_r += c * (static_cast<double>(r) * r);
        out.sums.sum_r += c * r;
        out.max_err = std::max(out.max_err, e);
        out.max_abs_r = std::max(out.max_abs_r, std::abs(r));
    }
    return out;
}

bool metrics_by_patterns(const TensorView& view, const QuantConfig& config) {
    return sixteen_bit(view.type) && view.numel() > 0 && is_int_format(config.format) &&
           config.granularity == Granularity::Tensor && config.overflow == Overflow::Clamp &&
           config.active_naive_norm() == 0 && config.dtype.levels() <= kMaxCountedLevels;
}

void pattern_params(const TensorView& view, const PatternTable& table, const QuantConfig& config, double& scale,
                    std::int32_t& zero_point) {
    if (config.mode == Mode::Manual) {
        scale = config.manual_scale;
        zero_point = config.manual_zero_point;
    } else if (config.calibration == Calibration::Mse) {
        pattern_mse_params(view, table, config, scale, zero_point);
    } else if (config.calibration == Calibration::Percentile) {
        params_from_range(pattern_percentile_range(table, config), config, scale, zero_point);
    } else {
        const double m = std::max(std::abs(static_cast<double>(table.lo)), std::abs(static_cast<double>(table.hi)));
        params_from_range(config.mode == Mode::Symmetric ? ValueRange{-m, m} : ValueRange{table.lo, table.hi}, config,
                          scale, zero_point);
    }
}

Quantization quantize_by_patterns(const TensorView& view, const QuantConfig& config, const std::vector<std::int64_t>* bit_counts,
                                  const PassControl& control) {
    Quantization q;
    check_config(config, view.shape);
    set_block_layout(view.shape, config, q.params);
    std::vector<std::int64_t> counted;
    if (bit_counts == nullptr || bit_counts->size() != kBitPatterns) {
        counted = count_bit_patterns(view, control);
        if (control.cancelled()) return q;
        bit_counts = &counted;
    }
    const PatternTable table = pattern_table(view.type, *bit_counts);
    q.range = {table.lo, table.hi};
    q.params.scale.assign(1, 1.0);
    q.params.zero_point.assign(1, 0);
    pattern_params(view, table, config, q.params.scale[0], q.params.zero_point[0]);
    const std::int64_t levels = config.dtype.levels();
    std::vector<std::int64_t> counts(static_cast<std::size_t>(levels), 0);
    const PatternSummary p = count_by_patterns(view.type, *bit_counts, q.params, config, counts);
    const auto used = std::count_if(counts.begin(), counts.end(), [](std::int64_t c) { return c > 0; });
    q.metrics = metrics_from_sums(p.sums, table.n, p.max_err, p.clipped, used, levels);
    return q;
}

}  // namespace qs::detail
