// The MSE landscape's passes and its best point (see landscape.hpp; the grid and the MSE over it: mse_plane.cpp).
#include "quantscope/landscape.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "bit_patterns.hpp"
#include "parallel.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/params.hpp"

namespace qs {
namespace {

// values_mse of a view: straight over its floats when it is float32 in memory, else read in its stored type.
double MseOf(const TensorView& values, double s, std::int32_t z, const QuantConfig& config, const LandscapeCallbacks& cb) {
    if (const float* direct = detail::direct_floats(values)) return values_mse(direct, values.numel(), s, z, config);
    PassControl control;
    control.cancel = cb.cancel;
    return values_mse(values, s, z, config, control);
}

// A flat view of a sample in memory.
TensorView flat_view(const Tensor& sample) {
    TensorView v = view_of(sample);
    v.shape = {sample.numel()};
    return v;
}

// Every stride-th element of a view (stride >= 1), decoded.
Tensor gather_every(const TensorView& view, std::int64_t stride) {
    Tensor sample;
    const std::int64_t n = view.numel();
    sample.values.reserve(static_cast<std::size_t>((n + stride - 1) / stride));
    view.guarded([&] {
        float v = 0;
        for (std::int64_t i = 0; i < n; i += stride) sample.values.push_back(*floats_at(view, i, 1, &v));
    });
    sample.shape = {sample.numel()};
    return sample;
}

// Map pass: an ns x nz grid, mse_landscape over batches of scales so that progress shows and a cancel is
// seen within a batch.
// With `patterns` (a 16-bit tensor's, stride 1), every cell is a sum over its bit patterns instead.
bool map_pass(const LandscapeRequest& rq, const LandscapeCallbacks& cb, LandscapeResult& r, int n,
             const TensorView& data, std::int64_t stride, float progress_from, float progress_to,
             const detail::PatternTable* patterns = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    landscape_grid(rq.config.dtype, {r.minmax_scale, r.minmax_zero_point}, rq.has_current ? &rq.current : nullptr, n,
                   r.scales, r.zero_points);
    const std::size_t ns = r.scales.size(), nz = r.zero_points.size();
    r.mse.assign(ns * nz, 0.0);
    const auto report = [&](float f) { cb.set_progress(progress_from + (progress_to - progress_from) * f); };
    if (patterns != nullptr) {
        if (!detail::pattern_mse_grid(*patterns, rq.config, r.scales, r.zero_points, r.mse, cb.cancel, report)) return false;
    } else if (detail::direct_floats(data) == nullptr) {
        // In its stored type: one read of the view for the whole grid, the progress by the fraction read.
        if (!mse_grid(data, rq.config, r.scales, r.zero_points, r.mse, cb.cancel, report)) return false;
    }
    const std::size_t batch = 8;
    std::vector<double> part;
    for (std::size_t s0 = 0; s0 < ns && patterns == nullptr && detail::direct_floats(data) != nullptr; s0 += batch) {
        const std::size_t s1 = std::min(ns, s0 + batch);
        const std::vector<double> scales(r.scales.begin() + static_cast<std::ptrdiff_t>(s0),
                                         r.scales.begin() + static_cast<std::ptrdiff_t>(s1));
        if (!mse_grid(detail::direct_floats(data), data.numel(), rq.config, scales, r.zero_points, part, cb.cancel))
            return false;
        for (std::size_t zi = 0; zi < nz; ++zi)
            for (std::size_t si = s0; si < s1; ++si) r.mse[zi * ns + si] = part[zi * (s1 - s0) + (si - s0)];
        cb.set_progress(progress_from + (progress_to - progress_from) * static_cast<float>(s1) / static_cast<float>(ns));
    }
    r.stride = stride;
    r.exact = stride == 1;
    find_best(r);
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return true;
}

// Curve pass: n clipping ranges alpha in [alpha_max / 50, alpha_max], each evaluated with values_mse on
// `values` (the tensor, or a strided sample of it), or over `patterns` (a 16-bit tensor's, stride 1).
bool curve_pass(const LandscapeRequest& rq, const LandscapeCallbacks& cb, LandscapeResult& r, int n,
               const TensorView& values, std::int64_t stride, float progress_from, float progress_to,
               const detail::PatternTable* patterns = nullptr) {
    std::vector<float> scratch;
    const auto start = std::chrono::steady_clock::now();
    const double q_max = rq.config.dtype.q_max();
    double alpha_max = r.minmax_scale * q_max;
    if (rq.has_current) alpha_max = std::max(alpha_max, rq.current.scale * q_max);
    r.alphas.resize(static_cast<std::size_t>(n));
    r.scales.resize(static_cast<std::size_t>(n));
    r.mse.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        if (cb.cancelled()) return false;
        const double alpha = alpha_max * (0.02 + 0.98 * i / std::max(1, n - 1));
        double s = 1.0;
        std::int32_t z = 0;
        params_from_range(ValueRange{-alpha, alpha}, rq.config, s, z);
        r.alphas[static_cast<std::size_t>(i)] = alpha;
        r.scales[static_cast<std::size_t>(i)] = s;
        r.mse[static_cast<std::size_t>(i)] =
            patterns != nullptr ? detail::pattern_sse(*patterns, static_cast<float>(s), static_cast<float>(z), rq.config, scratch) /
                                      static_cast<double>(patterns->n)
                                : MseOf(values, s, z, rq.config, cb);
        if (cb.cancelled()) return false;
        cb.set_progress(progress_from + (progress_to - progress_from) * static_cast<float>(i + 1) / static_cast<float>(n));
    }
    r.stride = stride;
    r.exact = stride == 1;
    find_best(r);
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return true;
}

}  // namespace

