// The percentile and mse calibrators over a view in its stored type (calibrate.hpp): a mapped tensor too large
// for a float32 copy is calibrated in passes over its mapping, with the numbers of the float32 versions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "bit_patterns.hpp"
#include "parallel.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"

namespace qs {
namespace {

constexpr std::int64_t kPiece = 4096;
constexpr std::size_t kRadix = std::size_t{1} << 16;
// A batch of blocks gathered together holds about this many values (16 MB a thread): blocks that are not one
// run each (a channel axis other than the first) are then read a few columns at a time, not one by one.
constexpr std::int64_t kBatchValues = std::int64_t{1} << 22;

// Unsigned keys in the order of the floats (-0 just below +0; no NaN here: the values were checked).
std::uint32_t order_key(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
float from_key(std::uint32_t k) {
    const std::uint32_t u = (k & 0x80000000u) ? (k & 0x7fffffffu) : ~k;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Counts per 16-bit digit of the keys of every value (or |value|): the top digit, or with `tops` given the low
// digit of the values whose top digit is tops[t], into counts[t * kRadix + digit].
std::vector<std::int64_t> count_digits(const TensorView& view, bool absolute, const std::vector<std::uint32_t>& tops,
                                       const PassControl& control) {
    const std::int64_t n = view.numel();
    const std::size_t tables = tops.empty() ? 1 : tops.size();
    const int threads = detail::pass_threads(n);
    std::vector<std::vector<std::int64_t>> partial(static_cast<std::size_t>(threads));
    detail::parallel_guarded(view, threads, [&](int thread, int count) {
        std::int64_t begin, end;
        detail::static_share((n + kPiece - 1) / kPiece, thread, count, begin, end);
        std::vector<std::int64_t>& local = partial[static_cast<std::size_t>(thread)];
        local.assign(tables * kRadix, 0);
        float scratch[kPiece];
        for (std::int64_t piece = begin; piece < end; ++piece) {
            if ((piece - begin) % 256 == 0) {
                if (control.cancelled()) return;
                if (thread == 0) control.report(static_cast<float>(piece - begin) / static_cast<float>(end - begin));
            }
            const std::int64_t first = piece * kPiece, len = std::min(kPiece, n - first);
            const float* values = floats_at(view, first, len, scratch);
            for (std::int64_t i = 0; i < len; ++i) {
                const std::uint32_t key = order_key(absolute ? std::abs(values[i]) : values[i]);
                if (tops.empty()) {
                    ++local[key >> 16];
                    continue;
                }
                for (std::size_t t = 0; t < tops.size(); ++t)
                    if ((key >> 16) == tops[t]) ++local[t * kRadix + (key & 0xffffu)];
            }
        }
    });
    std::vector<std::int64_t> counts(tables * kRadix, 0);
    for (const std::vector<std::int64_t>& local : partial)
        for (std::size_t i = 0; i < local.size(); ++i) counts[i] += local[i];
    return counts;
}

// The digit holding 0-based rank `rank` of the counted values, and the rank left within that digit.
std::uint32_t digit_of_rank(const std::int64_t* counts, std::int64_t& rank) {
    for (std::uint32_t d = 0; d < kRadix; ++d) {
        if (rank < counts[d]) return d;
        rank -= counts[d];
    }
    throw Error("internal error: a rank beyond the values");  // the counts always add up to n
}

// The values of 0-based ranks `ranks` in ascending order of the view's values (or of |value|): exactly the
// elements std::nth_element would place there.
std::vector<float> order_statistics(const TensorView& view, bool absolute, const std::vector<std::int64_t>& ranks,
                                    const PassControl& control) {
    const std::vector<std::int64_t> top = count_digits(view, absolute, {}, control);
    std::vector<std::uint32_t> tops(ranks.size());
    std::vector<std::int64_t> within(ranks);
    for (std::size_t r = 0; r < ranks.size(); ++r) tops[r] = digit_of_rank(top.data(), within[r]);
    std::vector<float> out(ranks.size());
    if (view.type == ElementType::BF16) {
        // A bf16 value is the top half of its float32: one top digit is one value (a negative's low key digit
        // is all ones).
        for (std::size_t r = 0; r < ranks.size(); ++r)
            out[r] = from_key(tops[r] << 16 | ((tops[r] & 0x8000u) ? 0u : 0xffffu));
        return out;
    }
    std::vector<std::uint32_t> distinct(tops);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const std::vector<std::int64_t> low = count_digits(view, absolute, distinct, control);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        const auto t = static_cast<std::size_t>(std::lower_bound(distinct.begin(), distinct.end(), tops[r]) - distinct.begin());
        std::int64_t rank = within[r];
        out[r] = from_key(tops[r] << 16 | digit_of_rank(low.data() + t * kRadix, rank));
    }
    return out;
}

// numpy.percentile's linear interpolation (calibrate.cpp quantile), from the two order statistics.
struct QuantileRanks {
    std::int64_t k = 0;
    double frac = 0;
    bool needs_above = false;
};
QuantileRanks quantile_ranks(std::int64_t n, double q) {
    QuantileRanks r;
    const double index = q * static_cast<double>(n - 1);
    r.k = static_cast<std::int64_t>(std::floor(index));
    r.frac = index - static_cast<double>(r.k);
    r.needs_above = !(r.frac == 0 || r.k + 1 >= n);
    return r;
}

// Block b's (s, z) from its gathered values, as calibrated_params over floats computes it.
void calibrate_gathered(std::vector<float>& values, const QuantConfig& config, double& scale, std::int32_t& zero_point) {
    if (config.calibration == Calibration::Mse)
        mse_params(values.data(), static_cast<std::int64_t>(values.size()), config, false, scale, zero_point);
    else
        params_from_range(calibrate_block(values, config), config, scale, zero_point);
}

}  // namespace

namespace {

// The order statistics numpy.percentile interpolates between, for n values, and the range from their values.
std::vector<QuantileRanks> percentile_ranks(std::int64_t n, const QuantConfig& config, std::vector<std::int64_t>& ranks) {
    const double p = config.percentile / 100.0;
    std::vector<QuantileRanks> quantiles = {quantile_ranks(n, p)};
    if (config.mode != Mode::Symmetric) quantiles.push_back(quantile_ranks(n, 1.0 - p));
    for (const QuantileRanks& q : quantiles) {
        ranks.push_back(q.k);
        if (q.needs_above) ranks.push_back(q.k + 1);
    }
    return quantiles;
}
ValueRange percentile_from(const std::vector<QuantileRanks>& quantiles, const std::vector<float>& found, bool symmetric) {
    std::vector<double> value;
    std::size_t next = 0;
    for (const QuantileRanks& q : quantiles) {
        const double below = found[next++];
        if (!q.needs_above) {
            value.push_back(below);
            continue;
        }
        const double above = found[next++];
        value.push_back(below + q.frac * (above - below));
    }
    if (symmetric) return {-value[0], value[0]};
    return {value[1], value[0]};
}

}  // namespace

ValueRange percentile_range(const TensorView& view, const QuantConfig& config, const PassControl& control) {
    const std::int64_t n = view.numel();
    if (n < 1) throw Error("cannot calibrate an empty block");
    const bool symmetric = config.mode == Mode::Symmetric;
    std::vector<std::int64_t> ranks;
    const std::vector<QuantileRanks> quantiles = percentile_ranks(n, config, ranks);
    return percentile_from(quantiles, order_statistics(view, symmetric, ranks, control), symmetric);
}

namespace detail {

ValueRange pattern_percentile_range(const PatternTable& table, const QuantConfig& config) {
    if (table.n < 1) throw Error("cannot calibrate an empty block");
    const bool symmetric = config.mode == Mode::Symmetric;
    // The patterns' values (or |values|) by their order keys (as order_statistics sorts them), with counts.
    std::vector<std::pair<std::uint32_t, double>> sorted(table.values.size());
    for (std::size_t i = 0; i < sorted.size(); ++i)
        sorted[i] = {order_key(symmetric ? std::abs(table.values[i]) : table.values[i]), table.counts[i]};
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int64_t> ranks;
    const std::vector<QuantileRanks> quantiles = percentile_ranks(table.n, config, ranks);
    std::vector<float> found;
    for (const std::int64_t rank : ranks) {
        std::int64_t below = 0;  // elements before the current key
        std::size_t k = 0;
        while (below + static_cast<std::int64_t>(sorted[k].second) <= rank) below += static_cast<std::int64_t>(sorted[k++].second);
        found.push_back(from_key(sorted[k].first));
    }
    return percentile_from(quantiles, found, symmetric);
}

}  // namespace detail

void calibrated_params(const TensorView& view, const QuantConfig& config, QuantParams& params,
                       const PassControl& control) {
    const std::int64_t blocks = params.block_count, n = view.numel();
    if (blocks == 1) {
        double& scale = params.scale.at(0);
        std::int32_t& zero_point = params.zero_point.at(0);
        if (detail::sixteen_bit(view.type) && config.calibration != Calibration::MinMax) {
            // One pass counts the bit patterns; the percentile and the MSE search then need no other.
            const std::vector<std::int64_t> bits = detail::count_bit_patterns(view, control);
            if (control.cancelled()) return;
            return detail::pattern_params(view, detail::pattern_table(view.type, bits), config, scale, zero_point);
        }
        if (config.calibration == Calibration::Mse) return mse_params(view, config, scale, zero_point, control);
        ValueRange range;
        if (config.calibration == Calibration::Percentile) {
            range = percentile_range(view, config, control);
        } else {
            float lo = 0, hi = 0;
            value_range(view, lo, hi);
            const double m = std::max(std::abs(static_cast<double>(lo)), std::abs(static_cast<double>(hi)));
            range = config.mode == Mode::Symmetric ? ValueRange{-m, m} : ValueRange{lo, hi};
        }
        return params_from_range(range, config, scale, zero_point);
    }
    // Blocks b0 .. b0 + batch - 1 are one run of batch * stride values in every period of the layout.
    const std::int64_t stride = params.block_stride, period = stride * blocks, per_block = n / blocks;
    const std::int64_t batch = std::clamp<std::int64_t>(kBatchValues / std::max<std::int64_t>(per_block, 1), 1, blocks);
    const std::int64_t batches = (blocks + batch - 1) / batch;
    detail::NextIndex next(0, batches);
    std::atomic<std::int64_t> done{0};
    const int threads = detail::pass_threads(n);
    detail::parallel_guarded(view, threads, [&](int thread, int) {
        std::vector<std::vector<float>> values(static_cast<std::size_t>(batch));
        float scratch[kPiece];
        for (std::int64_t k; next.take(k);) {
            if (control.cancelled()) return;
            const std::int64_t b0 = k * batch, count = std::min(batch, blocks - b0);
            for (std::int64_t j = 0; j < count; ++j) values[static_cast<std::size_t>(j)].clear();
            for (std::int64_t start = b0 * stride; start < n; start += period) {
                const std::int64_t end = std::min(n, start + count * stride);
                for (std::int64_t first = start; first < end; first += kPiece) {
                    const std::int64_t len = std::min(kPiece, end - first);
                    const float* v = floats_at(view, first, len, scratch);
                    for (std::int64_t i = 0; i < len;) {  // split the piece at block boundaries
                        const std::int64_t offset = first + i - start, j = offset / stride;
                        const std::int64_t take = std::min(len - i, (j + 1) * stride - offset);
                        std::vector<float>& out = values[static_cast<std::size_t>(j)];
                        out.insert(out.end(), v + i, v + i + take);
                        i += take;
                    }
                }
            }
            for (std::int64_t j = 0; j < count; ++j)
                calibrate_gathered(values[static_cast<std::size_t>(j)], config, params.scale[static_cast<std::size_t>(b0 + j)],
                                   params.zero_point[static_cast<std::size_t>(b0 + j)]);
            const std::int64_t finished = done.fetch_add(1) + 1;
            if (thread == 0) control.report(static_cast<float>(finished) / static_cast<float>(batches));
        }
    });
}

void value_range(const TensorView& view, float& lo, float& hi) {
    const std::int64_t n = view.numel();
    if (n < 1) throw Error("cannot take the range of an empty tensor");
    const int threads = detail::pass_threads(n);
    std::vector<float> los(static_cast<std::size_t>(threads), std::numeric_limits<float>::infinity());
    std::vector<float> his(los.size(), -std::numeric_limits<float>::infinity());
    detail::parallel_guarded(view, threads, [&](int thread, int count) {
        std::int64_t begin, end;
        detail::static_share((n + kPiece - 1) / kPiece, thread, count, begin, end);
        float a = los[static_cast<std::size_t>(thread)], b = his[static_cast<std::size_t>(thread)];
        float scratch[kPiece];
        for (std::int64_t piece = begin; piece < end; ++piece) {
            const std::int64_t first = piece * kPiece, len = std::min(kPiece, n - first);
            const float* values = floats_at(view, first, len, scratch);
            for (std::int64_t i = 0; i < len; ++i) {
                a = std::min(a, values[i]);
                b = std::max(b, values[i]);
            }
        }
        los[static_cast<std::size_t>(thread)] = a;
        his[static_cast<std::size_t>(thread)] = b;
    });
    lo = *std::min_element(los.begin(), los.end());
    hi = *std::max_element(his.begin(), his.end());
}

}  // namespace qs
