// Internal: the candidate loops of ggml's make_qkx2_quants / make_qkx3_quants and make_qx_quants with
// AVX-512, one candidate scale per lane. Each lane runs that candidate's own sums over the values in index
// order (the same float32 operations, no FMA), so every sum is the scalar loop's bits; the choice among
// candidates is then made in candidate order by the scalar rule (strictly better than the best so far),
// and the chosen candidate's codes are recomputed. Bit-exact with ggml_k_search.hpp / ggml_scale_search.hpp.
#pragma once

#if defined(__AVX512F__)
#define QS_HAVE_GGML_K_AVX512 1

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ggml_scale_search.hpp"

namespace qs::detail {

// ggml's nearest_int, lane-wise: the float32 sum with 1.5 * 2^23, then the low mantissa bits.
inline __m512i nearest_int_avx512(__m512 v) {
    const __m512i bits = _mm512_castps_si512(_mm512_add_ps(v, _mm512_set1_ps(12582912.0f)));
    return _mm512_sub_epi32(_mm512_and_si512(bits, _mm512_set1_epi32(0x007fffff)), _mm512_set1_epi32(0x00400000));
}

inline __m512 clamped_code_avx512(__m512 scaled, int lo, int hi) {
    const __m512i l = nearest_int_avx512(scaled);
    return _mm512_cvtepi32_ps(_mm512_max_epi32(_mm512_set1_epi32(lo), _mm512_min_epi32(_mm512_set1_epi32(hi), l)));
}

// One round of make_qkx2/qkx3's candidates is = start .. start + 15 (lanes past nstep unused) against the
// current min: each lane's iscale, its least-squares D, scale and min, and its weighted error.
struct QkxRound {
    alignas(64) float iscale[16], D[16], err[16], scale[16], min[16];
};
inline void qkx_round_avx512(int n, int nmax, const float* x, const float* xm, const float* weights, float sum_w,
                             float sum_x, float range, float rmin, float rdelta, int start, bool use_mad, QkxRound& r) {
    const __m512 zero = _mm512_setzero_ps(), v_sum_w = _mm512_set1_ps(sum_w), v_sum_x = _mm512_set1_ps(sum_x);
    const __m512 is = _mm512_add_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                    _mm512_set1_ps(static_cast<float>(start)));
    const __m512 v_iscale = _mm512_div_ps(
        _mm512_add_ps(_mm512_add_ps(_mm512_set1_ps(rmin), _mm512_mul_ps(_mm512_set1_ps(rdelta), is)),
                      _mm512_set1_ps(static_cast<float>(nmax))),
        _mm512_set1_ps(range));
    __m512 sum_l = zero, sum_l2 = zero, sum_xl = zero;
    for (int i = 0; i < n; ++i) {
        const __m512 fl = clamped_code_avx512(_mm512_mul_ps(v_iscale, _mm512_set1_ps(xm[i])), 0, nmax);
        const __m512 wl = _mm512_mul_ps(_mm512_set1_ps(weights[i]), fl);
        sum_l = _mm512_add_ps(sum_l, wl);
        sum_l2 = _mm512_add_ps(sum_l2, _mm512_mul_ps(wl, fl));
        sum_xl = _mm512_add_ps(sum_xl, _mm512_mul_ps(wl, _mm512_set1_ps(x[i])));
    }
    const __m512 d = _mm512_sub_ps(_mm512_mul_ps(v_sum_w, sum_l2), _mm512_mul_ps(sum_l, sum_l));
    __m512 this_scale = _mm512_div_ps(_mm512_sub_ps(_mm512_mul_ps(v_sum_w, sum_xl), _mm512_mul_ps(v_sum_x, sum_l)), d);
    __m512 this_min = _mm512_div_ps(_mm512_sub_ps(_mm512_mul_ps(sum_l2, v_sum_x), _mm512_mul_ps(sum_l, sum_xl)), d);
    const __mmask16 positive = _mm512_cmp_ps_mask(this_min, zero, _CMP_GT_OQ);
    this_min = _mm512_mask_blend_ps(positive, this_min, zero);
    this_scale = _mm512_mask_blend_ps(positive, this_scale, _mm512_div_ps(sum_xl, sum_l2));
    __m512 error = zero;
    for (int i = 0; i < n; ++i) {
        const __m512 fl = clamped_code_avx512(_mm512_mul_ps(v_iscale, _mm512_set1_ps(xm[i])), 0, nmax);
        const __m512 diff = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(this_scale, fl), this_min), _mm512_set1_ps(x[i]));
        const __m512 e = use_mad ? _mm512_abs_ps(diff) : _mm512_mul_ps(diff, diff);
        error = _mm512_add_ps(error, _mm512_mul_ps(_mm512_set1_ps(weights[i]), e));
    }
    _mm512_store_ps(r.iscale, v_iscale);
    _mm512_store_ps(r.D, d);
    _mm512_store_ps(r.err, error);
    _mm512_store_ps(r.scale, this_scale);
    _mm512_store_ps(r.min, this_min);
}

