// Internal to the slider's blocks-only pass (overview_blocks_fused.cpp): whether one bf16 row with its own (s, z)
// may take the lean kernel, round(r * (1 / s)) + z with no clamp and no boundary check, and still give every
// element quantize's code. The row's range [lo, hi] (BlockRanges, read once per layout) is all it needs: the
// check costs a few dozen scalar operations per row instead of a compare per element.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "quantscope/config.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/quantize.hpp"

namespace qs::detail {

struct RowPlan {
    bool fast = false;  // every element of [lo, hi] gets quantize's code from the lean kernel
    float s = 1, z = 0, inv = 1;
    // The values whose lean code is not quantize's (a boundary that falls on a bf16 value: common, as s is the
    // range of two bf16 values over 2^bits - 1), at most two, and their q - z; unused: NaN (matches none).
    float fix_value[2] = {NAN, NAN}, fix_offset[2] = {0, 0};
    bool fixes() const { return !std::isnan(fix_value[0]); }
    std::int32_t code_lo = 0, code_hi = 0;  // quantize's codes of lo and hi: the row's code range
    float deq_lo = 0, deq_hi = 0;           // and r' of those: the row's range of r'
};

// The lean kernel's code of r, unclamped: round(r * inv) half to even (the build does not contract it), plus z.
inline float lean_code(float r, float inv, float z) { return std::nearbyint(r * inv) + z; }

// Why checking one bit pattern per code boundary suffices:
// - codes are monotone in r both ways, so if lo and hi get quantize's codes from the lean formula, every value
//   between gets a lean code within [q_min, q_max]: no clamp;
// - the lean r * inv, with inv 1 / s moved by n float32 ulps, and quantize's r / s + z differ by at most
//   (5.2 + 2n) u |r / s| + 2 u |z| (u = 2^-24; reciprocal_for's bound), so they can round apart only where the
//   exact r / s + z lies that close to a half k + 1/2, i.e. where r lies within delta_k = 2^-20 s ((1 + n) |a| +
//   |z| + 2) (more than twice the bound) of the boundary b_k = s a, a = k + 1/2 - z (the scan below computes b_k
//   in float32 and widens delta_k by one |a| to cover that rounding);
// - bf16 values are 2^-9 |b_k| or more apart there (|a| >= 1/2, b_k a normal float), more than delta_k while
//   |z| < 1000 (with the scan's wider margin: 2006 against 2048 at |a| = 1/2 and |z| = 999, thin: recheck
//   before raising that limit); two values within the bound (at most delta_k / 2) of b_k would be closer than
//   that, so only the bf16 value nearest b_k can be that close (at a midpoint of two, neither is), and where it
//   is, it is checked against quantize_value itself.
// A boundary often falls on a bf16 value (s is the range of two bf16 values over 2^bits - 1), where 1 / s and
// the true division round apart: a reciprocal one or two ulps off often agrees with quantize there, and up to
// two values that still differ are kept with their codes for the kernel to put in.
inline RowPlan plan_bf16_row(float lo, float hi, float s, std::int32_t z, const QuantConfig& config) {
    constexpr int kNudges = 2;  // ulps either way
    RowPlan p;
    p.s = s;
    p.z = static_cast<float>(z);
    p.code_lo = quantize_value(lo, s, z, config);
    p.code_hi = quantize_value(hi, s, z, config);
    p.deq_lo = s * (static_cast<float>(p.code_lo) - p.z);
    p.deq_hi = s * (static_cast<float>(p.code_hi) - p.z);
    if (!(s >= 0x1p-100f && s <= 0x1p100f) || !(lo <= hi) || std::abs(z) >= 1000) return p;
    // The values near a boundary, for the widest nudge, with quantize's codes.
    float near_value[8];
    std::int32_t near_code[8];
    int nears = 0;
    const auto near = [&](float v) {
        if (nears == 8) return false;
        near_value[nears] = v;
        near_code[nears++] = quantize_value(v, s, z, config);
        return true;
    };
    // The boundaries between lo's code and hi's, kChunk at a time: first which have a bf16 value that near (a loop
    // the compiler vectorizes, in float32: int8's 255 boundaries one at a time in float64 cost more than the row's
    // kernel), then those. b = s a in float32 is within 2^-24 |b| of b_k, so the margin takes one |a| more than
    // delta_k, and the bf16 value nearest b is the one nearest b_k wherever either can be that close.
    constexpr int kChunk = 32;
    const float s_margin = s * 0x1p-20f, z_margin = std::abs(p.z) + 2.0f;
    for (std::int32_t first = p.code_lo; first < p.code_hi; first += kChunk) {
        const int count = static_cast<int>(std::min<std::int64_t>(kChunk, std::int64_t{p.code_hi} - first));
        float value[kChunk];
        bool hit[kChunk];
        for (int i = 0; i < kChunk; ++i) {
            const float a = static_cast<float>(first + i) + 0.5f - p.z;  // exact: small integers and halves
            const float b = s * a;
            const float delta = s_margin * ((2 + kNudges) * std::abs(a) + z_margin);
            std::uint32_t bits;
            std::memcpy(&bits, &b, sizeof bits);
            const float v = float_from_bits((bits + 0x8000u) & 0xffff0000u);  // the nearest bf16 value (ties: either)
            value[i] = v;
            hit[i] = (std::abs(v - b) <= delta) & (v >= lo) & (v <= hi) & (i < count);
        }
        for (int i = 0; i < count; ++i)
            if (hit[i] && !near(value[i])) return p;
    }
    // 1 / s, then one ulp up, one down, two up, two down: the first with the fewest values to put in.
    const float inv0 = 1.0f / s;
    float up = inv0, down = inv0;
    int best = 3;
    for (int n = 0; n <= 2 * kNudges && best > 0; ++n) {
        if (n % 2 == 1) up = std::nextafter(up, INFINITY);
        else if (n > 0) down = std::nextafter(down, 0.0f);
        const float inv = n == 0 ? inv0 : n % 2 == 1 ? up : down;
        if (lean_code(lo, inv, p.z) != static_cast<float>(p.code_lo) || lean_code(hi, inv, p.z) != static_cast<float>(p.code_hi)) continue;
        int fixes = 0;
        float value[2], offset[2];
        for (int i = 0; i < nears && fixes <= 2; ++i) {
            if (lean_code(near_value[i], inv, p.z) == static_cast<float>(near_code[i])) continue;
            if (fixes < 2) value[fixes] = near_value[i], offset[fixes] = static_cast<float>(near_code[i] - z);
            ++fixes;
        }
        if (fixes >= best) continue;
        best = fixes;
        p.inv = inv;
        for (int f = 0; f < 2; ++f) p.fix_value[f] = f < fixes ? value[f] : NAN, p.fix_offset[f] = f < fixes ? offset[f] : 0.0f;
    }
    p.fast = best <= 2;
    return p;
}

}  // namespace qs::detail
