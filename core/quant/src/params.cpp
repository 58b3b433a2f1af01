#include "quantscope/params.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"

namespace qs {
namespace {

// Scales are applied in float32: keep them at or above the smallest normal float32 so r / s never
// divides by zero or a denormal, whatever the range (SPEC: "always finite, s > 0, no division by zero").
double floor_scale(double s) {
    return std::max(s, static_cast<double>(std::numeric_limits<float>::min()));
}

constexpr std::int64_t kChunk = std::int64_t{1} << 16;

struct MinMax {
    float lo = std::numeric_limits<float>::infinity();
    float hi = -std::numeric_limits<float>::infinity();
    void add(const MinMax& o) {
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
    }
};

MinMax minmax_of(const float* data, std::int64_t n) {
    Eigen::Map<const Eigen::ArrayXf> a(data, n);
    return {a.minCoeff(), a.maxCoeff()};
}

// Min and max of every block. Blocks made of long contiguous runs (tensor, groups, channels of a
// leading axis) are reduced run by run with vectorised, parallel reductions; short runs (e.g. channels
// of the last axis) are reduced element-wise over one period of the layout, which also vectorises.
std::vector<MinMax> block_ranges(const Tensor& tensor, const QuantParams& p) {
    const std::int64_t n = tensor.numel();
    const float* data = tensor.values.data();
    std::vector<MinMax> blocks(static_cast<std::size_t>(p.block_count));
    if (p.block_stride >= 64) {
        const std::int64_t runs = n / p.block_stride;
        const std::int64_t chunks_per_run = (p.block_stride + kChunk - 1) / kChunk;
        const std::int64_t items = runs * chunks_per_run;
        std::vector<MinMax> item_ranges(static_cast<std::size_t>(items));
#pragma omp parallel for schedule(static) if (n >= kChunk)
        for (std::int64_t i = 0; i < items; ++i) {
            const std::int64_t run = i / chunks_per_run, c = i % chunks_per_run;
            const std::int64_t begin = run * p.block_stride + c * kChunk;
            const std::int64_t len = std::min(kChunk, p.block_stride - c * kChunk);
            item_ranges[static_cast<std::size_t>(i)] = minmax_of(data + begin, len);
        }
        for (std::int64_t i = 0; i < items; ++i)
            blocks[static_cast<std::size_t>((i / chunks_per_run) % p.block_count)].add(
                item_ranges[static_cast<std::size_t>(i)]);
        return blocks;
    }
    const std::int64_t period = p.block_stride * p.block_count;
    if (period == n) {
        // Every block is one short contiguous run (small groups): reduce each in place, in parallel.
#pragma omp parallel for schedule(static) if (n >= kChunk)
        for (std::int64_t b = 0; b < p.block_count; ++b)
            blocks[static_cast<std::size_t>(b)] = minmax_of(data + b * p.block_stride, p.block_stride);
        return blocks;
    }
    Eigen::ArrayXf lo = Eigen::Map<const Eigen::ArrayXf>(data, period);
    Eigen::ArrayXf hi = lo;
    for (std::int64_t start = period; start < n; start += period) {
        Eigen::Map<const Eigen::ArrayXf> a(data + start, period);
        lo = lo.min(a);
        hi = hi.max(a);
    }
    for (std::int64_t b = 0; b < p.block_count; ++b) {
        blocks[static_cast<std::size_t>(b)] = {lo.segment(b * p.block_stride, p.block_stride).minCoeff(),
                                               hi.segment(b * p.block_stride, p.block_stride).maxCoeff()};
    }
    return blocks;
}

}  // namespace

void asymmetric_params(double r_min, double r_max, const IntType& dtype, double& scale, std::int32_t& zero_point,
                       bool recompute_scale) {
    const double q_min = dtype.q_min(), q_max = dtype.q_max();
    if (r_max == r_min) {
        // A constant block has no range: widen it to include 0 so the constant is representable.
        r_min = std::min(r_min, 0.0);
        r_max = std::max(r_max, 0.0);
        if (r_max == r_min) {  // all zeros
            scale = 1.0;
            zero_point = static_cast<std::int32_t>(std::clamp(0.0, q_min, q_max));
            return;
        }
    }
    scale = floor_scale((r_max - r_min) / (q_max - q_min));
    const double z = q_min - r_min / scale;
    if (z < q_min) {  // r_min > 0: the codes start at r = 0, not at r_min
        zero_point = dtype.q_min();
        if (recompute_scale) scale = floor_scale(r_max / (q_max - q_min));
    } else if (z > q_max) {  // r_max < 0: the codes end at r = 0
        zero_point = dtype.q_max();
        if (recompute_scale) scale = floor_scale(-r_min / (q_max - q_min));
    } else
        zero_point = static_cast<std::int32_t>(std::nearbyint(z));  // half to even, like Python's round()
}

void symmetric_params(double abs_max, const IntType& dtype, double& scale, std::int32_t& zero_point) {
    if (!dtype.is_signed) throw Error("symmetric mode needs a signed type, not " + dtype.name());
    scale = abs_max == 0 ? 1.0 : floor_scale(abs_max / dtype.q_max());
    zero_point = 0;
}

double naive_max_scale(const Tensor& tensor) {
    if (tensor.values.empty()) return 1.0;
    const double abs_max =
        Eigen::Map<const Eigen::ArrayXf>(tensor.values.data(), static_cast<Eigen::Index>(tensor.values.size())).abs().maxCoeff();
    return abs_max == 0 ? 1.0 : floor_scale(abs_max / 255.0);
}

void set_block_layout(const Shape& shape, const QuantConfig& config, QuantParams& params) {
    const std::int64_t n = checked_numel(shape);
    switch (config.granularity) {
        case Granularity::Tensor:
            params.block_stride = n;
            params.block_count = 1;
            break;
        case Granularity::Channel: {
            if (config.axis < 0 || config.axis >= static_cast<int>(shape.size()))
                throw Error("channel axis " + std::to_string(config.axis) + " is out of range");
            std::int64_t stride = 1;
            for (std::size_t k = static_cast<std::size_t>(config.axis) + 1; k < shape.size(); ++k) stride *= shape[k];
            params.block_stride = stride;
            params.block_count = shape[static_cast<std::size_t>(config.axis)];
            break;
        }
        case Granularity::Group:
            if (config.group_size < 1 || shape.back() % config.group_size != 0)
                throw Error("group size " + std::to_string(config.group_size) + " does not divide the last dimension " +
                            std::to_string(shape.back()));
            params.block_stride = config.group_size;
            params.block_count = n / config.group_size;
            break;
    }
}

QuantParams compute_params(const Tensor& tensor, const QuantConfig& config) {
    check_config(config, tensor.shape);
    QuantParams params;
    set_block_layout(tensor.shape, config, params);
    const auto count = static_cast<std::size_t>(params.block_count);
    params.scale.assign(count, 1.0);
    params.zero_point.assign(count, 0);
    if (config.mode == Mode::Manual) {
        params.scale[0] = config.manual_scale;
        params.zero_point[0] = config.manual_zero_point;
        return params;
    }
    if (config.calibration != Calibration::MinMax) {
        calibrated_params(tensor, config, params);
        return params;
    }
    const std::vector<MinMax> ranges = block_ranges(tensor, params);
    for (std::size_t b = 0; b < count; ++b) {
        const double lo = ranges[b].lo, hi = ranges[b].hi;
        if (config.mode == Mode::Asymmetric)
            asymmetric_params(lo, hi, config.dtype, params.scale[b], params.zero_point[b], config.recompute_scale);
        else
            symmetric_params(std::max(std::abs(lo), std::abs(hi)), config.dtype, params.scale[b], params.zero_point[b]);
    }
    return params;
}

}  // namespace qs