// make_qkx2_quants (use_mad as given) and make_qkx3_quants (every k caller passes weights and use_mad
// false): the two differ only in `max == min` against `max <= min`, the same test for every input (NaN
// included: both false). n <= 32. A candidate that wins changes min, and with it every later candidate's
// iscale and codes: the lanes after it are then computed again from the new min.
inline float ggml_make_qkx_quants_avx512(int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
                                         float* the_min, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = weights[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += weights[i];
        sum_x += weights[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    const float fnmax = static_cast<float>(nmax);
    float xm[32];
    for (int i = 0; i < n; ++i) xm[i] = x[i] - min;
    const auto set_codes = [&](float iscale) {
        for (int i = 0; i < n; ++i) {
            const int l = ggml_nearest_int(iscale * xm[i]);
            L[i] = static_cast<std::uint8_t>(l < 0 ? 0 : (l > nmax ? nmax : l));
        }
    };
    const float first_iscale = fnmax / (max - min);
    float scale = 1 / first_iscale;
    set_codes(first_iscale);
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = scale * static_cast<float>(L[i]) + min - x[i];
        best_error += weights[i] * (use_mad ? std::fabs(diff) : diff * diff);
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    QkxRound r;
    bool chosen = false;
    float chosen_iscale = 0;
    float chosen_xm[32];
    for (int start = 0; start <= nstep;) {
        qkx_round_avx512(n, nmax, x, xm, weights, sum_w, sum_x, max - min, rmin, rdelta, start, use_mad, r);
        int next = start + 16;
        for (int k = 0; k < 16 && start + k <= nstep; ++k) {
            if (!(r.D[k] > 0 && r.err[k] < best_error)) continue;
            best_error = r.err[k];
            scale = r.scale[k];
            chosen = true;
            chosen_iscale = r.iscale[k];
            std::memcpy(chosen_xm, xm, sizeof(float) * static_cast<std::size_t>(n));
            if (r.min[k] != min) {  // the later candidates see the new min
                min = r.min[k];
                for (int i = 0; i < n; ++i) xm[i] = x[i] - min;
                next = start + k + 1;
                break;
            }
        }
        start = next;
    }
    if (chosen) {
        for (int i = 0; i < n; ++i) {
            const int l = ggml_nearest_int(chosen_iscale * chosen_xm[i]);
            L[i] = static_cast<std::uint8_t>(l < 0 ? 0 : (l > nmax ? nmax : l));
        }
    }
    *the_min = -min;
    return scale;
}

// make_qx_quants with rmse_type 1 (ggml_scale_search.hpp's ggml_make_qx_quants), n <= 16: the 18
// candidates -(nmax + 0.1 is) / max, is = -9..-1, 1..9, in two vectors.
inline float ggml_make_qx_quants_avx512(int n, int nmax, const float* x, std::int8_t* L, const float* qw) {
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) amax = ax, max = x[i];
    }
    if (amax < kGgmlGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.0f;
    }
    const float fnmax = static_cast<float>(nmax);
    float w[16];
    for (int i = 0; i < n; ++i) w[i] = qw ? qw[i] : x[i] * x[i];
    const auto code_at = [&](float iscale, int i) {
        int l = ggml_nearest_int(iscale * x[i]);
        l = l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l);
        return l;
    };
    float sumlx = 0, suml2 = 0;
    float iscale = -fnmax / max;
    for (int i = 0; i < n; ++i) {
        const int l = code_at(iscale, i);
        L[i] = static_cast<std::int8_t>(l + nmax);
        const float fl = static_cast<float>(l);
        sumlx += w[i] * x[i] * fl;
        suml2 += w[i] * fl * fl;
    }
    float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    alignas(64) float slx[32], sl2[32];
    const __m512 steps[2] = {_mm512_setr_ps(-9, -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7),
                             _mm512_setr_ps(8, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)};
    for (int v = 0; v < 2; ++v) {
        const __m512 t = _mm512_add_ps(_mm512_set1_ps(fnmax), _mm512_mul_ps(_mm512_set1_ps(0.1f), steps[v]));
        const __m512 v_iscale = _mm512_div_ps(_mm512_sub_ps(_mm512_setzero_ps(), t), _mm512_set1_ps(max));
        __m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
        for (int i = 0; i < n; ++i) {
            const __m512 fl = clamped_code_avx512(_mm512_mul_ps(v_iscale, _mm512_set1_ps(x[i])), -nmax, nmax - 1);
            const __m512 vw = _mm512_set1_ps(w[i]);
            a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_mul_ps(vw, _mm512_set1_ps(x[i])), fl));
            b = _mm512_add_ps(b, _mm512_mul_ps(_mm512_mul_ps(vw, fl), fl));
        }
        _mm512_store_ps(slx + 16 * v, a);
        _mm512_store_ps(sl2 + 16 * v, b);
    }
    int chosen = 0;
    for (int k = 0; k < 18; ++k) {
        if (sl2[k] > 0 && slx[k] * slx[k] > best * sl2[k]) {
            scale = slx[k] / sl2[k];
            best = scale * slx[k];
            chosen = k < 9 ? k - 9 : k - 8;
        }
    }
    if (chosen != 0) {
        iscale = -(fnmax + 0.1f * static_cast<float>(chosen)) / max;
        for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(code_at(iscale, i) + nmax);
    }
    return scale;
}

