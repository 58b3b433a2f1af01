// Internal: the steps ggml's quantizers share (ggml-quants.c), each computed as that C computes it in
// float32: nearest_int, roundf, the float-to-integer casts as the x86-64 build of the reference executes
// them, the fp16 store, and the two scale searches the importance-weighted quantizers call (make_qx_quants,
// make_qkx3_quants; the k-quants call them too). The AVX2 paths run the same float32 operations lane-wise.
// Written from the algorithm; no code of ggml's is copied.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "format_simd_avx2.hpp"
#include "quantscope/number_format.hpp"

namespace qs::detail {

// ggml's nearest_int: adds 1.5 * 2^23 so the float32 addition rounds to an integer (half to even), then
// reads the integer from the mantissa. Exact for |x| <= 4194303; beyond, ggml's assert is compiled out
// and the same bits come out here as there.
inline int ggml_nearest_int(float x) {
    const float biased = x + 12582912.0f;
    std::int32_t bits;
    std::memcpy(&bits, &biased, sizeof bits);
    return (bits & 0x007fffff) - 0x00400000;
}

// A C cast of a float32 to an integer type narrower than 32 bits, as the reference's x86-64 build runs it
// (cvttss2si to int32, then the low bits): truncation toward zero; NaN and values beyond int32 (ggml's
// codes where id = 1/d overflowed to infinity, d a subnormal below 2^-128) give INT32_MIN, so 0 in the
// low byte. Written without the undefined cast.
inline std::int32_t x86_truncate_to_int32(float x) {
    return x >= -2147483648.0f && x < 2147483648.0f ? static_cast<std::int32_t>(x) : INT32_MIN;
}
inline std::int8_t x86_truncate_to_int8(float x) {
    return static_cast<std::int8_t>(static_cast<std::uint8_t>(static_cast<std::uint32_t>(x86_truncate_to_int32(x))));
}

// C's roundf (half away from zero), inline so loops vectorize: x - trunc(x) is exact, and a magnitude of
// 2^23 or more is already an integer; -0.3 gives -0, +-Inf and NaN themselves, as roundf.
inline float c_roundf(float x) {
    const float t = std::trunc(x);
    return std::fabs(x - t) >= 0.5f ? t + std::copysign(1.0f, x) : t;
}

// x86_truncate_to_int32(c_roundf(x[j] * id)) for n values: q8_0's (int8_t)roundf(x id) in its low byte,
// and the ternary types' (int)lroundf(x id), glibc's lroundf and the long-to-int conversion as x86-64 runs
// them, wherever |x id| < 2^31: they have |x id| <= 1, or a non-finite product (id = 1 / d infinite for a
// d below 2^-128) where lroundf gives LONG_MIN and this INT32_MIN, both 0 in the low 32 bits.
inline void ggml_round_codes(const float* x, float id, int n, std::int32_t* out) {
    int j = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    const __m256 ids = _mm256_set1_ps(id), sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + j), ids);
        const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 away = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(v, t)), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
        const __m256 r = _mm256_add_ps(t, _mm256_and_ps(away, _mm256_or_ps(_mm256_and_ps(v, sign), one)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), _mm256_cvttps_epi32(r));  // INT32_MIN beyond
    }
#endif
    for (; j < n; ++j) out[j] = x86_truncate_to_int32(c_roundf(x[j] * id));
}

// The stored fp16 of a scale: ggml's GGML_FP32_TO_FP16 (round to nearest, ties to even), except that a
// magnitude beyond 65504, which ggml stores as infinity, is saturated to +-65504 (FORMATS.md's one
// divergence, the same for every ggml type). So is a NaN scale, ggml's where a fit's float32 sums overflowed
// (values near 1e19 and beyond, whose squares are infinite): +-65504 with the NaN's sign.
inline std::uint16_t ggml_fp16(float x) { return fp16_bits_saturating(x); }

inline void store_le16(std::uint8_t* p, std::uint16_t v) {
    p[0] = static_cast<std::uint8_t>(v);
    p[1] = static_cast<std::uint8_t>(v >> 8);
}

// ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it is all zero to the searches.
constexpr float kGgmlGroupMaxEps = 1e-15f;

