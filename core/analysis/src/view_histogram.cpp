// Histograms, ranges and one block's elements read from a view in its stored type (histogram.hpp,
// blocks.hpp): a mapped tensor too large for a float32 copy is counted in cache-sized pieces decoded under the
// view's guard, every thread its own share, with the arithmetic of the float32 versions.
#include <algorithm>
#include <cmath>
#include <limits>

#include "bit_patterns.hpp"
#include "parallel.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"
#include "quantscope/histogram.hpp"

namespace qs {
namespace {

// Elements decoded at a time: a piece stays in the cache while it is counted.
constexpr std::int64_t kPiece = 4096;
// Pieces between two looks at the cancel flag and two progress reports (about a millisecond).
constexpr std::int64_t kPiecesPerReport = 256;

}  // namespace

Histogram histogram(const TensorView& view, int bins, double lo, double hi, const PassControl& control) {
    Histogram h;
    if (bins < 1) bins = 1;
    if (!(hi > lo)) {  // as histogram() over floats: a constant tensor's spike in the middle of a visible range
        lo -= 0.5;
        hi += 0.5;
    }
    h.lo = lo;
    h.hi = hi;
    const auto nb = static_cast<std::size_t>(bins);
    h.counts.assign(nb, 0);
    const std::int64_t n = view.numel();
    const double inv_width = static_cast<double>(bins) / (hi - lo);
    const int threads = detail::pass_threads(n);
    std::vector<std::vector<std::int64_t>> partial(static_cast<std::size_t>(threads));
    std::vector<std::int64_t> below(partial.size(), 0), above(partial.size(), 0);
    detail::parallel_guarded(view, threads, [&](int thread, int count) {
        std::int64_t begin, end;
        detail::static_share((n + kPiece - 1) / kPiece, thread, count, begin, end);
        std::vector<std::int64_t>& local = partial[static_cast<std::size_t>(thread)];
        local.assign(nb, 0);
        std::int64_t under = 0, over = 0;
        float scratch[kPiece];
        for (std::int64_t piece = begin; piece < end; ++piece) {
            if ((piece - begin) % kPiecesPerReport == 0) {
                if (control.cancelled()) break;
                if (thread == 0) control.report(static_cast<float>(piece - begin) / static_cast<float>(end - begin));
            }
            const std::int64_t first = piece * kPiece, len = std::min(kPiece, n - first);
            const float* values = floats_at(view, first, len, scratch);
            for (std::int64_t i = 0; i < len; ++i) {
                // The bin as histogram() over floats finds it (histogram.cpp count_bins): the same bits.
                const double v = values[i];
                const double t = (v - lo) * inv_width;
                if (t >= 0.0 && v <= hi)
                    ++local[static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(t), bins - 1))];
                else if (v < lo)
                    ++under;
                else
                    ++over;
            }
        }
        below[static_cast<std::size_t>(thread)] = under;
        above[static_cast<std::size_t>(thread)] = over;
    });
    for (std::size_t t = 0; t < partial.size(); ++t) {
        for (std::size_t b = 0; b < partial[t].size(); ++b) h.counts[b] += partial[t][b];
        h.below += below[t];
        h.above += above[t];
    }
    h.max_count = *std::max_element(h.counts.begin(), h.counts.end());
    control.report(1.0f);
    return h;
}

Histogram histogram(const TensorView& view, const std::vector<std::int64_t>& bit_counts, int bins, double lo, double hi) {
    if (!detail::sixteen_bit(view.type) || bit_counts.size() != detail::kBitPatterns) return histogram(view, bins, lo, hi);
    Histogram h;
    if (bins < 1) bins = 1;
    if (!(hi > lo)) {  // as histogram() over floats
        lo -= 0.5;
        hi += 0.5;
    }
    h.lo = lo;
    h.hi = hi;
    h.counts.assign(static_cast<std::size_t>(bins), 0);
    const double inv_width = static_cast<double>(bins) / (hi - lo);
    for (std::size_t b = 0; b < bit_counts.size(); ++b) {
        const std::int64_t c = bit_counts[b];
        if (c == 0) continue;
        const auto bits = static_cast<std::uint16_t>(b);
        const double v = view.type == ElementType::BF16 ? bf16_to_float(bits) : half_to_float(bits);
        const double t = (v - lo) * inv_width;  // the bin as the pass above finds it
        if (t >= 0.0 && v <= hi)
            h.counts[static_cast<std::size_t>(std::min<std::int64_t>(static_cast<std::int64_t>(t), bins - 1))] += c;
        else if (v < lo)
            h.below += c;
        else
            h.above += c;
    }
    h.max_count = *std::max_element(h.counts.begin(), h.counts.end());
    return h;
}

Histogram histogram(const TensorView& view, int bins, const PassControl& control) {
    if (view.numel() <= 0) return histogram(static_cast<const float*>(nullptr), 0, bins, 0.0, 0.0);
    float lo = 0, hi = 0;
    value_range(view, lo, hi);
    return histogram(view, bins, lo, hi, control);
}

std::vector<float> block_elements(const TensorView& view, const QuantParams& params, std::int64_t block) {
    const std::int64_t stride = params.block_stride, count = params.block_count, n = view.numel();
    if (stride < 1 || count < 1 || block < 0 || block >= count) throw Error("block index out of range");
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(n / count + stride));
    view.guarded([&] {
        float scratch[kPiece];
        for (std::int64_t start = block * stride; start < n; start += stride * count) {
            const std::int64_t end = std::min(n, start + stride);
            for (std::int64_t first = start; first < end; first += kPiece) {
                const std::int64_t len = std::min(kPiece, end - first);
                const float* values = floats_at(view, first, len, scratch);
                out.insert(out.end(), values, values + len);
            }
        }
    });
    return out;
}

}  // namespace qs
