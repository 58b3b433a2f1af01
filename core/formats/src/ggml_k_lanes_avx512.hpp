// Internal: ggml's make_qkx2_quants / make_qkx3_quants for up to 16 sub-blocks at once, one sub-block to an
// AVX-512 lane. Each lane runs the scalar search of ggml_k_search.hpp on its own sub-block: the same float32
// operations in the same order (no FMA), its candidates one after another, a winner taken where its error
// is strictly below the lane's best so far. Lanes never mix, so every lane's scale, min and codes are the
// scalar function's bits; what is shared is only the instruction stream. This pays where ggml_k_search_
// avx512.hpp's one-candidate-per-lane search does not: a winner there changes the min and restarts the
// round, here it changes only its own lane.
#pragma once

#include "ggml_k_search.hpp"
#include "ggml_k_search_avx512.hpp"

#include <type_traits>

#ifdef QS_HAVE_GGML_K_AVX512

namespace qs::detail {

// GCC 12 reports its own _mm512_undefined_ps (inside _mm512_cvtepi32_ps and _mm512_min_epi32) as used
// uninitialized once these are inlined into arrays of vectors; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

// An empty asm that takes v in a register and may change it: the compiler keeps the value it loaded there for
// its next use instead of loading it again from memory (one load less per value in the search's trial pass).
inline void keep_in_register(__m512& v) { __asm__("" : "+v"(v)); }

// Sixteen sub-blocks of n (16 or 32) values as lanes: out[i] lane j is value i of sub-block j, which starts
// at p + n j; sub-blocks from `rows` on read as zeros (and are not read). Plain loads and a 16 x 16
// transpose per sixteen values (unpacks, then 128-bit shuffles), not gathers.
inline void sub_blocks_as_lanes_avx512(const float* p, int n, int rows, __m512* out) {
    for (int c0 = 0; c0 < n; c0 += 16) {
        __m512 r[16], t[16];
        for (int j = 0; j < 16; ++j) r[j] = _mm512_maskz_loadu_ps(j < rows ? 0xffff : 0, p + n * j + c0);
        for (int k = 0; k < 8; ++k) {  // rows 2k, 2k + 1 interleaved: columns (4 lane + 0, 1) and (+ 2, 3)
            t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
            t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
        }
        for (int k = 0; k < 4; ++k) {  // r[4k + m]: rows 4k..4k + 3 at column 4 lane + m
            const auto pd = [](__m512 v) { return _mm512_castps_pd(v); };
            r[4 * k] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[4 * k]), pd(t[4 * k + 2])));
            r[4 * k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[4 * k]), pd(t[4 * k + 2])));
            r[4 * k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[4 * k + 1]), pd(t[4 * k + 3])));
            r[4 * k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[4 * k + 1]), pd(t[4 * k + 3])));
        }
        for (int m = 0; m < 4; ++m) {  // the 128-bit lanes: column m + 4 lane gathers r[m], r[4 + m], ...'s lane
            const __m512 a = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88), b = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xdd);
            const __m512 c = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88);
            const __m512 d = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xdd);
            out[c0 + m] = _mm512_shuffle_f32x4(a, c, 0x88);
            out[c0 + m + 8] = _mm512_shuffle_f32x4(a, c, 0xdd);
            out[c0 + m + 4] = _mm512_shuffle_f32x4(b, d, 0x88);
            out[c0 + m + 12] = _mm512_shuffle_f32x4(b, d, 0xdd);
        }
    }
}

