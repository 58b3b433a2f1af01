// ggml's non-linear types, bit-exact with ggml-quants.c: iq4_nl and iq4_xs (indices into a 16-value
// non-uniform grid; quantize_iq4_nl / quantize_iq4_xs, which ggml_quantize_chunk calls with or without an
// importance vector). Layouts (ggml-common.h), little-endian:
//   iq4_nl  d(2) qs[16]                                    32 values
//   iq4_xs  d(2) scales_h(2) scales_l[4] qs[128]           256 values; sub-block ib's 6-bit scale: the low
//           nibble of scales_l[ib / 2] (ib even) or its high nibble (ib odd), bits 2 ib of scales_h on top
// In a qs of 16 bytes per 32 values, value j sits in the low nibble of byte j (j < 16) or the high nibble of
// byte j - 16.
#include "format_kernels.hpp"
#include "ggml_codecs.hpp"
#include "ggml_scale_search.hpp"

namespace qs::detail {
namespace {

std::uint8_t* bytes(void* p) { return static_cast<std::uint8_t*>(p); }
const std::uint8_t* bytes(const void* p) { return static_cast<const std::uint8_t*>(p); }

// ggml's kvalues_iq4nl: the grid iq4_nl and iq4_xs index.
constexpr std::int8_t kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// The grid's midpoints (a tie goes up: x >= midpoint i means index > i) and, for the cells [8 c - 128,
// 8 c - 120) of width 8 (narrower than any gap between midpoints, so each holds at most one), how many
// midpoints lie at or below the cell's start. kIq4Midpoint[15] = +Inf: no value goes past index 15.
constexpr float kIq4Midpoint[16] = {-115.5f, -93.5f, -74, -57, -42, -28.5f, -16, -4.5f, 7, 19, 31.5f, 45.5f,
                                    61, 79, 101, INFINITY};
constexpr std::int32_t kIq4CellBelow[32] = {0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 7,
                                            8, 9, 9, 10, 11, 11, 12, 12, 13, 13, 14, 14, 14, 15, 15, 15};
// Each index's grid value and the step to the next (0 past the last), as floats.
constexpr float kIq4Value[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
constexpr float kIq4Step[16] = {23, 21, 18, 16, 14, 13, 12, 11, 12, 12, 13, 15, 16, 20, 24, 0};

// ggml's best_index_int8 on kIq4Grid (a binary search, then x - a < b - x picks the lower of the two
// neighbours) is the number of midpoints at or below x, NaN giving 15: checked for all 2^32 floats. The
// cell of x (exact: x / 8 is a power-of-two scaling) gives that count up to one last comparison.
#ifndef QS_HAVE_FORMAT_AVX2
int iq4_index(float x) {
    if (!(x > -128.0f)) return x != x ? 15 : 0;
    if (x >= 113.0f) return 15;
    const int below = kIq4CellBelow[static_cast<int>(std::floor(x * 0.125f)) + 16];
    return below + (x >= kIq4Midpoint[below] ? 1 : 0);
}
#endif

// ---- iq4_nl and iq4_xs: ggml's quantize_row_iq4_nl_impl with ntry = 7 -----------------------------------------

constexpr int kIq4Sub = 32;
constexpr int kIq4Tries = 7;
constexpr int kIq4Fits = 2 * kIq4Tries + 2;  // the tries t = -7..7, then the first fit (a lane of 16)

// Σ w q x and Σ w q^2 (each term (w q) x and (w q) q, summed in index order: ggml's float32 operations) of
// the 16 fits of a sub-block: fit f's inverse scale is ids[f], q the grid value at iq4_index(ids[f] x).
#ifdef QS_HAVE_FORMAT_AVX2
// iq4_index of 8 values at once: the cell of the value clamped to [-128, 127], its count from the cell table
// (four 8-entry permutes), then the one comparison; NaN (0 times an infinite 1 / d) gives 15.
__m256i iq4_index_avx2(__m256 x) {
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-128.0f)), _mm256_set1_ps(127.0f));
    const __m256i cell = _mm256_add_epi32(
        _mm256_cvttps_epi32(_mm256_floor_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(0.125f)))), _mm256_set1_epi32(16));
    const auto table = [&](int first) {
        return _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kIq4CellBelow + first)), cell);
    };
    const __m256 bit3 = _mm256_castsi256_ps(_mm256_slli_epi32(cell, 28));  // blendv reads the top bit
    const __m256 bit4 = _mm256_castsi256_ps(_mm256_slli_epi32(cell, 27));
    const __m256 low = _mm256_blendv_ps(_mm256_castsi256_ps(table(0)), _mm256_castsi256_ps(table(8)), bit3);
    const __m256 high = _mm256_blendv_ps(_mm256_castsi256_ps(table(16)), _mm256_castsi256_ps(table(24)), bit3);
    const __m256i below = _mm256_castps_si256(_mm256_blendv_ps(low, high, bit4));
    const __m256 reached = _mm256_cmp_ps(x, avx_lookup16(kIq4Midpoint, below), _CMP_GE_OQ);
    const __m256i index = _mm256_sub_epi32(below, _mm256_castps_si256(reached));  // a true lane is -1
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(index), _mm256_castsi256_ps(_mm256_set1_epi32(15)),
                                                 _mm256_cmp_ps(x, x, _CMP_UNORD_Q)));
}

