// W's int<N> quantizer as the methods apply it (SPEC "Methods"), private to the layer room: one (s, z) per
// block of quantize's layout (the tensor, an output row, a group of G columns of a row), from the block's
// values by the config's rule (min/max ranges, or the manual pair); q = clamp(round(w / s + z)) and
// r' = s (q - z) in float64, s taken as the float32 the quantize pass uses.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"

namespace qs::detail {

class WeightQuantizer {
public:
    WeightQuantizer(const QuantConfig& config, std::int64_t rows, std::int64_t cols);

    // Columns of a row that share a pair: all of them (tensor, channel) or the group size.
    std::int64_t group_columns() const { return group_; }
    bool per_tensor() const { return config_.granularity == Granularity::Tensor; }
    std::int64_t blocks() const;
    // The block of row `row`, column `col` in quantize's layout.
    std::int64_t block_of(std::int64_t row, std::int64_t col) const {
        return per_tensor() ? 0 : row * (cols_ / group_) + col / group_;
    }
    // The pair for values spanning [lo, hi] (lo <= 0 <= hi not required).
    void pair(double lo, double hi, double& scale, std::int32_t& zero_point) const;
    // The code of w; `clipped` set when the rounded value was outside [q_min, q_max]. Inline: the methods call
    // it once per weight (AWQ once per weight and ratio).
    std::int32_t code(double w, double scale, std::int32_t zero_point, bool& clipped) const {
        const double t = w / used_scale(scale) + static_cast<double>(zero_point);
        const double r = config_.rounding == Rounding::HalfAway ? std::round(t) : std::nearbyint(t);
        const double lo = static_cast<double>(config_.dtype.q_min()), hi = static_cast<double>(config_.dtype.q_max());
        clipped = r < lo || r > hi;
        return static_cast<std::int32_t>(std::clamp(r, lo, hi));
    }
    static double used_scale(double scale) { return static_cast<double>(static_cast<float>(scale)); }
    static double value(std::int32_t q, double scale, std::int32_t zero_point) {
        return used_scale(scale) * static_cast<double>(q - zero_point);
    }
    // QuantParams in quantize's layout from one pair per block.
    QuantParams params(std::vector<double> scales, std::vector<std::int32_t> zero_points) const;

private:
    QuantConfig config_;
    std::int64_t rows_ = 0, cols_ = 0, group_ = 0;
};

}  // namespace qs::detail