// `count` (1..16 G) sub-blocks of N (16 or 32) values each, sub-block j at x + N j with its weights at
// weights + N j (QkxWeights::Given; else unread): scales[j], the_min[j] and, where L is not null, codes
// L + N j as make_qkx2_quants (qkx3 as false) or make_qkx3_quants (true; the two differ only in `max == min`
// against `max <= min`) give them with rmin, rdelta, nstep >= 1. G groups of sixteen lanes run side by
// side: each sum is a chain of dependent adds, and two chains keep the vector units busy where one waits
// on its adds' latency. Without codes the lanes keep no best codes at all (most callers requantize). N is a
// template argument so that the loops over the values unroll (7% of q4_K's search, measured).
template <int G, int N, QkxWeights Weights = QkxWeights::Given>
inline void ggml_make_qkx_quants_lanes_avx512(int count, int nmax, const float* x, const float* weights,
                                              std::uint8_t* L, float* scales, float* the_min, float rmin,
                                              float rdelta, int nstep, bool use_mad) {
    static_assert(N == 16 || N == 32, "sub-blocks of 16 or 32 values");
    constexpr int n = N;
    const __m512 zero = _mm512_setzero_ps();
    const bool codes_wanted = L != nullptr;
    __m512 xv[32][G], wv[32][G], best_l[32][G], trial[32][G];
    for (int g = 0; g < G; ++g) {  // lane j of group g holds sub-block 16 g + j's values; lanes past count zeros
        __m512 lanes[32];
        const int rows = count - 16 * g;
        sub_blocks_as_lanes_avx512(x + 16 * n * g, n, rows, lanes);
        for (int i = 0; i < n; ++i) xv[i][g] = lanes[i];
        if (Weights == QkxWeights::Given) {
            sub_blocks_as_lanes_avx512(weights + 16 * n * g, n, rows, lanes);
            for (int i = 0; i < n; ++i) wv[i][g] = lanes[i];
        } else if (Weights == QkxWeights::AbsX) {
            for (int i = 0; i < n; ++i) wv[i][g] = _mm512_abs_ps(xv[i][g]);
        } else {
            __m512 sum_x2 = zero;
            for (int i = 0; i < n; ++i) sum_x2 = _mm512_add_ps(sum_x2, _mm512_mul_ps(xv[i][g], xv[i][g]));
            const __m512 av_x = _mm512_sqrt_ps(_mm512_div_ps(sum_x2, _mm512_set1_ps(32.0f)));
            for (int i = 0; i < n; ++i) wv[i][g] = _mm512_add_ps(av_x, _mm512_abs_ps(xv[i][g]));
        }
    }
    const auto error_of = [use_mad](__m512 diff) { return use_mad ? _mm512_abs_ps(diff) : _mm512_mul_ps(diff, diff); };
    __m512 min[G], max[G], lowest[G], sum_w[G], sum_x[G], scale[G], best_error[G];
    __mmask16 flat[G];
    for (int g = 0; g < G; ++g) {
        min[g] = max[g] = xv[0][g];
        sum_w[g] = wv[0][g];
        sum_x[g] = _mm512_mul_ps(sum_w[g], xv[0][g]);
    }
    // Lanes with a NaN among their values: min and max skip it, so the range checks below do not bound its v,
    // and only the bit trick gives ggml's code for it (0; the integer clamp would make a +NaN 15). Such a lane
    // never takes a candidate (its Σ w x is NaN), so only the codes it returns would differ.
    __mmask16 nan_lanes = 0;
    for (int g = 0; g < G; ++g)
        for (int i = 0; i < n; ++i) nan_lanes |= _mm512_cmp_ps_mask(xv[i][g], xv[i][g], _CMP_UNORD_Q);
    const bool any_nan = nan_lanes != 0;
    for (int i = 1; i < n; ++i)
        for (int g = 0; g < G; ++g) {
            min[g] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(xv[i][g], min[g], _CMP_LT_OQ), min[g], xv[i][g]);
            max[g] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(xv[i][g], max[g], _CMP_GT_OQ), max[g], xv[i][g]);
            sum_w[g] = _mm512_add_ps(sum_w[g], wv[i][g]);
            sum_x[g] = _mm512_add_ps(sum_x[g], _mm512_mul_ps(wv[i][g], xv[i][g]));
        }
    const __m512 fnmax = _mm512_set1_ps(static_cast<float>(nmax));
    __m512 first_iscale[G];
    for (int g = 0; g < G; ++g) {
        lowest[g] = min[g];  // the smallest value, before min is clamped to 0
        min[g] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(min[g], zero, _CMP_GT_OQ), min[g], zero);
        flat[g] = _mm512_cmp_ps_mask(max[g], min[g], _CMP_EQ_OQ);  // scale 0, codes 0, the min as it is
        first_iscale[g] = _mm512_div_ps(fnmax, _mm512_sub_ps(max[g], min[g]));
        scale[g] = _mm512_div_ps(_mm512_set1_ps(1.0f), first_iscale[g]);
        best_error[g] = zero;
    }
    // How the codes round(iscale (x - min)) of every lane may be taken (see the candidate loop below): with one
    // rounding (rounding_is_nearest_int) and without a clamp at the bottom (low_in_range) or the top
    // (high_in_range).
    bool rounding_is_nearest_int, low_in_range, high_in_range;
    const auto check_range = [&](const __m512* iscale) {
        rounding_is_nearest_int = !any_nan;
        low_in_range = high_in_range = true;
        for (int g = 0; g < G; ++g) {
            const __m512 low = _mm512_mul_ps(iscale[g], _mm512_sub_ps(lowest[g], min[g]));
            const __m512 high = _mm512_mul_ps(iscale[g], _mm512_sub_ps(max[g], min[g]));
            const __mmask16 inside = _mm512_cmp_ps_mask(iscale[g], zero, _CMP_GT_OQ) &
                                     _mm512_cmp_ps_mask(low, _mm512_set1_ps(-4194303.0f), _CMP_GE_OQ) &
                                     _mm512_cmp_ps_mask(high, _mm512_set1_ps(4194303.0f), _CMP_LE_OQ);
            const auto all = [&](__mmask16 m) { return static_cast<__mmask16>(m | flat[g]) == static_cast<__mmask16>(0xffff); };
            rounding_is_nearest_int &= all(inside);
            low_in_range &= all(_mm512_cmp_ps_mask(low, _mm512_set1_ps(-0.5f), _CMP_GE_OQ));
            high_in_range &= all(_mm512_cmp_ps_mask(high, _mm512_add_ps(fnmax, _mm512_set1_ps(0.5f)), _CMP_LT_OQ));
        }
    };
    const auto add_first = [&](int i, int g, __m512 l) {
        if (codes_wanted) best_l[i][g] = l;
        const __m512 diff = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(scale[g], l), min[g]), xv[i][g]);
        best_error[g] = _mm512_add_ps(best_error[g], _mm512_mul_ps(wv[i][g], error_of(diff)));
    };
    check_range(first_iscale);  // the min-max fit: every code on [0, nmax] unless a lane is not finite
    if (rounding_is_nearest_int && low_in_range && high_in_range) {
        for (int i = 0; i < n; ++i)
            for (int g = 0; g < G; ++g) {
                const __m512 v = _mm512_mul_ps(first_iscale[g], _mm512_sub_ps(xv[i][g], min[g]));
                add_first(i, g, _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            }
    } else {
        for (int i = 0; i < n; ++i)
            for (int g = 0; g < G; ++g)
                add_first(i, g,
                          clamped_code_avx512(_mm512_mul_ps(first_iscale[g], _mm512_sub_ps(xv[i][g], min[g])), 0, nmax));
    }
    for (int is = 0; is <= nstep; ++is) {
        const __m512 step = _mm512_set1_ps(rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax));
        __m512 iscale[G], sum_l[G], sum_l2[G], sum_xl[G];
        // nearest_int(v) is v rounded half to even wherever |v| <= 4194303 (ggml's own bound: v + 1.5 2^23
        // then lies where the float32 step is 1, and rounds below 2^24). v = iscale (x - min) is monotone in
        // x for iscale > 0, so the lane's smallest and largest values bound every v (a NaN's v is bound by
        // none: lanes with one keep the bit trick): where all lanes are inside, one rounding replaces the bit
        // trick. The clamp to [0, nmax] then changes nothing at the top where every lane's high, the
        // candidate's step iscale (max - min), is below nmax + 1/2; at the bottom where every lane's low is at
        // least -1/2 (min is at most every value until a fit moves it, and a fit's min is seldom half a step
        // above the lowest value): those codes round to +0 or -0, and a -0 code gives the same sums, fits,
        // errors and stored codes as +0 (each of its products is a zero, and a zero added to a sum or to a
        // non-zero leaves it as it was; where this_min is zero too the difference with x is -x or a zero whose
        // square is +0).
        for (int g = 0; g < G; ++g) {
            iscale[g] = _mm512_div_ps(step, _mm512_sub_ps(max[g], min[g]));
            sum_l[g] = sum_l2[g] = sum_xl[g] = zero;
        }
        check_range(iscale);
        const auto add_trial = [&](int i, int g, __m512 l, __m512 x) {
            trial[i][g] = l;
            const __m512 wl = _mm512_mul_ps(wv[i][g], l);
            sum_l[g] = _mm512_add_ps(sum_l[g], wl);
            sum_l2[g] = _mm512_add_ps(sum_l2[g], _mm512_mul_ps(wl, l));
            sum_xl[g] = _mm512_add_ps(sum_xl[g], _mm512_mul_ps(wl, x));
        };
        // The clamps are integer min and max of the rounded codes' bits: for floats of one sign the bits order
        // as the values do, and every negative float (-0 too) is below 0 as an int32, so they give
        // min(r, nmax) and max(r, +0) bit for bit. The integer units take them beside the float adds and
        // multiplies, where the float min and max would queue with the adds (the search's busiest units on
        // Zen 4).
        const __m512i nmax_bits = _mm512_castps_si512(fnmax);
        const auto rounded_trials = [&](auto clamp_low, auto clamp_high) {
            for (int i = 0; i < n; ++i)
                for (int g = 0; g < G; ++g) {
                    __m512 x = xv[i][g];
                    keep_in_register(x);
                    const __m512 v = _mm512_mul_ps(iscale[g], _mm512_sub_ps(x, min[g]));
                    const __m512 r = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                    __m512i bits = _mm512_castps_si512(r);
                    if (decltype(clamp_low)::value) bits = _mm512_max_epi32(bits, _mm512_setzero_si512());
                    if (decltype(clamp_high)::value) bits = _mm512_min_epi32(bits, nmax_bits);
                    add_trial(i, g, _mm512_castsi512_ps(bits), x);
                }
        };
        using Yes = std::true_type;
        using No = std::false_type;
        if (!rounding_is_nearest_int) {
            for (int i = 0; i < n; ++i)
                for (int g = 0; g < G; ++g)
                    add_trial(i, g, clamped_code_avx512(_mm512_mul_ps(iscale[g], _mm512_sub_ps(xv[i][g], min[g])), 0, nmax),
                              xv[i][g]);
        } else if (low_in_range) {
            if (high_in_range) rounded_trials(No{}, No{});
            else rounded_trials(No{}, Yes{});
        } else {
            if (high_in_range) rounded_trials(Yes{}, No{});
            else rounded_trials(Yes{}, Yes{});
        }
        __m512 this_scale[G], this_min[G], error[G];
        __mmask16 solvable[G], any = 0;
        for (int g = 0; g < G; ++g) {
            const __m512 d = _mm512_sub_ps(_mm512_mul_ps(sum_w[g], sum_l2[g]), _mm512_mul_ps(sum_l[g], sum_l[g]));
            solvable[g] = _mm512_cmp_ps_mask(d, zero, _CMP_GT_OQ) & static_cast<__mmask16>(~flat[g]);
            any |= solvable[g];
            this_scale[g] = _mm512_div_ps(
                _mm512_sub_ps(_mm512_mul_ps(sum_w[g], sum_xl[g]), _mm512_mul_ps(sum_x[g], sum_l[g])), d);
            this_min[g] = _mm512_div_ps(
                _mm512_sub_ps(_mm512_mul_ps(sum_l2[g], sum_x[g]), _mm512_mul_ps(sum_l[g], sum_xl[g])), d);
            const __mmask16 positive = _mm512_cmp_ps_mask(this_min[g], zero, _CMP_GT_OQ);
            this_min[g] = _mm512_mask_blend_ps(positive, this_min[g], zero);
            if (positive != 0)  // a division less where no lane's min is above 0 (the divider is a busy unit)
                this_scale[g] = _mm512_mask_div_ps(this_scale[g], positive, sum_xl[g], sum_l2[g]);
            error[g] = zero;
        }
        if (any == 0) continue;
        for (int i = 0; i < n; ++i)
            for (int g = 0; g < G; ++g) {
                const __m512 diff =
                    _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(this_scale[g], trial[i][g]), this_min[g]), xv[i][g]);
                error[g] = _mm512_add_ps(error[g], _mm512_mul_ps(wv[i][g], error_of(diff)));
            }
        for (int g = 0; g < G; ++g) {
            const __mmask16 better = solvable[g] & _mm512_cmp_ps_mask(error[g], best_error[g], _CMP_LT_OQ);
            if (better == 0) continue;
            if (codes_wanted)
                for (int i = 0; i < n; ++i) best_l[i][g] = _mm512_mask_blend_ps(better, best_l[i][g], trial[i][g]);
            best_error[g] = _mm512_mask_blend_ps(better, best_error[g], error[g]);
            scale[g] = _mm512_mask_blend_ps(better, scale[g], this_scale[g]);
            min[g] = _mm512_mask_blend_ps(better, min[g], this_min[g]);
        }
    }
    for (int g = 0; g < G && 16 * g < count; ++g) {
        alignas(64) float lane_scale[16], lane_min[16];
        _mm512_store_ps(lane_scale, _mm512_mask_blend_ps(flat[g], scale[g], zero));
        _mm512_store_ps(lane_min, _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(min[g]),
                                                                       _mm512_set1_epi32(INT32_MIN))));  // -min
        const int lanes = count - 16 * g < 16 ? count - 16 * g : 16;
        for (int j = 0; j < lanes; ++j) {
            scales[16 * g + j] = lane_scale[j];
            the_min[16 * g + j] = lane_min[j];
        }
        if (!codes_wanted) continue;
        alignas(16) std::uint8_t codes[32][16];
        for (int i = 0; i < n; ++i)
            _mm_store_si128(reinterpret_cast<__m128i*>(codes[i]),
                            _mm512_maskz_cvtepi32_epi8(static_cast<__mmask16>(~flat[g]), _mm512_cvtps_epi32(best_l[i][g])));
        for (int j = 0; j < lanes; ++j)
            for (int i = 0; i < n; ++i) L[n * (16 * g + j) + i] = codes[i][j];
    }
}

