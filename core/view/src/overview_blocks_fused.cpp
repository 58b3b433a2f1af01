// The window's slider step on the heatmaps alone (quantize_overview_blocks): per element only the code, r' and
// |r - r'|, folded into the blocks, 16 elements a vector. No metric sums and no code counts: those need
// element-order double sums and a table increment per element, which cost several times the read of the
// tensor; the window asks for them once a drag rests (quantize_overview).
#include "overview_fused.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "element_loads_avx2.hpp"
#include "overview_folder.hpp"
#include "overview_patterns.hpp"
#include "parallel.hpp"
#include "quantize_plan.hpp"

namespace qs::detail {

#ifndef QS_HAVE_AVX512_OVERVIEW
bool fused_int_blocks(const TensorView&, const QuantParams&, const QuantConfig&, const OverviewGrid&, float, QuantOverview&) {
    return false;
}
#else
namespace {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// What one thread finds besides the folds: the codes' range and r''s range (s > 0: r' grows with the code).
struct BlocksPart {
    float code_lo = std::numeric_limits<float>::infinity(), code_hi = -std::numeric_limits<float>::infinity();
    float deq_lo = std::numeric_limits<float>::infinity(), deq_hi = -std::numeric_limits<float>::infinity();
    float max_err = 0;
};

// One work item (one (s, z)), folded a row segment at a time: quantize's codes (r * (1 / s) + z where no
// rounding boundary is near, else the true division, as run_rows16's checked kernel) and |r - r'| with the
// same float32 operations as every other pass, so each fold gets the bits the full pass folds.
template <bool kHalfEven, bool kDeq, class Ld>
void blocks_item(const Ld& ld, std::int64_t len, float s, float z, const Reciprocal& rc, const QuantConfig& config,
                 Folder& folder, BlocksPart& part) {
    const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(z), inv = _mm512_set1_ps(rc.inv), near = _mm512_set1_ps(rc.near);
    const __m512 q_min = _mm512_set1_ps(static_cast<float>(config.dtype.q_min()));
    const __m512 q_max = _mm512_set1_ps(static_cast<float>(config.dtype.q_max()));
    const bool checked = rc.mode == Divide::kChecked;
    __m512 emax = _mm512_setzero_ps(), cmin = q_max, cmax = q_min;
    const auto rounded = [&](__m512 r) {
        if (checked) {
            const __m512 a = _mm512_add_ps(_mm512_mul_ps(r, inv), vz);
            const __m512 v = _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(a, v)), near, _CMP_GE_OQ) == 0) return v;
        }
        return round16<kHalfEven>(_mm512_add_ps(_mm512_div_ps(r, vs), vz));
    };
    float tail_max = 0, tail_lo = std::numeric_limits<float>::infinity(), tail_hi = -tail_lo;
    for (std::int64_t k = 0; k < len;) {
        const std::int64_t fit = std::min(len - k, folder.room());  // the rest of the item inside this row
        const std::int64_t n16 = fit - fit % 16;
        std::int32_t* c = folder.codes_here();
        float* m = folder.errors_here();
        double* ds = kDeq ? folder.dequantized_here() : nullptr;
        for (std::int64_t j = 0; j < n16; j += 16) {
            if (j % (64 / Ld::kBytes) == 0) ld.prefetch(k + j);
            const __m512 r = ld.at16(k + j);
            const __m512 v = _mm512_min_ps(_mm512_max_ps(rounded(r), q_min), q_max);
            const __m512 d = _mm512_mul_ps(vs, _mm512_sub_ps(v, vz));
            const __m512 e = _mm512_abs_ps(_mm512_sub_ps(r, d));
            emax = _mm512_max_ps(emax, e);
            cmin = _mm512_min_ps(cmin, v);
            cmax = _mm512_max_ps(cmax, v);
            _mm512_storeu_si512(c + j, _mm512_add_epi32(_mm512_loadu_si512(c + j), _mm512_cvtps_epi32(v)));
            _mm512_storeu_ps(m + j, _mm512_max_ps(_mm512_loadu_ps(m + j), e));
            if constexpr (kDeq) {  // r' summed per column in double, as the full pass's fold8
                _mm512_storeu_pd(ds + j, _mm512_add_pd(_mm512_loadu_pd(ds + j), _mm512_cvtps_pd(_mm512_castps512_ps256(d))));
                const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d), 1));
                _mm512_storeu_pd(ds + j + 8, _mm512_add_pd(_mm512_loadu_pd(ds + j + 8), _mm512_cvtps_pd(hi)));
            }
        }
        folder.advance(n16);
        for (std::int64_t j = n16; j < fit; ++j) {  // the row segment's last few, by quantize's scalar formula
            const float r = ld.one(k + j);
            const std::int32_t q = quantize_value(r, s, static_cast<std::int32_t>(z), config);
            const float d = s * (static_cast<float>(q) - z), e = std::abs(r - d);
            tail_max = std::max(tail_max, e);
            tail_lo = std::min(tail_lo, static_cast<float>(q));
            tail_hi = std::max(tail_hi, static_cast<float>(q));
            folder.add1<kDeq, false>(q, e, d);
        }
        k += fit;
    }
    const float lo = std::min(_mm512_reduce_min_ps(cmin), tail_lo), hi = std::max(_mm512_reduce_max_ps(cmax), tail_hi);
    part.max_err = std::max({part.max_err, _mm512_reduce_max_ps(emax), tail_max});
    if (lo > hi) return;  // an empty item
    part.code_lo = std::min(part.code_lo, lo);
    part.code_hi = std::max(part.code_hi, hi);
    part.deq_lo = std::min(part.deq_lo, s * (lo - z));
    part.deq_hi = std::max(part.deq_hi, s * (hi - z));
}
#pragma GCC diagnostic pop

