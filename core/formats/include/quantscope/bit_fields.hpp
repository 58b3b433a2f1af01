// The fields of a code's bit pattern, for the window's Bits view (issue 12 item 5): a float's sign, exponent
// and mantissa with what each stands for, an integer's two's-complement or offset code, and a block's stored
// scale (E8M0 byte, E4M3 sb, fp16 d). The GUI only colours and prints these; the reading lives here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/number_format.hpp"

namespace qs {

enum class BitFieldKind { Sign, Exponent, Mantissa, Code };

struct BitField {
    BitFieldKind kind = BitFieldKind::Code;
    int bits = 0;           // the field's width, most significant field first in a list
    std::uint32_t raw = 0;  // the field's bits as an unsigned number
    std::string text;       // the field's bits, `bits` characters of 0 and 1
    // What the field stands for: sign +1 or -1; exponent the power of two (raw - bias, or 1 - bias for a
    // subnormal, raw - 127 for an E8M0 byte); mantissa the significand (1 + raw / 2^M, or raw / 2^M for a
    // subnormal); an integer code its value (two's complement when signed, else the offset code itself).
    double value = 0;
};

const char* to_string(BitFieldKind kind);  // "sign", "exponent", "mantissa", "code"

// Sign, exponent, mantissa of a float code (spec.bits() wide); the mantissa only when spec has mantissa bits.
std::vector<BitField> float_bit_fields(std::uint32_t code, const FloatSpec& spec);
// One Code field: `bits` low bits of code, read as two's complement when is_signed.
std::vector<BitField> int_bit_fields(std::int32_t code, int bits, bool is_signed);
// The fields of a code of a FORMATS.md format: its float element's fields, or one Code field (NF4's index,
// q8_0's two's complement, q4_0 / q4_1's offset code 0..15).
std::vector<BitField> format_code_bit_fields(FormatId format, std::int32_t code);
// The fields of a block format's stored scale (FormatTrace::stored_scale): mxfp*'s E8M0 byte (one exponent
// field), nvfp4's E4M3 sb, ggml's fp16 d. Empty for a format without a stored block scale.
std::vector<BitField> block_scale_bit_fields(FormatId format, std::uint16_t stored_scale);
// Whether a format's integer codes read as two's complement (q8_0's), as its row's code space says.
bool format_code_signed(FormatId format);
// The float layout of a stored scale's encoding (E4M3, fp16, float32; E8M0 has none: float32's is given).
FloatSpec scale_spec(ScaleEncoding encoding);

}  // namespace qs
