#include "quantscope/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace qs {

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
    const double inv_width = static_cast<double>(bins) / (hi - lo);
    for (std::int64_t i = 0; i < n; ++i) {
        const double v = values[i];
        if (v < lo) {
            ++h.below;
        } else if (v > hi) {
            ++h.above;
        } else {
            // v == hi lands one past the end: it belongs to the last (closed) bin.
            const auto b = std::min<std::int64_t>(static_cast<std::int64_t>((v - lo) * inv_width), bins - 1);
            ++h.counts[static_cast<std::size_t>(b)];
        }
    }
    h.max_count = h.counts.empty() ? 0 : *std::max_element(h.counts.begin(), h.counts.end());
    return h;
}

Histogram histogram(const float* values, std::int64_t n, int bins) {
    if (n <= 0) return histogram(values, 0, bins, 0.0, 0.0);
    float lo = values[0], hi = values[0];
    for (std::int64_t i = 1; i < n; ++i) {
        lo = std::min(lo, values[i]);
        hi = std::max(hi, values[i]);
    }
    return histogram(values, n, bins, lo, hi);
}

std::vector<std::int64_t> code_counts(const std::int32_t* codes, std::int64_t n, std::int32_t q_min,
                                      std::int32_t q_max) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(std::int64_t{q_max} - q_min + 1), 0);
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int32_t q = codes[i];
        if (q >= q_min && q <= q_max) ++counts[static_cast<std::size_t>(q - q_min)];
    }
    return counts;
}

}  // namespace qs
