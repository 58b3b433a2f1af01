// The fused quantize pass for one chunk with AVX2 intrinsics: 8 floats at a time, one read of the input,
// each wanted output written once (streaming stores for tensors larger than the caches; a null output is
// not written at all), every metric accumulated on the way (sums in double). Private to quantize.cpp.
#pragma once

#if defined(__AVX2__) && defined(__FMA__)
#define QS_HAVE_AVX2_KERNEL 1
#include <immintrin.h>

#include <cstdint>

namespace qs::detail {

struct KernelSums {
    double sum_sq_err = 0, sum_abs_err = 0, sum_sq_r = 0, sum_r = 0;
    float max_err = 0;
    float code_min = 0, code_max = 0;  // of this chunk
    std::int64_t clipped = 0;
};

// s and z come from a constant (one block) or from per-element arrays.
struct ConstantParam {
    __m256 value;
    explicit ConstantParam(float v) : value(_mm256_set1_ps(v)) {}
    __m256 at(std::int64_t) const { return value; }
};
struct ArrayParam {
    const float* values;
    __m256 at(std::int64_t k) const { return _mm256_loadu_ps(values + k); }
};

template <bool kStream>
inline void store_f(float* p, __m256 v) {
    if (kStream) {
        _mm_stream_ps(p, _mm256_castps256_ps128(v));
        _mm_stream_ps(p + 4, _mm256_extractf128_ps(v, 1));
    } else {
        _mm256_storeu_ps(p, v);
    }
}

template <bool kStream>
inline void store_i(std::int32_t* p, __m256i v) {
    if (kStream) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(v));
        _mm_stream_si128(reinterpret_cast<__m128i*>(p + 4), _mm256_extracti128_si256(v, 1));
    } else {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }
}

inline double hsum(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
}
inline float hmin(__m256 v) {
    __m128 m = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_min_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_min_ss(m, _mm_shuffle_ps(m, m, 1)));
}

// r -> the clamped code as a float (v) for 8 elements, counting those outside [q_min, q_max] before the
// clamp: SPEC's q = clamp(round(r / s + z)) with a true division. Shared by every fused kernel, so all of them
// give the same codes.
template <bool kHalfEven>
struct Quantize8 {
    __m256 vq_min, vq_max, sign_mask = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    Quantize8(float q_min, float q_max) : vq_min(_mm256_set1_ps(q_min)), vq_max(_mm256_set1_ps(q_max)) {}
    // round(r / s + z), before the clamp.
    __m256 rounded(__m256 r, __m256 s, __m256 z) const {
        __m256 v = _mm256_add_ps(_mm256_div_ps(r, s), z);  // true division, as SPEC requires
        if (kHalfEven) return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        // Half away from zero: truncate, then step away from zero when the dropped part is >= 0.5.
        const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 frac = _mm256_andnot_ps(sign_mask, _mm256_sub_ps(v, t));
        const __m256 step = _mm256_or_ps(_mm256_and_ps(v, sign_mask), one);
        return _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, half, _CMP_GE_OQ), step));
    }
    __m256 clamp(__m256 v) const { return _mm256_min_ps(_mm256_max_ps(v, vq_min), vq_max); }
    __m256 operator()(__m256 r, __m256 s, __m256 z, std::int64_t& clipped) const {
        const __m256 v = rounded(r, s, z);
        const __m256 out = _mm256_or_ps(_mm256_cmp_ps(v, vq_min, _CMP_LT_OQ), _mm256_cmp_ps(v, vq_max, _CMP_GT_OQ));
        clipped += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(out)));
        return clamp(v);
    }
};

// r' = s (q - z) and e = |r - r'| of 8 elements (a float32 product rounded before the difference).
inline __m256 dequantize8(__m256 v, __m256 s, __m256 z) { return _mm256_mul_ps(s, _mm256_sub_ps(v, z)); }
inline __m256 abs_error8(__m256 r, __m256 d) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(r, d)); }

