#include "gui/panels/bits_text.hpp"

#include "gui/widgets/text.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

namespace {

// The name of a stored scale by its role, as the format's row names it (FORMATS.md's letters).
std::string ScaleName(const BitRow& row, const QuantConfig& config) {
    const FormatTraits& format = format_traits(config.format);
    switch (row.role) {
        case BitRowRole::TensorScale: return "tensor scale g";
        case BitRowRole::Offset: return format.offset_label;
        case BitRowRole::BlockScale: return format.scale_label;
        case BitRowRole::SubScale: return "sub-block " + std::to_string(row.sub_block) + " scale sc";
        case BitRowRole::SubMin: return "sub-block " + std::to_string(row.sub_block) + " min m";
        case BitRowRole::Code: break;
    }
    return "code";
}

std::string FloatDecoded(const BitRow& row) {
    const Sym sym = Symbols();
    const std::string sign = row.fields[0].value < 0 ? sym.minus : "+";
    if (row.float_class == FloatClass::NaN) return "NaN";
    if (row.float_class == FloatClass::Infinity) return sign + "infinity";
    std::string s = sign + "1 " + sym.times + " 2^" + FormatNumber(row.fields[1].value);
    if (row.fields.size() > 2) s += std::string(" ") + sym.times + " " + FormatNumber(row.fields[2].value);
    s += " = " + FormatNumber(row.value);
    if (row.float_class == FloatClass::Subnormal) s += " (subnormal: no implicit 1)";
    if (row.float_class == FloatClass::Zero) s += " (zero)";
    return s;
}

// The weights of the set bits summed: "-8 + 4 + 1 = -3", then what the code stands for when that differs
// from the sum (NF4's codebook level, Q4_0's q - 8).
std::string IntDecoded(const BitRow& row) {
    const BitField& f = row.fields[0];
    std::string sum;
    for (int b = 0; b < f.bits; ++b) {
        if (f.text[static_cast<std::size_t>(b)] != '1') continue;
        const double w = row.weights[static_cast<std::size_t>(b)];  // only the top bit can weigh less than 0
        sum += sum.empty() ? FormatNumber(w) : " + " + FormatNumber(w);
    }
    if (sum.empty()) sum = "0";
    std::string s = sum + " = " + FormatNumber(f.value);
    const bool is_signed = !row.weights.empty() && row.weights[0] < 0;
    if (row.role == BitRowRole::SubScale)
        return s + " " + Symbols().arrow + " d " + Symbols().times + " sc = " + FormatNumber(row.used);
    if (row.role == BitRowRole::SubMin)
        return s + " " + Symbols().arrow + " dmin " + Symbols().times + " m = " + FormatNumber(row.used);
    if (row.encoding == "nf4 index" || row.encoding == "iq4 index") return s + " " + Symbols().arrow + " level " + FormatNumber(row.value);
    if (row.value != f.value)  // Q4_0's q - 8, Q5_0's q - 16
        return s + " " + Symbols().arrow + " q " + Symbols().minus + " " + FormatNumber(f.value - row.value) + " = " +
               FormatNumber(row.value);
    return s + (is_signed ? " (two's complement)" : " (unsigned)");
}

}  // namespace

std::string BitRowTitle(const BitRow& row, const QuantConfig& config) {
    return ScaleName(row, config) + " (" + row.encoding + ")";
}

std::string BitRowBits(const BitRow& row) {
    std::string s;
    for (const BitField& f : row.fields) s += (s.empty() ? "" : " ") + f.text;
    return s;
}

std::string BitRowDecoded(const BitRow& row) {
    if (row.fields.empty()) return {};
    if (row.is_float) return FloatDecoded(row);
    if (!row.weights.empty()) return IntDecoded(row);
    // An E8M0 byte: a power of two alone, 2^(raw - 127) (the core's exponent is raw - 127).
    const BitField& e = row.fields[0];
    return "2^(" + FormatInteger(e.raw) + " " + Symbols().minus + " " + FormatInteger(e.raw - e.value) + ") = 2^" +
           FormatNumber(e.value) + " = " + FormatNumber(row.value);
}

std::vector<std::string> FieldNames(BitFieldKind kind) {
    switch (kind) {
        case BitFieldKind::Sign: return {"sign", "s"};
        case BitFieldKind::Exponent: return {"exponent", "exp", "e"};
        case BitFieldKind::Mantissa: return {"mantissa", "man", "m"};
        case BitFieldKind::Code: break;
    }
    return {"code"};
}

std::string PackedByteLine(const PackedByte& packed, const Shape& shape) {
    if (packed.offset < 0 || packed.slots.empty()) return {};
    std::string bits;
    for (int b = 7; b >= 0; --b) bits += ((packed.value >> b) & 1) != 0 ? '1' : '0';
    std::string codes;
    for (const PackedSlot& s : packed.slots) codes += (codes.empty() ? "" : " ") + FormatInteger(s.code);
    const std::string offset = FormatInteger(static_cast<double>(packed.offset));
    return "byte " + offset + " of --out-packed = " + FormatInteger(packed.value) + " = 0b" + bits + ": codes " + codes +
           " of " + index_to_string(shape, packed.slots.front().element) + " to " +
           index_to_string(shape, packed.slots.back().element) + ", the first in the lowest bits";
}

std::vector<std::string> BitsReportLines(const CellBits& bits, const QuantConfig& config, const Shape& shape) {
    std::vector<std::string> lines;
    const std::string arrow = Symbols().arrow;
    lines.push_back(BitRowTitle(bits.code, config) + ": " + BitRowBits(bits.code) + " " + arrow + " " + BitRowDecoded(bits.code));
    for (const BitRow& row : bits.scales)
        lines.push_back(BitRowTitle(row, config) + ": " + BitRowBits(row) + " " + arrow + " " + BitRowDecoded(row));
    const std::string packed = PackedByteLine(bits.packed, shape);
    if (!packed.empty()) lines.push_back(packed);
    return lines;
}

}  // namespace qs::gui
