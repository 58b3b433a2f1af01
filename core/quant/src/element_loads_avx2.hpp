// Internal to the overview's fused passes: eight elements (or one) of a view as float32, converted in
// registers from the stored type, with the same values decode_elements gives.
#pragma once

#include "quantize_kernel_avx2.hpp"

#ifdef QS_HAVE_AVX2_KERNEL
#include <cstring>

#include "quantscope/element_type.hpp"

namespace qs::detail {

// How far ahead of the element being computed a pass asks for the view's bytes: a mapping's pages are 4 KiB,
// where the hardware's own prefetch stops, and a pass doing some arithmetic per element keeps few loads in
// flight; about DRAM's latency ahead at the pass's pace. (A prefetch past the mapping's end does not fault.)
constexpr std::int64_t kPrefetchBytes = 2048;

// Element k of an item as float32, eight at a time or one: converted in registers from the stored type.
struct LoadF32 {
    const std::uint8_t* p;
    __m256 at(std::int64_t k) const { return _mm256_loadu_ps(reinterpret_cast<const float*>(p + 4 * k)); }
    float one(std::int64_t k) const {
        float v;
        std::memcpy(&v, p + 4 * k, 4);
        return v;
    }
    void prefetch(std::int64_t k) const { _mm_prefetch(reinterpret_cast<const char*>(p + 4 * k) + kPrefetchBytes, _MM_HINT_T0); }
};
struct LoadBf16 {
    const std::uint8_t* p;
    __m256 at(std::int64_t k) const {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));  // bf16: float32's top half
    }
    float one(std::int64_t k) const { return bf16_to_float(load_le16(p + 2 * k)); }
    void prefetch(std::int64_t k) const { _mm_prefetch(reinterpret_cast<const char*>(p + 2 * k) + kPrefetchBytes, _MM_HINT_T0); }
};
#ifdef __F16C__
struct LoadF16 {
    const std::uint8_t* p;
    __m256 at(std::int64_t k) const {  // exact, as half_to_float (subnormals included)
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2 * k)));
    }
    float one(std::int64_t k) const { return half_to_float(load_le16(p + 2 * k)); }
    void prefetch(std::int64_t k) const { _mm_prefetch(reinterpret_cast<const char*>(p + 2 * k) + kPrefetchBytes, _MM_HINT_T0); }
};
#endif

}  // namespace qs::detail
#endif
