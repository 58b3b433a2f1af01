#include "quantscope/calibrate.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "quantscope/error.hpp"

namespace qs {
namespace {

constexpr std::int64_t kChunk = 4096;
// The MSE search's coarse grid: this many shrink factors, each evaluated on at most kSampleBudget
// elements of the whole tensor (shared among its blocks).
constexpr int kGridPoints = 64;
constexpr std::int64_t kSampleBudget = std::int64_t{1} << 20;
constexpr double kMinShrink = 0.05;
constexpr int kGoldenSteps = 18;

using ConstMapF = Eigen::Map<const Eigen::ArrayXf>;

// Sum of squared errors of one cache-sized chunk, with x = r / s already computed or not.
double chunk_sse(const float* r_ptr, std::int64_t n, float s, float z, float q_min, float q_max, Rounding rounding) {
    ConstMapF r(r_ptr, n);
    if (rounding == Rounding::HalfEven)
        return (r - s * ((r / s + z).rint().max(q_min).min(q_max) - z)).cast<double>().square().sum();
    return (r - s * ((r / s + z).round().max(q_min).min(q_max) - z)).cast<double>().square().sum();
}

ValueRange min_max(const std::vector<float>& values, bool symmetric) {
    ConstMapF a(values.data(), static_cast<Eigen::Index>(values.size()));
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

// The min/max range shrunk by c: around 0 when it contains 0 (0 stays exactly representable), else around
// its centre.
ValueRange shrink(const ValueRange& full, double c) {
    if (c == 1.0) return full;  // exactly min/max, not min/max give or take an ulp of the centre arithmetic
    if (full.lo <= 0 && full.hi >= 0) return {c * full.lo, c * full.hi};
    const double centre = 0.5 * (full.lo + full.hi);
    return {centre - c * (centre - full.lo), centre + c * (full.hi - centre)};
}

ValueRange mse_range(const std::vector<float>& values, const QuantConfig& config, std::int64_t sample_size) {
    const ValueRange full = min_max(values, config.mode == Mode::Symmetric);
    const auto n = static_cast<std::int64_t>(values.size());
    auto mse_of = [&](double c, const float* data, std::int64_t count) {
        double s;
        std::int32_t z;
        params_from_range(shrink(full, c), config, s, z);
        return values_mse(data, count, s, z, config);
    };
    // Coarse grid on an evenly strided subsample.
    std::vector<float> sample;
    const float* grid_data = values.data();
    std::int64_t grid_n = n;
    if (n > sample_size) {
        const std::int64_t stride = (n + sample_size - 1) / sample_size;
        for (std::int64_t i = 0; i < n; i += stride) sample.push_back(values[static_cast<std::size_t>(i)]);
        grid_data = sample.data();
        grid_n = static_cast<std::int64_t>(sample.size());
    }
    const double step = (1.0 - kMinShrink) / (kGridPoints - 1);
    int best = kGridPoints - 1;
    double best_mse = std::numeric_limits<double>::infinity();
    for (int i = kGridPoints - 1; i >= 0; --i) {  // from c = 1 down: ties keep the wider range
        const double m = mse_of(kMinShrink + step * i, grid_data, grid_n);
        if (m < best_mse) best_mse = m, best = i;
    }
    // Golden-section search on the exact MSE around the best grid point.
    double a = std::max(kMinShrink, kMinShrink + step * (best - 1)), b = std::min(1.0, kMinShrink + step * (best + 1));
    const double inv_phi = (std::sqrt(5.0) - 1) / 2;
    double c1 = b - inv_phi * (b - a), c2 = a + inv_phi * (b - a);
    double f1 = mse_of(c1, values.data(), n), f2 = mse_of(c2, values.data(), n);
    for (int it = 0; it < kGoldenSteps; ++it) {
        if (f1 <= f2) {
            b = c2, c2 = c1, f2 = f1;
            c1 = b - inv_phi * (b - a);
            f1 = mse_of(c1, values.data(), n);
        } else {
            a = c1, c1 = c2, f1 = f2;
            c2 = a + inv_phi * (b - a);
            f2 = mse_of(c2, values.data(), n);
        }
    }
    // The answer is the best of the search, the grid point and min/max, all measured exactly.
    double best_c = 1.0, best_exact = mse_of(1.0, values.data(), n);
    for (double c : {kMinShrink + step * best, f1 <= f2 ? c1 : c2}) {
        const double m = mse_of(c, values.data(), n);
        if (m < best_exact) best_exact = m, best_c = c;
    }
    return shrink(full, best_c);
}

}  // namespace

double values_mse(const float* values, std::int64_t n, double scale, std::int32_t zero_point, const QuantConfig& config) {
    const float s = static_cast<float>(scale), z = static_cast<float>(zero_point);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    double total = 0;
    const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for reduction(+ : total) schedule(static) if (n >= 16 * kChunk)
    for (std::int64_t c = 0; c < chunks; ++c) {
        const std::int64_t begin = c * kChunk;
        total += chunk_sse(values + begin, std::min(kChunk, n - begin), s, z, q_min, q_max, config.rounding);
    }
    return total / static_cast<double>(n);
}

void params_from_range(const ValueRange& range, const QuantConfig& config, double& scale, std::int32_t& zero_point) {
    if (config.mode == Mode::Symmetric) {
        symmetric_params(std::max(std::abs(range.lo), std::abs(range.hi)), config.dtype, scale, zero_point);
        return;
    }
    asymmetric_params(range.lo, range.hi, config.dtype, scale, zero_point, config.recompute_scale);
}

ValueRange calibrate_block(std::vector<float>& values, const QuantConfig& config) {
    if (values.empty()) throw Error("cannot calibrate an empty block");
    switch (config.calibration) {
        case Calibration::MinMax: return min_max(values, config.mode == Mode::Symmetric);
        case Calibration::Percentile: return percentile_range(values, config);
        case Calibration::Mse: return mse_range(values, config, kSampleBudget);
    }
    return {};
}

void gather_block(const Tensor& tensor, const QuantParams& params, std::int64_t block, std::vector<float>& out) {
    out.clear();
    const std::int64_t period = params.block_stride * params.block_count;
    for (std::int64_t start = block * params.block_stride; start < tensor.numel(); start += period)
        out.insert(out.end(), tensor.values.begin() + start, tensor.values.begin() + start + params.block_stride);
}

void calibrated_params(const Tensor& tensor, const QuantConfig& config, QuantParams& params) {
    const std::int64_t blocks = params.block_count;
    // Each block's share of the subsample budget of the MSE grid.
    const std::int64_t sample = std::max<std::int64_t>(256, kSampleBudget / blocks);
    // An exception must not leave an OpenMP region (std::terminate): the first one is kept and rethrown,
    // e.g. qs::Error for symmetric on an unsigned type, or std::bad_alloc gathering a 1 GiB block.
    std::exception_ptr failure;
#pragma omp parallel if (blocks > 1)
    {
        std::vector<float> values;
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t b = 0; b < blocks; ++b) {
            try {
                gather_block(tensor, params, b, values);
                const ValueRange range = config.calibration == Calibration::Mse ? mse_range(values, config, sample)
                                                                                 : calibrate_block(values, config);
                params_from_range(range, config, params.scale[static_cast<std::size_t>(b)],
                                  params.zero_point[static_cast<std::size_t>(b)]);
            } catch (...) {
#pragma omp critical(qs_calibrate_failure)
                if (!failure) failure = std::current_exception();
            }
        }
    }
    if (failure) std::rethrow_exception(failure);
}

std::vector<CalibrationRow> compare_calibrators(const Tensor& tensor, const QuantConfig& base) {
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
    std::vector<CalibrationRow> rows;
    for (const QuantConfig& config : configs) {
        CalibrationRow row;
        row.config = config;
        row.config.overflow = Overflow::Clamp;
        QuantResult result = quantize(tensor, row.config, &row.params);
        row.metrics = result.metrics;
        rows.push_back(std::move(row));
    }
    return rows;
}

bool mse_landscape(const Tensor& tensor, const QuantConfig& config, const std::vector<double>& scales,
                   const std::vector<std::int32_t>& zero_points, std::int64_t stride, std::vector<double>& mse,
                   const std::atomic<bool>* cancel, std::atomic<int>* progress) {
    if (stride < 1) stride = 1;
    std::vector<float> sample;
    const float* data = tensor.values.data();
    std::int64_t n = tensor.numel();
    if (stride > 1) {
        for (std::int64_t i = 0; i < n; i += stride) sample.push_back(tensor.values[static_cast<std::size_t>(i)]);
        data = sample.data();
        n = static_cast<std::int64_t>(sample.size());
    }
    const auto ns = static_cast<std::int64_t>(scales.size()), nz = static_cast<std::int64_t>(zero_points.size());
    mse.assign(static_cast<std::size_t>(ns * nz), 0.0);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    std::atomic<bool> cancelled{false};  // read and written by every thread of the loop
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t si = 0; si < ns; ++si) {
        if (cancelled || (cancel && cancel->load())) {
            cancelled = true;
            continue;
        }
        const float s = static_cast<float>(scales[static_cast<std::size_t>(si)]);
        std::vector<double> sums(static_cast<std::size_t>(nz), 0.0);
        alignas(64) float x[kChunk];
        // r / s once per chunk, then every zero point over the cache-resident chunk.
        for (std::int64_t begin = 0; begin < n; begin += kChunk) {
            const std::int64_t len = std::min(kChunk, n - begin);
            ConstMapF r(data + begin, len);
            Eigen::Map<Eigen::ArrayXf> xs(x, len);
            xs = r / s;
            // Each chunk's sum in float (Eigen's pairwise-vectorised reduction), accumulated in double: a
            // third of the work of squaring in double, for a map drawn on a log scale.
            for (std::int64_t zi = 0; zi < nz; ++zi) {
                const float z = static_cast<float>(zero_points[static_cast<std::size_t>(zi)]);
                sums[static_cast<std::size_t>(zi)] +=
                    config.rounding == Rounding::HalfEven
                        ? (r - s * ((xs + z).rint().max(q_min).min(q_max) - z)).square().sum()
                        : (r - s * ((xs + z).round().max(q_min).min(q_max) - z)).square().sum();
            }
        }
        for (std::int64_t zi = 0; zi < nz; ++zi)
            mse[static_cast<std::size_t>(zi * ns + si)] = sums[static_cast<std::size_t>(zi)] / static_cast<double>(n);
        if (progress) ++*progress;
    }
    return !cancelled && !(cancel && cancel->load());
}

}  // namespace qs