// The fits run in lanes, each summing over j in order. The tries' inverse scales (t - 127) / max are
// monotone in t, so each x[j]'s products with them lie between those of t = -7 and t = 7: one sign, and
// magnitudes whose ratio is at most 134 / 120 (and a few ulps), below the ratio 1.23 of any two neighbouring
// midpoints of one sign (93.5 / 74 ... 19 / 7). So at most one midpoint lies between them: a try's index is
// the index lo of the smaller end, plus 1 where it reaches midpoint lo. The first fit (lane 15) has its own
// index. Each element's grid value at lo, midpoint lo, the step there and its first-fit value are found 8
// elements at a time before the fits.
void iq4_fit_sums(const float* x, const float* w, const float* ids, float* sumqx, float* sumq2) {
    alignas(32) float value[kIq4Sub], mid[kIq4Sub], step[kIq4Sub], first[kIq4Sub];
    const __m256 id_low = _mm256_set1_ps(ids[0]), id_high = _mm256_set1_ps(ids[2 * kIq4Tries]);
    const __m256 id_first = _mm256_set1_ps(ids[kIq4Fits - 1]);
    for (int j = 0; j < kIq4Sub; j += 8) {
        const __m256 xs = _mm256_loadu_ps(x + j);
        const __m256i lo = iq4_index_avx2(_mm256_min_ps(_mm256_mul_ps(id_low, xs), _mm256_mul_ps(id_high, xs)));
        _mm256_store_ps(value + j, avx_lookup16(kIq4Value, lo));
        _mm256_store_ps(mid + j, avx_lookup16(kIq4Midpoint, lo));
        _mm256_store_ps(step + j, avx_lookup16(kIq4Step, lo));
        _mm256_store_ps(first + j, avx_lookup16(kIq4Value, iq4_index_avx2(_mm256_mul_ps(id_first, xs))));
    }
    const __m256 id_a = _mm256_loadu_ps(ids), id_b = _mm256_loadu_ps(ids + 8);
    const __m256 first_lane = _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, 0, 0, 0, 0, 0, -1));
    __m256 qx_a = _mm256_setzero_ps(), q2_a = qx_a, qx_b = qx_a, q2_b = qx_a;
    for (int j = 0; j < kIq4Sub; ++j) {
        const __m256 X = _mm256_broadcast_ss(x + j), W = _mm256_broadcast_ss(w + j);
        const __m256 v = _mm256_broadcast_ss(value + j);
        const __m256 m = _mm256_broadcast_ss(mid + j), s = _mm256_broadcast_ss(step + j);
        const auto grid_value = [&](__m256 al) { return _mm256_add_ps(v, _mm256_and_ps(_mm256_cmp_ps(al, m, _CMP_GE_OQ), s)); };
        const __m256 q_a = grid_value(_mm256_mul_ps(id_a, X));
        const __m256 q_b =
            _mm256_blendv_ps(grid_value(_mm256_mul_ps(id_b, X)), _mm256_broadcast_ss(first + j), first_lane);
        const __m256 wq_a = _mm256_mul_ps(W, q_a), wq_b = _mm256_mul_ps(W, q_b);
        qx_a = _mm256_add_ps(qx_a, _mm256_mul_ps(wq_a, X));
        q2_a = _mm256_add_ps(q2_a, _mm256_mul_ps(wq_a, q_a));
        qx_b = _mm256_add_ps(qx_b, _mm256_mul_ps(wq_b, X));
        q2_b = _mm256_add_ps(q2_b, _mm256_mul_ps(wq_b, q_b));
    }
    _mm256_storeu_ps(sumqx, qx_a), _mm256_storeu_ps(sumqx + 8, qx_b);
    _mm256_storeu_ps(sumq2, q2_a), _mm256_storeu_ps(sumq2 + 8, q2_b);
}
#else
void iq4_fit_sums(const float* x, const float* w, const float* ids, float* sumqx, float* sumq2) {
    for (int f = 0; f < kIq4Fits; ++f) {
        sumqx[f] = 0, sumq2[f] = 0;
        for (int j = 0; j < kIq4Sub; ++j) {
            const float q = kIq4Value[iq4_index(ids[f] * x[j])];
            sumqx[f] += w[j] * q * x[j];
            sumq2[f] += w[j] * q * q;
        }
    }
}
#endif

