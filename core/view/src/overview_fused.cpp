#include "overview_fused.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "bit_patterns.hpp"
#include "element_loads_avx2.hpp"
#include "overview_folder.hpp"
#include "overview_patterns.hpp"
#include "parallel.hpp"
#include "quantize_kernel_avx2.hpp"
#include "quantize_plan.hpp"

namespace qs::detail {

#ifndef QS_HAVE_AVX2_KERNEL
bool fused_int_overview(const TensorView&, const QuantParams&, const QuantConfig&, const OverviewGrid&,
                        const std::vector<std::int64_t>*, QuantOverview&) {
    return false;
}
#else
namespace {

// A unit of work: whole bands of blocks (so no two threads add into one block) of at least this many
// elements, ending where a work item ends (so each item's sums come from one thread, as quantize's do).
constexpr std::int64_t kUnit = std::int64_t{1} << 18;
// A row of per-column accumulators per thread: 16 bytes a column.
constexpr std::int64_t kMaxColumns = std::int64_t{1} << 20;

// One work item: quantize_chunk's AVX2 arithmetic on the first n - n % 8 elements and its scalar formula on
// the rest, the same sums in the same order, each result folded into the overview instead of stored. Without
// kCount the codes are not counted (nor the clipped ones: the caller has the bit patterns' counts); without
// kClamp (which needs !kCount) the caller knows from them that no element clips, and the clamp is left out.
template <bool kHalfEven, bool kDeq, bool kCount, bool kClamp, class Ld>
void run_item(const Ld& ld, std::int64_t len, float s, float z, const QuantConfig& config,
              const Quantize8<kHalfEven>& quantize_ref, Folder& folder, KernelSums& ks) {
    const Quantize8<kHalfEven> quantize = quantize_ref;  // a local copy: its constants stay in registers
    const std::int64_t n8 = len - len % 8;
    const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z);
    const __m256i q_min = _mm256_set1_epi32(config.dtype.q_min());
    MetricLanes lanes;
    __m256 cmin = quantize.vq_max, cmax = quantize.vq_min;
    std::int64_t clipped = 0;
    // One group of eight: its codes (as floats), r' and |r - r'|, added to the sums.
    const auto group = [&](std::int64_t k, __m256& v, __m256& d, __m256& e) {
        const __m256 r = ld.at(k);
        if constexpr (kCount) v = quantize(r, vs, vz, clipped);
        else if constexpr (kClamp) v = quantize.clamp(quantize.rounded(r, vs, vz));
        else v = quantize.rounded(r, vs, vz);
        if constexpr (kDeq) {
            cmin = _mm256_min_ps(cmin, v);
            cmax = _mm256_max_ps(cmax, v);
        }
        d = dequantize8(v, vs, vz);
        e = abs_error8(r, d);
        lanes.add(r, e);
    };
    for (std::int64_t k = 0; k < n8;) {
        __m256 v, d, e;
        const std::int64_t fit = std::min(n8 - k, folder.room() / 8 * 8);  // groups inside the current row
        if (fit > 0) {
            std::int32_t* c = folder.codes_here();
            float* m = folder.errors_here();
            double* ds = folder.dequantized_here();
            std::uint32_t* t = folder.tables();
            const std::size_t levels = folder.levels();
            for (std::int64_t j = 0; j < fit; j += 8) {
                group(k + j, v, d, e);
                fold8<kDeq, kCount>(c + j, m + j, kDeq ? ds + j : nullptr, t, levels, _mm256_cvtps_epi32(v), q_min, e, d);
            }
            k += fit;
            folder.advance(fit);
            continue;
        }
        group(k, v, d, e);  // eight that cross a row's end: folded one at a time
        alignas(32) std::int32_t codes[8];
        alignas(32) float errs[8], deqs[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(codes), _mm256_cvtps_epi32(v));
        _mm256_store_ps(errs, e);
        _mm256_store_ps(deqs, d);
        for (int j = 0; j < 8; ++j) folder.add1<kDeq, kCount>(codes[j], errs[j], deqs[j]);
        k += 8;
    }
    lanes.finish(ks);
    ks.code_min = hmin(cmin);
    ks.code_max = hmax(cmax);
    ks.clipped = clipped;
    for (std::int64_t k = n8; k < len; ++k) {
        const float r = ld.one(k);
        bool out = false;
        const std::int32_t q = quantize_value(r, s, static_cast<std::int32_t>(z), config, &out);
        const float d = s * (static_cast<float>(q) - z), e = std::abs(r - d);
        ks.clipped += out;
        ks.sum_sq_err += static_cast<double>(e) * e;
        ks.sum_abs_err += e;
        ks.sum_sq_r += static_cast<double>(r) * r;
        ks.sum_r += r;
        ks.max_err = std::max(ks.max_err, e);
        ks.code_min = std::min(ks.code_min, static_cast<float>(q));
        ks.code_max = std::max(ks.code_max, static_cast<float>(q));
        folder.add1<kDeq, kCount>(q, e, d);
    }
}

// The process-wide test switch (use_avx2_overview).
std::atomic<bool> g_avx2_only{false};

// One item of the pattern path in the kernel `rc` asks for, 8 elements a vector.
template <bool kHalfEven, bool kClamp, class Ld>
float patterns_item(const Ld& ld, std::int64_t len, float s, float z, const QuantConfig& config,
                    const Quantize8<kHalfEven>& quantize, const Reciprocal& rc, Folder& folder) {
    if (rc.mode == Divide::kVerified)
        return run_item_patterns<kHalfEven, kClamp, Divide::kVerified>(ld, len, s, z, config, quantize, rc, folder);
    if (rc.mode == Divide::kChecked)
        return run_item_patterns<kHalfEven, kClamp, Divide::kChecked>(ld, len, s, z, config, quantize, rc, folder);
    return run_item_patterns<kHalfEven, kClamp, Divide::kTrue>(ld, len, s, z, config, quantize, rc, folder);
}

#ifdef QS_HAVE_AVX512_OVERVIEW
// Whole rows [first, end) of the pattern path, 16 elements a vector, as many rows at a time as the folder takes.
template <bool kHalfEven, bool kClamp, class Ld>
void patterns_rows16(const TensorView& view, std::int64_t first, std::int64_t end, float s, float z, const QuantConfig& config,
                     const Reciprocal& rc, Folder& folder, ThreadPart& part) {
    const std::int64_t cols = folder.room();  // a unit starts a band, at a row's start
    for (std::int64_t flat = first; flat < end;) {
        const std::int64_t rows = std::min(folder.rows_before_flush(), (end - flat) / cols);
        const Ld ld{view.data + static_cast<std::size_t>(flat) * Ld::kBytes};
        std::int32_t* c = folder.codes_here();
        float* m = folder.errors_here();
        float top = 0;
        switch (rc.mode) {
            case Divide::kOffset: top = run_rows16<kHalfEven, kClamp, Divide::kOffset>(ld, rows, cols, s, z, config, rc, c, m); break;
            case Divide::kVerified: top = run_rows16<kHalfEven, kClamp, Divide::kVerified>(ld, rows, cols, s, z, config, rc, c, m); break;
            case Divide::kChecked: top = run_rows16<kHalfEven, kClamp, Divide::kChecked>(ld, rows, cols, s, z, config, rc, c, m); break;
            default: top = run_rows16<kHalfEven, kClamp, Divide::kTrue>(ld, rows, cols, s, z, config, rc, c, m);
        }
        if (top > part.worst) part.worst = top, part.worst_at = flat + first_error_at(ld, rows * cols, s, z, config, top);
        folder.advance_rows(rows);
        flat += rows * cols;
    }
}
#endif

// Every unit's items through run_item, in the loader `Ld` (a float32 view: `decode` for float64).
template <bool kHalfEven, bool kDeq, bool kCount, bool kClamp, class Ld>
void run_units(const TensorView& view, const Plan& plan, const QuantParams& params, const QuantConfig& config,
               const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder, ThreadPart& part, const Reciprocal& rc,
               const std::function<void(std::int64_t, std::vector<Sums>&)>& done) {
    const Quantize8<kHalfEven> quantize(static_cast<float>(config.dtype.q_min()), static_cast<float>(config.dtype.q_max()));
    const std::size_t size = element_size(view.type);
    std::vector<float> scratch(view.type == ElementType::F64 ? static_cast<std::size_t>(plan.item_max) : 0);
    std::vector<Sums> sums;
    for (std::int64_t u = 0; next.take(u);) {
        const OverviewUnit& unit = units[static_cast<std::size_t>(u)];
        sums.resize(static_cast<std::size_t>(unit.item_end - unit.item_begin));
        folder.start(unit.first);
#ifdef QS_HAVE_AVX512_OVERVIEW
        if (!kCount && rc.wide) {  // the patterns' path, one (s, z): whole rows at a time
            const float s = static_cast<float>(params.scale[0]), z = static_cast<float>(params.zero_point[0]);
            patterns_rows16<kHalfEven, kClamp, Ld>(view, unit.first, unit.end, s, z, config, rc, folder, part);
            folder.flush();
            continue;
        }
#endif
        for (std::int64_t i = unit.item_begin; i < unit.item_end; ++i) {
            std::int64_t begin, len, block;
            plan.item(i, begin, len, block);
            const float s = static_cast<float>(params.scale[static_cast<std::size_t>(block)]);
            const float z = static_cast<float>(params.zero_point[static_cast<std::size_t>(block)]);
            const std::uint8_t* at = view.data + static_cast<std::size_t>(begin) * size;
            if (!scratch.empty()) at = reinterpret_cast<const std::uint8_t*>(floats_at(view, begin, len, scratch.data()));
            const Ld ld{at};
            if constexpr (!kCount) {  // the metrics come from the patterns' counts
                const float top = patterns_item<kHalfEven, kClamp>(ld, len, s, z, config, quantize, rc, folder);
                if (top > part.worst) part.worst = top, part.worst_at = begin + first_error_at(ld, len, s, z, config, top);
                continue;
            }
            KernelSums ks;
            run_item<kHalfEven, kDeq, kCount, kClamp>(ld, len, s, z, config, quantize, folder, ks);
            sums[static_cast<std::size_t>(i - unit.item_begin)] = {ks.sum_sq_err, ks.sum_abs_err, ks.sum_sq_r, ks.sum_r};
            part.clipped += ks.clipped;
            part.max_err = std::max(part.max_err, ks.max_err);
            if (ks.max_err > part.worst)  // units come in flat order within a thread: the first maximum wins
                part.worst = ks.max_err, part.worst_at = begin + first_error_at(ld, len, s, z, config, ks.max_err);
            if constexpr (kDeq) {  // s > 0: r' grows with the code
                part.deq_lo = std::min(part.deq_lo, s * (ks.code_min - z));
                part.deq_hi = std::max(part.deq_hi, s * (ks.code_max - z));
            }
        }
        folder.flush();
        if constexpr (kCount) done(u, sums);
    }
}

template <bool kHalfEven, bool kDeq, bool kCount, bool kClamp = true>
void run_typed(const TensorView& view, const Plan& plan, const QuantParams& params, const QuantConfig& config,
               const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder, ThreadPart& part, const Reciprocal& rc,
               const std::function<void(std::int64_t, std::vector<Sums>&)>& done) {
    switch (view.type) {
        case ElementType::BF16:
            return run_units<kHalfEven, kDeq, kCount, kClamp, LoadBf16>(view, plan, params, config, units, next, folder, part, rc, done);
#ifdef __F16C__
        case ElementType::F16:
            return run_units<kHalfEven, kDeq, kCount, kClamp, LoadF16>(view, plan, params, config, units, next, folder, part, rc, done);
#endif
        default:
            return run_units<kHalfEven, kDeq, kCount, kClamp, LoadF32>(view, plan, params, config, units, next, folder, part, rc, done);
    }
}

// Whether every bit pattern that occurs gets quantize's code and |r - r'| from the reciprocal formula as the
// kernels compute it (reciprocal_rounded, or round(r * (1 / s)) as q - z under `offset`; clamped as they clamp
// when `clamp`): then the kernels need no tie check (Divide::kVerified, Divide::kOffset).
bool reciprocal_exact(ElementType type, const std::vector<std::int64_t>& bit_counts, const QuantParams& params,
                      const QuantConfig& config, bool clamp, bool offset) {
    const float s = static_cast<float>(params.scale[0]), inv = 1.0f / s;
    const std::int32_t z = params.zero_point[0];
    const float zf = static_cast<float>(z), shift = offset ? zf : 0.0f;
    const float q_lo = static_cast<float>(config.dtype.q_min()) - shift, q_hi = static_cast<float>(config.dtype.q_max()) - shift;
    for (std::size_t b = 0; b < bit_counts.size(); ++b) {
        if (bit_counts[b] == 0) continue;
        const auto bits = static_cast<std::uint16_t>(b);
        const float r = type == ElementType::BF16 ? bf16_to_float(bits) : half_to_float(bits);
        const std::int32_t q = quantize_value(r, s, z, config);
        float v = offset ? std::nearbyint(r * inv) : reciprocal_rounded(r, inv, zf);
        if (clamp) v = clamped_as_kernel(v, q_lo, q_hi);
        if (!offset && v != static_cast<float>(q)) return false;
        if (offset && !(std::abs(v) < 0x1p24f && static_cast<std::int64_t>(v) + z == q &&
                        std::abs(r - s * v) == std::abs(r - s * (static_cast<float>(q) - zf))))
            return false;
    }
    return true;
}

// Under Divide::kOffset the kernels folded q - z: z is added back once per element of each block (exact: the
// sums are integers below 2^53 in double).
void add_zero_point(const OverviewGrid& g, std::int32_t z, std::vector<double>& code_sums) {
    for (std::int64_t sl = 0; sl < g.slices; ++sl)
        for (std::int64_t orow = 0; orow < g.out_rows(); ++orow) {
            const std::int64_t h = std::min(g.rows, (orow + 1) * g.fy) - orow * g.fy;
            for (std::int64_t oc = 0; oc < g.out_cols(); ++oc) {
                const std::int64_t w = std::min(g.cols, (oc + 1) * g.fx) - oc * g.fx;
                code_sums[static_cast<std::size_t>(sl * g.cells_per_slice() + orow * g.out_cols() + oc)] +=
                    static_cast<double>(z) * static_cast<double>(h * w);
            }
        }
}

}  // namespace

