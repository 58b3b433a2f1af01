// The window's slider step on the heatmaps alone (quantize_overview_blocks): per element only the code, r' and
// |r - r'|, folded into the blocks, 16 elements a vector. No metric sums and no code counts: those need
// element-order double sums and a table increment per element, which cost several times the read of the
// tensor; the window asks for them once a drag rests (quantize_overview).
#include "overview_fused.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "element_loads_avx2.hpp"
#include "overview_folder.hpp"
#include "overview_patterns.hpp"
#include "overview_verified_rows.hpp"
#include "parallel.hpp"
#include "quantize_plan.hpp"

namespace qs::detail {

#ifndef QS_HAVE_AVX512_OVERVIEW
bool fused_int_blocks(const TensorView&, const QuantParams&, const QuantConfig&, const OverviewGrid&, float, const BlockRanges*,
                      QuantOverview&) {
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

// How lean_rows gets q - z:
//   kLean: round(r * inv) half to even (inv 1 / s or a neighbour), where plan_bf16_row verified the row;
//   kLeanFix: the same with up to two values whose q - z the plan gives put in;
//   kDivideEven, kDivideAway (a row it could not verify): quantize's own r / s + z, rounded, clamped, minus z.
enum class RowMode { kLean, kLeanFix, kDivideEven, kDivideAway };

// R (1 to 8) bf16 rows of one (s, z) each: per element q - z, r' = s (q - z) and |r - r'|, folded into c, m and
// ds once per R rows, no boundary check, no range tracking (the plans give the codes' and r''s ranges). The codes'
// sum is taken in float (small integers: exact) and the rows' z added once. The R rows' r' are added in float32
// and their sum once to the float64 column sums: a row's r' widened to double and added on its own cost a third
// of the kernel. So a block's mean r' may differ from the full pass's (which adds every r' in double) by float32
// rounding, at most 2^-21 of the largest |r'| (tests/test_overview_lean_rows.cpp); codes, errors and ranges
// keep its bits, and with one row a block (a full-resolution view) so does r'.
template <int R, RowMode kMode, class Ld>
void lean_rows(const Ld* l, std::int64_t n16, const RowPlan* k, const QuantConfig& config, std::int32_t* c, float* m, double* ds,
               __m512& emax_io) {
    constexpr bool kDivide = kMode == RowMode::kDivideEven || kMode == RowMode::kDivideAway;
    __m512 s[R], inv[R], f0[R], o0[R], f1[R], o1[R];
    float zsum = 0;
    for (int i = 0; i < R; ++i) {
        s[i] = _mm512_set1_ps(k[i].s), inv[i] = _mm512_set1_ps(kDivide ? k[i].z : k[i].inv);  // z where it divides
        f0[i] = _mm512_set1_ps(k[i].fix_value[0]), o0[i] = _mm512_set1_ps(k[i].fix_offset[0]);
        f1[i] = _mm512_set1_ps(k[i].fix_value[1]), o1[i] = _mm512_set1_ps(k[i].fix_offset[1]);
        zsum += k[i].z;
    }
    const __m512 q_min = _mm512_set1_ps(static_cast<float>(config.dtype.q_min()));
    const __m512 q_max = _mm512_set1_ps(static_cast<float>(config.dtype.q_max()));
    const __m512i zs = _mm512_set1_epi32(static_cast<std::int32_t>(zsum));
    __m512 emax = emax_io;
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
#ifdef __AVX512DQ__
    constexpr int kMaxAbs = 0x0b;  // vrangeps: the larger magnitude, sign cleared: max(|a|, |b|) in one operation
#endif
    for (std::int64_t j = 0; j < n16; j += 16) {
        if (j % (64 / Ld::kBytes) == 0)
            for (int i = 0; i < R; ++i) l[i].prefetch(j);
        __m512d a = _mm512_loadu_pd(ds + j), b = _mm512_loadu_pd(ds + j + 8);
        __m512 e = _mm512_setzero_ps(), vsum = _mm512_setzero_ps(), dsum = _mm512_setzero_ps();
        for (int i = 0; i < R; ++i) {
            const __m512 r = l[i].at16(j);
            __m512 v;
            if constexpr (kDivide) {
                const __m512 q = round16<kMode == RowMode::kDivideEven>(_mm512_add_ps(_mm512_div_ps(r, s[i]), inv[i]));
                v = _mm512_sub_ps(_mm512_min_ps(_mm512_max_ps(q, q_min), q_max), inv[i]);
            } else {
                v = _mm512_roundscale_ps(_mm512_mul_ps(r, inv[i]), kRound);
            }
            if constexpr (kMode == RowMode::kLeanFix) {
                v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(r, f0[i], _CMP_EQ_OQ), o0[i]);
                v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(r, f1[i], _CMP_EQ_OQ), o1[i]);
            }
            const __m512 d = _mm512_mul_ps(s[i], v);
#if defined(__AVX512DQ__) && !defined(QS_NO_RANGE)
            e = _mm512_range_ps(e, _mm512_sub_ps(r, d), kMaxAbs);
#else
            e = _mm512_max_ps(e, _mm512_abs_ps(_mm512_sub_ps(r, d)));
#endif
            vsum = _mm512_add_ps(vsum, v);
            dsum = _mm512_add_ps(dsum, d);
        }
        a = _mm512_add_pd(a, _mm512_cvtps_pd(_mm512_castps512_ps256(dsum)));
        b = _mm512_add_pd(b, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(dsum), 1))));
        emax = _mm512_max_ps(emax, e);
        _mm512_storeu_si512(c + j, _mm512_add_epi32(_mm512_loadu_si512(c + j), _mm512_add_epi32(_mm512_cvtps_epi32(vsum), zs)));
        _mm512_storeu_ps(m + j, _mm512_max_ps(_mm512_loadu_ps(m + j), e));
        _mm512_storeu_pd(ds + j, a);
        _mm512_storeu_pd(ds + j + 8, b);
    }
    emax_io = emax;
}

