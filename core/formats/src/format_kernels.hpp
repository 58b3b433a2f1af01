// Internal: one element through an element format, and one block's scale and elements through a block
// format's fixed recipe (FORMATS.md "Block formats"). Inline so the loops of the formats' own files
// (core/formats/src, whose rows point at them) inline them.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "format_simd_avx2.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/number_format.hpp"

namespace qs::detail {

// The largest |r| of n values, in order (any order gives the same bits).
inline float values_amax(const float* r, std::int64_t n) {
    float a = 0;
    for (std::int64_t k = 0; k < n; ++k) a = std::max(a, std::fabs(r[k]));
    return a;
}

// What one element becomes.
struct ElementResult {
    std::int32_t code = 0;
    float scaled = 0;     // the value that was rounded onto the grid
    float grid = 0;       // grid[code]
    float deq = 0;        // r'
    bool clipped = false;
};

// One block's scale as the recipe computes it.
struct BlockScale {
    float scale = 1;           // as used in r' (MX: X; NVFP4: sb * g; ggml: fp16(d))
    float offset = 0;          // Q4_1: fp16(m)
    std::uint16_t stored = 0;  // the stored bits (E8M0 byte, E4M3 sb, fp16 d)
    float inv = 0;             // ggml: id = 1 / d with d in float32 (0 when d = 0)
    float low = 0;             // Q4_1: the block's float32 minimum
};

// An element format (float or nf4) at scale s: x = r / s (a float32 true division), v on the grid, r' = s v.
inline ElementResult element_float(float r, float s, const FloatSpec& spec) {
    ElementResult e;
    e.scaled = r / s;
    e.grid = round_to_float(e.scaled, spec, &e.clipped);
    e.code = static_cast<std::int32_t>(float_code(e.grid, spec));
    e.deq = s * e.grid;
    return e;
}

inline ElementResult element_nf4(float r, float s) {
    ElementResult e;
    e.scaled = r / s;
    e.code = static_cast<std::int32_t>(nf4_index(e.scaled, &e.clipped));
    e.grid = nf4_codebook()[static_cast<std::size_t>(e.code)];
    e.deq = s * e.grid;
    return e;
}

inline float block_amax(const float* r, int n) {
#ifdef QS_HAVE_FORMAT_AVX2
    if (n % 8 == 0) return abs_max_avx2(r, n);  // a maximum of magnitudes: the same in any order
#endif
    float amax = 0;
    for (int k = 0; k < n; ++k) amax = std::max(amax, std::fabs(r[k]));
    return amax;
}

// MX: X = 2^(floor(log2 amax) - emax), its exponent clamped to E8M0's [-127, 127] (OCP MX v1.0: the
// shared exponent of a block of tiny values cannot go below 2^-127); X = 1 for an all-zero block.
inline BlockScale mx_scale(const float* r, int n, const FloatSpec& element) {
    BlockScale b;
    const float amax = block_amax(r, n);
    int shared = 0;
    if (amax > 0) {
        // floor(log2 amax) from the bits: the exponent field, or for a subnormal m 2^-149 the top bit of m.
        std::uint32_t u;
        std::memcpy(&u, &amax, sizeof u);
        const int floor_log2 = u >= 0x00800000u ? static_cast<int>(u >> 23) - 127 : -149 + 31 - __builtin_clz(u);
        shared = std::clamp(floor_log2 - element.max_normal_exponent(), -127, 127);
    }
    b.stored = static_cast<std::uint16_t>(shared + 127);
    // 2^shared, exact: a normal float32's exponent field, or 2^-127, a float32 subnormal.
    const std::uint32_t bits = shared >= -126 ? static_cast<std::uint32_t>(shared + 127) << 23 : 0x00400000u;
    std::memcpy(&b.scale, &bits, sizeof bits);
    return b;
}

// NVFP4's per-tensor g = amax / (448 * 6) in float32; 1 for an all-zero tensor.
inline float nvfp4_global_scale(float amax_tensor) { return amax_tensor > 0 ? amax_tensor / 2688.0f : 1.0f; }

// sb = E4M3(amax_block / (6 g)), saturating; the scale as used is sb * g (float32). 6 g is 0 only when g
// underflowed (a tensor of values below ~4e-42): sb saturates and sb * g is 0, so the block dequantizes to 0.
inline BlockScale nvfp4_scale_of_amax(float amax, float g) {
    static const FloatSpec kE4M3{4, 3, 7, FloatSpecials::E4M3Fn};
    BlockScale b;
    const float six_g = 6.0f * g;
    const float t = amax == 0 ? 0.0f : (six_g > 0 ? amax / six_g : FLT_MAX);
    const float sb = round_to_float(t, kE4M3);
    b.stored = static_cast<std::uint16_t>(float_code(sb, kE4M3));
    b.scale = sb * g;
    return b;
}
inline BlockScale nvfp4_scale(const float* r, int n, float g) { return nvfp4_scale_of_amax(block_amax(r, n), g); }

// The smallest and largest of n finite values folded into lo and hi, as the sequential std::min / std::max
// scan gives them (of +0 and -0, the first seen).
inline void min_max_in_order(const float* r, int n, float& lo, float& hi) {
#ifdef QS_HAVE_FORMAT_AVX2
    if (n % 8 == 0 && n > 0) {
        float l = 0, h = 0;
        bool nonfinite = false;
        min_max_avx2(r, n, l, h, nonfinite);
        const auto first_zero = [&] {
            for (int k = 0; k < n; ++k)
                if (r[k] == 0) return r[k];
            return 0.0f;
        };
        if (l == 0) l = first_zero();
        if (h == 0) h = first_zero();
        lo = l < lo ? l : lo, hi = h > hi ? h : hi;
        return;
    }
#endif
    for (int k = 0; k < n; ++k) lo = std::min(lo, r[k]), hi = std::max(hi, r[k]);
}

// q = codes as ggml's reference quantizers compute them; d (and m) stored as fp16, saturated.
// A ggml block's scale from its float32 d: id = 1 / d for the codes (0 when d = 0), fp16(d) as stored.
inline BlockScale ggml_scale(float d) {
    BlockScale b;
    b.inv = d != 0 ? 1.0f / d : 0.0f;
    b.stored = fp16_bits_saturating(d);
    b.scale = half_to_float(b.stored);
    return b;
}

inline BlockScale q8_0_scale(const float* r, int n) { return ggml_scale(block_amax(r, n) / 127.0f); }

inline BlockScale q4_0_scale(const float* r, int n) {
    float max = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    if (n % 8 == 0) {  // the largest magnitude, then the first value that has it
        const float amax = abs_max_avx2(r, n);
        if (amax > 0) max = r[first_with_magnitude_avx2(r, n, amax)];
    } else
#endif
    {
        float amax = 0;
        for (int k = 0; k < n; ++k)  // the first value of largest magnitude, with its sign
            if (amax < std::fabs(r[k])) amax = std::fabs(r[k]), max = r[k];
    }
    return ggml_scale(max / -8.0f);
}

inline BlockScale q4_1_scale(const float* r, int n) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    min_max_in_order(r, n, lo, hi);
    BlockScale b = ggml_scale((hi - lo) / 15.0f);
    b.low = lo;
    b.offset = half_to_float(fp16_bits_saturating(lo));
    return b;
}

