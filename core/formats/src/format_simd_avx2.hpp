// Internal: the format pass's element loops with AVX2 intrinsics, 8 floats at a time. Each is the scalar
// loop of format_simd.hpp / format_kernels.hpp written lane-wise (the same float32 operations in the same
// order, no FMA), so the results are the same bits; the callers run the scalar loop on what is left over.
#pragma once

#if defined(__AVX2__)
#define QS_HAVE_FORMAT_AVX2 1

#include <immintrin.h>

#include <cstdint>

namespace qs::detail {

inline __m256i avx_u32(std::uint32_t v) { return _mm256_set1_epi32(static_cast<int>(v)); }
inline int avx_count(__m256i mask) { return __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(mask)))); }

// float_elements over the first n - n % 8 elements; returns how many saturated. See format_simd.hpp.
template <class Consts>
inline std::int64_t float_elements_avx2(const float* r, const float* s, std::int64_t n, const Consts& k,
                                        std::int32_t* codes, float* deq) {
    const __m256i largest = avx_u32(k.largest_bits), min_normal = avx_u32(k.min_normal_bits);
    const __m256i round_add = avx_u32(k.round_add), clear = avx_u32(k.clear_mask), one = avx_u32(1);
    const __m256i mant = avx_u32(k.mantissa_mask), sign_bit = avx_u32(k.sign_bit), eoff = avx_u32(k.exponent_offset);
    const __m256i abs_mask = avx_u32(0x7fffffffu), sign_mask = avx_u32(0x80000000u);
    const __m128i shift = _mm_cvtsi32_si128(k.shift), m_bits = _mm_cvtsi32_si128(k.m_bits);
    const __m256 c = _mm256_set1_ps(k.c), sub_units = _mm256_set1_ps(k.sub_units), zero_ps = _mm256_setzero_ps();
    std::int64_t clipped = 0;
    for (std::int64_t i = 0; i + 8 <= n; i += 8) {
        const __m256 sk = _mm256_loadu_ps(s + i);
        const __m256i ux = _mm256_castps_si256(_mm256_div_ps(_mm256_loadu_ps(r + i), sk));
        const __m256i sign = _mm256_and_si256(ux, sign_mask), ua = _mm256_and_si256(ux, abs_mask);
        const __m256i zero = _mm256_castps_si256(_mm256_cmp_ps(sk, zero_ps, _CMP_EQ_OQ));
        const __m256i sat = _mm256_cmpgt_epi32(ua, largest);  // ua has no sign bit: a signed compare is unsigned
        const __m256i un = _mm256_and_si256(
            _mm256_add_epi32(_mm256_add_epi32(ua, round_add), _mm256_and_si256(_mm256_srl_epi32(ua, shift), one)), clear);
        const __m256 a = _mm256_castsi256_ps(ua);
        const __m256i us = _mm256_castps_si256(_mm256_sub_ps(_mm256_add_ps(a, c), c));
        __m256i uv = _mm256_blendv_epi8(un, us, _mm256_cmpgt_epi32(min_normal, ua));
        uv = _mm256_blendv_epi8(uv, largest, sat);
        uv = _mm256_andnot_si256(zero, uv);
        clipped += avx_count(_mm256_andnot_si256(zero, sat));
        const __m256i sv = _mm256_andnot_si256(zero, sign);
        const __m256 v = _mm256_castsi256_ps(_mm256_or_si256(uv, sv));
        _mm256_storeu_ps(deq + i, _mm256_andnot_ps(_mm256_castsi256_ps(zero), _mm256_mul_ps(sk, v)));
        __m256i magnitude;
        if (k.wide) {
            magnitude = _mm256_srli_epi32(uv, 16);
        } else {
            const __m256i normal = _mm256_or_si256(_mm256_sll_epi32(_mm256_sub_epi32(_mm256_srli_epi32(uv, 23), eoff), m_bits),
                                                   _mm256_and_si256(_mm256_srl_epi32(uv, shift), mant));
            const __m256i sub = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(uv), sub_units));
            magnitude = _mm256_blendv_epi8(normal, sub, _mm256_cmpgt_epi32(min_normal, uv));
        }
        const __m256i code = _mm256_or_si256(magnitude, _mm256_and_si256(_mm256_srai_epi32(sv, 31), sign_bit));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), code);
    }
    return clipped;
}