// make_qx_quants with rmse_type 1: a symmetric scale for n values on the integer grid
// [-nmax, nmax - 1], chosen among -(nmax + 0.1 is) / max, is = -9..9, by the weighted least-squares fit
// (weights qw, or x^2 where qw is null). L[i] gets the code plus nmax (0 .. 2 nmax - 1); returns the scale
// (0 for a group below kGgmlGroupMaxEps, whose codes are 0).
constexpr int kQxFits = 19;  // the first fit at -nmax / max, then is = -9..-1, 1..9 in ggml's order

// Σ w x l and Σ w l^2 of each fit's codes l = clamp(nearest_int(iscale x)), each term ((w x) l and (w l) l)
// and sum in float32 in index order, as ggml computes them.
#ifdef QS_HAVE_FORMAT_AVX2
// The fits run in lanes (three vectors of 8), each summing over i in order.
inline void ggml_qx_fit_sums(int n, int nmax, const float* x, const float* qw, const float* iscale, float* sumlx,
                             float* suml2) {
    __m256 is[3], slx[3], sl2[3];
    for (int v = 0; v < 3; ++v)
        is[v] = _mm256_loadu_ps(iscale + 8 * v), slx[v] = _mm256_setzero_ps(), sl2[v] = _mm256_setzero_ps();
    const __m256i lo = _mm256_set1_epi32(-nmax), hi = _mm256_set1_epi32(nmax - 1);
    for (int i = 0; i < n; ++i) {
        const float w = qw ? qw[i] : x[i] * x[i];
        const __m256 X = _mm256_set1_ps(x[i]), W = _mm256_set1_ps(w), WX = _mm256_set1_ps(w * x[i]);
        for (int v = 0; v < 3; ++v) {
            // nearest_int: the integer in the mantissa of (iscale x + 1.5 * 2^23)
            const __m256i biased = _mm256_castps_si256(_mm256_add_ps(_mm256_mul_ps(is[v], X), _mm256_set1_ps(12582912.0f)));
            const __m256i l = _mm256_sub_epi32(_mm256_and_si256(biased, _mm256_set1_epi32(0x007fffff)),
                                               _mm256_set1_epi32(0x00400000));
            const __m256 fl = _mm256_cvtepi32_ps(_mm256_min_epi32(_mm256_max_epi32(l, lo), hi));
            slx[v] = _mm256_add_ps(slx[v], _mm256_mul_ps(WX, fl));
            sl2[v] = _mm256_add_ps(sl2[v], _mm256_mul_ps(_mm256_mul_ps(W, fl), fl));
        }
    }
    float all_lx[24], all_l2[24];
    for (int v = 0; v < 3; ++v) _mm256_storeu_ps(all_lx + 8 * v, slx[v]), _mm256_storeu_ps(all_l2 + 8 * v, sl2[v]);
    for (int f = 0; f < kQxFits; ++f) sumlx[f] = all_lx[f], suml2[f] = all_l2[f];
}
#else
inline void ggml_qx_fit_sums(int n, int nmax, const float* x, const float* qw, const float* iscale, float* sumlx,
                             float* suml2) {
    for (int f = 0; f < kQxFits; ++f) {
        sumlx[f] = 0, suml2[f] = 0;
        for (int i = 0; i < n; ++i) {
            int l = ggml_nearest_int(iscale[f] * x[i]);
            l = l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l);
            const float w = qw ? qw[i] : x[i] * x[i];
            const float fl = static_cast<float>(l);
            sumlx[f] += w * x[i] * fl;
            suml2[f] += w * fl * fl;
        }
    }
}
#endif

inline float ggml_make_qx_quants(int n, int nmax, const float* x, std::int8_t* L, const float* qw) {
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
    float iscale[24] = {};  // lanes past kQxFits stay 0
    iscale[0] = -fnmax / max;
    for (int is = -9, f = 1; is <= 9; ++is)
        if (is != 0) iscale[f++] = -(fnmax + 0.1f * static_cast<float>(is)) / max;
    float sumlx[kQxFits], suml2[kQxFits];
    ggml_qx_fit_sums(n, nmax, x, qw, iscale, sumlx, suml2);
    float scale = suml2[0] != 0 ? sumlx[0] / suml2[0] : 0.0f;
    float best = scale * sumlx[0];
    int chosen = 0;
    for (int f = 1; f < kQxFits; ++f) {
        if (suml2[f] > 0 && sumlx[f] * sumlx[f] > best * suml2[f]) {
            scale = sumlx[f] / suml2[f];
            best = scale * sumlx[f];
            chosen = f;
        }
    }
    for (int i = 0; i < n; ++i) {
        const int l = ggml_nearest_int(iscale[chosen] * x[i]);
        L[i] = static_cast<std::int8_t>(nmax + (l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l)));
    }
    return scale;
}