// Units of whole bands ending on item boundaries (the last one at n, always a boundary).
std::vector<OverviewUnit> cut_overview_units(const OverviewGrid& g, const Plan& plan) {
    const auto item_at = [&](std::int64_t flat) {
        return (flat / plan.stride) * plan.chunks_per_run + (flat % plan.stride) / kChunk;
    };
    std::vector<OverviewUnit> units;
    const std::int64_t bands = g.slices * g.out_rows();
    std::int64_t first = 0;
    for (std::int64_t band = 0; band < bands; ++band) {
        const std::int64_t slice = band / g.out_rows(), r1 = std::min(g.rows, (band % g.out_rows() + 1) * g.fy);
        const std::int64_t end = (slice * g.rows + r1) * g.cols;
        if ((end - first >= kUnit || band + 1 == bands) && (end % plan.stride) % kChunk == 0) {
            units.push_back({first, end, item_at(first), item_at(end)});
            first = end;
        }
    }
    return units;
}

bool fused_overview_applies(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid) {
    const std::int64_t n = view.numel();
    if (!is_int_format(config.format) || config.overflow != Overflow::Clamp || config.active_naive_norm() != 0 ||
        portable_only() || params.on_demand() || n == 0 || grid.cols > kMaxColumns ||
        config.dtype.levels() > kMaxCountedLevels)
        return false;
#ifndef __F16C__
    if (view.type == ElementType::F16) return false;
#endif
    // A layout that does not fit is the general pass's to report.
    if (static_cast<std::int64_t>(params.scale.size()) != params.block_count ||
        static_cast<std::int64_t>(params.zero_point.size()) != params.block_count || params.block_stride < 1 ||
        params.block_count < 1 || n % (params.block_stride * params.block_count) != 0 ||
        grid.slices * grid.rows * grid.cols != n)
        return false;
    return params.block_stride >= kMinRun;  // one (s, z) per item
}