// make_q3_quants with do_rmse (ggml_k_search.hpp's ggml_make_q3_quants) for n = 16: each pass of its
// coordinate search tries all 16 moves at once against the current sums, then takes the first one the
// scalar loop would take; the sums it changes are seen by the moves after it, which are tried again.
inline float ggml_make_q3_quants_avx512(int nmax, const float* x, std::int8_t* L) {
    constexpr int n = 16;
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > amax) amax = ax, max = x[i];
    }
    if (amax < kGgmlGroupMaxEps) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        return 0.0f;
    }
    const float iscale = -static_cast<float>(nmax) / max;
    alignas(64) float w[n], wx[n], fl[n];
    float sumlx = 0, suml2 = 0;
    for (int i = 0; i < n; ++i) {
        int l = ggml_nearest_int(iscale * x[i]);
        l = l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l);
        fl[i] = static_cast<float>(l);
        w[i] = x[i] * x[i];
        wx[i] = w[i] * x[i];
        sumlx += wx[i] * fl[i];
        suml2 += w[i] * fl[i] * fl[i];
    }
    const __m512 zero = _mm512_setzero_ps();
    const __m512 xs = _mm512_loadu_ps(x), vw = _mm512_load_ps(w), vwx = _mm512_load_ps(wx);
    for (int itry = 0; itry < 5; ++itry) {
        int changed = 0;
        for (int pos = 0; pos < n;) {
            const __m512 vl = _mm512_load_ps(fl);
            const __m512 s_lx = _mm512_set1_ps(sumlx), s_l2 = _mm512_set1_ps(suml2);
            const __m512 slx = _mm512_sub_ps(s_lx, _mm512_mul_ps(vwx, vl));
            const __m512 sl2 = _mm512_sub_ps(s_l2, _mm512_mul_ps(_mm512_mul_ps(vw, vl), vl));
            const __m512 new_l = clamped_code_avx512(_mm512_div_ps(_mm512_mul_ps(xs, sl2), slx), -nmax, nmax - 1);
            const __m512 slx_new = _mm512_add_ps(slx, _mm512_mul_ps(vwx, new_l));
            const __m512 sl2_new = _mm512_add_ps(sl2, _mm512_mul_ps(_mm512_mul_ps(vw, new_l), new_l));
            const __mmask16 take =
                _mm512_cmp_ps_mask(slx, zero, _CMP_GT_OQ) & _mm512_cmp_ps_mask(new_l, vl, _CMP_NEQ_UQ) &
                _mm512_cmp_ps_mask(sl2_new, zero, _CMP_GT_OQ) &
                _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_mul_ps(slx_new, slx_new), s_l2),
                                   _mm512_mul_ps(_mm512_mul_ps(s_lx, s_lx), sl2_new), _CMP_GT_OQ) &
                static_cast<__mmask16>(0xffffu << pos);
            if (take == 0) break;
            const int i = __builtin_ctz(take);
            alignas(64) float nl[n], a[n], b[n];
            _mm512_store_ps(nl, new_l);
            _mm512_store_ps(a, slx_new);
            _mm512_store_ps(b, sl2_new);
            fl[i] = nl[i];
            sumlx = a[i];
            suml2 = b[i];
            ++changed;
            pos = i + 1;
        }
        if (changed == 0) break;
    }
    for (int i = 0; i < n; ++i) L[i] = static_cast<std::int8_t>(static_cast<int>(fl[i]) + nmax);
    return suml2 > 0 ? sumlx / suml2 : 0.0f;
}

}  // namespace qs::detail

#endif
