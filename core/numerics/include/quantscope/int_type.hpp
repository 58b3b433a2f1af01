// The integer target types int<N> and uint<N>, N = 2..16 (SPEC "Integer types").
#pragma once

#include <cstdint>
#include <string>

namespace qs {

struct IntType {
    bool is_signed = true;
    int bits = 8;

    // int<N>: [-2^(N-1), 2^(N-1) - 1]; uint<N>: [0, 2^N - 1].
    std::int32_t q_min() const { return is_signed ? -(std::int32_t{1} << (bits - 1)) : 0; }
    std::int32_t q_max() const {
        return is_signed ? (std::int32_t{1} << (bits - 1)) - 1 : (std::int32_t{1} << bits) - 1;
    }
    std::int64_t levels() const { return std::int64_t{q_max()} - q_min() + 1; }
    std::string name() const { return (is_signed ? "int" : "uint") + std::to_string(bits); }

    // Parses "int8", "uint4", ... in any case ("INT8"); throws qs::Error for anything outside int2..int16 / uint2..uint16.
    static IntType parse(const std::string& text);

    friend bool operator==(const IntType& a, const IntType& b) {
        return a.is_signed == b.is_signed && a.bits == b.bits;
    }
    friend bool operator!=(const IntType& a, const IntType& b) { return !(a == b); }
};

// The most levels whose codes are counted one by one (every int<N> and uint<N>, N <= 16): the window's
// overview counts the elements of each code, and so do a 16-bit tensor's sums from its bit patterns.
constexpr std::int64_t kMaxCountedLevels = std::int64_t{1} << 16;

}  // namespace qs
