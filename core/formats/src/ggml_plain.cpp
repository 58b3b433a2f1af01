// The unquantized ggml types' to_float: F32, F16 (IEEE half), BF16 (the top half of a float32), F64
// (rounded to the nearest float32, as ggml's f64 to f32 cast).
#include <cstring>

#if defined(__F16C__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "ggml_codecs.hpp"
#include "quantscope/element_type.hpp"

namespace qs::detail {
namespace {

const std::uint8_t* bytes(const void* p) { return static_cast<const std::uint8_t*>(p); }

void f32_to_float(const void* in, std::int64_t n, float* y) {
    for (std::int64_t i = 0; i < n; ++i) {
        std::uint32_t u = load_le32(bytes(in) + 4 * i);
        std::memcpy(&y[i], &u, 4);
    }
}
void f16_to_float(const void* in, std::int64_t n, float* y) {
    std::int64_t i = 0;
#ifdef __AVX512F__
    // Sixteen at a time: compare's hot loop (an F16 model against its quantization).
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bytes(in) + 2 * i))));
#endif
#ifdef __F16C__
    // Eight at a time in hardware: every half is exact in float32, so this is half_to_float's value (a
    // signalling NaN comes back quiet, as ggml's own F16C conversion gives it).
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes(in) + 2 * i))));
#endif
    for (; i < n; ++i) y[i] = half_to_float(load_le16(bytes(in) + 2 * i));
}
void bf16_to_float(const void* in, std::int64_t n, float* y) {
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t u = static_cast<std::uint32_t>(load_le16(bytes(in) + 2 * i)) << 16;
        std::memcpy(&y[i], &u, 4);
    }
}
void f64_to_float(const void* in, std::int64_t n, float* y) {
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t u = load_le64(bytes(in) + 8 * i);
        double d;
        std::memcpy(&d, &u, 8);
        y[i] = static_cast<float>(d);
    }
}

}  // namespace

GgmlCodec ggml_plain_codec(GgmlType type) {
    GgmlCodec c;
    switch (type) {
        case GgmlType::F32: c.dequantize = f32_to_float; break;
        case GgmlType::F16: c.dequantize = f16_to_float; break;
        case GgmlType::BF16: c.dequantize = bf16_to_float; break;
        case GgmlType::F64: c.dequantize = f64_to_float; break;
        default: break;
    }
    return c;
}

}  // namespace qs::detail
