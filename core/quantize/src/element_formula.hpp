// Internal: how one scaled value becomes a code, shared by the fused pass (quantize.cpp) and the
// single-element formula and traces (element_trace.cpp), so both round and wrap identically.
#pragma once

#include <cmath>
#include <cstdint>

#include "quantscope/config.hpp"

namespace qs::detail {

// r before rounding: r / s + z (SPEC), or the naive recipe's r / norm * 255 (QuantConfig::naive_norm).
inline float scaled_value(float r, float scale, float zero_point, const QuantConfig& config) {
    const float norm = config.active_naive_norm();
    return norm > 0 ? r / norm * 255.0f : r / scale + zero_point;
}

// r' of a code: s (q - z), or the naive recipe's q / 255 * norm.
inline float dequantized_value(float code, float scale, float zero_point, const QuantConfig& config) {
    const float norm = config.active_naive_norm();
    return norm > 0 ? code / 255.0f * norm : scale * (code - zero_point);
}

inline float round_value(float v, Rounding rounding) {
    return rounding == Rounding::HalfEven ? std::nearbyint(v) : std::round(v);
}

// Two's-complement wrap into [q_min, q_max]: what a cast without a clamp does (the teaching pitfall).
// r / s overflows to +-Inf when s is tiny: Inf has no residue (fmod gives NaN, and NaN cast to int32 is
// undefined and indexed the level table out of bounds), so it saturates to q_max / q_min instead.
// The residue is taken of v itself first: fmod is exact, whereas v - q_min rounds away q_min once
// |v| is past double's 53 bits (an int8 cast of 2^60 gave q_min instead of 0).
inline float wrap_value(float v, std::int32_t q_min, std::int64_t levels) {
    if (std::isinf(v)) return static_cast<float>(v > 0 ? q_min + levels - 1 : q_min);
    const double span = static_cast<double>(levels);
    double m = std::fmod(std::fmod(static_cast<double>(v), span) - q_min, span);
    if (m < 0) m += span;
    return static_cast<float>(m + q_min);
}

}  // namespace qs::detail
