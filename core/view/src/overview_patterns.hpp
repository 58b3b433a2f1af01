// Internal to the fused overview pass (overview_fused.cpp): the per-element work of the window's slider step
// on a bf16/f16 tensor with one (s, z). The metrics, code counts and clipped count come from the 2^16 bit
// patterns' counts, so each element only gives its code and |r - r'| to the per-column folds. An AVX2
// version (8 elements a vector) and, where the compiler may use AVX-512 F and BW, an AVX-512 one (16).
#pragma once

#include "element_loads_avx2.hpp"
#include "overview_folder.hpp"

#ifdef QS_HAVE_AVX2_KERNEL
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "quantscope/quantize.hpp"

namespace qs::detail {

// How a kernel gets r / s + z before rounding:
//   kTrue: the true division (SPEC's formula) for every element;
//   kChecked: r * (1 / s) + z, and the true division for a vector with an element near a rounding boundary;
//   kVerified: r * (1 / s) + z alone: every bit pattern that occurs was found to get quantize's code from it
//     (reciprocal_rounded below, the kernels' operations in scalar), and an element's code and |r - r'| are
//     functions of its 16 bits, so no element's differ.
//   kOffset (AVX-512 only): round(r * (1 / s)), which is q - z, verified likewise; two operations fewer.
enum class Divide { kTrue, kChecked, kVerified, kOffset };

struct Reciprocal {
    Divide mode = Divide::kTrue;
    float inv = 1, near = 0;  // 1 / s; a distance to the nearest integer at or above which a boundary is near
    bool wide = false;        // the AVX-512 kernel (16 elements a vector), else the AVX2 one
};

// kVerified where `verified`; else kChecked wherever no rounding boundary (k + 1/2) lies within a margin of
// r * (1 / s) + z: there both round to the same code (the two differ by a few float32 ulps of r / s + z, which
// the margin bounds), elsewhere the true division decides; else kTrue.
inline Reciprocal reciprocal_for(float s, float z, float max_abs_r, bool verified) {
    Reciprocal rc;
    rc.inv = 1.0f / s;
    // |fl(r * inv) - fl(r / s)| <= 3.01 u |r / s|, and adding z rounds each once more: at most 5.2 u |r / s| +
    // 2 u |z| apart (u = 2^-24); 2^-21 (|r| / s + |z| + 1) is above that for every r of the tensor.
    const float margin = 0x1p-21f * (max_abs_r * rc.inv + std::abs(z) + 1.0f);
    rc.near = 0.5f - margin;
    if (verified) rc.mode = Divide::kVerified;
    else if (std::isfinite(margin) && margin < 0.25f) rc.mode = Divide::kChecked;
    return rc;
}

// The code (before any clamp) that r * inv + z gives in the kernels, by the same float32 operations in scalar
// (the build does not contract them into an FMA), rounded half to even whatever the rounding: under half away
// from zero a tie gets the other code, so a tensor with a pattern on a tie is not verified (nor is one whose
// tie the checked path would miss: a tie is as near a boundary as can be, and goes to the true division).
inline float reciprocal_rounded(float r, float inv, float z) { return std::nearbyint(r * inv + z); }
// The clamp as the kernels' max-then-min instructions compute it (a NaN gives q_min, as in the vectors).
inline float clamped_as_kernel(float v, float q_min, float q_max) {
    v = v > q_min ? v : q_min;
    return v < q_max ? v : q_max;
}

// One work item, 8 elements a vector: per element only the code and |r - r'| (quantize's bits), folded.
// Returns the item's largest |r - r'|.
template <bool kHalfEven, bool kClamp, Divide kDivide, class Ld>
float run_item_patterns(const Ld& ld, std::int64_t len, float s, float z, const QuantConfig& config,
                        const Quantize8<kHalfEven>& quantize_ref, const Reciprocal& rc, Folder& folder) {
    const Quantize8<kHalfEven> quantize = quantize_ref;
    const std::int64_t n8 = len - len % 8;
    const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z), inv = _mm256_set1_ps(rc.inv);
    const __m256 near = _mm256_set1_ps(rc.near), sign = _mm256_set1_ps(-0.0f);
    const __m256i unused = _mm256_setzero_si256();
    __m256 emax = _mm256_setzero_ps();
    const auto group = [&](std::int64_t k, __m256& v, __m256& d, __m256& e) {
        const __m256 r = ld.at(k);
        if constexpr (kDivide == Divide::kTrue) {
            v = quantize.rounded(r, vs, vz);
        } else {
            const __m256 a = _mm256_add_ps(_mm256_mul_ps(r, inv), vz);
            v = _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);  // see reciprocal_rounded
            if constexpr (kDivide == Divide::kChecked) {
                const __m256 away = _mm256_andnot_ps(sign, _mm256_sub_ps(a, v));  // 0 .. 1/2
                if (_mm256_movemask_ps(_mm256_cmp_ps(away, near, _CMP_GE_OQ)) != 0) v = quantize.rounded(r, vs, vz);
            }
        }
        if constexpr (kClamp) v = quantize.clamp(v);
        d = dequantize8(v, vs, vz);
        e = abs_error8(r, d);
        emax = _mm256_max_ps(emax, e);
    };
    constexpr std::int64_t kLine = 64 / Ld::kBytes;  // elements per 64-byte line: one prefetch each
    for (std::int64_t k = 0; k < n8;) {
        __m256 v, d, e;
        const std::int64_t fit = std::min(n8 - k, folder.room() / 8 * 8);  // groups inside the current row
        if (fit > 0) {
            std::int32_t* c = folder.codes_here();
            float* m = folder.errors_here();
            for (std::int64_t j = 0; j < fit; j += 8) {
                if (j % kLine == 0) ld.prefetch(k + j);
                group(k + j, v, d, e);
                fold8<false, false>(c + j, m + j, nullptr, nullptr, 0, _mm256_cvtps_epi32(v), unused, e, d);
            }
            k += fit;
            folder.advance(fit);
            continue;
        }
        group(k, v, d, e);  // eight that cross a row's end: folded one at a time
        alignas(32) std::int32_t codes[8];
        alignas(32) float errs[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(codes), _mm256_cvtps_epi32(v));
        _mm256_store_ps(errs, e);
        for (int j = 0; j < 8; ++j) folder.add1<false, false>(codes[j], errs[j], 0.0f);
        k += 8;
    }
    float top = hmax(emax);
    for (std::int64_t k = n8; k < len; ++k) {
        const float r = ld.one(k);
        const std::int32_t q = quantize_value(r, s, static_cast<std::int32_t>(z), config);
        const float e = std::abs(r - s * (static_cast<float>(q) - z));
        top = std::max(top, e);
        folder.add1<false, false>(q, e, 0.0f);
    }
    return top;
}