// The codebook entry of each lane's index in [0, 16).
inline __m256 avx_lookup16(const float* table, __m256i index) {
    const __m256 low = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table), index);
    const __m256 high = _mm256_permutevar8x32_ps(_mm256_loadu_ps(table + 8), index);
    return _mm256_blendv_ps(low, high, _mm256_castsi256_ps(_mm256_cmpgt_epi32(index, _mm256_set1_epi32(7))));
}

// nf4_elements over the first n - n % 8 elements: the index is found by a branch-free binary search of the
// 15 sorted midpoints (mid_low, padded with +Inf to 16), four lookups per 8 elements.
inline std::int64_t nf4_elements_avx2(const float* r, const float* s, std::int64_t n, const float* mid16,
                                      const float* codebook, std::int32_t* codes, float* deq) {
    const __m256 one = _mm256_set1_ps(1.0f), abs_mask = _mm256_castsi256_ps(avx_u32(0x7fffffffu));
    std::int64_t clipped = 0;
    for (std::int64_t i = 0; i + 8 <= n; i += 8) {
        const __m256 sk = _mm256_loadu_ps(s + i);
        const __m256 x = _mm256_div_ps(_mm256_loadu_ps(r + i), sk);
        // index = how many midpoints lie below x: take each half-step whose midpoint below it x passes.
        __m256i index = _mm256_setzero_si256();
        for (int step = 8; step >= 1; step /= 2) {
            const __m256i probe = _mm256_add_epi32(index, _mm256_set1_epi32(step - 1));
            const __m256 below = _mm256_cmp_ps(x, avx_lookup16(mid16, probe), _CMP_GT_OQ);
            index = _mm256_add_epi32(index, _mm256_and_si256(_mm256_castps_si256(below), _mm256_set1_epi32(step)));
        }
        clipped += __builtin_popcount(static_cast<unsigned>(
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(x, abs_mask), one, _CMP_GT_OQ))));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + i), index);
        _mm256_storeu_ps(deq + i, _mm256_mul_ps(sk, avx_lookup16(codebook, index)));
    }
    return clipped;
}

// The error |r - r'| of the first n - n % 8 elements into err, its largest (folded into max_err) and the
// sums in eight double lanes (lane j: elements j, j + 8, ...), as finish_chunk adds them.
inline void error_sums_avx2(const float* r, const float* deq, std::int64_t n, float* err, float& max_err, double* sq,
                            double* ab, double* rr, double* rs) {
    const __m256 abs_mask = _mm256_castsi256_ps(avx_u32(0x7fffffffu));
    __m256d sq0 = _mm256_loadu_pd(sq), sq1 = _mm256_loadu_pd(sq + 4), ab0 = _mm256_loadu_pd(ab), ab1 = _mm256_loadu_pd(ab + 4);
    __m256d rr0 = _mm256_loadu_pd(rr), rr1 = _mm256_loadu_pd(rr + 4), rs0 = _mm256_loadu_pd(rs), rs1 = _mm256_loadu_pd(rs + 4);
    __m256 top = _mm256_set1_ps(max_err);
    for (std::int64_t k = 0; k + 8 <= n; k += 8) {
        const __m256 x = _mm256_loadu_ps(r + k);
        const __m256 e = _mm256_and_ps(_mm256_sub_ps(x, _mm256_loadu_ps(deq + k)), abs_mask);
        _mm256_storeu_ps(err + k, e);
        top = _mm256_max_ps(top, e);
        const __m256d e0 = _mm256_cvtps_pd(_mm256_castps256_ps128(e)), e1 = _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1));
        const __m256d x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(x)), x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1));
        sq0 = _mm256_add_pd(sq0, _mm256_mul_pd(e0, e0)), sq1 = _mm256_add_pd(sq1, _mm256_mul_pd(e1, e1));
        ab0 = _mm256_add_pd(ab0, e0), ab1 = _mm256_add_pd(ab1, e1);
        rr0 = _mm256_add_pd(rr0, _mm256_mul_pd(x0, x0)), rr1 = _mm256_add_pd(rr1, _mm256_mul_pd(x1, x1));
        rs0 = _mm256_add_pd(rs0, x0), rs1 = _mm256_add_pd(rs1, x1);
    }
    _mm256_storeu_pd(sq, sq0), _mm256_storeu_pd(sq + 4, sq1), _mm256_storeu_pd(ab, ab0), _mm256_storeu_pd(ab + 4, ab1);
    _mm256_storeu_pd(rr, rr0), _mm256_storeu_pd(rr + 4, rr1), _mm256_storeu_pd(rs, rs0), _mm256_storeu_pd(rs + 4, rs1);
    float lanes[8];
    _mm256_storeu_ps(lanes, top);
    for (float v : lanes) max_err = max_err < v ? v : max_err;
}

