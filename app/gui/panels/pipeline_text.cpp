#include "gui/panels/pipeline_text.hpp"

#include "gui/widgets/text.hpp"
#include "quantscope/bit_fields.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/stored_blocks.hpp"

#include <cctype>

namespace qs::gui {

namespace {

// "bits: sign 1 = -1 | exponent 1000 = 2^1 | mantissa 010 = 1.25" or "bits: 1101 = -3 (two's complement)":
// the core's reading of the code (bit_fields.hpp), printed, plus how sub-byte codes share a byte.
std::string BitsLine(const std::vector<BitField>& fields, bool is_signed, int code_bits) {
    std::string line = "bits:";
    for (std::size_t i = 0; i < fields.size(); ++i) {
        const BitField& f = fields[i];
        line += i == 0 ? " " : " | ";
        if (f.kind == BitFieldKind::Code) {
            line += f.text + " = " + FormatNumber(f.value) + (is_signed ? " (two's complement)" : " (offset code)");
            continue;
        }
        line += std::string(to_string(f.kind)) + " " + f.text + " = ";
        if (f.kind == BitFieldKind::Exponent) line += "2^" + FormatNumber(f.value);
        else line += FormatNumber(f.value);
    }
    if (code_bits < 8 && 8 % code_bits == 0)
        line += " | " + FormatInteger(8 / code_bits) + " codes a byte, the first in the lowest bits";
    return line;
}

}  // namespace

std::vector<std::string> PipelineLines(const QuantView& view, const ElementTrace& t) {
    const Sym sym = Symbols();
    const IntType& dt = view.config->dtype;
    const std::string p = sym.prime;
    const std::string zs = t.zero_point < 0 ? "(" + FormatNumber(t.zero_point) + ")" : FormatNumber(t.zero_point);
    std::vector<std::string> lines;
    if (view.params && view.params->stored && view.params->stored->values()) {
        // A Model-tab row against a B that stores plain values: B's value is r', and there is no code.
        const std::string type = StoredTypeName(*view.params->stored);
        lines.push_back("r = " + FormatNumber(t.r) + " (A)");
        lines.push_back("B stores " + type + " values: no code, no scale");
        lines.push_back("r" + p + " = B's " + type + " value = " + FormatNumber(t.dequantized));
        lines.push_back("|r " + std::string(sym.minus) + " r" + p + "| = |A " + sym.minus + " B| = " + FormatNumber(t.error));
        return lines;
    }
    if (!is_int_format(view.config->format)) {
        // A number format: r / s onto its grid (nearest, ties to even; saturating), the code and r'.
        const FormatId f = view.config->format;
        lines.push_back("r = " + FormatNumber(t.r));
        // ggml's types: the element's scale and min are its (sub-)block's (the Bits tab shows d, sc, dmin, m), and
        // their --out-packed is ggml's block structs, not codes packed in a row.
        const bool ggml = format_traits(f).ggml != nullptr;
        if (ggml)
            lines.push_back("scaled in its block = " + FormatNumber(t.scaled));
        else
            lines.push_back("r / s = " + FormatNumber(t.r) + " / " + FormatNumber(t.scale) + " = " + FormatNumber(t.scaled));
        // Another file's stored blocks (a Model-tab row against B): the code was not chosen here from r.
        const bool stored = view.params && view.params->stored;
        lines.push_back(std::string(stored ? "stored " : "nearest ") + format_name(f) + " = " + FormatNumber(t.rounded));
        lines.push_back("code " + FormatInteger(t.code) + " = bits " + code_bits_text(f, t.code) +
                        (t.clipped ? " (saturated)" : ""));
        lines.push_back(BitsLine(format_code_bit_fields(f, t.code), format_code_signed(f), ggml ? 8 : format_traits(f).element_bits));
        lines.push_back("r" + p + " = " + FormatNumber(t.dequantized));
        lines.push_back("|r " + std::string(sym.minus) + " r" + p + "| = " + FormatNumber(t.error));
        return lines;
    }
    lines.push_back("r = " + FormatNumber(t.r));
    lines.push_back("r / s + z = " + FormatNumber(t.r) + " / " + FormatNumber(t.scale) + " + " + zs + " = " +
                    FormatNumber(t.scaled));
    // A whole number, so no sign on zero: round(-0.13) is the float -0, which read "= −0 → clamp(−0, ...)".
    const std::string rounded = FormatNumber(t.rounded == 0.0 ? 0.0 : t.rounded);
    lines.push_back(std::string(view.config->rounding == Rounding::HalfEven ? "round" : "round half-away") + "(" +
                    FormatNumber(t.scaled) + ") = " + rounded);
    std::string q = "q = ";
    q += view.config->overflow == Overflow::Wrap ? "wrap(" + rounded + ") = "
                                                 : "clamp(" + rounded + ", " + FormatNumber(dt.q_min()) +
                                                       ", " + FormatNumber(dt.q_max()) + ") = ";
    q += FormatNumber(t.code);
    if (t.clipped) q += view.config->overflow == Overflow::Wrap ? "  (overflow: wrapped!)" : "  (clipped)";
    lines.push_back(q);
    lines.push_back(BitsLine(int_bit_fields(t.code, dt.bits, dt.is_signed), dt.is_signed, dt.bits));
    lines.push_back("r" + p + " = s (q " + sym.minus + " z) = " + FormatNumber(t.dequantized));
    lines.push_back("|r " + std::string(sym.minus) + " r" + p + "| = " + FormatNumber(t.error));
    return lines;
}

std::string BlockKind(const QuantConfig& config) {
    const FormatTraits& row = format_traits(config.format);
    if (row.own_blocks()) return row.block_size > 32 ? "super-block" : "block";
    return to_string(config.granularity);
}

std::string StoredTypeName(const StoredBlocks& stored) {
    std::string type = stored.type->name;  // as compare's table names it: "F16", "Q4_K"
    for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return type;
}

bool ShowsStoredValues(const QuantView& view) {
    return view.valid() && view.params->stored && view.params->stored->values() &&
           view.config->format == view.params->stored->format;
}

std::string StoredPairText(const QuantView& view, std::int64_t block) {
    if (view.params && view.params->stored && view.params->stored->values())
        return "B stores " + StoredTypeName(*view.params->stored) + " values: no scale";
    const StoredPairNames names = stored_pair_names(*view.config);
    const StoredPair pair = stored_pair(view.data->view, *view.params, *view.config, block);
    std::string text = names.scale + " = " + FormatNumber(pair.scale);
    if (!names.offset.empty() && pair.offset) text += ",  " + names.offset + " = " + FormatNumber(*pair.offset);
    return text;
}

}  // namespace qs::gui