#ifdef QS_HAVE_AVX512_OVERVIEW
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_*() (a self-initialised variable) as the unused merge
// operand, which GCC 12's -Wuninitialized reports where a kernel branches (a false positive: the operand is unused).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// round(a) of 16 floats: half to even, or half away from zero exactly as Quantize8::rounded (a + 0 where no step).
template <bool kHalfEven>
inline __m512 round16(__m512 a) {
    if constexpr (kHalfEven) return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 t = _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(a, t)), _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN));
    const __m512 step = _mm512_castsi512_ps(_mm512_or_si512(sign, _mm512_castps_si512(_mm512_set1_ps(1.0f))));
    return _mm512_add_ps(t, _mm512_maskz_mov_ps(up, step));
}

// Rows [0, rows) of `cols` elements from `ld` on (whole rows of one band), 16 elements a vector, two rows at a
// time: their codes and errors folded at once into the per-column sums c and maxima m (one load and store of
// each per two rows). Under kOffset the codes folded are q - z (the caller adds z per element). Returns the
// largest |r - r'|. The same operations as run_item_patterns on twice the lanes, so the same bits.
template <bool kHalfEven, bool kClamp, Divide kDivide, class Ld>
float run_rows16(const Ld& ld, std::int64_t rows, std::int64_t cols, float s, float z, const QuantConfig& config,
                 const Reciprocal& rc, std::int32_t* c, float* m) {
    constexpr bool kOffset = kDivide == Divide::kOffset;
    const std::int64_t n16 = cols - cols % 16, row_bytes = cols * Ld::kBytes;
    const __m512 vs = _mm512_set1_ps(s), vz = _mm512_set1_ps(z), inv = _mm512_set1_ps(rc.inv), near = _mm512_set1_ps(rc.near);
    const float shift = kOffset ? z : 0.0f;  // the clamp's bounds are the codes' minus z under kOffset
    const __m512 q_min = _mm512_set1_ps(static_cast<float>(config.dtype.q_min()) - shift);
    const __m512 q_max = _mm512_set1_ps(static_cast<float>(config.dtype.q_max()) - shift);
    __m512 emax = _mm512_setzero_ps();
    float tail_top = 0.0f;
    // r / s + z rounded (under kOffset r / s: q - z), before the clamp.
    const auto rounded = [&](__m512 r) {
        if constexpr (kDivide == Divide::kTrue) return round16<kHalfEven>(_mm512_add_ps(_mm512_div_ps(r, vs), vz));
        if constexpr (kOffset) return _mm512_roundscale_ps(_mm512_mul_ps(r, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512 a = _mm512_add_ps(_mm512_mul_ps(r, inv), vz);
        const __m512 v = _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);  // see reciprocal_rounded
        if constexpr (kDivide == Divide::kChecked)
            if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(a, v)), near, _CMP_GE_OQ) != 0)
                return round16<kHalfEven>(_mm512_add_ps(_mm512_div_ps(r, vs), vz));
        return v;
    };
    const auto group = [&](const std::uint8_t* p, std::int64_t k, __m512i& q, __m512& e) {
        const __m512 r = Ld{p}.at16(k);
        __m512 v = rounded(r);
        if constexpr (kClamp) v = _mm512_min_ps(_mm512_max_ps(v, q_min), q_max);
        const __m512 d = kOffset ? _mm512_mul_ps(vs, v) : _mm512_mul_ps(vs, _mm512_sub_ps(v, vz));  // v is q - z
        e = _mm512_abs_ps(_mm512_sub_ps(r, d));
        emax = _mm512_max_ps(emax, e);
        q = _mm512_cvtps_epi32(v);
    };
    // Both rows' scalar formula past the last whole vector.
    const auto tail = [&](const std::uint8_t* p, std::int64_t k, std::int64_t j) {
        const float r = Ld{p}.one(k);
        const std::int32_t q = quantize_value(r, s, static_cast<std::int32_t>(z), config);
        const float e = std::abs(r - s * (static_cast<float>(q) - z));
        c[j] += q - static_cast<std::int32_t>(shift);
        m[j] = std::max(m[j], e);
        tail_top = std::max(tail_top, e);
    };
    constexpr std::int64_t kLine = 64 / Ld::kBytes;  // elements per 64-byte line: one prefetch each per row
    // Two rows at a time: a line kPrefetchBytes or more ahead at the same column of a later pair of rows.
    const std::int64_t ahead = 2 * row_bytes * ((kPrefetchBytes + 2 * row_bytes - 1) / (2 * row_bytes));
    std::int64_t r = 0;
    for (; r + 2 <= rows; r += 2) {
        const std::uint8_t* p0 = ld.p + r * row_bytes;
        const std::uint8_t* p1 = p0 + row_bytes;
        const auto pair = [&](std::int64_t j) {
            __m512i q0, q1;
            __m512 e0, e1;
            group(p0, j, q0, e0);
            group(p1, j, q1, e1);
            _mm512_storeu_si512(c + j, _mm512_add_epi32(_mm512_loadu_si512(c + j), _mm512_add_epi32(q0, q1)));
            _mm512_storeu_ps(m + j, _mm512_max_ps(_mm512_loadu_ps(m + j), _mm512_max_ps(e0, e1)));
        };
        std::int64_t j = 0;
        for (; j + kLine <= n16; j += kLine) {
            _mm_prefetch(reinterpret_cast<const char*>(p0 + j * Ld::kBytes + ahead), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(p1 + j * Ld::kBytes + ahead), _MM_HINT_T0);
            for (std::int64_t g = j; g < j + kLine; g += 16) pair(g);
        }
        for (; j < n16; j += 16) pair(j);
        for (; j < cols; ++j) tail(p0, j, j), tail(p1, j, j);
    }
    if (r < rows) {  // an odd row
        const std::uint8_t* p0 = ld.p + r * row_bytes;
        for (std::int64_t j = 0; j < n16; j += 16) {
            __m512i q;
            __m512 e;
            group(p0, j, q, e);
            _mm512_storeu_si512(c + j, _mm512_add_epi32(_mm512_loadu_si512(c + j), q));
            _mm512_storeu_ps(m + j, _mm512_max_ps(_mm512_loadu_ps(m + j), e));
        }
        for (std::int64_t j = n16; j < cols; ++j) tail(p0, j, j);
    }
    return std::max(_mm512_reduce_max_ps(emax), tail_top);
}
#pragma GCC diagnostic pop
#endif

}  // namespace qs::detail
#endif
