#include "quantscope/params.hpp"

#include "quantscope/format_quantize.hpp"

#include <Eigen/Core>
#ifdef __AVX2__
#include <immintrin.h>
#endif
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>

#include "block_pairs.hpp"
#include "format_kernels.hpp"
#include "format_scales.hpp"
#include "parallel.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/error.hpp"

namespace qs {
namespace {

// Scales are applied in float32: keep them at or above the smallest normal float32 so r / s never
// divides by zero or a denormal, whatever the range (SPEC: "always finite, s > 0, no division by zero").
double floor_scale(double s) {
    return std::max(s, static_cast<double>(std::numeric_limits<float>::min()));
}

// Elements read at a time: cache-resident, decoded from the stored type when it is not float32.
constexpr std::int64_t kChunk = 4096;
// Block layouts with fewer blocks than this reduce chunks in parallel into per-thread block ranges; more
// blocks are reduced one block per task.
constexpr std::int64_t kFewBlocks = 64;

struct MinMax {
    float lo = std::numeric_limits<float>::infinity();
    float hi = -std::numeric_limits<float>::infinity();
    void add(const MinMax& o) {
        lo = std::min(lo, o.lo);
        hi = std::max(hi, o.hi);
    }
};

// Min and max of n floats, and whether they are all finite (x * 0 is 0 for a finite x, NaN otherwise).
// Eight independent lanes, written as vector min, max and add where the build has AVX2: GCC left the plain
// loop scalar (32 scalar operations per 8 values), which made this pass, compute_params' read of the
// tensor, cost as much as the fused quantize pass. min(x, lo) keeps lo unless x < lo, as the loop does
// (a NaN, and -0 against +0, leave lo as it was), so the lanes hold the same bits either way.
MinMax range_of(const float* data, std::int64_t n, bool& finite) {
    float lo[8], hi[8], zero[8];
    for (int k = 0; k < 8; ++k) lo[k] = hi[k] = data[0], zero[k] = 0;
    std::int64_t i = 0;
#ifdef __AVX2__
    __m256 vlo = _mm256_set1_ps(data[0]), vhi = vlo, vzero = _mm256_setzero_ps();
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(data + i);
        vlo = _mm256_min_ps(v, vlo);  // v < lo ? v : lo
        vhi = _mm256_max_ps(v, vhi);  // v > hi ? v : hi
        vzero = _mm256_add_ps(vzero, _mm256_mul_ps(v, _mm256_setzero_ps()));
    }
    _mm256_storeu_ps(lo, vlo), _mm256_storeu_ps(hi, vhi), _mm256_storeu_ps(zero, vzero);
#endif
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) {
            const float v = data[i + k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
            zero[k] += v * 0.0f;
        }
    for (; i < n; ++i) {
        lo[0] = std::min(lo[0], data[i]);
        hi[0] = std::max(hi[0], data[i]);
        zero[0] += data[i] * 0.0f;
    }
    MinMax r{lo[0], hi[0]};
    float z = zero[0];
    for (int k = 1; k < 8; ++k) {
        r.add({lo[k], hi[k]});
        z += zero[k];
    }
    finite = finite && z == 0 && std::isfinite(r.lo) && std::isfinite(r.hi);
    return r;
}

// The threads' ranges merged into the whole tensor's, and whether every value they saw was finite.
struct WholeRange {
    MinMax whole;
    std::mutex merging;
    std::atomic<bool> all_finite{true};
    void merge(bool finite, const MinMax& seen) {
        if (!finite) all_finite = false;
        const std::lock_guard<std::mutex> lock(merging);
        whole.add(seen);
    }
};

// Few blocks of long runs (per tensor, a leading axis): chunks in parallel, per-thread block ranges.
template <class Done>
void few_long_block_ranges(const TensorView& view, const QuantParams& p, const Done& done, WholeRange& range) {
    const std::int64_t n = view.numel();
    const std::int64_t chunks_per_run = (p.block_stride + kChunk - 1) / kChunk;
    const std::int64_t items = n / p.block_stride * chunks_per_run;
    std::vector<MinMax> blocks(static_cast<std::size_t>(p.block_count));  // fewer than kFewBlocks
    detail::parallel_guarded(view, detail::pass_threads(n), [&](int thread, int threads) {
        std::vector<MinMax> local(blocks.size());
        bool finite = true;
        float scratch[kChunk];
        std::int64_t i_begin, i_end;
        detail::static_share(items, thread, threads, i_begin, i_end);
        for (std::int64_t i = i_begin; i < i_end; ++i) {
            const std::int64_t run = i / chunks_per_run, c = i % chunks_per_run;
            const std::int64_t len = std::min(kChunk, p.block_stride - c * kChunk);
            const float* values = floats_at(view, run * p.block_stride + c * kChunk, len, scratch);
            local[static_cast<std::size_t>(run % p.block_count)].add(range_of(values, len, finite));
        }
        MinMax seen;
        for (const MinMax& m : local) seen.add(m);
        range.merge(finite, seen);
        const std::lock_guard<std::mutex> lock(range.merging);
        for (std::size_t b = 0; b < blocks.size(); ++b) blocks[b].add(local[b]);
    });
    for (std::size_t b = 0; b < blocks.size(); ++b) done(b, blocks[b]);
}

// Many blocks of long runs (groups, channels of a middle axis): one block per task.
template <class Done>
void many_long_block_ranges(const TensorView& view, const QuantParams& p, const Done& done, WholeRange& range) {
    const std::int64_t n = view.numel();
    const std::int64_t runs_per_block = n / (p.block_stride * p.block_count);
    detail::parallel_guarded(view, detail::pass_threads(n), [&](int thread, int threads) {
        bool finite = true;
        float scratch[kChunk];
        MinMax seen;
        std::int64_t b_begin, b_end;
        detail::static_share(p.block_count, thread, threads, b_begin, b_end);
        for (std::int64_t b = b_begin; b < b_end; ++b) {
            MinMax block;
            for (std::int64_t r = 0; r < runs_per_block; ++r)
                for (std::int64_t c = 0; c < p.block_stride; c += kChunk) {
                    const std::int64_t len = std::min(kChunk, p.block_stride - c);
                    const std::int64_t begin = (r * p.block_count + b) * p.block_stride + c;
                    block.add(range_of(floats_at(view, begin, len, scratch), len, finite));
                }
            done(static_cast<std::size_t>(b), block);
            seen.add(block);
        }
        range.merge(finite, seen);
    });
}

// Short runs (channels of the last axis, small groups): the layout repeats every `period` elements; each
// task owns a segment of whole blocks of the period and reduces it element-wise over every repetition,
// which vectorises.
template <class Done>
void short_run_block_ranges(const TensorView& view, const QuantParams& p, const Done& done, WholeRange& range) {
    const std::int64_t n = view.numel();
    const std::int64_t period = p.block_stride * p.block_count;
    const std::int64_t repeats = n / period;
    const std::int64_t blocks_per_segment = std::max<std::int64_t>(1, kChunk / p.block_stride);
    const std::int64_t segment = blocks_per_segment * p.block_stride;
    const std::int64_t segments = (period + segment - 1) / segment;
    detail::parallel_guarded(view, detail::pass_threads(n), [&](int thread, int threads) {
        bool finite = true;
        MinMax seen;
        float scratch[kChunk], lo[kChunk], hi[kChunk], zero[kChunk];
        std::int64_t s_begin, s_end;
        detail::static_share(segments, thread, threads, s_begin, s_end);
        for (std::int64_t sgm = s_begin; sgm < s_end; ++sgm) {
            const std::int64_t first = sgm * segment, len = std::min(segment, period - first);
            const float* values = floats_at(view, first, len, scratch);
            for (std::int64_t k = 0; k < len; ++k) lo[k] = hi[k] = values[k], zero[k] = values[k] * 0.0f;
            for (std::int64_t r = 1; r < repeats; ++r) {
                values = floats_at(view, r * period + first, len, scratch);
                for (std::int64_t k = 0; k < len; ++k) {
                    const float v = values[k];
                    lo[k] = v < lo[k] ? v : lo[k];
                    hi[k] = v > hi[k] ? v : hi[k];
                    zero[k] += v * 0.0f;
                }
            }
            range_of(zero, len, finite);  // a NaN may not survive min and max: its trace is in zero[]
            for (std::int64_t b = first / p.block_stride; b * p.block_stride < first + len; ++b) {
                const std::int64_t at = b * p.block_stride - first;
                MinMax m = range_of(lo + at, p.block_stride, finite);
                m.add(range_of(hi + at, p.block_stride, finite));
                done(static_cast<std::size_t>(b), m);
                seen.add(m);
            }
        }
        range.merge(finite, seen);
    });
}

// Min and max of every block, in one parallel pass over the view that also checks that every value is
// finite (else qs::Error naming the first bad index). Each block's range goes to `done(b, range)` once it is
// final (from any thread, each block once), so no per-block array is kept; returns the whole tensor's range.
template <class Done>
MinMax block_ranges(const TensorView& view, const QuantParams& p, const Done& done) {
    WholeRange range;
    if (p.block_stride >= 64 && p.block_count < kFewBlocks) few_long_block_ranges(view, p, done, range);
    else if (p.block_stride >= 64) many_long_block_ranges(view, p, done, range);
    else short_run_block_ranges(view, p, done, range);
    if (!range.all_finite) {
        // The fast pass only knows that something is not finite: find the first one for the message.
        const std::int64_t bad = first_nonfinite(view);
        if (bad >= 0) throw_nonfinite(view, bad);
    }
    return range.whole;
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

double naive_max_scale(double abs_max) { return abs_max == 0 ? 1.0 : floor_scale(abs_max / 255.0); }

double naive_max_scale(const Tensor& tensor) {
    if (tensor.values.empty()) return 1.0;
    return naive_max_scale(
        Eigen::Map<const Eigen::ArrayXf>(tensor.values.data(), static_cast<Eigen::Index>(tensor.values.size())).abs().maxCoeff());
}

void set_block_layout(const Shape& shape, const QuantConfig& config, QuantParams& params) {
    const std::int64_t n = checked_numel(shape, kMaxViewElements);
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

namespace {

// Below this many blocks the pairs are stored whatever they cost (at most 768 KiB), so every panel can list them.
constexpr std::int64_t kOnDemandMinBlocks = std::int64_t{1} << 16;

// A block's (s, z) under min/max calibration from its range (compute_params and params_from_ranges alike).
void pair_from_range(float lo, float hi, const QuantConfig& config, double& scale, std::int32_t& zero_point) {
    if (config.mode == Mode::Asymmetric)
        asymmetric_params(lo, hi, config.dtype, scale, zero_point, config.recompute_scale);
    else
        symmetric_params(std::max(std::abs(static_cast<double>(lo)), std::abs(static_cast<double>(hi))), config.dtype, scale,
                         zero_point);
}

// Whether storing every block's pair (a double and an int32) would cost more than the values themselves.
bool pairs_cost_more_than_values(const TensorView& view, const QuantParams& p, const QuantConfig& config) {
    if (config.mode == Mode::Manual || p.block_count < kOnDemandMinBlocks) return false;
    const double pair_bytes = static_cast<double>(p.block_count) * (sizeof(double) + sizeof(std::int32_t));
    return pair_bytes > static_cast<double>(view.numel()) * static_cast<double>(element_size(view.type));
}


// `tensor`: the same values as `view` already in memory (the calibrators need them all at once), or null.
QuantParams compute_params(const TensorView& view, const Tensor* tensor, const QuantConfig& config,
                           TensorRange* whole, const PassControl& control) {
    if (!is_int_format(config.format)) return format_quant_params(view, config, whole);
    check_config(config, view.shape);
    QuantParams params;
    set_block_layout(view.shape, config, params);
    if (pairs_cost_more_than_values(view, params, config)) {
        // The min/max pass checks every value and gives the whole range; the pairs are not kept.
        const MinMax all = block_ranges(view, params, [](std::size_t, const MinMax&) {});
        if (whole != nullptr) *whole = {all.lo, all.hi};
        detail::on_demand_params(view, config, params);
        return params;
    }
    const auto count = static_cast<std::size_t>(params.block_count);
    params.scale.assign(count, 1.0);
    params.zero_point.assign(count, 0);
    // Min/max calibration sets each block's (s, z) as soon as its range is known: no array of ranges.
    const bool from_ranges = config.mode != Mode::Manual && config.calibration == Calibration::MinMax;
    const MinMax all = block_ranges(view, params, [&](std::size_t b, const MinMax& range) {
        if (!from_ranges || !std::isfinite(range.lo) || !std::isfinite(range.hi)) return;  // a bad value throws next
        pair_from_range(range.lo, range.hi, config, params.scale[b], params.zero_point[b]);
    });
    if (whole != nullptr) *whole = {all.lo, all.hi};
    if (config.mode == Mode::Manual) {
        params.scale[0] = config.manual_scale;
        params.zero_point[0] = config.manual_zero_point;
        return params;
    }
    if (config.calibration != Calibration::MinMax) {
        if (tensor != nullptr) calibrated_params(*tensor, config, params);
        else calibrated_params(view, config, params, control);
        return params;
    }
    return params;
}

}  // namespace

QuantParams compute_params(const Tensor& tensor, const QuantConfig& config) {
    return compute_params(view_of(tensor), &tensor, config, nullptr, {});
}

std::shared_ptr<const BlockRanges> block_ranges_for(const TensorView& view, const QuantConfig& config) {
    if (!is_int_format(config.format) || config.mode == Mode::Manual || config.calibration != Calibration::MinMax)
        return nullptr;
    check_config(config, view.shape);
    QuantParams layout;
    set_block_layout(view.shape, config, layout);
    if (pairs_cost_more_than_values(view, layout, config)) return nullptr;
    auto out = std::make_shared<BlockRanges>();
    out->block_stride = layout.block_stride;
    out->block_count = layout.block_count;
    out->lo.assign(static_cast<std::size_t>(layout.block_count), 0.0f);
    out->hi.assign(static_cast<std::size_t>(layout.block_count), 0.0f);
    block_ranges(view, layout, [&](std::size_t b, const MinMax& range) {
        out->lo[b] = range.lo;
        out->hi[b] = range.hi;
    });  // throws on a value that is not finite
    return out;
}

bool ranges_fit(const BlockRanges& ranges, const Shape& shape, const QuantConfig& config) {
    if (!is_int_format(config.format) || config.mode == Mode::Manual || config.calibration != Calibration::MinMax)
        return false;
    QuantParams layout;
    set_block_layout(shape, config, layout);
    return layout.block_stride == ranges.block_stride && layout.block_count == ranges.block_count;
}

QuantParams params_from_ranges(const BlockRanges& ranges, const Shape& shape, const QuantConfig& config) {
    check_config(config, shape);
    if (!ranges_fit(ranges, shape, config)) throw Error("the blocks' ranges are of another layout");
    QuantParams params;
    set_block_layout(shape, config, params);
    const auto count = static_cast<std::size_t>(params.block_count);
    params.scale.assign(count, 1.0);
    params.zero_point.assign(count, 0);
    for (std::size_t b = 0; b < count; ++b) pair_from_range(ranges.lo[b], ranges.hi[b], config, params.scale[b], params.zero_point[b]);
    return params;
}

QuantParams compute_params(const TensorView& view, const QuantConfig& config, TensorRange* whole,
                           const PassControl& control) {
    return compute_params(view, nullptr, config, whole, control);
}

namespace detail {

// The params of `view` with nothing stored per block: the recipe and the ranges of s and z over all blocks,
// found by computing every block's pair once (blocks in parallel, each from its few values).
void on_demand_params(const TensorView& view, const QuantConfig& config, QuantParams& params) {
    auto recipe = std::make_shared<BlockPairRecipe>();
    recipe->values = view;
    recipe->config = config;
    params.recipe = recipe;
    params.scale.clear();
    params.zero_point.clear();
    struct Ranges {
        double s_lo = std::numeric_limits<double>::infinity(), s_hi = 0;
        std::int32_t z_lo = std::numeric_limits<std::int32_t>::max(), z_hi = std::numeric_limits<std::int32_t>::min();
    };
    const int threads = detail::pass_threads(view.numel());
    std::vector<Ranges> found(static_cast<std::size_t>(threads));
    detail::parallel_guarded(view, threads, [&](int thread, int count) {
        std::int64_t b_begin, b_end;
        detail::static_share(params.block_count, thread, count, b_begin, b_end);
        Ranges& r = found[static_cast<std::size_t>(thread)];
        for (std::int64_t b = b_begin; b < b_end; ++b) {
            double s;
            std::int32_t z;
            detail::compute_pair_unguarded(params, b, s, z);
            r.s_lo = std::min(r.s_lo, s), r.s_hi = std::max(r.s_hi, s);
            r.z_lo = std::min(r.z_lo, z), r.z_hi = std::max(r.z_hi, z);
        }
    });
    Ranges all;
    for (const Ranges& r : found) {
        all.s_lo = std::min(all.s_lo, r.s_lo), all.s_hi = std::max(all.s_hi, r.s_hi);
        all.z_lo = std::min(all.z_lo, r.z_lo), all.z_hi = std::max(all.z_hi, r.z_hi);
    }
    recipe->scale_min = all.s_lo, recipe->scale_max = all.s_hi;
    recipe->zero_point_min = all.z_lo, recipe->zero_point_max = all.z_hi;
}

void compute_pair_unguarded(const QuantParams& params, std::int64_t block, double& scale, std::int32_t& zero_point) {
    const BlockPairRecipe& recipe = *params.recipe;
    const QuantConfig& config = recipe.config;
    // The block's elements in flat order, exactly as gather_block collects them for the stored calibrators, and
    // the same functions on them: a pair computed on demand has the bits it would have had stored.
    thread_local std::vector<float> values;
    values.clear();
    const std::int64_t period = params.block_stride * params.block_count, n = recipe.values.numel();
    float scratch[kMaxOnDemandBlock];
    for (std::int64_t start = block * params.block_stride; start < n; start += period) {
        for (std::int64_t first = start; first < start + params.block_stride; first += kMaxOnDemandBlock) {
            const std::int64_t len = std::min(kMaxOnDemandBlock, start + params.block_stride - first);
            const float* v = floats_at(recipe.values, first, len, scratch);
            values.insert(values.end(), v, v + len);
        }
    }
    if (!is_int_format(config.format)) {  // an element format's symmetric s (format_params.cpp), z = 0
        scale = symmetric_format_scale(values_amax(values.data(), static_cast<std::int64_t>(values.size())), config.format);
        zero_point = 0;
        return;
    }
    if (config.calibration == Calibration::Mse)
        mse_params(values.data(), static_cast<std::int64_t>(values.size()), config, false, scale, zero_point);
    else
        params_from_range(calibrate_block(values, config), config, scale, zero_point);
}

}  // namespace detail

void QuantParams::pair(std::int64_t block, double& s, std::int32_t& z) const {
    if (!recipe) {
        s = scale.at(static_cast<std::size_t>(block));
        z = zero_point.at(static_cast<std::size_t>(block));
        return;
    }
    if (block < 0 || block >= block_count) throw Error("block index out of range");
    recipe->values.guarded([&] { detail::compute_pair_unguarded(*this, block, s, z); });
}

double QuantParams::scale_of(std::int64_t block) const {
    double s;
    std::int32_t z;
    pair(block, s, z);
    return s;
}

std::int32_t QuantParams::zero_point_of(std::int64_t block) const {
    double s;
    std::int32_t z;
    pair(block, s, z);
    return z;
}

void QuantParams::keep_values_alive(std::shared_ptr<const void> values_owner) {
    if (!recipe) return;
    auto kept = std::make_shared<BlockPairRecipe>(*recipe);
    kept->owner = std::move(values_owner);
    recipe = std::move(kept);
}

void QuantParams::store_pairs() {
    if (!recipe) return;
    std::vector<double> s(static_cast<std::size_t>(block_count));
    std::vector<std::int32_t> z(s.size());
    recipe->values.guarded([&] {
        for (std::int64_t b = 0; b < block_count; ++b)
            detail::compute_pair_unguarded(*this, b, s[static_cast<std::size_t>(b)], z[static_cast<std::size_t>(b)]);
    });
    scale = std::move(s);
    zero_point = std::move(z);
    recipe = nullptr;
}

void QuantParams::ranges(double& s_min, double& s_max, std::int32_t& z_min, std::int32_t& z_max) const {
    if (recipe) {
        s_min = recipe->scale_min, s_max = recipe->scale_max;
        z_min = recipe->zero_point_min, z_max = recipe->zero_point_max;
        return;
    }
    s_min = s_max = 1, z_min = z_max = 0;
    if (scale.empty()) return;
    const auto [slo, shi] = std::minmax_element(scale.begin(), scale.end());
    const auto [zlo, zhi] = std::minmax_element(zero_point.begin(), zero_point.end());
    s_min = *slo, s_max = *shi, z_min = *zlo, z_max = *zhi;
}

}  // namespace qs