#ifdef __AVX512F__
#define QS_HAVE_IQ4_LANES 1
// GCC 12 reports its own _mm512_undefined_ps inside _mm512_min_ps / _mm512_max_ps as used uninitialized once
// inlined into arrays of vectors; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// iq4_index of 16 values: iq4_index_avx2's steps with 32-entry permutes.
__m512i iq4_index_avx512(__m512 x) {
    const __m512 clamped = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-128.0f)), _mm512_set1_ps(127.0f));
    const __m512i cell = _mm512_add_epi32(
        _mm512_cvttps_epi32(_mm512_roundscale_ps(_mm512_mul_ps(clamped, _mm512_set1_ps(0.125f)), _MM_FROUND_TO_NEG_INF)),
        _mm512_set1_epi32(16));
    const __m512i below = _mm512_permutex2var_epi32(_mm512_loadu_si512(kIq4CellBelow), cell,
                                                    _mm512_loadu_si512(kIq4CellBelow + 16));
    const __mmask16 reached = _mm512_cmp_ps_mask(x, _mm512_permutexvar_ps(below, _mm512_loadu_ps(kIq4Midpoint)), _CMP_GE_OQ);
    const __m512i index = _mm512_mask_add_epi32(below, reached, below, _mm512_set1_epi32(1));
    return _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), index, _mm512_set1_epi32(15));
}

