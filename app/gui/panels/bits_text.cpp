#include "gui/panels/bits_text.hpp"

#include "gui/widgets/text.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

namespace {

// The name of a stored scale by its role, as the format's row names it (FORMATS.md's letters).
std::string ScaleName(const BitRow& row, const QuantConfig& config, bool in_sub_block) {
    const FormatTraits& format = format_traits(config.format);
    const std::string sub = in_sub_block ? "" : "sub-block " + std::to_string(row.sub_block) + " ";
    switch (row.role) {
        case BitRowRole::TensorScale: return "tensor scale g";
        case BitRowRole::Offset: return format.offset_label;
        case BitRowRole::BlockScale: return format.scale_label;
        case BitRowRole::SubScale: return sub + "scale sc";
        case BitRowRole::SubMin: return sub + "min m";
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
// from the sum (NF4's codebook level, Q4_0's q - 8). One set bit, or none, is its number alone: "2", not
// "2 = 2" (the compact look, without the bits before it, read "→ 2 = 2 (two's complement)").
std::string IntDecoded(const BitRow& row) {
    const BitField& f = row.fields[0];
    std::string sum;
    int set = 0;
    for (int b = 0; b < f.bits; ++b) {
        if (f.text[static_cast<std::size_t>(b)] != '1') continue;
        const double w = row.weights[static_cast<std::size_t>(b)];  // only the top bit can weigh less than 0
        sum += sum.empty() ? FormatNumber(w) : " + " + FormatNumber(w);
        ++set;
    }
    const std::string number = FormatNumber(row.bias != 0 ? static_cast<double>(f.raw) : f.value);
    std::string s = set > 1 ? sum + " = " + number : number;
    const bool is_signed = !row.weights.empty() && row.weights[0] < 0;
    const Sym sym = Symbols();
    const std::string arrow = std::string(" ") + sym.arrow + " ";
    // A number stored with a bias (q6_K's q + 32, q3_K's sc + 32): the stored number, then what it stands for.
    const char* letter = row.role == BitRowRole::SubScale ? "sc" : "q";
    if (row.bias != 0)
        s += arrow + letter + " " + sym.minus + " " + FormatInteger(row.bias) + " = " + FormatNumber(f.value);
    if (row.role == BitRowRole::SubScale) return s + arrow + "d " + sym.times + " sc = " + FormatNumber(row.used);
    if (row.role == BitRowRole::SubMin) return s + arrow + "dmin " + sym.times + " m = " + FormatNumber(row.used);
    if (row.encoding == "nf4 index") return s + arrow + "level " + FormatNumber(row.value);
    if (row.encoding == "iq4 index") return s + arrow + "grid value " + FormatNumber(row.value);
    if (row.value != f.value)  // Q4_0's q - 8, Q5_0's q - 16
        return s + arrow + "q " + sym.minus + " " + FormatNumber(f.value - row.value) + " = " + FormatNumber(row.value);
    if (row.bias != 0) return s;
    return s + (is_signed ? " (two's complement)" : " (unsigned)");
}

}  // namespace

std::string BitRowTitle(const BitRow& row, const QuantConfig& config, bool in_sub_block) {
    return ScaleName(row, config, in_sub_block) + " (" + row.encoding + ")";
}

std::string BitRowBits(const BitRow& row) {
    std::string s;
    for (const BitField& f : row.fields) s += (s.empty() ? "" : " ") + f.text;
    return s;
}

std::string BitRowDecoded(const BitRow& row) {
    if (row.fields.empty()) return {};
    if (row.is_float) return FloatDecoded(row);
    if (row.encoding == "trit")  // tq1_0: one base-3 digit of a byte that holds five
        return "base-3 digit " + row.fields[0].text + " " + Symbols().arrow + " q " + Symbols().minus + " 1 = " +
               FormatNumber(row.value);
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

std::string GgmlBlockLine(const GgmlCellBits& g, const CellBits& bits) {
    const std::string first = FormatInteger(static_cast<double>(g.byte_offset));
    const std::string last = FormatInteger(static_cast<double>(g.byte_offset + g.type->type_size - 1));
    return std::string(g.fields.sub_blocks > 0 ? "super-block " : "block ") + FormatInteger(static_cast<double>(bits.block)) +
           " (" + FormatInteger(g.type->block_size) + " values in " + FormatInteger(g.type->type_size) + " bytes: bytes " + first +
           " to " + last + " of --out-packed)" + (g.weighted ? ", quantized weighted by importance" : "");
}

std::string GgmlSubBlockLine(const GgmlCellBits& g) {
    if (g.sub_block < 0) return {};
    const int first = g.sub_block * g.fields.sub_size;
    return "sub-block " + FormatInteger(g.sub_block) + " of " + FormatInteger(g.fields.sub_blocks) + " (values " +
           FormatInteger(first) + " to " + FormatInteger(first + g.fields.sub_size - 1) + " of the super-block)";
}

std::string GgmlWorkedLine(const GgmlCellBits& g) {
    const Sym sym = Symbols();
    const std::string q = FormatNumber(g.code_value), x = std::string(" ") + sym.times + " ";
    const std::string minus = std::string(" ") + sym.minus + " ";
    std::string formula, numbers;
    if (g.sub_block >= 0) {
        const int j = g.sub_block;
        formula = std::string("d") + sym.times + "sc" + x + "q";
        numbers = FormatNumber(g.fields.sub_scale_used[j]) + x + q;
        if (g.fields.has_dmin) {
            formula += minus + "dmin" + sym.times + "m";
            numbers += minus + FormatNumber(g.fields.sub_min_used[j]);
        }
    } else {
        formula = "d" + x + "q";
        numbers = FormatNumber(g.fields.d) + x + q;
        if (g.fields.has_dmin) {
            formula += " + m";
            numbers += " + " + FormatNumber(g.fields.dmin);
        }
    }
    return std::string("r") + sym.prime + " = " + formula + " = " + numbers + " = " + FormatNumber(g.dequantized) +
           "  (r = " + FormatNumber(g.value) + ")";
}

std::vector<std::string> BitsReportLines(const CellBits& bits, const QuantConfig& config, const Shape& shape) {
    std::vector<std::string> lines;
    const std::string arrow = Symbols().arrow;
    if (bits.ggml.type) {  // the nesting, outside in: the super-block, its sub-block, the element
        const GgmlCellBits& g = bits.ggml;
        lines.push_back(GgmlBlockLine(g, bits));
        for (const BitRow& row : bits.scales)
            if (row.role == BitRowRole::BlockScale || row.role == BitRowRole::Offset)
                lines.push_back(BitRowTitle(row, config) + ": " + BitRowBits(row) + " " + arrow + " " + BitRowDecoded(row));
        if (g.sub_block >= 0) lines.push_back(GgmlSubBlockLine(g));
        for (const BitRow& row : bits.scales)
            if (row.role == BitRowRole::SubScale || row.role == BitRowRole::SubMin)
                lines.push_back(BitRowTitle(row, config) + ": " + BitRowBits(row) + " " + arrow + " " + BitRowDecoded(row));
        lines.push_back(BitRowTitle(bits.code, config) + ": " + BitRowBits(bits.code) + " " + arrow + " " + BitRowDecoded(bits.code));
        lines.push_back(GgmlWorkedLine(g));
        return lines;
    }
    lines.push_back(BitRowTitle(bits.code, config) + ": " + BitRowBits(bits.code) + " " + arrow + " " + BitRowDecoded(bits.code));
    for (const BitRow& row : bits.scales)
        lines.push_back(BitRowTitle(row, config) + ": " + BitRowBits(row) + " " + arrow + " " + BitRowDecoded(row));
    const std::string packed = PackedByteLine(bits.packed, shape);
    if (!packed.empty()) lines.push_back(packed);
    return lines;
}

}  // namespace qs::gui