// The largest |r| of n (a multiple of 8) values.
inline float abs_max_avx2(const float* r, std::int64_t n) {
    const __m256 abs_mask = _mm256_castsi256_ps(avx_u32(0x7fffffffu));
    __m256 top = _mm256_setzero_ps();
    for (std::int64_t k = 0; k < n; k += 8) top = _mm256_max_ps(top, _mm256_and_ps(_mm256_loadu_ps(r + k), abs_mask));
    const __m128 m = _mm_max_ps(_mm256_castps256_ps128(top), _mm256_extractf128_ps(top, 1));
    const __m128 m2 = _mm_max_ps(m, _mm_movehl_ps(m, m));
    return _mm_cvtss_f32(_mm_max_ss(m2, _mm_shuffle_ps(m2, m2, 1)));
}

// The index of the first of n (a multiple of 8) values whose magnitude is `magnitude` (which one has).
inline int first_with_magnitude_avx2(const float* r, std::int64_t n, float magnitude) {
    const __m256 abs_mask = _mm256_castsi256_ps(avx_u32(0x7fffffffu)), m = _mm256_set1_ps(magnitude);
    for (std::int64_t k = 0; k < n; k += 8) {
        const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(r + k), abs_mask), m, _CMP_EQ_OQ));
        if (hits != 0) return static_cast<int>(k) + __builtin_ctz(static_cast<unsigned>(hits));
    }
    return 0;
}

// The smallest and largest of n (a multiple of 8) values, and whether one is not finite. A minimum or
// maximum of 0 may be +0 or -0 here: the caller picks the sign a sequential scan would keep.
inline void min_max_avx2(const float* r, std::int64_t n, float& lo, float& hi, bool& nonfinite) {
    const __m256i exponent = avx_u32(0x7f800000u);
    __m256 l = _mm256_loadu_ps(r), h = l;
    __m256i bad = _mm256_setzero_si256();
    for (std::int64_t k = 0; k < n; k += 8) {
        const __m256 x = _mm256_loadu_ps(r + k);
        l = _mm256_min_ps(l, x), h = _mm256_max_ps(h, x);
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(x), exponent), exponent));
    }
    float ls[8], hs[8];
    _mm256_storeu_ps(ls, l), _mm256_storeu_ps(hs, h);
    lo = ls[0], hi = hs[0];
    for (int j = 1; j < 8; ++j) lo = ls[j] < lo ? ls[j] : lo, hi = hs[j] > hi ? hs[j] : hi;
    nonfinite = !_mm256_testz_si256(bad, bad);
}