// The metrics' sums of a chunk in double, 8 lanes (two halves of 4) added in element order, then the lanes
// in a fixed order: every kernel that adds the same chunk through these gets the same bits.
struct MetricLanes {
    __m256d sse0 = _mm256_setzero_pd(), sse1 = _mm256_setzero_pd();
    __m256d sae0 = _mm256_setzero_pd(), sae1 = _mm256_setzero_pd();
    __m256d sr0 = _mm256_setzero_pd(), sr1 = _mm256_setzero_pd();
    __m256d sl0 = _mm256_setzero_pd(), sl1 = _mm256_setzero_pd();
    __m256 emax = _mm256_setzero_ps();
    void add(__m256 r, __m256 e) {
        emax = _mm256_max_ps(emax, e);
        const __m256d e0 = _mm256_cvtps_pd(_mm256_castps256_ps128(e)), e1 = _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1));
        sse0 = _mm256_fmadd_pd(e0, e0, sse0);
        sse1 = _mm256_fmadd_pd(e1, e1, sse1);
        sae0 = _mm256_add_pd(sae0, e0);
        sae1 = _mm256_add_pd(sae1, e1);
        const __m256d r0 = _mm256_cvtps_pd(_mm256_castps256_ps128(r)), r1 = _mm256_cvtps_pd(_mm256_extractf128_ps(r, 1));
        sr0 = _mm256_fmadd_pd(r0, r0, sr0);
        sr1 = _mm256_fmadd_pd(r1, r1, sr1);
        sl0 = _mm256_add_pd(sl0, r0);
        sl1 = _mm256_add_pd(sl1, r1);
    }
    void finish(KernelSums& sums) const {
        sums.sum_sq_err = hsum(_mm256_add_pd(sse0, sse1));
        sums.sum_abs_err = hsum(_mm256_add_pd(sae0, sae1));
        sums.sum_sq_r = hsum(_mm256_add_pd(sr0, sr1));
        sums.sum_r = hsum(_mm256_add_pd(sl0, sl1));
        sums.max_err = hmax(emax);
    }
};

// Processes the first n8 = n - n % 8 elements; the caller finishes the tail with the scalar formula.
// Codes go to `codes_scratch` (cache-resident, for the distinct-level count) and to `codes_out`; any of
// codes_out, deq_out and err_out may be null (not wanted).
template <bool kStream, bool kHalfEven, class S, class Z>
void quantize_chunk_avx2(const float* r_in, std::int64_t n8, const S& s_src, const Z& z_src, float q_min, float q_max,
                         std::int32_t* codes_scratch, std::int32_t* codes_out, float* deq_out, float* err_out,
                         KernelSums& sums) {
    const Quantize8<kHalfEven> quantize(q_min, q_max);
    MetricLanes lanes;
    __m256 cmin = _mm256_set1_ps(q_max), cmax = _mm256_set1_ps(q_min);
    std::int64_t clipped = 0;
    for (std::int64_t k = 0; k < n8; k += 8) {
        const __m256 r = _mm256_loadu_ps(r_in + k);
        const __m256 s = s_src.at(k), z = z_src.at(k);
        const __m256 v = quantize(r, s, z, clipped);
        cmin = _mm256_min_ps(cmin, v);
        cmax = _mm256_max_ps(cmax, v);
        const __m256i q = _mm256_cvtps_epi32(v);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes_scratch + k), q);
        if (codes_out) store_i<kStream>(codes_out + k, q);
        const __m256 d = dequantize8(v, s, z);
        if (deq_out) store_f<kStream>(deq_out + k, d);
        const __m256 e = abs_error8(r, d);
        if (err_out) store_f<kStream>(err_out + k, e);
        lanes.add(r, e);
    }
    lanes.finish(sums);
    sums.code_min = hmin(cmin);
    sums.code_max = hmax(cmax);
    sums.clipped = clipped;
}

}  // namespace qs::detail
#endif