// An element of a float-element block (MX, NVFP4): x = r / scale; a zero scale (NVFP4's sb = 0) gives 0.
inline ElementResult block_float_element(float r, float scale, const FloatSpec& spec) {
    if (scale == 0) return {};
    ElementResult e;
    e.scaled = r / scale;
    e.grid = round_to_float(e.scaled, spec, &e.clipped);
    e.code = static_cast<std::int32_t>(float_code(e.grid, spec));
    e.deq = e.grid * scale;
    return e;
}

// ggml's truncating conversions with their MIN(15, .) clamp; NaN (0 * Inf where (r - min) overflowed a
// saturated block) gives 0 instead of the C cast's undefined value.
inline std::int32_t ggml_trunc_clamp(float y, bool& clipped) {
    if (!(y >= 0)) y = 0;
    clipped = y >= 16;
    return clipped ? 15 : static_cast<std::int32_t>(y);
}

inline ElementResult q8_0_element(float r, const BlockScale& b) {
    ElementResult e;
    if (b.scale == 0) return e;  // a stored d of 0: codes 0, r' = +0
    e.scaled = r * b.inv;
    const float q = std::round(e.scaled);  // roundf: half away from zero
    e.clipped = q > 127 || q < -127;
    e.code = static_cast<std::int32_t>(std::clamp(q, -127.0f, 127.0f));
    e.grid = static_cast<float>(e.code);
    e.deq = e.grid * b.scale + 0.0f;  // + 0: a code is an integer, so a dequantized 0 is +0
    return e;
}

inline ElementResult q4_0_element(float r, const BlockScale& b) {
    ElementResult e;
    if (b.scale == 0) return e;
    e.scaled = r * b.inv + 8.0f;
    e.code = ggml_trunc_clamp(r * b.inv + 8.5f, e.clipped);
    e.grid = static_cast<float>(e.code - 8);
    e.deq = e.grid * b.scale + 0.0f;
    return e;
}

inline ElementResult q4_1_element(float r, const BlockScale& b) {
    ElementResult e;
    if (b.scale == 0) {
        e.deq = b.offset + 0.0f;
        return e;
    }
    e.scaled = (r - b.low) * b.inv;
    e.code = ggml_trunc_clamp(e.scaled + 0.5f, e.clipped);
    e.grid = static_cast<float>(e.code);
    e.deq = e.grid * b.scale + b.offset + 0.0f;
    return e;
}

}  // namespace qs::detail