void find_best(LandscapeResult& r) {
    std::size_t best = 0;
    r.mse_lo = std::numeric_limits<double>::infinity();
    r.mse_hi = 0.0;
    for (std::size_t i = 0; i < r.mse.size(); ++i) {
        if (r.mse[i] < r.mse[best]) best = i;
        r.mse_lo = std::min(r.mse_lo, r.mse[i]);
        r.mse_hi = std::max(r.mse_hi, r.mse[i]);
    }
    r.best_mse = r.mse.empty() ? 0.0 : r.mse[best];
    if (r.curve) {
        r.best_scale = r.scales.empty() ? 1.0 : r.scales[best];
        r.best_zero_point = 0;
    } else if (!r.scales.empty()) {
        r.best_scale = r.scales[best % r.scales.size()];
        r.best_zero_point = r.zero_points[best / r.scales.size()];
    }
}

bool compute_landscape(const Tensor& t, const LandscapeRequest& rq, const LandscapeCallbacks& cb) {
    return compute_landscape(view_of(t), rq, cb);
}

namespace {

// The lessons' choice: per-tensor min/max, the scale kept when z is clamped.
QuantConfig minmax_config(const LandscapeRequest& rq) {
    QuantConfig mm = rq.config;
    mm.mode = rq.curve ? Mode::Symmetric : Mode::Asymmetric;
    mm.granularity = Granularity::Tensor;
    mm.axis = 0;
    mm.group_size = 0;
    mm.calibration = Calibration::MinMax;
    mm.recompute_scale = false;
    mm.overflow = Overflow::Clamp;
    return mm;
}

// A bf16 or f16 tensor's landscape from its bit patterns' counts (the request's, else counted in one read
// pass): every point a sum over at most 65536 patterns, so the exact map or curve comes at once, without the
// sampled passes. The min/max (s, z) is compute_params' (the same lo and hi, the same formulas).
bool pattern_landscape(const TensorView& t, const LandscapeRequest& rq, const LandscapeCallbacks& cb) {
    std::vector<std::int64_t> counted;
    const std::vector<std::int64_t>* bits = rq.bit_counts;
    if (bits == nullptr || bits->size() != detail::kBitPatterns) {
        PassControl control;
        control.cancel = cb.cancel;
        control.progress = [&cb](float f) { cb.set_progress(0.5f * f); };
        counted = detail::count_bit_patterns(t, control);
        if (cb.cancelled()) return false;
        bits = &counted;
    }
    const detail::PatternTable table = detail::pattern_table(t.type, *bits);
    const QuantConfig mm = minmax_config(rq);
    LandscapeResult r;
    r.curve = rq.curve;
    params_from_range(ValueRange{table.lo, table.hi}, mm, r.minmax_scale, r.minmax_zero_point);
    std::vector<float> scratch;
    r.minmax_mse = detail::pattern_sse(table, static_cast<float>(r.minmax_scale), static_cast<float>(r.minmax_zero_point),
                                       mm, scratch) / static_cast<double>(table.n);
    const float from = counted.empty() ? 0.0f : 0.5f;
    const bool done = rq.curve ? curve_pass(rq, cb, r, kCurveFine, t, 1, from, 1.0f, &table)
                               : map_pass(rq, cb, r, kLandscapeFine, t, 1, from, 1.0f, &table);
    if (!done) return false;
    cb.deliver(std::move(r));
    return true;
}

}  // namespace

