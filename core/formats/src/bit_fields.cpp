// Reading a code's bit pattern field by field (see bit_fields.hpp).
#include "quantscope/bit_fields.hpp"

#include "quantscope/config.hpp"

namespace qs {
namespace {

BitField field(BitFieldKind kind, std::uint32_t code, int shift, int bits) {
    BitField f;
    f.kind = kind;
    f.bits = bits;
    f.raw = (code >> shift) & ((std::uint32_t{1} << bits) - 1u);
    for (int b = bits - 1; b >= 0; --b) f.text += ((f.raw >> b) & 1u) != 0 ? '1' : '0';
    return f;
}

}  // namespace

const char* to_string(BitFieldKind kind) {
    switch (kind) {
        case BitFieldKind::Sign: return "sign";
        case BitFieldKind::Exponent: return "exponent";
        case BitFieldKind::Mantissa: return "mantissa";
        case BitFieldKind::Code: break;
    }
    return "code";
}

std::vector<BitField> float_bit_fields(std::uint32_t code, const FloatSpec& spec) {
    const int e = spec.exponent_bits, m = spec.mantissa_bits;
    std::vector<BitField> fields;
    BitField sign = field(BitFieldKind::Sign, code, e + m, 1);
    sign.value = sign.raw != 0 ? -1.0 : 1.0;
    fields.push_back(sign);
    BitField exponent = field(BitFieldKind::Exponent, code, m, e);
    const bool subnormal = exponent.raw == 0;  // its power is the smallest normal's, without the implicit 1
    exponent.value = subnormal ? spec.min_exponent() : static_cast<int>(exponent.raw) - spec.bias;
    fields.push_back(exponent);
    if (m > 0) {
        BitField mantissa = field(BitFieldKind::Mantissa, code, 0, m);
        mantissa.value = (subnormal ? 0.0 : 1.0) + static_cast<double>(mantissa.raw) / FloatSpec::ldexp2(m);
        fields.push_back(mantissa);
    }
    return fields;
}

std::vector<BitField> int_bit_fields(std::int32_t code, int bits, bool is_signed) {
    BitField f = field(BitFieldKind::Code, static_cast<std::uint32_t>(code), 0, bits);
    const bool negative = is_signed && ((f.raw >> (bits - 1)) & 1u) != 0;
    f.value = negative ? static_cast<double>(f.raw) - FloatSpec::ldexp2(bits) : static_cast<double>(f.raw);
    return {f};
}

std::vector<BitField> format_code_bit_fields(FormatId format, std::int32_t code) {
    const FormatTraits& info = format_traits(format);
    if (info.has_float_element()) return float_bit_fields(static_cast<std::uint32_t>(code), info.element);
    return int_bit_fields(code, info.element_bits, format_code_signed(format));
}

bool format_code_signed(FormatId format) {
    const FormatTraits& info = format_traits(format);
    return info.code_space(info, QuantConfig{}).is_signed;
}

FloatSpec scale_spec(ScaleEncoding encoding) {
    switch (encoding) {
        case ScaleEncoding::E4M3: return FloatSpec{4, 3, 7, FloatSpecials::E4M3Fn};
        case ScaleEncoding::Fp16: return FloatSpec{5, 10, 15, FloatSpecials::Ieee};
        case ScaleEncoding::Float32: break;
        case ScaleEncoding::E8M0: break;  // no mantissa, no sign: block_scale_bit_fields reads it
    }
    return FloatSpec{8, 23, 127, FloatSpecials::Ieee};
}

std::vector<BitField> block_scale_bit_fields(FormatId format, std::uint16_t stored_scale) {
    const FormatTraits& info = format_traits(format);
    if (!info.own_blocks()) return {};
    if (info.scale_encoding == ScaleEncoding::E8M0) {  // an exponent byte alone, 2^(raw - 127)
        BitField f = field(BitFieldKind::Exponent, stored_scale, 0, 8);
        f.value = static_cast<int>(f.raw) - 127;
        return {f};
    }
    return float_bit_fields(stored_scale, scale_spec(info.scale_encoding));
}

}  // namespace qs