// iq4_sub_scale for `count` (1..16 G) sub-blocks of 32 at once, sub-block j at x + 32 j with its weights at
// w + 32 j, one to a lane (G groups of sixteen side by side): each lane's fits summed in index order and
// chosen in ggml's order, the scalar's bits. The one-midpoint argument of iq4_fit_sums holds per lane: a
// try's grid value is the value at lo, plus the step where its product reaches midpoint lo.
template <int G>
void iq4_sub_scales_lanes(int count, const float* x, const float* w, float* scales) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512i lane = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(kIq4Sub));
    const __m512 values = _mm512_loadu_ps(kIq4Value), mids = _mm512_loadu_ps(kIq4Midpoint);
    const __m512 steps = _mm512_loadu_ps(kIq4Step);
    __mmask16 live[G];
    for (int g = 0; g < G; ++g) {
        const int in_group = count - 16 * g;
        live[g] = in_group >= 16 ? static_cast<__mmask16>(0xffff)
                                 : static_cast<__mmask16>(in_group > 0 ? (1u << in_group) - 1 : 0);
    }
    __m512 xv[kIq4Sub][G], wv[kIq4Sub][G], amax[G], max[G];
    for (int g = 0; g < G; ++g) amax[g] = max[g] = zero;
    for (int j = 0; j < kIq4Sub; ++j) {
        const __m512i at = _mm512_add_epi32(lane, _mm512_set1_epi32(j));
        for (int g = 0; g < G; ++g) {
            xv[j][g] = _mm512_mask_i32gather_ps(zero, live[g], at, x + 16 * kIq4Sub * g, 4);
            wv[j][g] = _mm512_mask_i32gather_ps(zero, live[g], at, w + 16 * kIq4Sub * g, 4);
            const __m512 ax = _mm512_abs_ps(xv[j][g]);  // the first value of largest magnitude, with its sign
            const __mmask16 larger = _mm512_cmp_ps_mask(ax, amax[g], _CMP_GT_OQ);
            amax[g] = _mm512_mask_blend_ps(larger, amax[g], ax);
            max[g] = _mm512_mask_blend_ps(larger, max[g], xv[j][g]);
        }
    }
    __m512 id_low[G], id_high[G], id_first[G];
    for (int g = 0; g < G; ++g) {
        id_low[g] = _mm512_div_ps(_mm512_set1_ps(static_cast<float>(-kIq4Tries + kIq4Grid[0])), max[g]);
        id_high[g] = _mm512_div_ps(_mm512_set1_ps(static_cast<float>(kIq4Tries + kIq4Grid[0])), max[g]);
        id_first[g] = _mm512_div_ps(_mm512_set1_ps(1.0f),
                                    _mm512_div_ps(_mm512_sub_ps(zero, max[g]), _mm512_set1_ps(static_cast<float>(kIq4Grid[0]))));
    }
    __m512 value[kIq4Sub][G], mid[kIq4Sub][G], step[kIq4Sub][G];
    __m512 qx[G], q2[G];
    for (int g = 0; g < G; ++g) qx[g] = q2[g] = zero;
    for (int j = 0; j < kIq4Sub; ++j)
        for (int g = 0; g < G; ++g) {
            const __m512 X = xv[j][g];
            const __m512i lo = iq4_index_avx512(_mm512_min_ps(_mm512_mul_ps(id_low[g], X), _mm512_mul_ps(id_high[g], X)));
            value[j][g] = _mm512_permutexvar_ps(lo, values);
            mid[j][g] = _mm512_permutexvar_ps(lo, mids);
            step[j][g] = _mm512_permutexvar_ps(lo, steps);
            const __m512 q = _mm512_permutexvar_ps(iq4_index_avx512(_mm512_mul_ps(id_first[g], X)), values);
            const __m512 wq = _mm512_mul_ps(wv[j][g], q);  // the first fit, in index order
            qx[g] = _mm512_add_ps(qx[g], _mm512_mul_ps(wq, X));
            q2[g] = _mm512_add_ps(q2[g], _mm512_mul_ps(wq, q));
        }
    __m512 d[G], best[G];
    for (int g = 0; g < G; ++g) {
        d[g] = _mm512_maskz_div_ps(_mm512_cmp_ps_mask(q2[g], zero, _CMP_GT_OQ), qx[g], q2[g]);
        best[g] = _mm512_mul_ps(d[g], qx[g]);
    }
    for (int t = -kIq4Tries; t <= kIq4Tries; ++t) {
        const __m512 numerator = _mm512_set1_ps(static_cast<float>(t + kIq4Grid[0]));
        __m512 id[G];
        for (int g = 0; g < G; ++g) {
            id[g] = _mm512_div_ps(numerator, max[g]);
            qx[g] = q2[g] = zero;
        }
        for (int j = 0; j < kIq4Sub; ++j)
            for (int g = 0; g < G; ++g) {
                const __m512 al = _mm512_mul_ps(id[g], xv[j][g]);
                const __m512 q = _mm512_mask_add_ps(value[j][g], _mm512_cmp_ps_mask(al, mid[j][g], _CMP_GE_OQ),
                                                    value[j][g], step[j][g]);
                const __m512 wq = _mm512_mul_ps(wv[j][g], q);
                qx[g] = _mm512_add_ps(qx[g], _mm512_mul_ps(wq, xv[j][g]));
                q2[g] = _mm512_add_ps(q2[g], _mm512_mul_ps(wq, q));
            }
        for (int g = 0; g < G; ++g) {
            const __mmask16 better =
                _mm512_cmp_ps_mask(q2[g], zero, _CMP_GT_OQ) &
                _mm512_cmp_ps_mask(_mm512_mul_ps(qx[g], qx[g]), _mm512_mul_ps(best[g], q2[g]), _CMP_GT_OQ);
            d[g] = _mm512_mask_div_ps(d[g], better, qx[g], q2[g]);
            best[g] = _mm512_mask_mul_ps(best[g], better, d[g], qx[g]);
        }
    }
    for (int g = 0; g < G && 16 * g < count; ++g) {
        const __mmask16 empty = _mm512_cmp_ps_mask(amax[g], _mm512_set1_ps(kGgmlGroupMaxEps), _CMP_LT_OQ);
        alignas(64) float lane_d[16];
        _mm512_store_ps(lane_d, _mm512_mask_blend_ps(empty, d[g], zero));
        const int lanes = count - 16 * g < 16 ? count - 16 * g : 16;
        for (int j = 0; j < lanes; ++j) scales[16 * g + j] = lane_d[j];
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

// The best scale for one sub-block of 32 (0 where it is below kGgmlGroupMaxEps): ggml's first fit at
// d = max / 127, then each try at inverse scale (t - 127) / max, t = -7..7, kept where it beats the best so
// far (in that order). Built with AVX-512, iq4_sub_scales_lanes runs it instead.
[[maybe_unused]] float iq4_sub_scale(const float* x, const float* weight) {
    const float amax = block_amax(x, kIq4Sub);
    if (amax < kGgmlGroupMaxEps) return 0.0f;
    float max = 0;  // the first value of largest magnitude, with its sign
    for (int j = 0; max == 0; ++j)
        if (std::fabs(x[j]) == amax) max = x[j];
    float ids[kIq4Fits], sumqx[kIq4Fits], sumq2[kIq4Fits];
    for (int t = -kIq4Tries; t <= kIq4Tries; ++t) ids[t + kIq4Tries] = static_cast<float>(t + kIq4Grid[0]) / max;
    ids[kIq4Fits - 1] = 1 / (-max / static_cast<float>(kIq4Grid[0]));
    iq4_fit_sums(x, weight, ids, sumqx, sumq2);
    const float first_qx = sumqx[kIq4Fits - 1], first_q2 = sumq2[kIq4Fits - 1];
    float d = first_q2 > 0 ? first_qx / first_q2 : 0.0f;
    float best = d * first_qx;
    for (int f = 0; f < 2 * kIq4Tries + 1; ++f) {
        if (sumq2[f] > 0 && sumqx[f] * sumqx[f] > best * sumq2[f]) {
            d = sumqx[f] / sumq2[f];
            best = d * sumqx[f];
        }
    }
    return d;
}

// The fitting weights of one sub-block: qw[j] sqrt(sigma2 + x[j]^2) with an importance vector, else x[j]^2.
void iq4_weights(const float* x, const float* qw, float sigma2, float* weight) {
    if (qw) {
        for (int j = 0; j < kIq4Sub; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
    } else {
        for (int j = 0; j < kIq4Sub; ++j) weight[j] = x[j] * x[j];
    }
}

// sigma2 of a block of n: 2 Σ x^2 / n, summed over the block itself (not the row).
float iq4_sigma2(const float* x, int n) {
    float sigma2 = 0;
    for (int j = 0; j < n; ++j) sigma2 += x[j] * x[j];
    return sigma2 * (2.0f / static_cast<float>(n));
}

// The indices of 32 values at inverse scale id, packed two to a byte.
void iq4_pack(const float* x, float id, std::uint8_t* qs) {
#if defined(QS_HAVE_IQ4_LANES)
    const __m512 ids = _mm512_set1_ps(id);
    const __m512i low = iq4_index_avx512(_mm512_mul_ps(ids, _mm512_loadu_ps(x)));
    const __m512i high = iq4_index_avx512(_mm512_mul_ps(ids, _mm512_loadu_ps(x + 16)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(_mm512_or_si512(low, _mm512_slli_epi32(high, 4))));
#elif defined(QS_HAVE_FORMAT_AVX2)
    alignas(32) std::int32_t index[kIq4Sub];
    for (int j = 0; j < kIq4Sub; j += 8)
        _mm256_store_si256(reinterpret_cast<__m256i*>(index + j),
                           iq4_index_avx2(_mm256_mul_ps(_mm256_set1_ps(id), _mm256_loadu_ps(x + j))));
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<std::uint8_t>(index[j] | (index[j + 16] << 4));
#else
    for (int j = 0; j < 16; ++j)
        qs[j] = static_cast<std::uint8_t>(iq4_index(id * x[j]) | (iq4_index(id * x[j + 16]) << 4));
#endif
}

// The scales of `count` sub-blocks of 32 (x + 32 j, weights w + 32 j): up to 32 at a time in lanes where
// AVX-512 is built.
void iq4_sub_scales(int count, const float* x, const float* w, float* scales) {
#ifdef QS_HAVE_IQ4_LANES
    for (int j = 0; j < count; j += 32) {  // one group of sixteen lanes where no more are left
        const int left = count - j < 32 ? count - j : 32;
        if (left > 16) iq4_sub_scales_lanes<2>(left, x + kIq4Sub * j, w + kIq4Sub * j, scales + j);
        else iq4_sub_scales_lanes<1>(left, x + kIq4Sub * j, w + kIq4Sub * j, scales + j);
    }
#else
    for (int j = 0; j < count; ++j) scales[j] = iq4_sub_scale(x + kIq4Sub * j, w + kIq4Sub * j);
#endif
}

// 32 blocks at a time: their scales in one call of the lanes.
void iq4_nl_quantize(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    constexpr int kGroup = 32;
    float weight[kGroup * kIq4Sub], d[kGroup];
    for (std::int64_t b0 = 0; b0 < blocks; b0 += kGroup) {
        const int count = static_cast<int>(blocks - b0 < kGroup ? blocks - b0 : kGroup);
        const float* xs = x + kIq4Sub * b0;
        const float* qw = imp ? imp->weights + kIq4Sub * b0 : nullptr;
        for (int b = 0; b < count; ++b)
            iq4_weights(xs + kIq4Sub * b, qw ? qw + kIq4Sub * b : nullptr, qw ? iq4_sigma2(xs + kIq4Sub * b, kIq4Sub) : 0.0f,
                        weight + kIq4Sub * b);
        iq4_sub_scales(count, xs, weight, d);
        for (int b = 0; b < count; ++b) {
            std::uint8_t* y = bytes(out) + 18 * (b0 + b);
            store_le16(y, ggml_fp16(d[b]));
            iq4_pack(xs + kIq4Sub * b, d[b] != 0 ? 1 / d[b] : 0.0f, y + 2);
        }
    }
}

// From its eight sub-blocks' scales, one super-block.
void iq4_xs_block(const float* x, const float* scales, std::uint8_t* y) {
    constexpr int kSubs = 256 / kIq4Sub;
    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < kSubs; ++ib)
        if (std::fabs(scales[ib]) > amax_scale) amax_scale = std::fabs(scales[ib]), max_scale = scales[ib];
    // The super-block's d maps the largest sub-scale to -32; each sub-block's 6-bit l = nearest(sc / d) in
    // [-32, 31] is stored plus 32, and its values are re-indexed at the scale d l actually used.
    const float d = -max_scale / 32;
    const float id = d != 0 ? 1 / d : 0.0f;
    store_le16(y, ggml_fp16(d));
    std::uint16_t scales_h = 0;
    std::uint8_t* scales_l = y + 4;
    for (int ib = 0; ib < kSubs; ++ib) {
        int l = ggml_nearest_int(id * scales[ib]);
        l = l < -32 ? -32 : (l > 31 ? 31 : l);
        const float dl = d * static_cast<float>(l);
        iq4_pack(x + kIq4Sub * ib, dl != 0 ? 1 / dl : 0.0f, y + 8 + 16 * ib);
        const int stored = l + 32;
        if (ib % 2 == 0) scales_l[ib / 2] = static_cast<std::uint8_t>(stored & 0x0f);
        else scales_l[ib / 2] = static_cast<std::uint8_t>(scales_l[ib / 2] | ((stored & 0x0f) << 4));
        scales_h = static_cast<std::uint16_t>(scales_h | ((stored >> 4) << (2 * ib)));
    }
    store_le16(y + 2, scales_h);
}

// Four super-blocks at a time: their 32 sub-blocks' scales in one call of the lanes.
void iq4_xs_quantize(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    constexpr int kGroup = 4, kSubs = 256 / kIq4Sub;
    float weight[kGroup * 256], scales[kGroup * kSubs];
    for (std::int64_t b0 = 0; b0 < blocks; b0 += kGroup) {
        const int count = static_cast<int>(blocks - b0 < kGroup ? blocks - b0 : kGroup);
        const float* xs = x + 256 * b0;
        const float* qw = imp ? imp->weights + 256 * b0 : nullptr;
        for (int b = 0; b < count; ++b) {
            const float sigma2 = qw ? iq4_sigma2(xs + 256 * b, 256) : 0.0f;  // the super-block's
            for (int ib = 0; ib < kSubs; ++ib) {
                const std::int64_t at = 256 * b + kIq4Sub * ib;
                iq4_weights(xs + at, qw ? qw + at : nullptr, sigma2, weight + at);
            }
        }
        iq4_sub_scales(kSubs * count, xs, weight, scales);
        for (int b = 0; b < count; ++b) iq4_xs_block(xs + 256 * b, scales + kSubs * b, bytes(out) + 136 * (b0 + b));
    }
}

// The stored 6-bit scale of iq4_xs's sub-block ib (0..63; to_float uses it minus 32).
int iq4_xs_stored_scale(const std::uint8_t* block, int ib) {
    const std::uint16_t scales_h = load_le16(block + 2);
    return ((block[4 + ib / 2] >> (4 * (ib % 2))) & 0x0f) | (((scales_h >> (2 * ib)) & 3) << 4);
}

// 32 values of a qs of 16 bytes: d times each index's grid value (the same float32 product as ggml's).
void iq4_scaled_grid(const std::uint8_t* qs, float d, float* y) {
#ifdef QS_HAVE_IQ4_LANES
    const __m512i bytes16 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    const __m512i nibble = _mm512_set1_epi32(0x0f);
    const __m512 grid = _mm512_loadu_ps(kIq4Value), vd = _mm512_set1_ps(d);
    _mm512_storeu_ps(y, _mm512_mul_ps(vd, _mm512_permutexvar_ps(_mm512_and_si512(bytes16, nibble), grid)));
    _mm512_storeu_ps(y + 16, _mm512_mul_ps(vd, _mm512_permutexvar_ps(_mm512_srli_epi32(bytes16, 4), grid)));
#else
    for (int j = 0; j < 16; ++j) {
        y[j] = d * static_cast<float>(kIq4Grid[qs[j] & 0x0f]);
        y[j + 16] = d * static_cast<float>(kIq4Grid[qs[j] >> 4]);
    }
#endif
}

void iq4_nl_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += 32) {
        const std::uint8_t* x = bytes(in) + 18 * b;
        iq4_scaled_grid(x + 2, half_to_float(load_le16(x)), y);
    }
}

