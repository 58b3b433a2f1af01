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

// What one thread finds besides the folds: the codes' range, r''s range and the largest error.
struct BlocksPart {
    __m512 cmin = _mm512_set1_ps(std::numeric_limits<float>::infinity()), cmax = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512 dmin = cmin, dmax = cmax, emax = _mm512_setzero_ps();
    float tail_cmin = std::numeric_limits<float>::infinity(), tail_cmax = -std::numeric_limits<float>::infinity();
    float tail_dmin = tail_cmin, tail_dmax = tail_cmax, tail_emax = 0;
};

// One row's constants for a segment of one (s, z): the divisor, the reciprocal and its boundary margin.
struct RowQuant {
    __m512 s, z, inv, near;
    float fs, fz;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// r's code as quantize computes it: r * (1 / s) + z where no rounding boundary is near (kChecked), else the true
// division r / s + z (the checked kernel of run_rows16), rounded, then clamped.
template <bool kHalfEven, bool kChecked>
inline __m512 code16(__m512 r, __m512 s, __m512 z, __m512 inv, __m512 near, __m512 q_min, __m512 q_max) {
    __m512 v;
    if constexpr (kChecked) {
        const __m512 a = _mm512_add_ps(_mm512_mul_ps(r, inv), z);
        v = _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(a, v)), near, _CMP_GE_OQ) != 0)
            v = round16<kHalfEven>(_mm512_add_ps(_mm512_div_ps(r, s), z));
    } else {
        v = round16<kHalfEven>(_mm512_add_ps(_mm512_div_ps(r, s), z));
    }
    return _mm512_min_ps(_mm512_max_ps(v, q_min), q_max);
}

// Columns [0, n16) of one or two rows (kTwo) of one segment, folded at c, m (and ds) once per column for both
// rows: the fold arrays (a row of per-column sums, 16 bytes a column) are what costs, not the arithmetic. r' is
// added per column in double row after row, as the full pass's fold8 adds it. Written without lambdas or
// captured accumulators: GCC kept those on the stack, a store and a load per vector each.
template <bool kHalfEven, bool kDeq, bool kChecked, bool kTwo, class Ld>
void blocks_rows(const Ld& l0, const Ld& l1, std::int64_t n16, const RowQuant& k0, const RowQuant& k1, __m512 q_min, __m512 q_max,
                 std::int32_t* c, float* m, double* ds, BlocksPart& part) {
    __m512 emax = part.emax, cmin = part.cmin, cmax = part.cmax, dmin = part.dmin, dmax = part.dmax;
    // The constants as locals: through the references GCC reloads them after every store to the fold arrays.
    const __m512 s0 = k0.s, z0 = k0.z, inv0 = k0.inv, near0 = k0.near, s1 = k1.s, z1 = k1.z, inv1 = k1.inv, near1 = k1.near;
    for (std::int64_t j = 0; j < n16; j += 16) {
        if (j % (64 / Ld::kBytes) == 0) {
            l0.prefetch(j);
            if constexpr (kTwo) l1.prefetch(j);
        }
        const __m512 r0 = l0.at16(j);
        const __m512 v0 = code16<kHalfEven, kChecked>(r0, s0, z0, inv0, near0, q_min, q_max);
        const __m512 d0 = _mm512_mul_ps(s0, _mm512_sub_ps(v0, z0));
        __m512 e = _mm512_abs_ps(_mm512_sub_ps(r0, d0));
        __m512i q = _mm512_cvtps_epi32(v0);
        __m512 lo = v0, hi = v0, dlo = d0, dhi = d0;
        __m512 d1 = d0;
        if constexpr (kTwo) {
            const __m512 r1 = l1.at16(j);
            const __m512 v1 = code16<kHalfEven, kChecked>(r1, s1, z1, inv1, near1, q_min, q_max);
            d1 = _mm512_mul_ps(s1, _mm512_sub_ps(v1, z1));
            e = _mm512_max_ps(e, _mm512_abs_ps(_mm512_sub_ps(r1, d1)));
            q = _mm512_add_epi32(q, _mm512_cvtps_epi32(v1));
            lo = _mm512_min_ps(lo, v1);
            hi = _mm512_max_ps(hi, v1);
            if constexpr (kDeq) dlo = _mm512_min_ps(dlo, d1), dhi = _mm512_max_ps(dhi, d1);
        }
        emax = _mm512_max_ps(emax, e);
        cmin = _mm512_min_ps(cmin, lo);
        cmax = _mm512_max_ps(cmax, hi);
        _mm512_storeu_si512(c + j, _mm512_add_epi32(_mm512_loadu_si512(c + j), q));
        _mm512_storeu_ps(m + j, _mm512_max_ps(_mm512_loadu_ps(m + j), e));
        if constexpr (kDeq) {
            dmin = _mm512_min_ps(dmin, dlo);
            dmax = _mm512_max_ps(dmax, dhi);
            __m512d a = _mm512_add_pd(_mm512_loadu_pd(ds + j), _mm512_cvtps_pd(_mm512_castps512_ps256(d0)));
            __m512d b = _mm512_add_pd(_mm512_loadu_pd(ds + j + 8),
                                      _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d0), 1))));
            if constexpr (kTwo) {
                a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm512_castps512_ps256(d1)));
                b = _mm512_add_pd(b, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(d1), 1))));
            }
            _mm512_storeu_pd(ds + j, a);
            _mm512_storeu_pd(ds + j + 8, b);
        }
    }
    part.emax = emax;
    part.cmin = cmin;
    part.cmax = cmax;
    part.dmin = dmin;
    part.dmax = dmax;
}
#pragma GCC diagnostic pop

