// Internal: the element loops of the format pass written without branches, so the compiler vectorises
// them (-O3, AVX2 where built with it). The same rounding as round_to_float / float_code / nf4_index
// (the property tests compare the pass with the single-element trace, bit for bit).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "format_simd_avx2.hpp"
#include "quantscope/number_format.hpp"

namespace qs::detail {

inline std::uint32_t as_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float as_float(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// A FloatSpec's constants for the loop.
struct FloatConsts {
    std::uint32_t largest_bits = 0, min_normal_bits = 0, round_add = 0, clear_mask = 0, mantissa_mask = 0;
    std::uint32_t sign_bit = 0, exponent_offset = 0;
    int shift = 0, m_bits = 0;
    float c = 0, sub_units = 0;  // the subnormal rounder 2^(emin - M + 23); 1 / smallest subnormal
    bool wide = false;           // bf16: float32's exponent range, code = top 16 bits

    explicit FloatConsts(const FloatSpec& s) {
        m_bits = s.mantissa_bits;
        shift = 23 - m_bits;
        largest_bits = as_bits(static_cast<float>(s.largest()));
        wide = s.min_exponent() <= -126;
        min_normal_bits = wide ? 0u : as_bits(static_cast<float>(FloatSpec::ldexp2(s.min_exponent())));
        round_add = (1u << (shift - 1)) - 1;
        clear_mask = ~((1u << shift) - 1);
        mantissa_mask = (1u << m_bits) - 1;
        sign_bit = 1u << (s.exponent_bits + m_bits);
        exponent_offset = static_cast<std::uint32_t>(127 - s.bias);
        c = wide ? 0.0f : static_cast<float>(FloatSpec::ldexp2(s.min_exponent() - m_bits + 23));
        sub_units = wide ? 0.0f : static_cast<float>(1.0 / s.smallest_subnormal());
    }
};

// x = r / s, v = the format's saturating round-half-even of x, r' = s v, the code's bits; s = 0 (an NVFP4
// block whose sb is 0) gives code 0 and r' = +0. Returns how many saturated.
inline std::int64_t float_elements(const float* r, const float* s, std::int64_t n, const FloatConsts& k,
                                   std::int32_t* codes, float* deq) {
    std::int64_t clipped = 0, i = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    i = n - n % 8;
    clipped = float_elements_avx2(r, s, i, k, codes, deq);
#endif
    for (; i < n; ++i) {
        const float sk = s[i];
        const float x = r[i] / sk;
        const std::uint32_t ux = as_bits(x);
        const std::uint32_t sign = ux & 0x80000000u, ua = ux & 0x7fffffffu;
        const bool zero = sk == 0;
        const bool sat = !(ua <= k.largest_bits);  // as unsigned: NaN and Inf are above every finite value
        const std::uint32_t un = (ua + k.round_add + ((ua >> k.shift) & 1u)) & k.clear_mask;
        const float a = as_float(ua);
        const std::uint32_t us = as_bits((a + k.c) - k.c);
        std::uint32_t uv = ua < k.min_normal_bits ? us : un;
        uv = sat ? k.largest_bits : uv;
        uv = zero ? 0u : uv;
        clipped += (sat && !zero) ? 1 : 0;
        const std::uint32_t sv = zero ? 0u : sign;
        const float v = as_float(uv | sv);
        deq[i] = zero ? 0.0f : sk * v;
        const std::uint32_t normal_code =
            (((uv >> 23) - k.exponent_offset) << k.m_bits) | ((uv >> k.shift) & k.mantissa_mask);
        // Only a subnormal's units are converted: a normal's would not fit an int (undefined behaviour, caught by
        // -fsanitize=float-cast-overflow), and its code is normal_code anyway.
        const float sub_units = uv < k.min_normal_bits ? as_float(uv) * k.sub_units : 0.0f;
        const auto sub_code = static_cast<std::uint32_t>(static_cast<std::int32_t>(sub_units));
        const std::uint32_t magnitude_code = k.wide ? (uv >> 16) : (uv < k.min_normal_bits ? sub_code : normal_code);
        codes[i] = static_cast<std::int32_t>(magnitude_code | (sv != 0 ? k.sign_bit : 0u));
    }
    return clipped;
}

// NF4: the index is the number of midpoints below x (a midpoint's float32 rounded down stands for it
// exactly: x > m holds for a float x exactly when x > the largest float <= m); r' = s * codebook[index].
struct Nf4Consts {
    float mid_low[16];  // the 15 midpoints, then +Inf (no x passes it: a search may probe 16 entries)
    Nf4Consts() {
        mid_low[15] = INFINITY;
        const auto& cb = nf4_codebook();
        for (int j = 0; j < 15; ++j) {
            const double m = (static_cast<double>(cb[j]) + cb[j + 1]) / 2;
            float f = static_cast<float>(m);
            if (static_cast<double>(f) > m) f = std::nextafter(f, -2.0f);
            mid_low[j] = f;
        }
    }
};

inline std::int64_t nf4_elements(const float* r, const float* s, std::int64_t n, const Nf4Consts& k,
                                 std::int32_t* codes, float* deq) {
    const auto& cb = nf4_codebook();
    std::int64_t clipped = 0, i = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    i = n - n % 8;
    clipped = nf4_elements_avx2(r, s, i, k.mid_low, cb.data(), codes, deq);
#endif
    for (; i < n; ++i) {
        const float x = r[i] / s[i];
        std::int32_t index = 0;
        for (int j = 0; j < 15; ++j) index += x > k.mid_low[j] ? 1 : 0;
        clipped += std::fabs(x) > 1.0f ? 1 : 0;
        codes[i] = index;
        deq[i] = s[i] * cb[static_cast<std::size_t>(index)];
    }
    return clipped;
}

}  // namespace qs::detail
