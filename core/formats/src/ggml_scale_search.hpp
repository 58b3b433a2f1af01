// Internal: the steps ggml's quantizers share (ggml-quants.c), each computed as that C computes it in
// float32: nearest_int, the float-to-integer casts as the x86-64 build of the reference executes them, the
// fp16 store, and the two scale searches the importance-weighted quantizers call (make_qx_quants,
// make_qkx3_quants). Written from the algorithm; no code of ggml's is copied.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

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

// C's lroundf (half away from zero) then the conversion of its long to int, as the reference's glibc and
// x86-64 run them: NaN and values beyond long give LONG_MIN, whose low 32 bits are 0.
inline std::int32_t x86_lroundf_to_int(float x) {
    if (!(x > -9223372036854775808.0f && x < 9223372036854775808.0f)) return 0;
    return static_cast<std::int32_t>(static_cast<std::int64_t>(std::round(x)));
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

// make_qx_quants with rmse_type 1: a symmetric scale for n values on the integer grid [-nmax, nmax - 1],
// chosen among -(nmax + 0.1 is) / max, is = -9..9, by the weighted least-squares fit (weights qw, or x^2
// where qw is null). L[i] gets the code plus nmax (0 .. 2 nmax - 1); returns the scale (0 for a group
// below kGgmlGroupMaxEps, whose codes are 0).
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
    // Σ w x l and Σ w l^2 of the codes at one inverse scale, each term and sum in float32 in ggml's order;
    // the codes land in `codes` (plus nmax).
    const auto fit = [&](float iscale, std::int8_t* codes, float& sumlx, float& suml2) {
        sumlx = 0, suml2 = 0;
        for (int i = 0; i < n; ++i) {
            int l = ggml_nearest_int(iscale * x[i]);
            l = l < -nmax ? -nmax : (l > nmax - 1 ? nmax - 1 : l);
            codes[i] = static_cast<std::int8_t>(l + nmax);
            const float w = qw ? qw[i] : x[i] * x[i];
            const float fl = static_cast<float>(l);
            sumlx += w * x[i] * fl;
            suml2 += w * fl * fl;
        }
    };
    float sumlx, suml2;
    fit(-fnmax / max, L, sumlx, suml2);
    float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
    float best = scale * sumlx;
    std::int8_t trial[256];
    for (int is = -9; is <= 9; ++is) {
        if (is == 0) continue;
        fit(-(fnmax + 0.1f * static_cast<float>(is)) / max, trial, sumlx, suml2);
        if (suml2 > 0 && sumlx * sumlx > best * suml2) {
            std::memcpy(L, trial, static_cast<std::size_t>(n));
            scale = sumlx / suml2;
            best = scale * sumlx;
        }
    }
    return scale;
}

// make_qkx3_quants: a scale and a min (min <= 0) for n values on [0, nmax], the weighted least-squares
// fit over iscale = (rmin + rdelta is + nmax) / (max - min), is = 0..nstep, kept where its weighted squared
// error beats the best so far (every caller in ggml passes use_mad = false). Weights are `weights`, or x^2
// where null. L gets the codes; *the_min = -min as ggml returns it; returns the scale.
inline float ggml_make_qkx3_quants(int n, int nmax, const float* x, const float* weights, std::uint8_t* L,
                                   float* the_min, float rmin, float rdelta, int nstep) {
    const auto weight = [&](int i) { return weights ? weights[i] : x[i] * x[i]; };
    float min = x[0], max = x[0];
    float sum_w = weight(0);
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        const float w = weight(i);
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
    float iscale = fnmax / (max - min);
    float scale = 1 / iscale;
    float best_mad = 0;
    for (int i = 0; i < n; ++i) {
        const int l = ggml_nearest_int(iscale * (x[i] - min));
        L[i] = static_cast<std::uint8_t>(l < 0 ? 0 : (l > nmax ? nmax : l));
        const float diff = scale * static_cast<float>(L[i]) + min - x[i];
        best_mad += weight(i) * (diff * diff);
    }
    std::uint8_t trial[256];
    for (int is = 0; is <= nstep; ++is) {
        iscale = (rmin + rdelta * static_cast<float>(is) + fnmax) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            int l = ggml_nearest_int(iscale * (x[i] - min));
            l = l < 0 ? 0 : (l > nmax ? nmax : l);
            trial[i] = static_cast<std::uint8_t>(l);
            const float w = weight(i);
            const float fl = static_cast<float>(l);
            sum_l += w * fl;
            sum_l2 += w * fl * fl;
            sum_xl += w * fl * x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
            float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
            if (this_min > 0) {
                this_min = 0;
                this_scale = sum_xl / sum_l2;
            }
            float mad = 0;
            for (int i = 0; i < n; ++i) {
                const float diff = this_scale * static_cast<float>(trial[i]) + this_min - x[i];
                mad += weight(i) * (diff * diff);
            }
            if (mad < best_mad) {
                std::memcpy(L, trial, static_cast<std::size_t>(n));
                best_mad = mad;
                scale = this_scale;
                min = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

}  // namespace qs::detail