void iq4_xs_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::uint8_t* x = bytes(in) + 136 * b;
        const float d = half_to_float(load_le16(x));
        for (int ib = 0; ib < 8; ++ib, y += 32)
            iq4_scaled_grid(x + 8 + 16 * ib, d * static_cast<float>(iq4_xs_stored_scale(x, ib) - 32), y);
    }
}

void iq4_nl_fields(const void* block, GgmlBlockFields& out) {
    const std::uint8_t* x = bytes(block);
    out.d_bits = load_le16(x);
    out.d = half_to_float(out.d_bits);
    for (int j = 0; j < 16; ++j) out.codes[j] = x[2 + j] & 0x0f, out.codes[j + 16] = x[2 + j] >> 4;
}

void iq4_xs_fields(const void* block, GgmlBlockFields& out) {
    const std::uint8_t* x = bytes(block);
    out.d_bits = load_le16(x);
    out.d = half_to_float(out.d_bits);
    out.sub_blocks = 8;
    out.sub_size = 32;
    for (int ib = 0; ib < 8; ++ib) {
        out.sub_scale[ib] = iq4_xs_stored_scale(x, ib) - 32;
        out.sub_scale_used[ib] = out.d * static_cast<float>(out.sub_scale[ib]);
        const std::uint8_t* qs = x + 8 + 16 * ib;
        for (int j = 0; j < 16; ++j) out.codes[32 * ib + j] = qs[j] & 0x0f, out.codes[32 * ib + j + 16] = qs[j] >> 4;
    }
}

