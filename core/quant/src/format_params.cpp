// The scales of a float, codebook or block format (FORMATS.md "Scale for element formats", "Block formats"),
// and the checks that refuse a config a format cannot take.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "format_kernels.hpp"
#include "parallel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/params.hpp"

namespace qs {
namespace {

constexpr std::int64_t kChunk = 4096;

// The smallest and largest value and the largest magnitude of each run [j * stride, (j + 1) * stride),
// folded into block j % count; every value checked finite. Parallel over blocks (each thread owns whole
// blocks), or over chunks for a single block.
struct BlockStats {
    std::vector<float> amax;
    float lo = FLT_MAX, hi = -FLT_MAX;
};

BlockStats block_stats(const TensorView& view, std::int64_t stride, std::int64_t count) {
    const std::int64_t n = view.numel();
    BlockStats stats;
    stats.amax.assign(static_cast<std::size_t>(count), 0.0f);
    const int threads = detail::pass_threads(n);
    std::vector<float> lo(static_cast<std::size_t>(threads), FLT_MAX), hi(static_cast<std::size_t>(threads), -FLT_MAX);
    std::vector<float> one_amax(static_cast<std::size_t>(threads), 0.0f);
    std::atomic<bool> bad{false};
    const auto scan = [&](const float* r, std::int64_t len, int thread, float& amax) {
        float l = lo[static_cast<std::size_t>(thread)], h = hi[static_cast<std::size_t>(thread)], a = amax;
        float nonfinite = 0;  // r - r is NaN exactly for a NaN or an Inf (min/max would skip a NaN)
        for (std::int64_t k = 0; k < len; ++k) {
            l = std::min(l, r[k]), h = std::max(h, r[k]), a = std::max(a, std::fabs(r[k]));
            nonfinite += r[k] - r[k];
        }
        if (nonfinite != 0 || !std::isfinite(l) || !std::isfinite(h)) bad = true;
        lo[static_cast<std::size_t>(thread)] = l, hi[static_cast<std::size_t>(thread)] = h, amax = a;
    };
    detail::parallel_guarded(view, threads, [&](int thread, int) {
        std::vector<float> scratch(static_cast<std::size_t>(kChunk));
        if (count == 1) {
            std::int64_t first, end;
            detail::static_share((n + kChunk - 1) / kChunk, thread, threads, first, end);
            for (std::int64_t c = first; c < end; ++c) {
                const std::int64_t len = std::min(kChunk, n - c * kChunk);
                scan(floats_at(view, c * kChunk, len, scratch.data()), len, thread, one_amax[static_cast<std::size_t>(thread)]);
            }
            return;
        }
        std::int64_t b0, b1;
        detail::static_share(count, thread, threads, b0, b1);
        for (std::int64_t b = b0; b < b1; ++b)
            for (std::int64_t run = b; run * stride < n; run += count)
                for (std::int64_t at = run * stride; at < (run + 1) * stride; at += kChunk) {
                    const std::int64_t len = std::min(kChunk, (run + 1) * stride - at);
                    scan(floats_at(view, at, len, scratch.data()), len, thread, stats.amax[static_cast<std::size_t>(b)]);
                }
    });
    if (bad) throw_nonfinite(view, first_nonfinite(view));
    for (int t = 0; t < threads; ++t) {
        stats.lo = std::min(stats.lo, lo[static_cast<std::size_t>(t)]);
        stats.hi = std::max(stats.hi, hi[static_cast<std::size_t>(t)]);
        if (count == 1) stats.amax[0] = std::max(stats.amax[0], one_amax[static_cast<std::size_t>(t)]);
    }
    return stats;
}

// s = max|r| / largest, rounded up to float32 so that max|r| / s never passes the largest value (the
// nearest float32 below the exact quotient would make the block's own maximum saturate, counted as clipped);
// nf4: s = max|r|. An all-zero block has s = 1.
float symmetric_scale(float amax, FormatId format) {
    if (amax == 0) return 1.0f;
    if (format == FormatId::Nf4) return amax;
    const double exact = static_cast<double>(amax) / format_info(format).element.largest();
    float s = static_cast<float>(exact);
    if (static_cast<double>(s) < exact) s = std::nextafter(s, FLT_MAX);
    // At float32's limit (max|r| near 3.4e38) s * largest would overflow: the float32 below, and the maximum
    // saturates (by less than an ulp) instead of dequantizing to Inf.
    if (static_cast<double>(s) * format_info(format).element.largest() > FLT_MAX) s = std::nextafter(s, 0.0f);
    return s;
}

void block_format_scales(const TensorView& view, FormatParams& p) {
    const FormatInfo& info = format_info(p.format);
    const std::int64_t n = view.numel(), blocks = n / info.block_size;
    p.block_stride = info.block_size;
    p.block_count = blocks;
    p.scale.assign(static_cast<std::size_t>(blocks), 1.0f);
    p.stored.assign(static_cast<std::size_t>(blocks), 0);
    if (p.format == FormatId::Q4_1) p.offset.assign(static_cast<std::size_t>(blocks), 0.0f);
    const int threads = detail::pass_threads(n);
    detail::parallel_guarded(view, threads, [&](int thread, int) {
        std::vector<float> scratch(static_cast<std::size_t>(info.block_size));
        std::int64_t b0, b1;
        detail::static_share(blocks, thread, threads, b0, b1);
        for (std::int64_t b = b0; b < b1; ++b) {
            const float* r = floats_at(view, b * info.block_size, info.block_size, scratch.data());
            const detail::BlockScale s = detail::block_scale(p.format, r, info.block_size, p.global_scale);
            p.scale[static_cast<std::size_t>(b)] = s.scale;
            p.stored[static_cast<std::size_t>(b)] = s.stored;
            if (!p.offset.empty()) p.offset[static_cast<std::size_t>(b)] = s.offset;
        }
    });
}

}  // namespace

FormatParams compute_format_params(const TensorView& view, const FormatConfig& config, TensorRange* range) {
    check_format_config(config, view.shape);
    FormatParams p;
    p.format = config.format;
    const FormatInfo& info = format_info(config.format);
    QuantParams layout;
    if (info.kind != FormatKind::Block) set_block_layout(view.shape, format_layout_config(config), layout);
    const bool per_block_stats = info.kind != FormatKind::Block && config.scaling == ElementScaling::Symmetric;
    const BlockStats stats = block_stats(view, per_block_stats ? layout.block_stride : view.numel(),
                                         per_block_stats ? layout.block_count : 1);
    if (range) *range = {stats.lo, stats.hi};
    if (info.kind == FormatKind::Block) {
        if (config.format == FormatId::NvFp4) p.global_scale = detail::nvfp4_global_scale(stats.amax[0]);
        block_format_scales(view, p);
        return p;
    }
    p.block_stride = layout.block_stride;
    p.block_count = layout.block_count;
    if (config.scaling == ElementScaling::Symmetric) {
        p.scale.resize(stats.amax.size());
        std::transform(stats.amax.begin(), stats.amax.end(), p.scale.begin(),
                       [&](float a) { return symmetric_scale(a, config.format); });
    } else {
        p.scaled = config.scaling == ElementScaling::Manual;
        p.scale.assign(static_cast<std::size_t>(p.block_count),
                       p.scaled ? static_cast<float>(config.manual_scale) : 1.0f);
    }
    return p;
}

}  // namespace qs