// The constants of the (s, z) of block `block` for the SIMD rows, and the checked kernel's margin.
RowQuant row_quant(const QuantParams& params, std::int64_t block, float max_abs_r, bool& checked) {
    const float s = static_cast<float>(params.scale[static_cast<std::size_t>(block)]);
    const float z = static_cast<float>(params.zero_point[static_cast<std::size_t>(block)]);
    const Reciprocal rc = reciprocal_for(s, z, max_abs_r, false);
    checked = checked && rc.mode == Divide::kChecked;
    return RowQuant{_mm512_set1_ps(s), _mm512_set1_ps(z), _mm512_set1_ps(rc.inv), _mm512_set1_ps(rc.near), s, z};
}

// The last few columns of a segment (past its whole vectors), by quantize's scalar formula, row after row.
template <bool kDeq, class Ld>
void segment_tail(const Ld* rows, const RowQuant* k, std::int64_t count, std::int64_t from, std::int64_t to, const QuantConfig& config,
                  std::int32_t* c, float* m, double* ds, BlocksPart& part) {
    for (std::int64_t j = from; j < to; ++j)
        for (std::int64_t i = 0; i < count; ++i) {
            const float r = rows[i].one(j);
            const std::int32_t qv = quantize_value(r, k[i].fs, static_cast<std::int32_t>(k[i].fz), config);
            const float d = k[i].fs * (static_cast<float>(qv) - k[i].fz), e = std::abs(r - d);
            c[j] += qv;
            m[j] = std::max(m[j], e);
            if constexpr (kDeq) ds[j] += d;
            part.tail_emax = std::max(part.tail_emax, e);
            part.tail_cmin = std::min(part.tail_cmin, static_cast<float>(qv));
            part.tail_cmax = std::max(part.tail_cmax, static_cast<float>(qv));
            part.tail_dmin = std::min(part.tail_dmin, d);
            part.tail_dmax = std::max(part.tail_dmax, d);
        }
}

#ifndef QS_LEAN_ROWS
#define QS_LEAN_ROWS 8
#endif
constexpr std::int64_t kLeanRows = QS_LEAN_ROWS;  // rows a lean pass takes at once: one load and store of the column sums each