bool compute_landscape(const TensorView& t, const LandscapeRequest& rq, const LandscapeCallbacks& cb) {
    if (detail::sixteen_bit(t.type) && t.numel() > 0) return pattern_landscape(t, rq, cb);
    const std::int64_t n = t.numel();
    const QuantConfig mm = minmax_config(rq);
    const QuantParams p = compute_params(t, mm);
    LandscapeResult base;
    base.curve = rq.curve;
    base.minmax_scale = p.scale[0];
    base.minmax_zero_point = p.zero_point[0];
    base.minmax_mse = MseOf(t, base.minmax_scale, base.minmax_zero_point, mm, cb);
    if (cb.cancelled()) return false;

    // Samples are gathered once (every stride-th element) and then evaluated whole: mse_landscape would gather
    // its own strided copy on every call, a pass over the big tensor per batch of scales.
    const std::int64_t stride = std::max<std::int64_t>(1, (n + kLandscapeCoarseSample - 1) / kLandscapeCoarseSample);
    const TensorView whole = [&t, n] {
        TensorView v = t;
        v.shape = {n};
        return v;
    }();
    if (!rq.curve) {
        LandscapeResult coarse = base;
        const Tensor coarse_sample = stride > 1 ? gather_every(t, stride) : Tensor{};
        if (!map_pass(rq, cb, coarse, kLandscapeCoarse, stride > 1 ? flat_view(coarse_sample) : whole, stride, 0.0f, 0.05f))
            return false;
        cb.deliver(coarse);
        // A big tensor's exact map takes seconds: first the full grid on a 1M-element sample.
        const std::int64_t mid_stride = (n + kLandscapeMidSample - 1) / kLandscapeMidSample;
        float from = 0.05f;
        if (mid_stride > 1) {
            LandscapeResult mid = base;
            from = 0.05f + 0.9f / static_cast<float>(mid_stride + 1);
            const Tensor mid_sample = gather_every(t, mid_stride);
            if (!map_pass(rq, cb, mid, kLandscapeFine, flat_view(mid_sample), mid_stride, 0.05f, from)) return false;
            cb.deliver(mid);
        }
        LandscapeResult fine = base;
        if (!map_pass(rq, cb, fine, kLandscapeFine, whole, 1, from, 1.0f)) return false;
        cb.deliver(std::move(fine));
        return true;
    }
    const Tensor sample = gather_every(t, stride);
    LandscapeResult coarse = base;
    if (!curve_pass(rq, cb, coarse, kCurveCoarse, flat_view(sample), stride, 0.0f, 0.1f)) return false;
    cb.deliver(coarse);
    LandscapeResult fine = base;
    if (!curve_pass(rq, cb, fine, kCurveFine, whole, 1, 0.1f, 1.0f)) return false;
    cb.deliver(std::move(fine));
    return true;
}

}  // namespace qs