// The 32 indices of a qs of 16 bytes in value order.
void iq4_indices(const std::uint8_t* qs, std::int32_t* codes) {
#ifdef QS_HAVE_IQ4_LANES
    const __m512i bytes16 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(qs)));
    _mm512_storeu_si512(codes, _mm512_and_si512(bytes16, _mm512_set1_epi32(0x0f)));
    _mm512_storeu_si512(codes + 16, _mm512_srli_epi32(bytes16, 4));
#else
    for (int j = 0; j < 16; ++j) codes[j] = qs[j] & 0x0f, codes[j + 16] = qs[j] >> 4;
#endif
}

// Each value's index and each block's d (GgmlCodec::codes; the fields' codes and d).
void iq4_nl_codes(const void* in, std::int64_t blocks, std::int32_t* codes, float* d) {
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::uint8_t* x = bytes(in) + 18 * b;
        d[b] = half_to_float(load_le16(x));
        iq4_indices(x + 2, codes + 32 * b);
    }
}

// Each value's index and each sub-block's used scale d (l - 32) (the fields' codes and sub_scale_used).
void iq4_xs_codes(const void* in, std::int64_t blocks, std::int32_t* codes, float* sub_scale_used) {
    for (std::int64_t b = 0; b < blocks; ++b) {
        const std::uint8_t* x = bytes(in) + 136 * b;
        const float d = half_to_float(load_le16(x));
        for (int ib = 0; ib < 8; ++ib) {
            sub_scale_used[8 * b + ib] = d * static_cast<float>(iq4_xs_stored_scale(x, ib) - 32);
            iq4_indices(x + 8 + 16 * ib, codes + 256 * b + 32 * ib);
        }
    }
}

}  // namespace

GgmlCodec ggml_iq_codec(GgmlType type) {
    GgmlCodec c;
    switch (type) {
        case GgmlType::IQ4_NL: c = {iq4_nl_quantize, iq4_nl_dequantize, iq4_nl_fields}; c.codes = iq4_nl_codes; break;
        case GgmlType::IQ4_XS: c = {iq4_xs_quantize, iq4_xs_dequantize, iq4_xs_fields}; c.codes = iq4_xs_codes; break;
        default: return c;
    }
    c.scale_group = 32;
    c.d_at = 0;
    return c;
}

}  // namespace qs::detail
