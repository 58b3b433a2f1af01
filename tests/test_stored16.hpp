// Random bf16 / f16 tensors as a checkpoint stores them, for the tests of the bit-pattern paths
// (test_bit_patterns*.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quantscope/tensor_view.hpp"

namespace qs::test16 {

// The nearest 16-bit pattern of v (round to nearest even), as a checkpoint stores it.
inline std::uint16_t to_bf16(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>(u >> 16);
}
inline std::uint16_t to_f16(float v) {  // normal and subnormal halves; |v| < 65504 here
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const float a = std::abs(v);
    if (a < 6.103515625e-05f) return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f)));
    int e = 0;
    const float m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
    auto mant = static_cast<std::uint32_t>(std::nearbyint((m * 2 - 1) * 1024));
    std::uint32_t exp = static_cast<std::uint32_t>(e - 1 + 15);
    if (mant == 1024) mant = 0, ++exp;
    return static_cast<std::uint16_t>(sign | exp << 10 | mant);
}

// A random 16-bit tensor with repeated patterns (a normal bulk, a few outliers, zeros of both signs).
struct Stored16 {
    std::vector<std::uint16_t> bits;
    TensorView view;
    Tensor decoded;
};
inline Stored16 make16(ElementType type, std::int64_t n, std::uint64_t seed, double spread) {
    Stored16 s;
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.1, spread);
    for (std::int64_t i = 0; i < n; ++i) {
        double v = normal(rng);
        if (i % 1009 == 0) v *= 30;
        if (i % 4001 == 7) v = (i % 2 ? -0.0 : 0.0);
        s.bits.push_back(type == ElementType::BF16 ? to_bf16(static_cast<float>(v)) : to_f16(static_cast<float>(v)));
    }
    s.view.shape = {n};
    s.view.type = type;
    s.view.data = reinterpret_cast<const std::uint8_t*>(s.bits.data());
    s.decoded = materialize(s.view);
    return s;
}

}  // namespace qs::test16