template <RowMode kMode, class Ld>
void lean_rows_of(std::int64_t n, const Ld* rows, std::int64_t n16, const RowPlan* plans, const QuantConfig& config, std::int32_t* c,
                  float* m, double* ds, __m512& emax) {
    switch (n) {
        case 1: return lean_rows<1, kMode>(rows, n16, plans, config, c, m, ds, emax);
        case 2: return lean_rows<2, kMode>(rows, n16, plans, config, c, m, ds, emax);
        case 3: return lean_rows<3, kMode>(rows, n16, plans, config, c, m, ds, emax);
        case 4: return lean_rows<4, kMode>(rows, n16, plans, config, c, m, ds, emax);
        case 5: return lean_rows<5, kMode>(rows, n16, plans, config, c, m, ds, emax);
        case 6: return lean_rows<6, kMode>(rows, n16, plans, config, c, m, ds, emax);
        case 7: return lean_rows<7, kMode>(rows, n16, plans, config, c, m, ds, emax);
        default: return lean_rows<8, kMode>(rows, n16, plans, config, c, m, ds, emax);
    }
}

// Rows a lean pass plans and sorts at once (a band of the 1 M-cell overview of a 128256-row tensor is 126 rows).
constexpr std::int64_t kSortedRows = 128;
static_assert(kSortedRows <= INT16_MAX, "lean_rows_sorted keeps row indices in int16");

// `count` (up to kSortedRows) whole bf16 rows from `first` on, each of one (s, z), all adding to the same column sums
// (one band's): each planned by plan_bf16_row, sorted by the way lean_rows takes it (verified; verified with values to
// put in; quantize's division), and each way's rows run kLeanRows at a time. The order rows are added in changes no
// code sum or maximum (r' only by rounding: lean_rows' float32 sums, and the float64 sums taken in the sorted
// order), and sorted, nearly every run is 8 rows: in file order the ways alternate every few rows, and each short
// run pays the column sums' load and store.
template <class Ld>
void lean_rows_sorted(const Ld& first, std::int64_t first_block, std::int64_t count, std::int64_t cols, const QuantParams& params,
                      const BlockRanges& ranges, const QuantConfig& config, std::int32_t* c, float* m, double* ds, BlocksPart& part) {
    RowPlan plans[kSortedRows];
    std::int16_t order[3][kSortedRows];  // row indices per way: verified, with values to put in, by division
    int ways[3] = {0, 0, 0};
    for (std::int64_t i = 0; i < count; ++i) {
        const auto b = static_cast<std::size_t>((first_block + i) % params.block_count);
        RowPlan& p = plans[i];
        p = plan_bf16_row(ranges.lo[b], ranges.hi[b], static_cast<float>(params.scale[b]), params.zero_point[b], config);
        const int way = !p.fast ? 2 : p.fixes() ? 1 : 0;
        order[way][ways[way]++] = static_cast<std::int16_t>(i);
        part.tail_cmin = std::min(part.tail_cmin, static_cast<float>(p.code_lo));  // codes are monotone in r: the
        part.tail_cmax = std::max(part.tail_cmax, static_cast<float>(p.code_hi));  // row's ranges are its ends'
        part.tail_dmin = std::min(part.tail_dmin, p.deq_lo);
        part.tail_dmax = std::max(part.tail_dmax, p.deq_hi);
    }
    const std::int64_t n16 = cols - cols % 16;
    const bool half_even = config.rounding == Rounding::HalfEven;
    for (int way = 0; way < 3; ++way)
        for (int at = 0; at < ways[way]; at += kLeanRows) {
            const int n = std::min<int>(kLeanRows, ways[way] - at);
            Ld rows[kLeanRows];
            RowPlan run[kLeanRows];
            for (int i = 0; i < n; ++i) {
                const std::int16_t row = order[way][at + i];
                rows[i] = Ld{first.p + row * cols * Ld::kBytes};
                run[i] = plans[row];
            }
            if (way == 0) lean_rows_of<RowMode::kLean>(n, rows, n16, run, config, c, m, ds, part.emax);
            else if (way == 1) lean_rows_of<RowMode::kLeanFix>(n, rows, n16, run, config, c, m, ds, part.emax);
            else if (half_even) lean_rows_of<RowMode::kDivideEven>(n, rows, n16, run, config, c, m, ds, part.emax);
            else lean_rows_of<RowMode::kDivideAway>(n, rows, n16, run, config, c, m, ds, part.emax);
            if (n16 < cols) {
                RowQuant k[kLeanRows];
                for (int i = 0; i < n; ++i) k[i].fs = run[i].s, k[i].fz = run[i].z;
                segment_tail<true>(rows, k, n, n16, cols, config, c, m, ds, part);
            }
        }
}

