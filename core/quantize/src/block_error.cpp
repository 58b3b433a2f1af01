// The exact and the histogram-estimated squared error of one block under one (s, z) (block_error.hpp).
#include "block_error.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "bit_patterns.hpp"
#include "parallel.hpp"
#include "quantscope/calibrate.hpp"

namespace qs {
namespace detail {
namespace {

// A histogram has at most this many bins (a quarter of the block's values, at least one).
constexpr std::int64_t kMaxBins = 8192;
// The histogram is built in this many fixed slices and merged in order: the same sums on any thread count.
constexpr int kHistogramSlices = 8;

using ConstMapF = Eigen::Map<const Eigen::ArrayXf>;

// The same for a small block, in eight lanes the compiler vectorises: on a few dozen values an Eigen
// expression costs more than its arithmetic.
template <bool kHalfEven>
double small_block_sse(const float* r, std::int64_t n, float s, float z, float q_min, float q_max) {
    auto error = [=](float v) {
        const float x = v / s + z;
        float q = kHalfEven ? std::nearbyint(x) : std::round(x);
        q = q < q_min ? q_min : (q > q_max ? q_max : q);
        return static_cast<double>(v - s * (q - z));
    };
    double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) {
            const double e = error(r[i + k]);
            lanes[k] += e * e;
        }
    double total = 0;
    for (; i < n; ++i) {
        const double e = error(r[i]);
        total += e * e;
    }
    for (double lane : lanes) total += lane;
    return total;
}

}  // namespace

double chunk_sse(const float* r_ptr, std::int64_t n, float s, float z, float q_min, float q_max, Rounding rounding) {
    ConstMapF r(r_ptr, n);
    if (rounding == Rounding::HalfEven)
        return (r - s * ((r / s + z).rint().max(q_min).min(q_max) - z)).cast<double>().square().sum();
    return (r - s * ((r / s + z).round().max(q_min).min(q_max) - z)).cast<double>().square().sum();
}

double serial_sse(const float* values, std::int64_t n, double scale, std::int32_t zero_point, const QuantConfig& config) {
    const float s = static_cast<float>(scale), z = static_cast<float>(zero_point);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    if (n <= kSseChunk)
        return config.rounding == Rounding::HalfEven ? small_block_sse<true>(values, n, s, z, q_min, q_max)
                                                     : small_block_sse<false>(values, n, s, z, q_min, q_max);
    double total = 0;
    for (std::int64_t begin = 0; begin < n; begin += kSseChunk)
        total += chunk_sse(values + begin, std::min(kSseChunk, n - begin), s, z, q_min, q_max, config.rounding);
    return total;
}

namespace {

// One slice's values into its bins (count, sum, sum of squares per bin), in order.
void add_to_slice(const float* values, std::int64_t len, double lo, double inv_width, std::size_t bins, double* h) {
    for (std::int64_t i = 0; i < len; ++i) {
        const double v = values[i];
        const auto b = std::min(static_cast<std::size_t>((v - lo) * inv_width), bins - 1);
        h[3 * b] += 1.0;
        h[3 * b + 1] += v;
        h[3 * b + 2] += v * v;
    }
}

}  // namespace

std::size_t MomentHistogram::start(std::int64_t n, double lo, double hi) {
    const auto bins = static_cast<std::size_t>(std::clamp<std::int64_t>(n / 4, 1, kMaxBins));
    width_ = hi > lo ? (hi - lo) / static_cast<double>(bins) : 1.0;
    return bins;
}

void MomentHistogram::finish(const std::vector<double>& slices, std::size_t bins, double lo) {
    for (std::size_t b = 0; b < bins; ++b) {
        Bin sum;
        for (int k = 0; k < kHistogramSlices; ++k) {
            const double* h = slices.data() + static_cast<std::size_t>(k) * 3 * bins + 3 * b;
            sum.count += h[0];
            sum.sum += h[1];
            sum.sum_sq += h[2];
        }
        if (sum.count > 0) {
            sum.lo = lo + width_ * static_cast<double>(b);
            bins_.push_back(sum);
        }
    }
}

MomentHistogram::MomentHistogram(const float* values, std::int64_t n, double lo, double hi, bool parallel) {
    const std::size_t bins = start(n, lo, hi);
    const double inv_width = 1.0 / width_;
    std::vector<double> slices(static_cast<std::size_t>(kHistogramSlices) * 3 * bins, 0.0);
    const std::int64_t per_slice = (n + kHistogramSlices - 1) / kHistogramSlices;
#pragma omp parallel for schedule(static, 1) if (parallel)
    for (int k = 0; k < kHistogramSlices; ++k) {
        const std::int64_t begin = std::min(n, k * per_slice), end = std::min(n, (k + 1) * per_slice);
        add_to_slice(values + begin, end - begin, lo, inv_width, bins, slices.data() + static_cast<std::size_t>(k) * 3 * bins);
    }
    finish(slices, bins, lo);
}

MomentHistogram::MomentHistogram(const TensorView& view, double lo, double hi) {
    const std::int64_t n = view.numel();
    const std::size_t bins = start(n, lo, hi);
    const double inv_width = 1.0 / width_;
    std::vector<double> slices(static_cast<std::size_t>(kHistogramSlices) * 3 * bins, 0.0);
    const std::int64_t per_slice = (n + kHistogramSlices - 1) / kHistogramSlices;
    const int threads = std::min(kHistogramSlices, detail::pass_threads(n));
    detail::parallel_guarded(view, threads, [&](int thread, int count) {
        float scratch[kSseChunk];
        for (int k = thread; k < kHistogramSlices; k += count) {
            double* h = slices.data() + static_cast<std::size_t>(k) * 3 * bins;
            const std::int64_t end = std::min(n, (k + 1) * per_slice);
            for (std::int64_t first = std::min(n, k * per_slice); first < end; first += kSseChunk) {
                const std::int64_t len = std::min(kSseChunk, end - first);
                add_to_slice(floats_at(view, first, len, scratch), len, lo, inv_width, bins, h);
            }
        }
    });
    finish(slices, bins, lo);
}

MomentHistogram::MomentHistogram(const PatternTable& table, double lo, double hi) {
    const std::size_t bins = start(table.n, lo, hi);
    const double inv_width = 1.0 / width_;
    std::vector<double> slices(static_cast<std::size_t>(kHistogramSlices) * 3 * bins, 0.0);  // one slice used
    for (std::size_t i = 0; i < table.values.size(); ++i) {
        const double v = table.values[i], c = table.counts[i];
        const auto b = std::min(static_cast<std::size_t>((v - lo) * inv_width), bins - 1);
        slices[3 * b] += c;
        slices[3 * b + 1] += c * v;
        slices[3 * b + 2] += c * (v * v);
    }
    finish(slices, bins, lo);
}

double MomentHistogram::sse(double scale, std::int32_t zero_point, const QuantConfig& config) const {
    const double q_min = config.dtype.q_min(), q_max = config.dtype.q_max(), z = zero_point;
    const double rep_lo = scale * (q_min - z), rep_hi = scale * (q_max - z);
    const double rounding_noise = scale * scale / 12.0;
    double total = 0;
    for (const Bin& b : bins_) {
        if (width_ > scale && b.lo >= rep_lo && b.lo + width_ <= rep_hi) {
            total += b.count * rounding_noise;
            continue;
        }
        const double q = std::clamp(std::nearbyint(b.sum / b.count / scale + z), q_min, q_max);
        const double c = scale * (q - z);
        total += std::max(0.0, b.sum_sq - 2 * c * b.sum + b.count * c * c);
    }
    return total;
}

MomentHistogram MomentHistogram::merged(std::size_t factor) const {
    MomentHistogram out;
    out.width_ = width_ * static_cast<double>(factor);
    const double origin = bins_.empty() ? 0.0 : bins_.front().lo;
    for (const Bin& b : bins_) {
        const double lo = origin + out.width_ * std::floor((b.lo - origin) / out.width_ + 1e-9);
        if (out.bins_.empty() || out.bins_.back().lo != lo) out.bins_.push_back({lo, 0, 0, 0});
        Bin& m = out.bins_.back();
        m.count += b.count, m.sum += b.sum, m.sum_sq += b.sum_sq;
    }
    return out;
}

}  // namespace detail

