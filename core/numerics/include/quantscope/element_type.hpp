// The floating element types a tensor can be stored in (files: .npy <f2/<f4/<f8, safetensors F16/BF16/F32/F64)
// and their little-endian decoding into float32: exact for float16 and bfloat16 (every value, subnormals and
// specials included), round-to-nearest for float64.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace qs {

enum class ElementType { F16, BF16, F32, F64 };

inline std::size_t element_size(ElementType type) {
    switch (type) {
        case ElementType::F16:
        case ElementType::BF16: return 2;
        case ElementType::F32: return 4;
        case ElementType::F64: return 8;
    }
    return 0;
}

// "f16", "bf16", "f32", "f64": for messages and status lines.
inline const char* element_type_name(ElementType type) {
    switch (type) {
        case ElementType::F16: return "f16";
        case ElementType::BF16: return "bf16";
        case ElementType::F32: return "f32";
        case ElementType::F64: return "f64";
    }
    return "?";
}

// Assembling bytes (not memcpy + swap) is endian-neutral and compiles to a single load on x86.
inline std::uint16_t load_le16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
inline std::uint32_t load_le32(const std::uint8_t* p) {
    return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}
inline std::uint64_t load_le64(const std::uint8_t* p) {
    return std::uint64_t{load_le32(p)} | (std::uint64_t{load_le32(p + 4)} << 32);
}

inline float float_from_bits(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline double load_le_double(const std::uint8_t* p) {
    const std::uint64_t bits = load_le64(p);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

// IEEE binary16 → binary32. Every half is exactly representable as a float.
inline float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = std::uint32_t{h & 0x8000u} << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24, exact in float (a normal float for every mantissa > 0).
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return sign != 0 ? -magnitude : magnitude;
    }
    if (exponent == 31) return float_from_bits(sign | 0x7f800000u | (mantissa << 13));  // Inf / NaN
    return float_from_bits(sign | ((exponent + (127 - 15)) << 23) | (mantissa << 13));
}

// bfloat16 is the top half of a float32.
inline float bf16_to_float(std::uint16_t b) { return float_from_bits(std::uint32_t{b} << 16); }

inline bool host_is_little_endian() {
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
#else
    const std::uint16_t probe = 1;
    std::uint8_t first;
    std::memcpy(&first, &probe, 1);
    return first == 1;
#endif
}

// Converts `count` little-endian elements at `src` (any alignment) to float32. One pass, no allocation.
inline void decode_elements(ElementType type, const std::uint8_t* src, std::size_t count, float* dst) {
    switch (type) {
        case ElementType::F32:
            if (host_is_little_endian()) {
                std::memcpy(dst, src, count * 4);
            } else {
                for (std::size_t i = 0; i < count; ++i) dst[i] = float_from_bits(load_le32(src + 4 * i));
            }
            return;
        case ElementType::F64:
            for (std::size_t i = 0; i < count; ++i) dst[i] = static_cast<float>(load_le_double(src + 8 * i));
            return;
        case ElementType::F16:
            for (std::size_t i = 0; i < count; ++i) dst[i] = half_to_float(load_le16(src + 2 * i));
            return;
        case ElementType::BF16:
            for (std::size_t i = 0; i < count; ++i) dst[i] = bf16_to_float(load_le16(src + 2 * i));
            return;
    }
}

}  // namespace qs
