// The (s, z) plane's grid and the MSE over it (see mse_plane.hpp).
#include "quantscope/mse_plane.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "parallel.hpp"

namespace qs {
namespace {

constexpr std::int64_t kChunk = 4096;
using ConstMapF = Eigen::Map<const Eigen::ArrayXf>;

}  // namespace

bool mse_grid(const float* data, std::int64_t n, const QuantConfig& config, const std::vector<double>& scales,
              const std::vector<std::int32_t>& zero_points, std::vector<double>& mse, const std::atomic<bool>* cancel,
              std::atomic<int>* progress) {
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

bool mse_landscape(const Tensor& tensor, const QuantConfig& config, const std::vector<double>& scales,
                   const std::vector<std::int32_t>& zero_points, std::int64_t stride, std::vector<double>& mse,
                   const std::atomic<bool>* cancel, std::atomic<int>* progress) {
    if (stride <= 1) return mse_grid(tensor.values.data(), tensor.numel(), config, scales, zero_points, mse, cancel, progress);
    std::vector<float> sample;
    for (std::int64_t i = 0; i < tensor.numel(); i += stride) sample.push_back(tensor.values[static_cast<std::size_t>(i)]);
    return mse_grid(sample.data(), static_cast<std::int64_t>(sample.size()), config, scales, zero_points, mse, cancel,
                    progress);
}

// n scales spaced evenly in log over about [lo, hi], one of them exactly `anchor` (lo <= anchor <= hi): the
// lessons' choice is then a cell of the grid, so "best on grid" is never worse than it.
std::vector<double> log_spaced_through(double lo, double hi, double anchor, int n) {
    const double step = (std::log(hi) - std::log(lo)) / std::max(1, n - 1);
    const int below = std::clamp(static_cast<int>(std::lround((std::log(anchor) - std::log(lo)) / step)), 0, n - 1);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i == below ? anchor : anchor * std::exp((i - below) * step);
    return v;
}

// n integers (fewer when [q_lo, q_hi] has fewer) evenly spaced over about [lo, hi], one of them exactly
// `anchor`: the step covers [lo, hi] in n points, and the window then grows within [q_lo, q_hi] to n points.
std::vector<std::int32_t> int_spread_through(std::int64_t lo, std::int64_t hi, std::int64_t anchor, std::int64_t q_lo,
                                           std::int64_t q_hi, int n) {
    const std::int64_t step = std::max<std::int64_t>(1, (hi - lo + n - 2) / std::max(1, n - 1));
    std::int64_t below = (anchor - lo) / step, above = (hi - anchor) / step;
    for (bool grew = true; below + above + 1 < n && grew;) {
        grew = false;
        if (anchor + (above + 1) * step <= q_hi && below + above + 1 < n) {
            ++above;
            grew = true;
        }
        if (anchor - (below + 1) * step >= q_lo && below + above + 1 < n) {
            ++below;
            grew = true;
        }
    }
    std::vector<std::int32_t> v;
    for (std::int64_t k = -below; k <= above; ++k) v.push_back(static_cast<std::int32_t>(anchor + k * step));
    return v;
}

void landscape_grid(const IntType& dtype, const LandscapePoint& minmax, const LandscapePoint* current, int n,
                    std::vector<double>& scales, std::vector<std::int32_t>& zero_points) {
    const double s_mm = minmax.scale;
    const std::int32_t z_mm = minmax.zero_point;
    const double s_lo = std::min(s_mm, current ? current->scale : s_mm);
    const double s_hi = std::max(s_mm, current ? current->scale : s_mm);
    scales = log_spaced_through(s_lo / 4.0, s_hi * 4.0, s_mm, n);
    std::int64_t z_lo = dtype.q_min(), z_hi = dtype.q_max();
    if (dtype.levels() > 64) {
        const std::int64_t half = dtype.levels() / 4;
        const std::int64_t a = std::min<std::int64_t>(z_mm, current ? current->zero_point : z_mm);
        const std::int64_t b = std::max<std::int64_t>(z_mm, current ? current->zero_point : z_mm);
        z_lo = std::max<std::int64_t>(z_lo, a - half);
        z_hi = std::min<std::int64_t>(z_hi, b + half);
    }
    zero_points = int_spread_through(z_lo, z_hi, z_mm, dtype.q_min(), dtype.q_max(), n);
}

bool mse_grid(const TensorView& view, const QuantConfig& config, const std::vector<double>& scales,
              const std::vector<std::int32_t>& zero_points, std::vector<double>& mse, const std::atomic<bool>* cancel,
              const std::function<void(float)>& progress) {
    const std::int64_t n = view.numel();
    const auto ns = static_cast<std::int64_t>(scales.size()), nz = static_cast<std::int64_t>(zero_points.size());
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    // sums[si * nz + zi]: each (s, z)'s chunk sums added in chunk order, as mse_grid over floats adds them.
    std::vector<double> sums(static_cast<std::size_t>(ns * nz), 0.0);
    constexpr std::int64_t kBlock = kChunk * 256;
    std::vector<float> block(static_cast<std::size_t>(std::min(n, kBlock)));
    const int threads = static_cast<int>(std::min<std::int64_t>(ns, detail::pass_threads(n)));
    for (std::int64_t b0 = 0; b0 < n; b0 += kBlock) {
        if (cancel && cancel->load()) return false;
        const std::int64_t len = std::min(kBlock, n - b0);
        view.guarded([&] {
            for (std::int64_t k = 0; k < len; k += kChunk) {
                const std::int64_t piece = std::min(kChunk, len - k);
                float* dst = block.data() + k;
                const float* src = floats_at(view, b0 + k, piece, dst);
                if (src != dst) std::copy(src, src + piece, dst);
            }
        });
        detail::NextIndex rows(0, ns);
        detail::parallel_run(nullptr, threads, [&](int, int) {
            alignas(64) float x[kChunk];
            for (std::int64_t si; rows.take(si);) {
                const float s = static_cast<float>(scales[static_cast<std::size_t>(si)]);
                double* row = sums.data() + si * nz;
                for (std::int64_t begin = 0; begin < len; begin += kChunk) {
                    const std::int64_t piece = std::min(kChunk, len - begin);
                    ConstMapF r(block.data() + begin, piece);
                    Eigen::Map<Eigen::ArrayXf> xs(x, piece);
                    xs = r / s;
                    for (std::int64_t zi = 0; zi < nz; ++zi) {  // the expression of mse_grid over floats
                        const float z = static_cast<float>(zero_points[static_cast<std::size_t>(zi)]);
                        row[zi] += config.rounding == Rounding::HalfEven
                                       ? (r - s * ((xs + z).rint().max(q_min).min(q_max) - z)).square().sum()
                                       : (r - s * ((xs + z).round().max(q_min).min(q_max) - z)).square().sum();
                    }
                }
            }
        });
        if (progress) progress(static_cast<float>(b0 + len) / static_cast<float>(n));
    }
    mse.assign(static_cast<std::size_t>(ns * nz), 0.0);
    for (std::int64_t si = 0; si < ns; ++si)
        for (std::int64_t zi = 0; zi < nz; ++zi)
            mse[static_cast<std::size_t>(zi * ns + si)] = sums[static_cast<std::size_t>(si * nz + zi)] / static_cast<double>(n);
    return !(cancel && cancel->load());
}

}  // namespace qs