bool avx2_overview_only() { return g_avx2_only.load(std::memory_order_relaxed); }

namespace {

// How the per-tensor 16-bit pass divides r by s (`bit_counts` null: not that pass), and which kernel runs it.
Reciprocal choose_divide(ElementType type, const std::vector<std::int64_t>* bit_counts, const PatternSummary& patterns,
                         const QuantParams& params, const QuantConfig& config) {
#ifdef QS_HAVE_AVX512_OVERVIEW
    const bool wide = !avx2_overview_only();
#else
    const bool wide = false;
#endif
    Reciprocal rc;
    if (bit_counts != nullptr) {
        const bool clamp = patterns.clipped > 0;
        const bool offset = wide && std::abs(params.zero_point[0]) <= (1 << 16) &&
                            reciprocal_exact(type, *bit_counts, params, config, clamp, true);
        rc = reciprocal_for(static_cast<float>(params.scale[0]), static_cast<float>(params.zero_point[0]), patterns.max_abs_r,
                            offset || reciprocal_exact(type, *bit_counts, params, config, clamp, false));
        if (offset) rc.mode = Divide::kOffset;
    }
    rc.wide = wide;
    return rc;
}

}  // namespace

bool fused_int_overview(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                        const OverviewGrid& grid, const std::vector<std::int64_t>* bit_counts, QuantOverview& out) {
    if (!fused_overview_applies(view, params, config, grid)) return false;
    const std::int64_t n = view.numel();
    const Plan plan(n, params);
    const std::vector<OverviewUnit> units = cut_overview_units(grid, plan);
    const bool one_block = params.block_count == 1;
    const bool by_patterns = one_block && bit_counts && bit_counts->size() == (std::size_t{1} << 16) &&
                             (view.type == ElementType::BF16 || view.type == ElementType::F16);
    const auto cells = static_cast<std::size_t>(grid.cells());
    std::vector<double> code_sums(cells, 0.0), deq_sums(one_block ? 0 : cells, 0.0);
    std::vector<float> err_max(cells, 0.0f);
    const std::int32_t q_min = config.dtype.q_min();
    const std::int64_t levels = config.dtype.levels();
    std::vector<std::int64_t> counts(static_cast<std::size_t>(levels), 0);

    // Each unit's item sums join quantize's ordered sums as soon as every earlier unit's have.
    OrderedSums ordered(plan.items, n >= 2 * kChunk ? omp_get_num_procs() : 1);
    std::mutex fold_mutex;
    std::map<std::int64_t, std::vector<Sums>> pending;
    std::int64_t next_fold = 0;
    const std::function<void(std::int64_t, std::vector<Sums>&)> done = [&](std::int64_t u, std::vector<Sums>& sums) {
        const std::lock_guard<std::mutex> lock(fold_mutex);
        pending[u].swap(sums);
        for (auto it = pending.begin(); it != pending.end() && it->first == next_fold; it = pending.erase(it), ++next_fold) {
            const std::int64_t i0 = units[static_cast<std::size_t>(next_fold)].item_begin;
            for (std::size_t j = 0; j < it->second.size(); ++j) ordered.add(i0 + static_cast<std::int64_t>(j), it->second[j]);
        }
    };

    // The patterns' counts first: with no element clipped, the pass can leave the clamp out.
    const PatternSummary patterns = by_patterns ? count_by_patterns(view.type, *bit_counts, params, config, counts) : PatternSummary{};
    const Reciprocal rc = choose_divide(view.type, by_patterns ? bit_counts : nullptr, patterns, params, config);
    const int threads = std::min<std::int64_t>(pass_threads(n), static_cast<std::int64_t>(units.size()));
    std::vector<ThreadPart> parts(static_cast<std::size_t>(threads));
    NextIndex next(0, static_cast<std::int64_t>(units.size()));
    std::mutex counts_mutex;
    parallel_guarded(view, threads, [&](int thread, int) {
        Folder folder(grid, q_min, levels, Cells{code_sums.data(), err_max.data(), one_block ? nullptr : deq_sums.data()});
        ThreadPart& part = parts[static_cast<std::size_t>(thread)];
        const bool half_even = config.rounding == Rounding::HalfEven;
        if (by_patterns && patterns.clipped == 0) {
            if (half_even) run_typed<true, false, false, false>(view, plan, params, config, units, next, folder, part, rc, done);
            else run_typed<false, false, false, false>(view, plan, params, config, units, next, folder, part, rc, done);
        } else if (by_patterns) {
            if (half_even) run_typed<true, false, false>(view, plan, params, config, units, next, folder, part, rc, done);
            else run_typed<false, false, false>(view, plan, params, config, units, next, folder, part, rc, done);
        } else if (one_block) {
            if (half_even) run_typed<true, false, true>(view, plan, params, config, units, next, folder, part, rc, done);
            else run_typed<false, false, true>(view, plan, params, config, units, next, folder, part, rc, done);
        } else {
            if (half_even) run_typed<true, true, true>(view, plan, params, config, units, next, folder, part, rc, done);
            else run_typed<false, true, true>(view, plan, params, config, units, next, folder, part, rc, done);
        }
        const std::lock_guard<std::mutex> lock(counts_mutex);
        folder.take_counts(counts);
    });

    float max_err = 0, worst = -1.0f, deq_lo = std::numeric_limits<float>::infinity(), deq_hi = -deq_lo;
    std::int64_t clipped = patterns.clipped;
    out = QuantOverview{};
    for (const ThreadPart& p : parts) {
        max_err = std::max(max_err, p.max_err);
        if (!by_patterns) clipped += p.clipped;  // else counted by pattern
        deq_lo = std::min(deq_lo, p.deq_lo);
        deq_hi = std::max(deq_hi, p.deq_hi);
        if (p.worst > worst || (p.worst == worst && p.worst_at < out.error_argmax)) worst = p.worst, out.error_argmax = p.worst_at;
    }
    const auto used = [](std::int64_t c) { return c > 0; };
    out.grid = grid;
    out.metrics = metrics_from_sums(by_patterns ? patterns.sums : ordered.total(), n, by_patterns ? patterns.max_err : max_err,
                                    clipped, std::count_if(counts.begin(), counts.end(), used), levels);
    out.code_counts = std::move(counts);
    if (rc.mode == Divide::kOffset) add_zero_point(grid, params.zero_point[0], code_sums);
    finish_blocks(grid, params, q_min, code_sums, std::move(err_max), one_block ? nullptr : &deq_sums, deq_lo, deq_hi, out);
    return true;
}
#endif

}  // namespace qs::detail

namespace qs {

void use_avx2_overview(bool on) {
#ifdef QS_HAVE_AVX2_KERNEL
    detail::g_avx2_only = on;
#else
    (void)on;
#endif
}

}  // namespace qs