// make_qx_quants with rmse_type 1 (ggml_scale_search.hpp's ggml_make_qx_quants) for `count` (1..16 G)
// sub-blocks of n (<= 16) values each, sub-block j at x + n j with its weights at qw + n j (null: x^2):
// scales[j] and codes L + n j (code plus nmax). Each lane runs the nineteen fits in ggml's order and takes a
// later one where the scalar rule does (Σ w x l)^2 > best Σ w l^2, strictly.
template <int G>
inline void ggml_make_qx_quants_lanes_avx512(int count, int n, int nmax, const float* x, const float* qw,
                                             std::int8_t* L, float* scales) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512i lane = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(n));
    __mmask16 live[G];
    for (int g = 0; g < G; ++g) {
        const int in_group = count - 16 * g;
        live[g] = in_group >= 16 ? static_cast<__mmask16>(0xffff)
                                 : static_cast<__mmask16>(in_group > 0 ? (1u << in_group) - 1 : 0);
    }
    __m512 xv[16][G], wv[16][G], wx[16][G];
    __m512 amax[G], max[G];
    for (int g = 0; g < G; ++g) amax[g] = max[g] = zero;
    for (int i = 0; i < n; ++i) {
        const __m512i at = _mm512_add_epi32(lane, _mm512_set1_epi32(i));
        for (int g = 0; g < G; ++g) {
            xv[i][g] = _mm512_mask_i32gather_ps(zero, live[g], at, x + 16 * n * g, 4);
            wv[i][g] = qw ? _mm512_mask_i32gather_ps(zero, live[g], at, qw + 16 * n * g, 4)
                          : _mm512_mul_ps(xv[i][g], xv[i][g]);
            wx[i][g] = _mm512_mul_ps(wv[i][g], xv[i][g]);
            const __m512 ax = _mm512_abs_ps(xv[i][g]);
            const __mmask16 larger = _mm512_cmp_ps_mask(ax, amax[g], _CMP_GT_OQ);
            amax[g] = _mm512_mask_blend_ps(larger, amax[g], ax);
            max[g] = _mm512_mask_blend_ps(larger, max[g], xv[i][g]);
        }
    }
    __mmask16 empty[G];  // below GROUP_MAX_EPS: scale 0, codes 0
    for (int g = 0; g < G; ++g) empty[g] = _mm512_cmp_ps_mask(amax[g], _mm512_set1_ps(kGgmlGroupMaxEps), _CMP_LT_OQ);
    const float fnmax = static_cast<float>(nmax);
    __m512 scale[G], best[G], chosen[G];
    for (int f = 0; f < kQxFits; ++f) {
        const int is = f == 0 ? 0 : (f <= 9 ? f - 10 : f - 9);  // the first fit, then is = -9..-1, 1..9
        const __m512 numerator = _mm512_set1_ps(f == 0 ? -fnmax : -(fnmax + 0.1f * static_cast<float>(is)));
        __m512 iscale[G], sumlx[G], suml2[G];
        for (int g = 0; g < G; ++g) {
            iscale[g] = _mm512_div_ps(numerator, max[g]);
            sumlx[g] = suml2[g] = zero;
        }
        for (int i = 0; i < n; ++i)
            for (int g = 0; g < G; ++g) {
                const __m512 fl = clamped_code_avx512(_mm512_mul_ps(iscale[g], xv[i][g]), -nmax, nmax - 1);
                sumlx[g] = _mm512_add_ps(sumlx[g], _mm512_mul_ps(wx[i][g], fl));
                suml2[g] = _mm512_add_ps(suml2[g], _mm512_mul_ps(_mm512_mul_ps(wv[i][g], fl), fl));
            }
        for (int g = 0; g < G; ++g) {
            if (f == 0) {
                const __mmask16 nonzero = _mm512_cmp_ps_mask(suml2[g], zero, _CMP_NEQ_UQ);
                scale[g] = _mm512_maskz_div_ps(nonzero, sumlx[g], suml2[g]);
                best[g] = _mm512_mul_ps(scale[g], sumlx[g]);
                chosen[g] = iscale[g];
                continue;
            }
            const __mmask16 better =
                _mm512_cmp_ps_mask(suml2[g], zero, _CMP_GT_OQ) &
                _mm512_cmp_ps_mask(_mm512_mul_ps(sumlx[g], sumlx[g]), _mm512_mul_ps(best[g], suml2[g]), _CMP_GT_OQ);
            scale[g] = _mm512_mask_div_ps(scale[g], better, sumlx[g], suml2[g]);
            best[g] = _mm512_mask_mul_ps(best[g], better, scale[g], sumlx[g]);
            chosen[g] = _mm512_mask_blend_ps(better, chosen[g], iscale[g]);
        }
    }
    for (int g = 0; g < G && 16 * g < count; ++g) {
        alignas(64) float lane_scale[16];
        _mm512_store_ps(lane_scale, _mm512_mask_blend_ps(empty[g], scale[g], zero));
        alignas(16) std::int8_t codes[16][16];
        for (int i = 0; i < n; ++i) {
            const __m512 fl = clamped_code_avx512(_mm512_mul_ps(chosen[g], xv[i][g]), -nmax, nmax - 1);
            const __m512i code = _mm512_add_epi32(_mm512_cvtps_epi32(fl), _mm512_set1_epi32(nmax));
            _mm_store_si128(reinterpret_cast<__m128i*>(codes[i]),
                            _mm512_maskz_cvtepi32_epi8(static_cast<__mmask16>(~empty[g]), code));
        }
        const int lanes = count - 16 * g < 16 ? count - 16 * g : 16;
        for (int j = 0; j < lanes; ++j) {
            const int sub = 16 * g + j;
            scales[sub] = lane_scale[j];
            for (int i = 0; i < n; ++i) L[n * sub + i] = codes[i][j];
        }
    }
}

