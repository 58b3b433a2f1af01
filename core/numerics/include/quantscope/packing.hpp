// Sub-byte packing of codes (issue 12 item 5, the course's pack_weights): codes of `bits` bits (1..16) laid
// end to end in a little-endian bit stream, the first code in the lowest bits of the first byte. uint2
// codes [1, 0, 3, 2] pack into the one byte 0b10110001 = 177.
#pragma once

#include <cstdint>
#include <vector>

namespace qs {

// Only the low `bits` bits of each code are kept (a negative int8 code packs as its two's complement).
// ceil(n * bits / 8) bytes; the unused high bits of the last byte are 0.
std::vector<std::uint8_t> pack_codes(const std::int32_t* codes, std::int64_t n, int bits);
// The inverse: n codes of `bits` bits; `is_signed` sign-extends them (two's complement).
std::vector<std::int32_t> unpack_codes(const std::uint8_t* bytes, std::int64_t size, std::int64_t n, int bits,
                                       bool is_signed);

}  // namespace qs
