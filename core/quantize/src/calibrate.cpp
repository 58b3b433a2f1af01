#include "quantscope/calibrate.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "bit_patterns.hpp"
#include "quantscope/error.hpp"

namespace qs {
namespace {

constexpr std::int64_t kChunk = 4096;

using ConstMapF = Eigen::Map<const Eigen::ArrayXf>;

ValueRange min_max(const float* values, std::int64_t n, bool symmetric) {
    ConstMapF a(values, n);
    const double lo = a.minCoeff(), hi = a.maxCoeff();
    if (symmetric) {
        const double m = std::max(std::abs(lo), std::abs(hi));
        return {-m, m};
    }
    return {lo, hi};
}

// numpy.percentile's default (linear interpolation between the two nearest ranks), by selection.
double quantile(std::vector<float>& values, double q) {
    const double index = q * static_cast<double>(values.size() - 1);
    const auto k = static_cast<std::size_t>(std::floor(index));
    const double frac = index - static_cast<double>(k);
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    const double below = values[k];
    if (frac == 0 || k + 1 >= values.size()) return below;
    const double above = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(k) + 1, values.end());
    return below + frac * (above - below);
}

ValueRange percentile_range(std::vector<float>& values, const QuantConfig& config) {
    const double p = config.percentile / 100.0;
    if (config.mode == Mode::Symmetric) {
        for (float& v : values) v = std::abs(v);
        const double m = quantile(values, p);
        return {-m, m};
    }
    const double hi = quantile(values, p);
    const double lo = quantile(values, 1.0 - p);
    return {lo, hi};
}

}  // namespace

void params_from_range(const ValueRange& range, const QuantConfig& config, double& scale, std::int32_t& zero_point) {
    if (config.mode == Mode::Symmetric) {
        symmetric_params(std::max(std::abs(range.lo), std::abs(range.hi)), config.dtype, scale, zero_point);
        return;
    }
    asymmetric_params(range.lo, range.hi, config.dtype, scale, zero_point, config.recompute_scale);
}

ValueRange calibrate_block(std::vector<float>& values, const QuantConfig& config) {
    if (values.empty()) throw Error("cannot calibrate an empty block");
    const auto n = static_cast<std::int64_t>(values.size());
    if (config.calibration == Calibration::Percentile) return percentile_range(values, config);
    return min_max(values.data(), n, config.mode == Mode::Symmetric);
}

void gather_block(const Tensor& tensor, const QuantParams& params, std::int64_t block, std::vector<float>& out) {
    out.clear();
    const std::int64_t period = params.block_stride * params.block_count;
    for (std::int64_t start = block * params.block_stride; start < tensor.numel(); start += period)
        out.insert(out.end(), tensor.values.begin() + start, tensor.values.begin() + start + params.block_stride);
}

void calibrated_params(const Tensor& tensor, const QuantConfig& config, QuantParams& params) {
    const std::int64_t blocks = params.block_count;
    if (blocks == 1 && config.calibration == Calibration::Mse) {  // one block: its evaluations use every core
        mse_params(tensor.values.data(), tensor.numel(), config, true, params.scale[0], params.zero_point[0]);
        return;
    }
    // An exception must not leave an OpenMP region (std::terminate): the first one is kept and rethrown,
    // e.g. qs::Error for symmetric on an unsigned type, or std::bad_alloc gathering a 1 GiB block.
    std::exception_ptr failure;
    const bool contiguous = params.block_stride * params.block_count == tensor.numel();  // each block one run
    // Small blocks are handed out in batches: one at a time, the scheduling would cost more than a block.
    const std::int64_t batch = std::clamp<std::int64_t>(kChunk * 16 / std::max<std::int64_t>(1, tensor.numel() / blocks), 1, 1024);
#pragma omp parallel if (blocks > 1)
    {
        std::vector<float> values;
#pragma omp for schedule(dynamic, batch)
        for (std::int64_t b = 0; b < blocks; ++b) {
            try {
                double& scale = params.scale[static_cast<std::size_t>(b)];
                std::int32_t& zero_point = params.zero_point[static_cast<std::size_t>(b)];
                if (config.calibration == Calibration::Mse && contiguous) {  // read in place: mse does not reorder
                    mse_params(tensor.values.data() + b * params.block_stride, params.block_stride, config, false,
                               scale, zero_point);
                    continue;
                }
                gather_block(tensor, params, b, values);
                if (config.calibration == Calibration::Mse)
                    mse_params(values.data(), static_cast<std::int64_t>(values.size()), config, false, scale, zero_point);
                else
                    params_from_range(calibrate_block(values, config), config, scale, zero_point);
            } catch (...) {
#pragma omp critical(qs_calibrate_failure)
                if (!failure) failure = std::current_exception();
            }
        }
    }
    if (failure) std::rethrow_exception(failure);
}