// make_qkx3_quants: a scale and a min (min <= 0) for n (<= 32) values on [0, nmax], the weighted
// least-squares fit over iscale = (rmin + rdelta is + nmax) / (max - min), is = 0..nstep, kept where its
// weighted squared error beats the best so far (every caller in ggml passes use_mad = false). Weights are
// `weights`, or x^2 where null. L gets the codes; *the_min = -min as ggml returns it; returns the scale.
// A kept try replaces min, which the later tries then use (in iscale and in x - min).

// Eight consecutive tries' fits with the same min: each try's D (its fit counts only where D > 0), scale,
// min and weighted squared error, every operation in float32 as ggml's loop does it for that try.
struct QkxTries {
    float D[8], scale[8], min[8], mad[8];
};

inline float ggml_qkx_weight(const float* x, const float* weights, int i) { return weights ? weights[i] : x[i] * x[i]; }

#ifdef QS_HAVE_FORMAT_AVX2
// The tries run in lanes, each summing over i in order; the codes of pass one are kept for the error.
inline void ggml_qkx3_tries(int n, int nmax, const float* x, const float* weights, float min, const float* iscale,
                            float sum_w, float sum_x, QkxTries& out) {
    const __m256 is = _mm256_loadu_ps(iscale);
    __m256 fl[32];
    __m256 sum_l = _mm256_setzero_ps(), sum_l2 = sum_l, sum_xl = sum_l;
    for (int i = 0; i < n; ++i) {
        const __m256 X = _mm256_set1_ps(x[i]), W = _mm256_set1_ps(ggml_qkx_weight(x, weights, i));
        const __m256 shifted = _mm256_set1_ps(x[i] - min);
        const __m256i biased = _mm256_castps_si256(_mm256_add_ps(_mm256_mul_ps(is, shifted), _mm256_set1_ps(12582912.0f)));
        const __m256i l = _mm256_sub_epi32(_mm256_and_si256(biased, _mm256_set1_epi32(0x007fffff)),
                                           _mm256_set1_epi32(0x00400000));
        fl[i] = _mm256_cvtepi32_ps(_mm256_min_epi32(_mm256_max_epi32(l, _mm256_setzero_si256()), _mm256_set1_epi32(nmax)));
        const __m256 wl = _mm256_mul_ps(W, fl[i]);
        sum_l = _mm256_add_ps(sum_l, wl);
        sum_l2 = _mm256_add_ps(sum_l2, _mm256_mul_ps(wl, fl[i]));
        sum_xl = _mm256_add_ps(sum_xl, _mm256_mul_ps(wl, X));
    }
    const __m256 sw = _mm256_set1_ps(sum_w), sx = _mm256_set1_ps(sum_x);
    const __m256 D = _mm256_sub_ps(_mm256_mul_ps(sw, sum_l2), _mm256_mul_ps(sum_l, sum_l));
    __m256 scale = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sw, sum_xl), _mm256_mul_ps(sx, sum_l)), D);
    __m256 tmin = _mm256_div_ps(_mm256_sub_ps(_mm256_mul_ps(sum_l2, sx), _mm256_mul_ps(sum_l, sum_xl)), D);
    const __m256 positive = _mm256_cmp_ps(tmin, _mm256_setzero_ps(), _CMP_GT_OQ);
    tmin = _mm256_blendv_ps(tmin, _mm256_setzero_ps(), positive);
    scale = _mm256_blendv_ps(scale, _mm256_div_ps(sum_xl, sum_l2), positive);
    __m256 mad = _mm256_setzero_ps();
    for (int i = 0; i < n; ++i) {
        const __m256 diff = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(scale, fl[i]), tmin), _mm256_set1_ps(x[i]));
        mad = _mm256_add_ps(mad, _mm256_mul_ps(_mm256_set1_ps(ggml_qkx_weight(x, weights, i)), _mm256_mul_ps(diff, diff)));
    }
    _mm256_storeu_ps(out.D, D), _mm256_storeu_ps(out.scale, scale), _mm256_storeu_ps(out.min, tmin);
    _mm256_storeu_ps(out.mad, mad);
}
#else
inline void ggml_qkx3_tries(int n, int nmax, const float* x, const float* weights, float min, const float* iscale,
                            float sum_w, float sum_x, QkxTries& out) {
    for (int k = 0; k < 8; ++k) {
        float fl[32];
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = ggml_nearest_int(iscale[k] * (x[i] - min));
            fl[i] = static_cast<float>(l < 0 ? 0 : (l > nmax ? nmax : l));
            const float w = ggml_qkx_weight(x, weights, i);
            sum_l += w * fl[i];
            sum_l2 += w * fl[i] * fl[i];
            sum_xl += w * fl[i] * x[i];
        }
        out.D[k] = sum_w * sum_l2 - sum_l * sum_l;
        out.scale[k] = (sum_w * sum_xl - sum_x * sum_l) / out.D[k];
        out.min[k] = (sum_l2 * sum_x - sum_l * sum_xl) / out.D[k];
        if (out.min[k] > 0) {
            out.min[k] = 0;
            out.scale[k] = sum_xl / sum_l2;
        }
        out.mad[k] = 0;
        for (int i = 0; i < n; ++i) {
            const float diff = out.scale[k] * fl[i] + out.min[k] - x[i];
            out.mad[k] += ggml_qkx_weight(x, weights, i) * (diff * diff);
        }
    }
}
#endif

