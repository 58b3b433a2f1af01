#include "method_quantizer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"

namespace qs::detail {

WeightQuantizer::WeightQuantizer(const QuantConfig& config, std::int64_t rows, std::int64_t cols)
    : config_(config), rows_(rows), cols_(cols) {
    group_ = config.granularity == Granularity::Group ? config.group_size : cols;
}

std::int64_t WeightQuantizer::blocks() const { return per_tensor() ? 1 : rows_ * (cols_ / group_); }

void WeightQuantizer::pair(double lo, double hi, double& scale, std::int32_t& zero_point) const {
    if (config_.mode == Mode::Manual) {
        scale = config_.manual_scale;
        zero_point = config_.manual_zero_point;
    } else if (config_.mode == Mode::Symmetric) {
        symmetric_params(std::max(std::fabs(lo), std::fabs(hi)), config_.dtype, scale, zero_point);
    } else {
        asymmetric_params(lo, hi, config_.dtype, scale, zero_point, config_.recompute_scale);
    }
    // The pass uses s as a float32: a range past float32's (AWQ scales W's columns up) has no such scale.
    if (!std::isfinite(static_cast<float>(scale)) || static_cast<float>(scale) == 0.0f)
        throw Error("the weights' range [" + format_g(lo) + ", " + format_g(hi) +
                    "] needs a scale outside float32's range");
}

QuantParams WeightQuantizer::params(std::vector<double> scales, std::vector<std::int32_t> zero_points) const {
    QuantParams p;
    p.scale = std::move(scales);
    p.zero_point = std::move(zero_points);
    if (per_tensor()) {
        p.block_stride = rows_ * cols_;
        p.block_count = 1;
    } else {
        p.block_stride = group_;  // a row's groups one after the other: flat / G (channel: G = cols)
        p.block_count = rows_ * (cols_ / group_);
    }
    return p;
}

}  // namespace qs::detail
