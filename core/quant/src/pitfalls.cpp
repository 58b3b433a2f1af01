#include "quantscope/pitfalls.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/text.hpp"

namespace qs {

const char* to_string(Recipe recipe) {
    switch (recipe) {
        case Recipe::NaiveMax255: return "naive-max255";
    }
    return "?";
}

Recipe parse_recipe(const std::string& text) {
    if (text == "naive-max255") return Recipe::NaiveMax255;
    throw Error("unknown recipe " + quoted_text(text) + ": expected naive-max255");
}

QuantConfig recipe_config(Recipe recipe, const TensorView& values, QuantConfig base) {
    switch (recipe) {
        case Recipe::NaiveMax255: {
            TensorRange whole;
            compute_params(values, QuantConfig{}, &whole);
            const double abs_max = std::max(std::fabs(double{whole.min}), std::fabs(double{whole.max}));
            base.dtype = IntType{true, 8};
            base.mode = Mode::Manual;
            base.granularity = Granularity::Tensor;
            base.manual_scale = naive_max_scale(abs_max);
            base.manual_zero_point = 0;
            base.overflow = Overflow::Wrap;
            base.calibration = Calibration::MinMax;
            base.recompute_scale = false;
            break;
        }
    }
    return base;
}

std::optional<ElementTrace> farthest_overflow(const TensorView& values, const QuantParams& params,
                                              const QuantConfig& config) {
    const std::int64_t n = values.numel(), stride = params.block_stride, count = params.block_count;
    if (n == 0 || stride < 1 || count < 1) return std::nullopt;
    // Each block's smallest and largest element, walking runs of `stride` elements of one block, a bounded
    // piece at a time (the values may be a file's mapping in another type).
    constexpr std::int64_t kPiece = std::int64_t{1} << 14;
    std::vector<std::int64_t> lowest(static_cast<std::size_t>(count), -1), highest(static_cast<std::size_t>(count), -1);
    std::vector<float> low_value(lowest.size()), high_value(lowest.size()), scratch(static_cast<std::size_t>(kPiece));
    values.guarded([&] {
        for (std::int64_t start = 0; start < n; start += stride) {
            const std::size_t b = static_cast<std::size_t>((start / stride) % count);
            const std::int64_t end = std::min(n, start + stride);
            for (std::int64_t first = start; first < end; first += kPiece) {
                const std::int64_t len = std::min(kPiece, end - first);
                const float* v = floats_at(values, first, len, scratch.data());
                for (std::int64_t k = 0; k < len; ++k) {
                    if (lowest[b] < 0 || v[k] < low_value[b]) low_value[b] = v[k], lowest[b] = first + k;
                    if (highest[b] < 0 || v[k] > high_value[b]) high_value[b] = v[k], highest[b] = first + k;
                }
            }
        }
    });
    std::optional<ElementTrace> best;
    double best_excess = 0.0;
    const double q_min = config.dtype.q_min(), q_max = config.dtype.q_max();
    for (std::size_t b = 0; b < lowest.size(); ++b)
        for (std::int64_t i : {lowest[b], highest[b]}) {
            if (i < 0) continue;
            const ElementTrace t = trace_element(values, params, config, i);
            if (!t.clipped) continue;
            const double excess = t.rounded > q_max ? t.rounded - q_max : q_min - t.rounded;
            if (!best || excess > best_excess || (excess == best_excess && i < best->flat_index)) {
                best = t;
                best_excess = excess;
            }
        }
    return best;
}

std::string overflow_sentence(const std::optional<ElementTrace>& example, const QuantConfig& config) {
    const IntType& dt = config.dtype;
    const std::string range = dt.name() + "'s [" + std::to_string(dt.q_min()) + ", " + std::to_string(dt.q_max()) + "]";
    if (!example)
        return "Every value rounds into " + range + " here: " +
               (config.overflow == Overflow::Wrap ? "nothing wraps on this tensor." : "the clamp changes nothing.");
    const ElementTrace& t = *example;
    const std::string at = format_g(t.r) + " at s = " + format_g(t.scale) + ", z = " + std::to_string(t.zero_point) +
                           " rounds to " + format_g(t.rounded);
    // r / s past float32's range has no residue: the cast saturates it (wrap_value), and saying it wraps would lie.
    if (config.overflow == Overflow::Wrap && !std::isfinite(t.rounded))
        return "Without the clamp, " + format_g(t.r) + " at s = " + format_g(t.scale) + ", z = " +
               std::to_string(t.zero_point) + " overflows float32 (r / s + z = " + format_g(t.rounded) +
               "): nothing is left to wrap, so the " + dt.name() + " cast saturates it to " + std::to_string(t.code) + ".";
    if (config.overflow == Overflow::Wrap)
        return "Without the clamp, " + at + " and the " + dt.name() + " cast wraps it to " + std::to_string(t.code) + ".";
    return at + ", outside " + range + ": the clamp stores " + std::to_string(t.code) + ".";
}

}  // namespace qs