namespace {

// Whether every block has the same (s, z) under both params (stored or computed on demand).
bool same_pairs(const QuantParams& a, const QuantParams& b) {
    if (a.block_count != b.block_count || a.block_stride != b.block_stride) return false;
    if (!a.on_demand() && !b.on_demand()) return a.scale == b.scale && a.zero_point == b.zero_point;
    for (std::int64_t block = 0; block < a.block_count; ++block) {
        double sa, sb;
        std::int32_t za, zb;
        a.pair(block, sa, za);
        b.pair(block, sb, zb);
        if (sa != sb || za != zb) return false;
    }
    return true;
}

}  // namespace

namespace {

// The table's configs: minmax, percentile 99.9 and 99.99, mse; then, in asymmetric mode, the same again with
// recompute_scale. Every row clamps.
std::vector<QuantConfig> calibrator_configs(const QuantConfig& base) {
    std::vector<QuantConfig> configs;
    QuantConfig c = base;
    if (c.mode == Mode::Manual) c.mode = Mode::Asymmetric;
    for (bool recompute : {false, true}) {
        if (recompute && c.mode != Mode::Asymmetric) break;
        c.recompute_scale = recompute;
        c.calibration = Calibration::MinMax;
        configs.push_back(c);
        c.calibration = Calibration::Percentile;
        for (double p : {99.9, 99.99}) {
            c.percentile = p;
            configs.push_back(c);
        }
        c.calibration = Calibration::Mse;
        configs.push_back(c);
    }
    for (QuantConfig& config : configs) config.overflow = Overflow::Clamp;
    return configs;
}

void mark_twins(std::vector<CalibrationRow>& rows) {
    if (rows.empty() || rows.front().config.mode != Mode::Asymmetric || rows.size() % 2 != 0) return;
    const std::size_t twins = rows.size() / 2;
    for (std::size_t i = 0; i < twins; ++i) {
        CalibrationRow& twin = rows[twins + i];
        twin.same_as_twin = same_pairs(twin.params, rows[i].params);
    }
}

}  // namespace

std::vector<CalibrationRow> compare_calibrators(const Tensor& tensor, const QuantConfig& base) {
    std::vector<CalibrationRow> rows;
    for (const QuantConfig& config : calibrator_configs(base)) {
        CalibrationRow row;
        row.config = config;
        QuantResult result = quantize(tensor, row.config, &row.params);
        row.metrics = result.metrics;
        rows.push_back(std::move(row));
    }
    mark_twins(rows);
    return rows;
}

std::vector<CalibrationRow> compare_calibrators(const TensorView& view, const QuantConfig& base,
                                                const PassControl& control, const std::vector<std::int64_t>* bit_counts) {
    const std::vector<QuantConfig> configs = calibrator_configs(base);
    std::vector<CalibrationRow> rows;
    if (detail::metrics_by_patterns(view, configs.front())) {
        // A bf16/f16 tensor per tensor: every row from the bit patterns' counts (given, or one counting pass).
        std::vector<std::int64_t> counted;
        if (bit_counts == nullptr || bit_counts->size() != detail::kBitPatterns) {
            counted = detail::count_bit_patterns(view, control);
            if (control.cancelled()) return rows;
            bit_counts = &counted;
        }
        for (const QuantConfig& config : configs) {
            if (control.cancelled()) return rows;
            const Quantization q = detail::quantize_by_patterns(view, config, bit_counts);
            rows.push_back({config, q.params, q.metrics, false});
        }
        control.report(1.0f);
        mark_twins(rows);
        return rows;
    }
    for (const QuantConfig& config : configs) {
        if (control.cancelled()) return rows;
        const float done = static_cast<float>(rows.size()), total = static_cast<float>(configs.size());
        PassControl row_control;
        row_control.cancel = control.cancel;
        if (control.progress)
            row_control.progress = [&control, done, total](float f) { control.report((done + f) / total); };
        CalibrationRow row;
        row.config = config;
        row.params = compute_params(view, row.config, nullptr, row_control);
        if (control.cancelled()) return rows;
        row.metrics = quantize_view(view, row.params, row.config);
        rows.push_back(std::move(row));
        control.report(static_cast<float>(rows.size()) / total);
    }
    mark_twins(rows);
    return rows;
}

}  // namespace qs