// The codes of one try: clamp(nearest_int(iscale (x - min)), 0, nmax).
inline void ggml_qkx_codes(int n, int nmax, const float* x, float iscale, float min, std::uint8_t* L) {
    for (int i = 0; i < n; ++i) {
        const int l = ggml_nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<std::uint8_t>(l < 0 ? 0 : (l > nmax ? nmax : l));
    }
}

inline float ggml_make_qkx3_quants(int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
                                   float* the_min, float rmin, float rdelta, int nstep) {
    float min = x[0], max = x[0];
    float sum_w = ggml_qkx_weight(x, weights, 0);
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = ggml_qkx_weight(x, weights, i);
        sum_w += w;
        sum_x += w * x[i];
    }
    if (min > 0) min = 0;
    if (max <= min) {
        for (int i = 0; i < n; ++i) L[i] = 0;
        *the_min = -min;
        return 0.0f;
    }
    const float fnmax = static_cast<float>(nmax);
    const float first_iscale = fnmax / (max - min);
    float scale = 1 / first_iscale;
    ggml_qkx_codes(n, nmax, x, first_iscale, min, L);
    float best_mad = 0;
    for (int i = 0; i < n; ++i) {
        const float diff = scale * static_cast<float>(L[i]) + min - x[i];
        best_mad += ggml_qkx_weight(x, weights, i) * (diff * diff);
    }
    // Eight tries at a time with the current min; a kept try that moves min ends the batch there, and the
    // tries after it are redone with the new min.
    for (int is = 0; is <= nstep;) {
        float iscale[8];
        for (int k = 0; k < 8; ++k) iscale[k] = (rmin + rdelta * static_cast<float>(is + k) + fnmax) / (max - min);
        QkxTries tries;
        ggml_qkx3_tries(n, nmax, x, weights, min, iscale, sum_w, sum_x, tries);
        int next = is + 8;
        for (int k = 0; k < 8 && is + k <= nstep; ++k) {
            if (!(tries.D[k] > 0 && tries.mad[k] < best_mad)) continue;
            ggml_qkx_codes(n, nmax, x, iscale[k], min, L);
            best_mad = tries.mad[k];
            scale = tries.scale[k];
            const bool moved = std::memcmp(&min, &tries.min[k], sizeof min) != 0;
            min = tries.min[k];
            if (moved) {
                next = is + k + 1;
                break;
            }
        }
        is = next;
    }
    *the_min = -min;
    return scale;
}

}  // namespace qs::detail
