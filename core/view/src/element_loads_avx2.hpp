// Internal to the overview's fused passes: eight elements (or one, or sixteen where AVX-512 is there) of a
// view as float32, converted in registers from the stored type, with the same values decode_elements gives.
#pragma once

#include "quantize_kernel_avx2.hpp"

#ifdef QS_HAVE_AVX2_KERNEL
#include <cstring>

// The window's AVX-512 kernels (16 floats a vector) where the compiler may use AVX-512 F and BW; else AVX2 only.
#if defined(__AVX512F__) && defined(__AVX512BW__)
#define QS_HAVE_AVX512_OVERVIEW 1
#endif

#include "quantscope/element_type.hpp"

namespace qs::detail {

// How far ahead of the element being computed a pass asks for the view's bytes: a mapping's pages are 4 KiB,
// where the hardware's own prefetch stops, and a pass doing some arithmetic per element keeps few loads in
// flight; about DRAM's latency ahead at the pass's pace (the AVX-512 step on 128256 x 4096 bf16: ~100 ms of
// CPU at 2 KiB, ~70 ms at 8 KiB, no better at 16 KiB). A prefetch past the mapping's end does not fault.
constexpr std::int64_t kPrefetchBytes = 8192;

// Element k of an item as float32, eight at a time or one: converted in registers from the stored type.
struct LoadF32 {
    static constexpr std::int64_t kBytes = 4;
    const std::uint8_t* p;
#ifdef QS_HAVE_AVX512_OVERVIEW
    __m512 at16(std::int64_t k) const { return _mm512_loadu_ps(p + 4 * k); }
#endif
    __m256 at(std::int64_t k) const { return _mm256_loadu_ps(reinterpret_cast<const float*>(p + 4 * k)); }
    float one(std::int64_t k) const {
        float v;
        std::memcpy(&v, p + 4 * k, 4);
        return v;
    }
    void prefetch(std::int64_t k) const { _mm_prefetch(reinterpret_cast<const char*>(p + 4 * k) + kPrefetchBytes, _MM_HINT_T0); }
};
struct LoadBf16 {
    static constexpr std::int64_t kBytes = 2;
    const std::uint8_t* p;
#ifdef QS_HAVE_AVX512_OVERVIEW
    __m512 at16(std::int64_t k) const {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * k));
        // (the masked form: GCC 12 warns of the plain one's undefined source operand)
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_maskz_cvtepu16_epi32(0xffff, h), 16));
    }
#endif
    __m256 at(std::int64_t k) const {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // bf16: float32's top half
    }
    float one(std::int64_t k) const { return bf16_to_float(load_le16(p + 2 * k)); }
    void prefetch(std::int64_t k) const { _mm_prefetch(reinterpret_cast<const char*>(p + 2 * k) + kPrefetchBytes, _MM_HINT_T0); }
};
#ifdef __F16C__
struct LoadF16 {
    static constexpr std::int64_t kBytes = 2;
    const std::uint8_t* p;
#ifdef QS_HAVE_AVX512_OVERVIEW
    __m512 at16(std::int64_t k) const { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * k))); }
#endif
    __m256 at(std::int64_t k) const {  // exact, as half_to_float (subnormals included)
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k)));
    }
    float one(std::int64_t k) const { return half_to_float(load_le16(p + 2 * k)); }
    void prefetch(std::int64_t k) const { _mm_prefetch(reinterpret_cast<const char*>(p + 2 * k) + kPrefetchBytes, _MM_HINT_T0); }
};
#endif

}  // namespace qs::detail
#endif