template <bool kHalfEven, bool kDeq, class Ld>
void blocks_units(const TensorView& view, const Plan& plan, const QuantParams& params, const QuantConfig& config,
                  float max_abs_r, const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder, BlocksPart& part) {
    const std::size_t size = element_size(view.type);
    std::int64_t last_block = -2;
    float s = 1, z = 0;
    Reciprocal rc;
    for (std::int64_t u = 0; next.take(u);) {
        const OverviewUnit& unit = units[static_cast<std::size_t>(u)];
        folder.start(unit.first);
        for (std::int64_t i = unit.item_begin; i < unit.item_end; ++i) {
            std::int64_t begin, len, block;
            plan.item(i, begin, len, block);
            if (block < 0) block = 0;  // not per run: one (s, z) for the tensor (fused_overview_applies)
            if (block != last_block) {
                s = static_cast<float>(params.scale[static_cast<std::size_t>(block)]);
                z = static_cast<float>(params.zero_point[static_cast<std::size_t>(block)]);
                rc = reciprocal_for(s, z, max_abs_r, false);
                last_block = block;
            }
            blocks_item<kHalfEven, kDeq>(Ld{view.data + static_cast<std::size_t>(begin) * size}, len, s, z, rc, config, folder, part);
        }
        folder.flush();
    }
}

template <bool kHalfEven, bool kDeq>
void blocks_typed(const TensorView& view, const Plan& plan, const QuantParams& params, const QuantConfig& config,
                  float max_abs_r, const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder, BlocksPart& part) {
    switch (view.type) {
        case ElementType::BF16:
            return blocks_units<kHalfEven, kDeq, LoadBf16>(view, plan, params, config, max_abs_r, units, next, folder, part);
#ifdef __F16C__
        case ElementType::F16:
            return blocks_units<kHalfEven, kDeq, LoadF16>(view, plan, params, config, max_abs_r, units, next, folder, part);
#endif
        default:
            return blocks_units<kHalfEven, kDeq, LoadF32>(view, plan, params, config, max_abs_r, units, next, folder, part);
    }
}

}  // namespace

bool fused_int_blocks(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                      float max_abs_r, QuantOverview& out) {
    if (avx2_overview_only() || view.type == ElementType::F64 || !fused_overview_applies(view, params, config, grid)) return false;
    if (params.block_count != 1 && params.block_stride < kMinRun) return false;  // (s, z) per element
    const std::int64_t n = view.numel();
    const Plan plan(n, params);
    const std::vector<OverviewUnit> units = cut_overview_units(grid, plan);
    const bool one_block = params.block_count == 1;
    const auto cells = static_cast<std::size_t>(grid.cells());
    std::vector<double> code_sums(cells, 0.0), deq_sums(one_block ? 0 : cells, 0.0);
    std::vector<float> err_max(cells, 0.0f);
    const int threads = std::min<std::int64_t>(pass_threads(n), static_cast<std::int64_t>(units.size()));
    std::vector<BlocksPart> parts(static_cast<std::size_t>(threads));
    NextIndex next(0, static_cast<std::int64_t>(units.size()));
    const bool half_even = config.rounding == Rounding::HalfEven;
    parallel_guarded(view, threads, [&](int thread, int) {
        Folder folder(grid, config.dtype.q_min(), 0, Cells{code_sums.data(), err_max.data(), one_block ? nullptr : deq_sums.data()});
        BlocksPart& part = parts[static_cast<std::size_t>(thread)];
        if (one_block) {
            if (half_even) blocks_typed<true, false>(view, plan, params, config, max_abs_r, units, next, folder, part);
            else blocks_typed<false, false>(view, plan, params, config, max_abs_r, units, next, folder, part);
        } else {
            if (half_even) blocks_typed<true, true>(view, plan, params, config, max_abs_r, units, next, folder, part);
            else blocks_typed<false, true>(view, plan, params, config, max_abs_r, units, next, folder, part);
        }
    });
    BlocksPart all;
    for (const BlocksPart& p : parts) {
        all.code_lo = std::min(all.code_lo, p.code_lo);
        all.code_hi = std::max(all.code_hi, p.code_hi);
        all.deq_lo = std::min(all.deq_lo, p.deq_lo);
        all.deq_hi = std::max(all.deq_hi, p.deq_hi);
        all.max_err = std::max(all.max_err, p.max_err);
    }
    out = QuantOverview{};
    out.grid = grid;
    out.blocks_only = true;
    out.metrics.count = n;
    out.metrics.max_abs_error = all.max_err;
    finish_blocks_in_range(grid, params, static_cast<std::int32_t>(all.code_lo), static_cast<std::int32_t>(all.code_hi),
                           code_sums, std::move(err_max), one_block ? nullptr : &deq_sums, all.deq_lo, all.deq_hi, out);
    return true;
}
#endif

}  // namespace qs::detail
