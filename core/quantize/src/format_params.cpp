// The scales of a float, codebook or block format (FORMATS.md "Scale for element formats", "Block formats"),
// and the checks that refuse a config a format cannot take.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "format_kernels.hpp"
#include "format_scales.hpp"
#include "format_simd_avx2.hpp"
#include "parallel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/params.hpp"

namespace qs {
namespace detail {

// s = max|r| / largest as the float32 division rounded to nearest (FORMATS.md, as torchao and ModelOpt
// compute a float8 scale): the block's own maximum may land a hair past the largest value, and saturates to it
// (not counted as clipped: clips_counted). nf4's largest is 1: s = max|r| exactly. An all-zero block has s = 1.
float symmetric_format_scale(float amax, FormatId format) {
    if (amax == 0) return 1.0f;
    const auto largest = static_cast<float>(format_traits(format).largest);  // every format's largest is a float32
    float s = amax / largest;
    // A block of subnormals whose quotient underflows (amax below 2^-150 largest) would get s = 0, and r / 0
    // has no code: the smallest positive float32, the one above the quotient.
    if (s == 0) s = std::numeric_limits<float>::denorm_min();
    // At float32's limit (max|r| near 3.4e38) r' = s * largest would overflow: the float32 below, and the
    // maximum saturates (by less than an ulp) instead of dequantizing to Inf.
    if (std::isinf(s * largest)) s = std::nextafter(s, 0.0f);
    return s;
}

void take_importance(const FormatConfig& config, const Shape& shape, FormatParams& p) {
    const FormatTraits& row = format_traits(config.format);
    if (!config.importance || !row.ggml || !row.ggml->takes_importance) return;
    p.importance = config.importance;
    p.row_length = shape.back();
}

std::shared_ptr<const std::vector<float>> row_sums_of_squares(const TensorView& view, std::int64_t row_length) {
    const std::int64_t rows = view.numel() / row_length;
    auto sums = std::make_shared<std::vector<float>>(static_cast<std::size_t>(rows));
    detail::parallel_guarded(view, detail::pass_threads(view.numel()), [&](int thread, int threads) {
        std::vector<float> scratch(static_cast<std::size_t>(row_length));
        std::int64_t r0, r1;
        detail::static_share(rows, thread, threads, r0, r1);
        for (std::int64_t r = r0; r < r1; ++r)
            (*sums)[static_cast<std::size_t>(r)] =
                ggml_row_sum_squares(floats_at(view, r * row_length, row_length, scratch.data()), row_length);
    });
    return sums;
}

ChunkPlace chunk_place(const FormatParams& p, std::int64_t first) {
    ChunkPlace place;
    place.first = first;
    place.row_length = p.row_length;
    place.global_scale = p.global_scale;
    if (p.ggml_blocks) {
        const GgmlTypeInfo& type = *format_traits(p.format).ggml;
        place.blocks = p.ggml_blocks.get() + first / type.block_size * type.type_size;
    }
    if (p.weighted()) {
        place.importance = p.importance->data();
        place.row_sum_squares = p.row_sum_squares->data();
    }
    return place;
}

float on_demand_scale_unguarded(const FormatParams& params, std::int64_t block) {
    float scratch[8];
    const std::int64_t n = params.block_stride;  // one run of at most 8 values (compute_format_params)
    return symmetric_format_scale(values_amax(floats_at(params.recipe->values, block * n, n, scratch), n), params.format);
}

}  // namespace detail

namespace {

// Element formats' scales are computed on demand when they are many, each block one short run, and a float
// apiece would cost more than the values (QuantParams' rule: kOnDemandMinBlocks blocks of at most 8).
bool scales_cost_more_than_values(const TensorView& view, const QuantParams& layout) {
    return layout.block_count >= (std::int64_t{1} << 16) && layout.block_stride <= 8 &&
           layout.block_stride * layout.block_count == view.numel() &&
           static_cast<double>(layout.block_count) * sizeof(float) >
               static_cast<double>(view.numel()) * static_cast<double>(element_size(view.type));
}

constexpr std::int64_t kChunk = 4096;

// The smallest and largest value and the largest magnitude of each run [j * stride, (j + 1) * stride),
// folded into block j % count; every value checked finite. Parallel over blocks (each thread owns whole
// blocks), or over chunks for a single block.
struct BlockStats {
    std::vector<float> amax;
    float lo = FLT_MAX, hi = -FLT_MAX;
};

// Folds n values into the running smallest, largest and largest magnitude, as the sequential std::min /
// std::max scan does (of +0 and -0, the first seen is kept); false when one is not finite.
bool scan_values(const float* r, std::int64_t len, float& lo, float& hi, float& amax) {
    float l = lo, h = hi, a = amax;
    float nonfinite = 0;  // r - r is NaN exactly for a NaN or an Inf (min/max would skip a NaN)
    std::int64_t k = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    if (len >= 8) {
        k = len - len % 8;
        float cl = 0, ch = 0;
        bool bad_lanes = false;
        detail::stats_avx2(r, k, cl, ch, a, bad_lanes);
        if (bad_lanes) nonfinite = NAN;
        const auto first_zero = [&] { return *std::find(r, r + k, 0.0f); };
        if (cl == 0) cl = first_zero();
        if (ch == 0) ch = first_zero();
        l = std::min(l, cl), h = std::max(h, ch);
    }
#endif
    for (; k < len; ++k) {
        l = std::min(l, r[k]), h = std::max(h, r[k]), a = std::max(a, std::fabs(r[k]));
        nonfinite += r[k] - r[k];
    }
    lo = l, hi = h, amax = a;
    return nonfinite == 0 && std::isfinite(l) && std::isfinite(h);
}

BlockStats block_stats(const TensorView& view, std::int64_t stride, std::int64_t count) {
    const std::int64_t n = view.numel();
    BlockStats stats;
    stats.amax.assign(static_cast<std::size_t>(count), 0.0f);
    const int threads = detail::pass_threads(n);
    std::vector<float> lo(static_cast<std::size_t>(threads), FLT_MAX), hi(static_cast<std::size_t>(threads), -FLT_MAX);
    std::vector<float> one_amax(static_cast<std::size_t>(threads), 0.0f);
    std::atomic<bool> bad{false};
    const auto scan = [&](const float* r, std::int64_t len, int thread, float& amax) {
        if (!scan_values(r, len, lo[static_cast<std::size_t>(thread)], hi[static_cast<std::size_t>(thread)], amax)) bad = true;
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

// A block format's stats and every block's scale in one read of the values. NVFP4's sb needs the tensor's g,
// known only at the end: its blocks' amax are kept in `scale` meanwhile, and their scales set from them.
// A ggml codec row with `keep_blocks` keeps the bytes its blocks were quantized to (p.ggml_blocks).
BlockStats block_format_pass(const TensorView& view, FormatParams& p, bool keep_blocks) {
    const FormatInfo& info = format_info(p.format);
    const std::int64_t n = view.numel(), blocks = n / info.block_size;
    p.block_stride = info.block_size;
    p.block_count = blocks;
    p.scale.assign(static_cast<std::size_t>(blocks), 1.0f);
    p.stored.assign(static_cast<std::size_t>(blocks), 0);
    if (info.has_offset) p.offset.assign(static_cast<std::size_t>(blocks), 0.0f);
    const bool global = info.has_global_scale();  // NVFP4: the blocks' amax now, their scales once g is known
    BlockStats stats;
    stats.amax.assign(1, 0.0f);
    std::vector<BlockStats> parts;
    const int threads = detail::pass_threads(n);
    const std::int64_t per_chunk = kChunk / info.block_size;  // kChunk is a multiple of every block size
    std::shared_ptr<std::uint8_t[]> kept;  // uninitialized: every block is written
    const std::int64_t type_size = info.keeps_blocks ? info.ggml->type_size : 0;
    if (keep_blocks && info.keeps_blocks && blocks <= FormatParams::kKeptBlockBytes / type_size)
        kept.reset(new std::uint8_t[static_cast<std::size_t>(blocks * type_size)]);
    for (int t = 0; t < threads; ++t) parts.push_back(stats);
    std::atomic<bool> bad{false};
    detail::parallel_guarded(view, threads, [&](int thread, int) {
        BlockStats& part = parts[static_cast<std::size_t>(thread)];
        std::vector<float> scratch(static_cast<std::size_t>(kChunk));
        std::int64_t c0, c1;
        detail::static_share((blocks + per_chunk - 1) / per_chunk, thread, threads, c0, c1);
        for (std::int64_t c = c0; c < c1; ++c) {
            const std::int64_t b0 = c * per_chunk, b1 = std::min(blocks, b0 + per_chunk);
            const std::int64_t len = (b1 - b0) * info.block_size;
            const float* r = floats_at(view, b0 * info.block_size, len, scratch.data());
            if (!scan_values(r, len, part.lo, part.hi, part.amax[0])) {
                bad = true;  // refused below; no recipe sees a value that is not finite
                continue;
            }
            const auto at = static_cast<std::size_t>(b0);
            ChunkPlace place = detail::chunk_place(p, b0 * info.block_size);
            if (kept) place.keep_blocks = kept.get() + b0 * type_size;
            info.kernels.block_scales(info, r, b1 - b0, p.scale.data() + at, p.stored.data() + at,
                                      p.offset.empty() ? nullptr : p.offset.data() + at, place);
        }
    });
    if (bad) throw_nonfinite(view, first_nonfinite(view));
    p.ggml_blocks = std::move(kept);
    for (const BlockStats& part : parts) {
        stats.lo = std::min(stats.lo, part.lo);
        stats.hi = std::max(stats.hi, part.hi);
        stats.amax[0] = std::max(stats.amax[0], part.amax[0]);
    }
    if (global) {
        p.global_scale = info.kernels.global_scale(stats.amax[0]);
        detail::parallel_run(nullptr, detail::pass_threads(blocks * 16), [&](int thread, int count) {
            std::int64_t b0, b1;
            detail::static_share(blocks, thread, count, b0, b1);
            const auto at = static_cast<std::size_t>(b0);
            info.kernels.scales_from_amax(p.global_scale, b1 - b0, p.scale.data() + at, p.stored.data() + at);
        });
    }
    return stats;
}

}  // namespace

FormatParams compute_format_params(const TensorView& view, const FormatConfig& config, TensorRange* range,
                                   bool keep_blocks) {
    check_format_config(config, view.shape);
    FormatParams p;
    p.format = config.format;
    const FormatInfo& info = format_info(config.format);
    QuantParams layout;
    if (!info.own_blocks()) set_block_layout(view.shape, format_layout_config(config), layout);
    if (info.own_blocks()) {
        detail::take_importance(config, view.shape, p);
        if (p.weighted()) p.row_sum_squares = detail::row_sums_of_squares(view, p.row_length);
        const BlockStats stats = block_format_pass(view, p, keep_blocks);
        if (range) *range = {stats.lo, stats.hi};
        return p;
    }
    const bool per_block_stats = config.scaling == ElementScaling::Symmetric;
    if (per_block_stats && scales_cost_more_than_values(view, layout)) {
        const BlockStats stats = block_stats(view, view.numel(), 1);  // checks every value; no scale kept
        if (range) *range = {stats.lo, stats.hi};
        p.block_stride = layout.block_stride;
        p.block_count = layout.block_count;
        p.recipe = std::make_shared<FormatScaleRecipe>(FormatScaleRecipe{view, nullptr});
        return p;
    }
    const BlockStats stats = block_stats(view, per_block_stats ? layout.block_stride : view.numel(),
                                         per_block_stats ? layout.block_count : 1);
    if (range) *range = {stats.lo, stats.hi};
    p.block_stride = layout.block_stride;
    p.block_count = layout.block_count;
    if (config.scaling == ElementScaling::Symmetric) {
        p.scale.resize(stats.amax.size());
        std::transform(stats.amax.begin(), stats.amax.end(), p.scale.begin(),
                       [&](float a) { return detail::symmetric_format_scale(a, config.format); });
    } else {
        p.scaled = config.scaling == ElementScaling::Manual;
        p.scale.assign(static_cast<std::size_t>(p.block_count),
                       p.scaled ? static_cast<float>(config.manual_scale) : 1.0f);
    }
    return p;
}

bool format_params_from_amax(const FormatConfig& config, const Shape& shape, float amax, FormatParams& out) {
    const FormatInfo& info = format_info(config.format);
    FormatParams p;
    p.format = config.format;
    if (info.own_blocks()) {
        p.block_stride = info.block_size;
        p.block_count = checked_numel(shape) / info.block_size;
        detail::take_importance(config, shape, p);  // the rows' sums of squares: the pass computes them
        if (info.has_global_scale()) p.global_scale = info.kernels.global_scale(amax);
        out = std::move(p);
        return true;
    }
    if (config.granularity != Granularity::Tensor || config.scaling != ElementScaling::Symmetric) return false;
    p.block_stride = checked_numel(shape);
    p.block_count = 1;
    p.scale.assign(1, detail::symmetric_format_scale(amax, config.format));
    out = std::move(p);
    return true;
}

float FormatParams::scale_of(std::int64_t block) const {
    if (!recipe) return scale.at(static_cast<std::size_t>(block));
    if (block < 0 || block >= block_count) throw Error("block index out of range");
    float s = 1;
    recipe->values.guarded([&] { s = detail::on_demand_scale_unguarded(*this, block); });
    return s;
}

void FormatParams::keep_values_alive(std::shared_ptr<const void> values_owner) {
    if (!recipe) return;
    auto kept = std::make_shared<FormatScaleRecipe>(*recipe);
    kept->owner = std::move(values_owner);
    recipe = std::move(kept);
}

void FormatParams::store_scales() {
    if (!recipe) return;
    std::vector<float> s(static_cast<std::size_t>(block_count));
    recipe->values.guarded([&] {
        for (std::int64_t b = 0; b < block_count; ++b) s[static_cast<std::size_t>(b)] = detail::on_demand_scale_unguarded(*this, b);
    });
    scale = std::move(s);
    recipe = nullptr;
}

}  // namespace qs
