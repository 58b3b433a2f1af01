#include "quantscope/packing.hpp"

#include "quantscope/error.hpp"

namespace qs {

std::vector<std::uint8_t> pack_codes(const std::int32_t* codes, std::int64_t n, int bits) {
    if (bits < 1 || bits > 16) throw Error("codes pack at 1 to 16 bits");
    std::vector<std::uint8_t> out(static_cast<std::size_t>((n * bits + 7) / 8), 0);
    const std::uint32_t mask = (std::uint32_t{1} << bits) - 1;
    std::int64_t bit = 0;
    for (std::int64_t i = 0; i < n; ++i, bit += bits) {
        // Up to 16 bits starting anywhere in a byte span at most three bytes.
        const std::uint32_t value = (static_cast<std::uint32_t>(codes[i]) & mask) << (bit % 8);
        for (std::int64_t byte = bit / 8, shift = 0; shift < (bit % 8) + bits; ++byte, shift += 8)
            out[static_cast<std::size_t>(byte)] |= static_cast<std::uint8_t>(value >> shift);
    }
    return out;
}

std::vector<std::int32_t> unpack_codes(const std::uint8_t* bytes, std::int64_t size, std::int64_t n, int bits,
                                       bool is_signed) {
    if (bits < 1 || bits > 16) throw Error("codes pack at 1 to 16 bits");
    if (size < (n * bits + 7) / 8) throw Error("too few bytes for the packed codes");
    std::vector<std::int32_t> out(static_cast<std::size_t>(n));
    const std::uint32_t mask = (std::uint32_t{1} << bits) - 1;
    std::int64_t bit = 0;
    for (std::int64_t i = 0; i < n; ++i, bit += bits) {
        std::uint32_t value = 0;
        for (std::int64_t byte = bit / 8, shift = 0; shift < (bit % 8) + bits; ++byte, shift += 8)
            value |= std::uint32_t{bytes[byte]} << shift;
        value = (value >> (bit % 8)) & mask;
        if (is_signed && (value >> (bits - 1)) != 0) value |= ~mask;  // sign-extend
        out[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(value);
    }
    return out;
}

}  // namespace qs