// min_max_avx2 with the largest |r| too (folded into amax), in one read.
inline void stats_avx2(const float* r, std::int64_t n, float& lo, float& hi, float& amax, bool& nonfinite) {
    const __m256i exponent = avx_u32(0x7f800000u);
    const __m256 abs_mask = _mm256_castsi256_ps(avx_u32(0x7fffffffu));
    __m256 l = _mm256_loadu_ps(r), h = l, a = _mm256_set1_ps(amax);
    __m256i bad = _mm256_setzero_si256();
    for (std::int64_t k = 0; k < n; k += 8) {
        const __m256 x = _mm256_loadu_ps(r + k);
        l = _mm256_min_ps(l, x), h = _mm256_max_ps(h, x), a = _mm256_max_ps(a, _mm256_and_ps(x, abs_mask));
        bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(x), exponent), exponent));
    }
    float ls[8], hs[8], as[8];
    _mm256_storeu_ps(ls, l), _mm256_storeu_ps(hs, h), _mm256_storeu_ps(as, a);
    lo = ls[0], hi = hs[0];
    for (int j = 0; j < 8; ++j) lo = ls[j] < lo ? ls[j] : lo, hi = hs[j] > hi ? hs[j] : hi, amax = as[j] > amax ? as[j] : amax;
    nonfinite = !_mm256_testz_si256(bad, bad);
}

// ggml's integer codes for n (a multiple of 8) values of one block whose stored d is not 0, as
// q8_0_element / q4_0_element / q4_1_element compute them (kind 0, 1, 2); returns how many clipped.
inline int ggml_block_avx2(int kind, const float* r, std::int64_t n, float inv, float scale, float low, float offset,
                           std::int32_t* codes, float* deq) {
    const __m256 vinv = _mm256_set1_ps(inv), vscale = _mm256_set1_ps(scale), zero = _mm256_setzero_ps();
    const __m256 sign_mask = _mm256_castsi256_ps(avx_u32(0x80000000u)), abs_mask = _mm256_castsi256_ps(avx_u32(0x7fffffffu));
    int clipped = 0;
    for (std::int64_t k = 0; k < n; k += 8) {
        const __m256 x = _mm256_loadu_ps(r + k);
        __m256i code;
        __m256 grid, out;
        if (kind == 0) {
            // roundf: half away from zero, from the truncation and the exact remainder x - trunc(x).
            const __m256 y = _mm256_mul_ps(x, vinv);
            const __m256 t = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m256 half_up = _mm256_cmp_ps(_mm256_and_ps(_mm256_sub_ps(y, t), abs_mask), _mm256_set1_ps(0.5f), _CMP_GE_OQ);
            const __m256 q = _mm256_add_ps(t, _mm256_and_ps(half_up, _mm256_or_ps(_mm256_and_ps(y, sign_mask), _mm256_set1_ps(1.0f))));
            const __m256 over = _mm256_or_ps(_mm256_cmp_ps(q, _mm256_set1_ps(127.0f), _CMP_GT_OQ),
                                             _mm256_cmp_ps(q, _mm256_set1_ps(-127.0f), _CMP_LT_OQ));
            clipped += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(over)));
            code = _mm256_cvttps_epi32(_mm256_min_ps(_mm256_max_ps(q, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f)));
            grid = _mm256_cvtepi32_ps(code);
            out = _mm256_add_ps(_mm256_mul_ps(grid, vscale), zero);
        } else {
            // (int) of y clamped to [0, 15] after MIN(15, .): y >= 16 clips; !(y >= 0) (NaN too) gives 0.
            const __m256 y = kind == 1 ? _mm256_add_ps(_mm256_mul_ps(x, vinv), _mm256_set1_ps(8.5f))
                                       : _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(x, _mm256_set1_ps(low)), vinv), _mm256_set1_ps(0.5f));
            const __m256 ny = _mm256_max_ps(y, zero);  // a NaN y gives the second operand, 0
            clipped += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(ny, _mm256_set1_ps(16.0f), _CMP_GE_OQ))));
            code = _mm256_cvttps_epi32(_mm256_min_ps(ny, _mm256_set1_ps(15.0f)));
            if (kind == 1) {
                grid = _mm256_cvtepi32_ps(_mm256_sub_epi32(code, _mm256_set1_epi32(8)));
                out = _mm256_add_ps(_mm256_mul_ps(grid, vscale), zero);
            } else {
                grid = _mm256_cvtepi32_ps(code);
                out = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(grid, vscale), _mm256_set1_ps(offset)), zero);
            }
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(codes + k), code);
        _mm256_storeu_ps(deq + k, out);
    }
    return clipped;
}

}  // namespace qs::detail

#endif
