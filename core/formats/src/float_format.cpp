// Rounding onto a small binary float format and the bit patterns of its codes (FORMATS.md "Element formats").
// Everything works on float32 bits: a format's every value is a float32, so rounding is exact float32
// arithmetic and no double rounding can occur.
#ifdef __F16C__
#include <immintrin.h>
#endif

#include <cmath>
#include <cstring>
#include <limits>

#include "quantscope/element_type.hpp"
#include "quantscope/number_format.hpp"

namespace qs {
namespace {

std::uint32_t bits_of(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

}  // namespace

double FloatSpec::ldexp2(int e) { return std::ldexp(1.0, e); }

int FloatSpec::max_normal_exponent() const {
    const int top_field = (1 << exponent_bits) - 1;
    // IEEE formats reserve the top exponent field for Inf/NaN; E4M3 and the MX formats keep it for numbers.
    return (specials == FloatSpecials::Ieee ? top_field - 1 : top_field) - bias;
}

double FloatSpec::largest() const {
    const double mantissa_steps = std::ldexp(1.0, mantissa_bits);
    // E4M3: the all-ones mantissa of the top binade is NaN, so its largest is 1.110 (1.75 * 2^8 = 448).
    const double top_mantissa = specials == FloatSpecials::E4M3Fn ? mantissa_steps - 2 : mantissa_steps - 1;
    return (1.0 + top_mantissa / mantissa_steps) * ldexp2(max_normal_exponent());
}

float round_to_float(float x, const FloatSpec& spec, bool* clipped) {
    const float largest = static_cast<float>(spec.largest());
    const float a = std::fabs(x);
    const bool saturates = !(a <= largest);
    if (clipped) *clipped = saturates;
    if (saturates) return std::copysign(largest, x);
    const std::uint32_t sign = bits_of(x) & 0x80000000u;
    std::uint32_t u = bits_of(a);
    const int shift = 23 - spec.mantissa_bits;
    const int min_exp = spec.min_exponent();
    if (min_exp <= -126 || static_cast<int>(u >> 23) - 127 >= min_exp) {
        // A normal of the format (or any value, for bf16's float32 exponent range, whose subnormals are
        // float32's): round the float32 mantissa to M bits, half to even; a carry moves into the exponent.
        if (shift > 0) {
            u += (std::uint32_t{1} << (shift - 1)) - 1 + ((u >> shift) & 1u);
            u &= ~((std::uint32_t{1} << shift) - 1);
        }
        return float_from_bits(sign | u);
    }
    // A subnormal of the format: a multiple of Q = 2^(min_exp - M). Adding C = 2^(min_exp - M + 23), whose
    // float32 spacing is Q, rounds a to the nearest multiple of Q (ties to even: float32's own rounding), and
    // subtracting C is exact. a < 2^min_exp <= C, so a + C stays in C's binade.
    const float c = static_cast<float>(FloatSpec::ldexp2(min_exp - spec.mantissa_bits + 23));
    const float rounded = (a + c) - c;  // not folded to a: no -ffast-math (the build's flags say so)
    return float_from_bits(sign | bits_of(rounded));
}

std::uint32_t float_code(float value, const FloatSpec& spec) {
    const std::uint32_t u = bits_of(value);
    const std::uint32_t sign = (u >> 31) << (spec.exponent_bits + spec.mantissa_bits);
    const std::uint32_t mag = u & 0x7fffffffu;
    if (spec.exponent_bits == 8) return sign | (mag >> (23 - spec.mantissa_bits));  // bf16: float32's top bits
    const int exp = static_cast<int>(mag >> 23) - 127;
    if (mag != 0 && exp >= spec.min_exponent()) {
        const auto field = static_cast<std::uint32_t>(exp + spec.bias);
        const std::uint32_t mantissa = (mag >> (23 - spec.mantissa_bits)) & ((1u << spec.mantissa_bits) - 1);
        return sign | (field << spec.mantissa_bits) | mantissa;
    }
    // Subnormal or zero: the value in units of the smallest subnormal (at most 2^M - 1, exact in float32).
    const float units = std::fabs(value) / static_cast<float>(spec.smallest_subnormal());
    return sign | static_cast<std::uint32_t>(units);
}

float float_from_code(std::uint32_t code, const FloatSpec& spec) {
    const int m_bits = spec.mantissa_bits, e_bits = spec.exponent_bits;
    const bool negative = ((code >> (e_bits + m_bits)) & 1u) != 0;
    const auto field = static_cast<int>((code >> m_bits) & ((1u << e_bits) - 1));
    const std::uint32_t mantissa = code & ((1u << m_bits) - 1);
    const int top_field = (1 << e_bits) - 1;
    double magnitude;
    if (spec.specials == FloatSpecials::Ieee && field == top_field) {
        magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    } else if (spec.specials == FloatSpecials::E4M3Fn && field == top_field && mantissa == (1u << m_bits) - 1) {
        magnitude = std::numeric_limits<double>::quiet_NaN();
    } else if (field == 0) {
        magnitude = mantissa * spec.smallest_subnormal();
    } else {
        magnitude = (1.0 + std::ldexp(static_cast<double>(mantissa), -m_bits)) * FloatSpec::ldexp2(field - spec.bias);
    }
    const auto f = static_cast<float>(magnitude);  // exact: every value of these formats is a float32
    return negative ? -f : f;
}

std::vector<float> float_grid(const FloatSpec& spec) {
    const std::uint32_t half = 1u << (spec.exponent_bits + spec.mantissa_bits);
    std::vector<float> positive;
    for (std::uint32_t code = 0; code < half; ++code) {
        const float v = float_from_code(code, spec);
        if (std::isfinite(v)) positive.push_back(v);
    }
    std::vector<float> grid;
    grid.reserve(positive.size() * 2);
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) grid.push_back(-*it);
    grid.insert(grid.end(), positive.begin(), positive.end());
    return grid;
}

std::uint16_t fp16_bits_saturating(float x) {
#ifdef __F16C__
    // The hardware conversion rounds half to even as round_to_float does (subnormals too); the magnitude
    // is first clamped to 65504 (a NaN too: round_to_float saturates whatever is not <= the largest).
    const float a = std::fabs(x);
    const float clamped = a <= 65504.0f ? a : 65504.0f;
    const auto h = static_cast<std::uint16_t>(_cvtss_sh(clamped, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    return static_cast<std::uint16_t>(h | (std::signbit(x) ? 0x8000u : 0u));
#else
    static const FloatSpec kHalf{5, 10, 15, FloatSpecials::Ieee};
    return static_cast<std::uint16_t>(float_code(round_to_float(x, kHalf), kHalf));
#endif
}

}  // namespace qs
