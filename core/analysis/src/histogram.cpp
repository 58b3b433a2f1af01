#include "quantscope/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace qs {

namespace {

// Per-thread partial counts merged at the end. Within a thread, four interleaved sub-histograms: consecutive
// values often fall in the same bin, and one counter incremented back to back stalls on its own store.
void count_bins(const float* values, std::int64_t n, int bins, double lo, double hi, Histogram& h) {
    const double inv_width = static_cast<double>(bins) / (hi - lo);
    std::int64_t below = 0, above = 0;
    const std::size_t nb = static_cast<std::size_t>(bins);
#pragma omp parallel reduction(+ : below, above)
    {
        std::vector<std::int64_t> local(4 * nb, 0);
#pragma omp for schedule(static) nowait
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = values[i];
            // Out-of-range values are rare: test once, then sort them out.
            const double t = (v - lo) * inv_width;
            if (t >= 0.0 && v <= hi) {
                // v == hi lands one past the end: it belongs to the last (closed) bin.
                const std::int64_t b = std::min<std::int64_t>(static_cast<std::int64_t>(t), bins - 1);
                ++local[static_cast<std::size_t>(i & 3) * nb + static_cast<std::size_t>(b)];
            } else if (v < lo) {
                ++below;
            } else {
                ++above;
            }
        }
#pragma omp critical
        for (std::size_t b = 0; b < nb; ++b)
            h.counts[b] += local[b] + local[nb + b] + local[2 * nb + b] + local[3 * nb + b];
    }
    h.below = below;
    h.above = above;
}

}  // namespace

Histogram histogram(const float* values, std::int64_t n, int bins, double lo, double hi) {
    Histogram h;
    if (bins < 1) bins = 1;
    if (!(hi > lo)) {
        lo -= 0.5;
        hi += 0.5;
    }
    h.lo = lo;
    h.hi = hi;
    h.counts.assign(static_cast<std::size_t>(bins), 0);
    count_bins(values, n, bins, lo, hi, h);
    h.max_count = h.counts.empty() ? 0 : *std::max_element(h.counts.begin(), h.counts.end());
    return h;
}

void value_range(const float* values, std::int64_t n, float& lo, float& hi) {
    float a = values[0], b = values[0];
#pragma omp parallel reduction(min : a) reduction(max : b)
    {
        // Eight independent lanes: the compiler turns them into one vector min and max per step.
        float la[8], lb[8];
        for (int k = 0; k < 8; ++k) la[k] = lb[k] = values[0];
#pragma omp for schedule(static) nowait
        for (std::int64_t blk = 0; blk < n / 8; ++blk) {
            const float* p = values + blk * 8;
            for (int k = 0; k < 8; ++k) {
                la[k] = p[k] < la[k] ? p[k] : la[k];
                lb[k] = p[k] > lb[k] ? p[k] : lb[k];
            }
        }
        for (int k = 0; k < 8; ++k) {
            a = std::min(a, la[k]);
            b = std::max(b, lb[k]);
        }
    }
    for (std::int64_t i = n / 8 * 8; i < n; ++i) {
        a = std::min(a, values[i]);
        b = std::max(b, values[i]);
    }
    lo = a;
    hi = b;
}

Histogram histogram(const float* values, std::int64_t n, int bins) {
    if (n <= 0) return histogram(values, 0, bins, 0.0, 0.0);
    float lo = 0, hi = 0;
    value_range(values, n, lo, hi);
    return histogram(values, n, bins, lo, hi);
}

std::vector<std::int64_t> code_counts(const std::int32_t* codes, std::int64_t n, std::int32_t q_min,
                                      std::int32_t q_max) {
    const std::size_t levels = static_cast<std::size_t>(std::int64_t{q_max} - q_min + 1);
    std::vector<std::int64_t> counts(levels, 0);
#pragma omp parallel
    {
        // Four interleaved sub-counts, as in count_bins.
        std::vector<std::int64_t> local(4 * levels, 0);
#pragma omp for schedule(static) nowait
        for (std::int64_t i = 0; i < n; ++i) {
            const std::int32_t q = codes[i];
            if (q >= q_min && q <= q_max) ++local[static_cast<std::size_t>(i & 3) * levels + static_cast<std::size_t>(q - q_min)];
        }
#pragma omp critical
        for (std::size_t k = 0; k < levels; ++k)
            counts[k] += local[k] + local[levels + k] + local[2 * levels + k] + local[3 * levels + k];
    }
    return counts;
}

std::vector<std::int64_t> code_counts_sampled(const std::int32_t* codes, std::int64_t n, std::int32_t q_min,
                                              std::int32_t q_max, std::int64_t chunk, std::int64_t step,
                                              std::int64_t* sampled) {
    if (step <= 1 || chunk < 1) {
        if (sampled) *sampled = n;
        return code_counts(codes, n, q_min, q_max);
    }
    const std::size_t levels = static_cast<std::size_t>(std::int64_t{q_max} - q_min + 1);
    std::vector<std::int64_t> counts(levels, 0);
    const std::int64_t runs = (n + chunk * step - 1) / (chunk * step);
    std::int64_t total = 0;
#pragma omp parallel reduction(+ : total)
    {
        std::vector<std::int64_t> local(4 * levels, 0);
#pragma omp for schedule(static) nowait
        for (std::int64_t k = 0; k < runs; ++k) {
            const std::int64_t begin = k * chunk * step;
            const std::int64_t end = std::min(n, begin + chunk);
            for (std::int64_t i = begin; i < end; ++i) {
                const std::int32_t q = codes[i];
                if (q >= q_min && q <= q_max)
                    ++local[static_cast<std::size_t>(i & 3) * levels + static_cast<std::size_t>(q - q_min)];
            }
            total += end - begin;
        }
#pragma omp critical
        for (std::size_t k = 0; k < levels; ++k)
            counts[k] += local[k] + local[levels + k] + local[2 * levels + k] + local[3 * levels + k];
    }
    if (sampled) *sampled = total;
    return counts;
}

std::vector<double> rebin(const Histogram& h, int bins, double lo, double hi) {
    if (bins < 1) bins = 1;
    std::vector<double> out(static_cast<std::size_t>(bins), 0.0);
    if (!(hi > lo) || h.counts.empty()) return out;
    const double scale = static_cast<double>(bins) / (hi - lo);
    const double w = h.bin_width();
    for (std::size_t b = 0; b < h.counts.size(); ++b) {
        const double count = static_cast<double>(h.counts[b]);
        if (count == 0.0) continue;
        // Source bin in target-bin units.
        const double a = (h.lo + w * static_cast<double>(b) - lo) * scale;
        const double e = (h.lo + w * static_cast<double>(b + 1) - lo) * scale;
        if (!(e > a)) {
            if (a >= 0.0 && a <= bins) out[static_cast<std::size_t>(std::min<double>(a, bins - 1))] += count;
            continue;
        }
        const double density = count / (e - a);
        const int first = static_cast<int>(std::floor(std::max(a, 0.0)));
        const int last = static_cast<int>(std::ceil(std::min(e, static_cast<double>(bins))));
        for (int t = first; t < last; ++t) {
            const double overlap = std::min<double>(e, t + 1) - std::max<double>(a, t);
            if (overlap > 0.0) out[static_cast<std::size_t>(t)] += density * overlap;
        }
    }
    return out;
}

}  // namespace qs