// The constants of the (s, z) of block `block` for the SIMD rows, and the checked kernel's margin.
RowQuant row_quant(const QuantParams& params, std::int64_t block, float max_abs_r, bool& checked) {
    const float s = static_cast<float>(params.scale[static_cast<std::size_t>(block)]);
    const float z = static_cast<float>(params.zero_point[static_cast<std::size_t>(block)]);
    const Reciprocal rc = reciprocal_for(s, z, max_abs_r, false);
    checked = checked && rc.mode == Divide::kChecked;
    return RowQuant{_mm512_set1_ps(s), _mm512_set1_ps(z), _mm512_set1_ps(rc.inv), _mm512_set1_ps(rc.near), s, z};
}

// Whole bands [unit.first, unit.end), two rows at a time, each row cut into segments of one (s, z) (the whole
// row, or a group of the last axis).
template <bool kHalfEven, bool kDeq, class Ld>
void blocks_units(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                  float max_abs_r, const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder, BlocksPart& part) {
    const std::int64_t cols = grid.cols;
    const std::int64_t seg = params.block_stride < cols ? params.block_stride : cols;  // divides cols (the caller checks)
    const __m512 q_min = _mm512_set1_ps(static_cast<float>(config.dtype.q_min()));
    const __m512 q_max = _mm512_set1_ps(static_cast<float>(config.dtype.q_max()));
    const std::int64_t n16 = seg - seg % 16;
    const auto block_at = [&](std::int64_t flat) { return (flat / params.block_stride) % params.block_count; };
    for (std::int64_t u = 0; next.take(u);) {
        const OverviewUnit& unit = units[static_cast<std::size_t>(u)];
        folder.start(unit.first);
        for (std::int64_t flat = unit.first; flat < unit.end;) {
            const std::int64_t rows = std::min<std::int64_t>({2, folder.rows_before_flush(), (unit.end - flat) / cols});
            std::int32_t* c = folder.codes_here();
            float* m = folder.errors_here();
            double* ds = folder.dequantized_here();
            for (std::int64_t a = 0; a < cols; a += seg) {
                bool checked = true;
                const RowQuant k0 = row_quant(params, block_at(flat + a), max_abs_r, checked);
                const RowQuant k1 = rows == 2 ? row_quant(params, block_at(flat + cols + a), max_abs_r, checked) : k0;
                const Ld l0{view.data + static_cast<std::size_t>(flat + a) * Ld::kBytes};
                const Ld l1{view.data + static_cast<std::size_t>(flat + (rows == 2 ? cols : 0) + a) * Ld::kBytes};
                std::int32_t* ca = c + a;
                float* ma = m + a;
                double* da = kDeq ? ds + a : nullptr;
                if (rows == 2 && checked) blocks_rows<kHalfEven, kDeq, true, true>(l0, l1, n16, k0, k1, q_min, q_max, ca, ma, da, part);
                else if (rows == 2) blocks_rows<kHalfEven, kDeq, false, true>(l0, l1, n16, k0, k1, q_min, q_max, ca, ma, da, part);
                else if (checked) blocks_rows<kHalfEven, kDeq, true, false>(l0, l0, n16, k0, k0, q_min, q_max, ca, ma, da, part);
                else blocks_rows<kHalfEven, kDeq, false, false>(l0, l0, n16, k0, k0, q_min, q_max, ca, ma, da, part);
                for (std::int64_t j = n16; j < seg; ++j)  // the segment's last few, by quantize's scalar formula, row after row
                    for (std::int64_t i = 0; i < rows; ++i) {
                        const RowQuant& k = i == 0 ? k0 : k1;
                        const float r = (i == 0 ? l0 : l1).one(j);
                        const std::int32_t qv = quantize_value(r, k.fs, static_cast<std::int32_t>(k.fz), config);
                        const float d = k.fs * (static_cast<float>(qv) - k.fz), e = std::abs(r - d);
                        ca[j] += qv;
                        ma[j] = std::max(ma[j], e);
                        if constexpr (kDeq) da[j] += d;
                        part.tail_emax = std::max(part.tail_emax, e);
                        part.tail_cmin = std::min(part.tail_cmin, static_cast<float>(qv));
                        part.tail_cmax = std::max(part.tail_cmax, static_cast<float>(qv));
                        part.tail_dmin = std::min(part.tail_dmin, d);
                        part.tail_dmax = std::max(part.tail_dmax, d);
                    }
            }
            folder.advance_rows(rows);
            flat += rows * cols;
        }
        folder.flush();
    }
}

