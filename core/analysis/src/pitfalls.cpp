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
            // An all-zero tensor has no norm (the lesson's 0 / 0 gives NaN): s = 1 and the SPEC formula.
            base.naive_norm = abs_max > 0 ? static_cast<float>(abs_max) : 0.0f;
            base.overflow = Overflow::Wrap;
            base.calibration = Calibration::MinMax;
            base.recompute_scale = false;
            break;
        }
    }
    return base;
}

namespace {

double overflow_excess(const ElementTrace& t, const IntType& dtype) {
    return t.rounded > dtype.q_max() ? t.rounded - dtype.q_max() : dtype.q_min() - t.rounded;
}

}  // namespace

std::optional<ElementTrace> farthest_overflow(const TensorView& values, const QuantParams& params,
                                              const QuantConfig& config) {
    const std::int64_t n = values.numel(), stride = params.block_stride, count = params.block_count;
    if (n == 0 || stride < 1 || count < 1) return std::nullopt;
    // One guarded pass, a bounded piece of one block at a time (the values may be a file's mapping in another
    // type), keeping only the best so far: no per-block state, and no guarded region (a syscall) per element.
    // Within a piece r / s + z grows with r, so only its first smallest and first largest elements can beat the
    // best; a piece that does is searched once more for its first element that far out (the first on a tie).
    constexpr std::int64_t kPiece = std::int64_t{1} << 14;
    std::vector<float> scratch(static_cast<std::size_t>(kPiece));
    std::optional<ElementTrace> best;
    double best_excess = 0.0;
    values.guarded([&] {
        for (std::int64_t first = 0; first < n;) {
            const std::int64_t len = std::min({kPiece, n - first, stride - first % stride});
            const float* v = floats_at(values, first, len, scratch.data());
            std::int64_t low = 0, high = 0;
            for (std::int64_t k = 1; k < len; ++k) {
                if (v[k] < v[low]) low = k;
                if (v[k] > v[high]) high = k;
            }
            std::optional<double> piece_excess;
            for (std::int64_t k : {low, high}) {
                const ElementTrace t = trace_value(v[k], params, config, first + k);
                if (t.clipped) piece_excess = std::max(piece_excess.value_or(0.0), overflow_excess(t, config.dtype));
            }
            if (piece_excess && (!best || *piece_excess > best_excess))
                for (std::int64_t k = 0; k < len; ++k) {
                    const ElementTrace t = trace_value(v[k], params, config, first + k);
                    if (t.clipped && overflow_excess(t, config.dtype) == *piece_excess) {
                        best = t;
                        best_excess = *piece_excess;
                        break;
                    }
                }
            first += len;
        }
    });
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

std::string wrap_warning(const TensorView& values, const QuantParams& params, const QuantConfig& config) {
    return "the naive cast without the clamp is WRONG (the lessons clamp). " +
           overflow_sentence(farthest_overflow(values, params, config), config);
}

}  // namespace qs