// make_q3_quants with do_rmse (ggml_k_search.hpp's ggml_make_q3_quants) for 16 sub-blocks of 16 values,
// sub-block j at x + 16 j: scales[j] and codes L + 16 j (code plus nmax). Each lane runs the coordinate
// search on its own sums, value by value in index order; a pass that changes nothing in a lane leaves it as
// it was, so running the passes until no lane changes (at most five) is each lane's scalar loop.
inline void ggml_make_q3_quants_lanes_avx512(int nmax, const float* x, std::int8_t* L, float* scales) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512i lane = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(16));
    __m512 xv[16], w[16], wx[16], l[16];
    __m512 amax = zero, max = zero;
    for (int i = 0; i < 16; ++i) {
        xv[i] = _mm512_i32gather_ps(_mm512_add_epi32(lane, _mm512_set1_epi32(i)), x, 4);
        const __m512 ax = _mm512_abs_ps(xv[i]);
        const __mmask16 larger = _mm512_cmp_ps_mask(ax, amax, _CMP_GT_OQ);
        amax = _mm512_mask_blend_ps(larger, amax, ax);
        max = _mm512_mask_blend_ps(larger, max, xv[i]);
    }
    const __mmask16 empty = _mm512_cmp_ps_mask(amax, _mm512_set1_ps(kGgmlGroupMaxEps), _CMP_LT_OQ);
    const __m512 iscale = _mm512_div_ps(_mm512_set1_ps(-static_cast<float>(nmax)), max);
    __m512 sumlx = zero, suml2 = zero;
    for (int i = 0; i < 16; ++i) {
        l[i] = clamped_code_avx512(_mm512_mul_ps(iscale, xv[i]), -nmax, nmax - 1);
        w[i] = _mm512_mul_ps(xv[i], xv[i]);
        wx[i] = _mm512_mul_ps(w[i], xv[i]);
        sumlx = _mm512_add_ps(sumlx, _mm512_mul_ps(wx[i], l[i]));
        suml2 = _mm512_add_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], l[i]), l[i]));
    }
    const __mmask16 searching = static_cast<__mmask16>(~empty);
    for (int itry = 0; itry < 5; ++itry) {
        __mmask16 changed = 0;
        for (int i = 0; i < 16; ++i) {
            const __m512 slx = _mm512_sub_ps(sumlx, _mm512_mul_ps(wx[i], l[i]));
            const __m512 sl2 = _mm512_sub_ps(suml2, _mm512_mul_ps(_mm512_mul_ps(w[i], l[i]), l[i]));
            const __m512 new_l = clamped_code_avx512(_mm512_div_ps(_mm512_mul_ps(xv[i], sl2), slx), -nmax, nmax - 1);
            const __m512 slx_new = _mm512_add_ps(slx, _mm512_mul_ps(wx[i], new_l));
            const __m512 sl2_new = _mm512_add_ps(sl2, _mm512_mul_ps(_mm512_mul_ps(w[i], new_l), new_l));
            const __mmask16 take =
                searching & _mm512_cmp_ps_mask(slx, zero, _CMP_GT_OQ) & _mm512_cmp_ps_mask(new_l, l[i], _CMP_NEQ_UQ) &
                _mm512_cmp_ps_mask(sl2_new, zero, _CMP_GT_OQ) &
                _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_mul_ps(slx_new, slx_new), suml2),
                                   _mm512_mul_ps(_mm512_mul_ps(sumlx, sumlx), sl2_new), _CMP_GT_OQ);
            l[i] = _mm512_mask_blend_ps(take, l[i], new_l);
            sumlx = _mm512_mask_blend_ps(take, sumlx, slx_new);
            suml2 = _mm512_mask_blend_ps(take, suml2, sl2_new);
            changed |= take;
        }
        if (changed == 0) break;
    }
    const __mmask16 positive = _mm512_cmp_ps_mask(suml2, zero, _CMP_GT_OQ) & searching;
    _mm512_storeu_ps(scales, _mm512_maskz_div_ps(positive, sumlx, suml2));
    alignas(16) std::int8_t codes[16][16];
    for (int i = 0; i < 16; ++i) {
        const __m512i code = _mm512_add_epi32(_mm512_cvtps_epi32(l[i]), _mm512_set1_epi32(nmax));
        _mm_store_si128(reinterpret_cast<__m128i*>(codes[i]), _mm512_maskz_cvtepi32_epi8(searching, code));
    }
    for (int j = 0; j < 16; ++j)
        for (int i = 0; i < 16; ++i) L[16 * j + i] = codes[i][j];
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace qs::detail

#endif