double values_mse(const float* values, std::int64_t n, double scale, std::int32_t zero_point, const QuantConfig& config) {
    using detail::kSseChunk;
    const float s = static_cast<float>(scale), z = static_cast<float>(zero_point);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    // Each chunk's sum on whatever thread, then the chunks added in order: the same bits on any thread count
    // (a reduction would add per-thread partial sums, whose split depends on the thread count). A small input
    // is summed chunk by chunk in the same order, without the array of chunk sums.
    const std::int64_t chunks = (n + kSseChunk - 1) / kSseChunk;
    auto chunk = [&](std::int64_t c) {
        const std::int64_t begin = c * kSseChunk;
        return detail::chunk_sse(values + begin, std::min(kSseChunk, n - begin), s, z, q_min, q_max, config.rounding);
    };
    double total = 0;
    if (n < 16 * kSseChunk) {
        for (std::int64_t c = 0; c < chunks; ++c) total += chunk(c);
    } else {
        std::vector<double> sums(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
        for (std::int64_t c = 0; c < chunks; ++c) sums[static_cast<std::size_t>(c)] = chunk(c);
        for (double v : sums) total += v;
    }
    return total / static_cast<double>(n);
}

double values_mse(const TensorView& view, double scale, std::int32_t zero_point, const QuantConfig& config,
                  const PassControl& control) {
    using detail::kSseChunk;
    const std::int64_t n = view.numel();
    const float s = static_cast<float>(scale), z = static_cast<float>(zero_point);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    // Each chunk's sum, then the chunks added in order: the bits of values_mse over the decoded values.
    const std::int64_t chunks = (n + kSseChunk - 1) / kSseChunk;
    std::vector<double> sums(static_cast<std::size_t>(chunks), 0.0);
    detail::parallel_guarded(view, detail::pass_threads(n), [&](int thread, int count) {
        std::int64_t begin, end;
        detail::static_share(chunks, thread, count, begin, end);
        float scratch[kSseChunk];
        for (std::int64_t c = begin; c < end; ++c) {
            if ((c - begin) % 256 == 0 && control.cancelled()) return;
            const std::int64_t first = c * kSseChunk, len = std::min(kSseChunk, n - first);
            sums[static_cast<std::size_t>(c)] =
                detail::chunk_sse(floats_at(view, first, len, scratch), len, s, z, q_min, q_max, config.rounding);
        }
    });
    double total = 0;
    for (double v : sums) total += v;
    return total / static_cast<double>(n);
}

}  // namespace qs