template <bool kHalfEven, bool kDeq>
void blocks_typed(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                  float max_abs_r, const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder, BlocksPart& part) {
    switch (view.type) {
        case ElementType::BF16:
            return blocks_units<kHalfEven, kDeq, LoadBf16>(view, params, config, grid, max_abs_r, units, next, folder, part);
#ifdef __F16C__
        case ElementType::F16:
            return blocks_units<kHalfEven, kDeq, LoadF16>(view, params, config, grid, max_abs_r, units, next, folder, part);
#endif
        default:
            return blocks_units<kHalfEven, kDeq, LoadF32>(view, params, config, grid, max_abs_r, units, next, folder, part);
    }
}

}  // namespace

bool fused_int_blocks(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                      float max_abs_r, QuantOverview& out) {
    if (avx2_overview_only() || view.type == ElementType::F64 || !fused_overview_applies(view, params, config, grid)) return false;
    // Each row cut into segments of one (s, z): the whole row within one run, or groups that divide the row.
    const std::int64_t stride = params.block_stride, cols = grid.cols;
    if (params.block_count != 1 && !(stride % cols == 0 || (stride >= kMinRun && cols % stride == 0))) return false;
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
            if (half_even) blocks_typed<true, false>(view, params, config, grid, max_abs_r, units, next, folder, part);
            else blocks_typed<false, false>(view, params, config, grid, max_abs_r, units, next, folder, part);
        } else {
            if (half_even) blocks_typed<true, true>(view, params, config, grid, max_abs_r, units, next, folder, part);
            else blocks_typed<false, true>(view, params, config, grid, max_abs_r, units, next, folder, part);
        }
    });
    float code_lo = std::numeric_limits<float>::infinity(), code_hi = -code_lo, deq_lo = code_lo, deq_hi = -code_lo, max_err = 0;
    for (const BlocksPart& p : parts) {
        code_lo = std::min({code_lo, _mm512_reduce_min_ps(p.cmin), p.tail_cmin});
        code_hi = std::max({code_hi, _mm512_reduce_max_ps(p.cmax), p.tail_cmax});
        deq_lo = std::min({deq_lo, _mm512_reduce_min_ps(p.dmin), p.tail_dmin});
        deq_hi = std::max({deq_hi, _mm512_reduce_max_ps(p.dmax), p.tail_dmax});
        max_err = std::max({max_err, _mm512_reduce_max_ps(p.emax), p.tail_emax});
    }
    out = QuantOverview{};
    out.grid = grid;
    out.blocks_only = true;
    out.metrics.count = n;
    out.metrics.max_abs_error = max_err;
    finish_blocks_in_range(grid, params, static_cast<std::int32_t>(code_lo), static_cast<std::int32_t>(code_hi), code_sums,
                           std::move(err_max), one_block ? nullptr : &deq_sums, deq_lo, deq_hi, out);
    return true;
}
#endif

}  // namespace qs::detail
