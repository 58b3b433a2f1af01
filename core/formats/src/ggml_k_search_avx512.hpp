// Internal: ggml's nearest_int and clamped codes lane-wise, and make_qx_quants's candidate loop with
// AVX-512, one candidate scale per lane (q3_K's block scale; the sub-block searches one sub-block to a lane
// are in ggml_k_lanes_avx512.hpp). Each lane runs that candidate's own sums over the values in index
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

}  // namespace qs::detail

#endif