template <bool kHalfEven, bool kDeq, class Ld>
void blocks_units(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                  float max_abs_r, const BlockRanges* ranges, const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder,
                  BlocksPart& part) {
    const std::int64_t cols = grid.cols;
    const std::int64_t seg = params.block_stride < cols ? params.block_stride : cols;  // divides cols (the caller checks)
    const __m512 q_min = _mm512_set1_ps(static_cast<float>(config.dtype.q_min()));
    const __m512 q_max = _mm512_set1_ps(static_cast<float>(config.dtype.q_max()));
    const std::int64_t n16 = seg - seg % 16;
    const auto block_at = [&](std::int64_t flat) { return (flat / params.block_stride) % params.block_count; };
    // Whole bf16 rows of one (s, z) each, their ranges known: a band's rows sorted by lean_rows_sorted (rows the
    // ranges verify by the lean kernel, the others by quantize's division). At most 8 bits: a row's plan walks
    // its code boundaries (int16's 65535 would cost more than the row).
    const bool lean = kDeq && std::is_same_v<Ld, LoadBf16> && ranges && seg == cols && params.block_stride == cols &&
                      config.dtype.bits <= 8;
    for (std::int64_t u = 0; next.take(u);) {
        const OverviewUnit& unit = units[static_cast<std::size_t>(u)];
        folder.start(unit.first);
        for (std::int64_t flat = unit.first; flat < unit.end;) {
            std::int32_t* c = folder.codes_here();
            float* m = folder.errors_here();
            double* ds = folder.dequantized_here();
            const std::int64_t room = std::min(folder.rows_before_flush(), (unit.end - flat) / cols);
            if (lean) {
                const std::int64_t count = std::min(room, kSortedRows);
                lean_rows_sorted(Ld{view.data + static_cast<std::size_t>(flat) * Ld::kBytes}, block_at(flat), count, cols, params, *ranges,
                                 config, c, m, ds, part);
                folder.advance_rows(count);
                flat += count * cols;
                continue;
            }
            const std::int64_t rows = std::min<std::int64_t>({2, room});
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
                const Ld pair[2] = {l0, l1};
                const RowQuant pair_k[2] = {k0, k1};
                segment_tail<kDeq>(pair, pair_k, rows, n16, seg, config, ca, ma, da, part);
            }
            folder.advance_rows(rows);
            flat += rows * cols;
        }
        folder.flush();
    }
}

template <bool kHalfEven, bool kDeq>
void blocks_typed(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                  float max_abs_r, const BlockRanges* ranges, const std::vector<OverviewUnit>& units, NextIndex& next, Folder& folder,
                  BlocksPart& part) {
    switch (view.type) {
        case ElementType::BF16:
            return blocks_units<kHalfEven, kDeq, LoadBf16>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
#ifdef __F16C__
        case ElementType::F16:
            return blocks_units<kHalfEven, kDeq, LoadF16>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
#endif
        default:
            return blocks_units<kHalfEven, kDeq, LoadF32>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
    }
}

}  // namespace

bool fused_int_blocks(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                      float max_abs_r, const BlockRanges* ranges, QuantOverview& out) {
    if (avx2_overview_only() || view.type == ElementType::F64 || !fused_overview_applies(view, params, config, grid)) return false;
    // Each row cut into segments of one (s, z): the whole row within one run, or groups that divide the row.
    const std::int64_t stride = params.block_stride, cols = grid.cols;
    if (params.block_count != 1 && !(stride % cols == 0 || (stride >= kMinRun && cols % stride == 0))) return false;
    // Ranges of another layout (or none) leave every row to the checked kernel.
    if (ranges && (ranges->block_count != params.block_count || ranges->block_stride != params.block_stride ||
                   ranges->lo.size() != static_cast<std::size_t>(params.block_count) || ranges->hi.size() != ranges->lo.size()))
        ranges = nullptr;
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
            if (half_even) blocks_typed<true, false>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
            else blocks_typed<false, false>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
        } else {
            if (half_even) blocks_typed<true, true>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
            else blocks_typed<false, true>(view, params, config, grid, max_abs_r, ranges, units, next, folder, part);
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
