// The Bits view's reading of one element (see cell_bits.hpp): its code's fields, its block's stored scales,
// and the packed byte that holds it.
#include "quantscope/cell_bits.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "format_kernels.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/ggml_rows.hpp"
#include "quantscope/packing.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/stored_blocks.hpp"

namespace qs {
namespace {

int code_bits_of(const QuantConfig& config) {
    const FormatTraits& row = format_traits(config.format);
    return row.code_space(row, config).bits;
}

std::uint32_t float32_bits(float x) {
    std::uint32_t u = 0;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

BitRow float_row(BitRowRole role, const std::string& encoding, std::uint32_t bits, const FloatSpec& spec) {
    BitRow row;
    row.role = role;
    row.encoding = encoding;
    row.bits_value = bits;
    row.fields = float_bit_fields(bits, spec);
    row.is_float = true;
    row.float_class = classify_float_code(bits, spec);
    row.value = float_from_code(bits, spec);
    return row;
}

// An integer code of `bits` bits: each bit's weight, the top one negative in two's complement.
BitRow int_row(const std::string& encoding, std::int32_t code, int bits, bool is_signed) {
    BitRow row;
    row.encoding = encoding;
    row.fields = int_bit_fields(code, bits, is_signed);
    row.bits_value = row.fields[0].raw;
    row.value = row.fields[0].value;
    for (int b = bits - 1; b >= 0; --b)
        row.weights.push_back((is_signed && b == bits - 1 ? -1.0 : 1.0) * FloatSpec::ldexp2(b));
    return row;
}

// The code row of a FORMATS.md format: its float element's fields, or an integer code with its weights.
BitRow format_code_row(const QuantConfig& config, std::int32_t code, float grid_value) {
    const FormatTraits& info = format_traits(config.format);
    if (info.has_float_element())
        return float_row(BitRowRole::Code, info.code_encoding, static_cast<std::uint32_t>(code), info.element);
    const bool is_signed = info.code_space(info, config).is_signed;
    BitRow row = int_row(info.code_encoding, code, info.element_bits, is_signed);
    row.value = grid_value;  // NF4's level, Q4_0's q - 8, Q8_0's and Q4_1's q
    return row;
}

// A stored block scale's row by its encoding (its bits as block_scale_bit_fields reads them).
BitRow block_scale_row(const FormatTraits& info, std::uint16_t stored) {
    const std::vector<BitField> fields = block_scale_bit_fields(info.id, stored);
    if (info.scale_encoding == ScaleEncoding::E8M0) {
        BitRow row;
        row.role = BitRowRole::BlockScale;
        row.encoding = "E8M0";
        row.bits_value = stored;
        row.fields = fields;
        row.value = FloatSpec::ldexp2(static_cast<int>(stored) - 127);
        return row;
    }
    const bool e4m3 = info.scale_encoding == ScaleEncoding::E4M3;
    return float_row(BitRowRole::BlockScale, e4m3 ? "E4M3" : "fp16", stored, scale_spec(info.scale_encoding));
}

// The block's stored scales (MX, NVFP4, ggml), recomputed from its values by the pass's own recipe.
void block_scale_rows(const TensorView& view, const QuantConfig& config, std::int64_t flat, float tensor_amax,
                      CellBits& out) {
    const FormatTraits& info = format_traits(config.format);
    const int n = info.block_size;
    const std::int64_t start = flat / n * n;
    const float g = info.has_global_scale() ? info.kernels.global_scale(tensor_amax) : 1.0f;
    std::vector<float> scratch(static_cast<std::size_t>(n));
    detail::BlockScale b;
    view.guarded([&] { b = info.kernels.block_scale(info, floats_at(view, start, n, scratch.data()), n, g); });
    out.scales.push_back(block_scale_row(info, b.stored));
    if (info.has_global_scale())
        out.scales.push_back(float_row(BitRowRole::TensorScale, "float32", float32_bits(g), float32_spec()));
    if (info.has_offset)  // stored in the scale's encoding (Q4_1's fp16 m)
        out.scales.push_back(float_row(BitRowRole::Offset, "fp16", fp16_bits_saturating(b.offset),
                                       scale_spec(info.scale_encoding)));
}

// How a ggml type's block (ggml-common.h) stores what GgmlBlockFields reports: the bias a code's stored
// number carries (q6_K keeps q + 32, q3_K q + 4 as 2 bits and a high bit, tq2_0 q + 1), and the bits and
// bias of the sub-block scale (q3_K and iq4_xs keep sc + 32 in 6 bits, q6_K an int8) and of the min.
struct GgmlStorage {
    int code_bias = 0;
    int scale_bits = 0, scale_bias = 0;
    bool scale_signed = false;
    int min_bits = 0;
};
GgmlStorage ggml_storage(GgmlType type) {
    switch (type) {
        case GgmlType::Q2_K: return {0, 4, 0, false, 4};
        case GgmlType::Q3_K: return {4, 6, 32, false, 0};
        case GgmlType::Q4_K:
        case GgmlType::Q5_K: return {0, 6, 0, false, 6};
        case GgmlType::Q6_K: return {32, 8, 0, true, 0};
        case GgmlType::IQ4_XS: return {0, 6, 32, false, 0};
        case GgmlType::TQ1_0:
        case GgmlType::TQ2_0: return {1, 0, 0, false, 0};
        default: return {};
    }
}

std::string uint_name(int bits) { return "uint" + std::to_string(bits); }

// A number the block stores as `value + bias` in `bits` unsigned bits: its boxes are the stored bits, its field's
// value the number it stands for.
BitRow biased_row(const std::string& encoding, std::int32_t value, std::int32_t bias, int bits) {
    BitRow row = int_row(encoding, value + bias, bits, false);
    row.bias = bias;
    row.fields[0].value = value;
    row.value = value;
    return row;
}

// The code as the block stores it: its bits (tq1_0: one base-3 digit, five to a byte) standing for
// `code_value`, what to_float multiplies by the scale.
BitRow ggml_code_row(const FormatTraits& info, std::int32_t code, float code_value) {
    const GgmlStorage storage = ggml_storage(info.ggml->type);
    const std::int32_t stored = code + storage.code_bias;
    BitRow row;
    if (info.ggml->type == GgmlType::TQ1_0) {
        row.encoding = "trit";
        row.bits_value = static_cast<std::uint32_t>(stored);
        row.fields.push_back(BitField{BitFieldKind::Code, 1, static_cast<std::uint32_t>(stored), std::to_string(stored),
                                      static_cast<double>(code)});
        row.bias = storage.code_bias;
    } else if (storage.code_bias == 0 && info.code_space(info, QuantConfig{}).is_signed) {
        row = int_row(info.code_encoding, code, info.element_bits, true);  // q8_0's int8
    } else {
        row = biased_row(storage.code_bias != 0 ? uint_name(info.element_bits) : info.code_encoding, code,
                         storage.code_bias, info.element_bits);
    }
    row.value = code_value;
    return row;
}

// The element's block quantized as the pass quantizes it (the config's importance where the type takes it:
// the weights of the block's columns and its row's sum of squares), read back field by field.
void ggml_cell(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t flat,
               float code_value, CellBits& out) {
    const FormatTraits& info = format_traits(config.format);
    const GgmlTypeInfo& type = *info.ggml;
    const std::int64_t n = type.block_size, start = flat / n * n;
    GgmlCellBits& g = out.ggml;
    g.type = &type;
    g.index = static_cast<int>(flat - start);
    g.byte_offset = flat / n * type.type_size;
    g.weighted = config.importance && type.takes_importance && !params.stored;
    std::uint8_t bytes[256];  // one block of any ggml type (at most 210 bytes)
    float deq[256];
    ggml_block_at(view, params, config, start, bytes);
    float value = 0;
    view.guarded([&] { value = *floats_at(view, flat, 1, &value); });
    ggml_block_fields(type, bytes, g.fields);
    ggml_dequantize(type, bytes, n, deq);
    g.value = value;
    g.dequantized = deq[g.index];
    g.code_value = code_value;

    out.code = ggml_code_row(info, g.fields.codes[g.index], code_value);
    const FloatSpec fp16 = scale_spec(ScaleEncoding::Fp16);
    out.scales.push_back(float_row(BitRowRole::BlockScale, "fp16", g.fields.d_bits, fp16));
    if (g.fields.has_dmin) out.scales.push_back(float_row(BitRowRole::Offset, "fp16", g.fields.dmin_bits, fp16));
    if (g.fields.sub_blocks > 0) {
        const GgmlStorage storage = ggml_storage(type.type);
        const int j = g.index / g.fields.sub_size;
        g.sub_block = j;
        const std::int32_t sc = g.fields.sub_scale[j];
        BitRow scale = storage.scale_signed ? int_row("int" + std::to_string(storage.scale_bits), sc, storage.scale_bits, true)
                                            : biased_row(uint_name(storage.scale_bits), sc, storage.scale_bias, storage.scale_bits);
        scale.role = BitRowRole::SubScale;
        scale.used = g.fields.sub_scale_used[j];
        scale.sub_block = j;
        out.scales.push_back(scale);
        if (storage.min_bits > 0) {
            BitRow min = int_row(uint_name(storage.min_bits), g.fields.sub_min[j], storage.min_bits, false);
            min.role = BitRowRole::SubMin;
            min.used = g.fields.sub_min_used[j];
            min.sub_block = j;
            out.scales.push_back(min);
        }
    }
}

// max |r| over the view: what NVFP4's g comes from when the caller does not know it.
float view_amax(const TensorView& view) {
    constexpr std::int64_t kChunk = 4096;
    std::vector<float> scratch(kChunk);
    float amax = 0;
    view.guarded([&] {
        for (std::int64_t begin = 0; begin < view.numel(); begin += kChunk) {
            const std::int64_t len = std::min(kChunk, view.numel() - begin);
            const float* r = floats_at(view, begin, len, scratch.data());
            for (std::int64_t k = 0; k < len; ++k) amax = std::max(amax, std::fabs(r[k]));
        }
    });
    return amax;
}

}  // namespace

const char* to_string(FloatClass c) {
    switch (c) {
        case FloatClass::Zero: return "zero";
        case FloatClass::Subnormal: return "subnormal";
        case FloatClass::Normal: return "normal";
        case FloatClass::Infinity: return "infinity";
        case FloatClass::NaN: break;
    }
    return "NaN";
}

FloatClass classify_float_code(std::uint32_t code, const FloatSpec& spec) {
    const std::uint32_t m_mask = (std::uint32_t{1} << spec.mantissa_bits) - 1u;
    const std::uint32_t e_all = (std::uint32_t{1} << spec.exponent_bits) - 1u;
    const std::uint32_t e = (code >> spec.mantissa_bits) & e_all, m = code & m_mask;
    if (spec.specials == FloatSpecials::Ieee && e == e_all) return m == 0 ? FloatClass::Infinity : FloatClass::NaN;
    if (spec.specials == FloatSpecials::E4M3Fn && e == e_all && m == m_mask) return FloatClass::NaN;
    if (e == 0) return m == 0 ? FloatClass::Zero : FloatClass::Subnormal;
    return FloatClass::Normal;
}

FloatSpec float32_spec() { return FloatSpec{8, 23, 127, FloatSpecials::Ieee}; }

CellBits cell_bits(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t flat,
                   float tensor_amax) {
    const ElementTrace t = trace_element(view, params, config, flat);  // checks the index
    if (params.stored && params.stored->values())
        throw Error("B stores " + std::string(params.stored->type->name) +
                    " values, not codes: there is no code or scale to show bit by bit");
    CellBits out;
    out.flat_index = flat;
    out.block = t.block;
    out.code_bits = code_bits_of(config);
    const FormatTraits& row = format_traits(config.format);
    if (row.is_int()) {
        const std::string name = (config.dtype.is_signed ? "int" : "uint") + std::to_string(config.dtype.bits);
        out.code = int_row(name, t.code, config.dtype.bits, config.dtype.is_signed);
        out.scales.push_back(float_row(BitRowRole::BlockScale, "float32", float32_bits(t.scale), float32_spec()));
        if (config.mode != Mode::Symmetric)
            out.scales.push_back(float_row(BitRowRole::Offset, "float32",
                                           float32_bits(static_cast<float>(t.zero_point)), float32_spec()));
    } else if (row.ggml) {
        ggml_cell(view, params, config, flat, t.rounded, out);
        return out;  // no packed byte: --out-packed holds ggml's block structs, not codes in a row
    } else {
        out.code = format_code_row(config, t.code, t.rounded);
        if (row.own_blocks())
            block_scale_rows(view, config, flat, tensor_amax >= 0 ? tensor_amax : view_amax(view), out);
        else if (format_config(config).scaling != ElementScaling::Cast)
            out.scales.push_back(float_row(BitRowRole::BlockScale, "float32", float32_bits(t.scale), float32_spec()));
    }
    out.packed = packed_byte_of(view, params, config, flat);
    return out;
}

PackedByte packed_byte_of(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                          std::int64_t flat) {
    PackedByte out;
    const int bits = code_bits_of(config);
    // A ggml type's --out-packed is its block structs, where a code's bits lie by the type's own layout
    // (ggml-common.h), not end to end: no byte is shown for it.
    if (bits >= 8 || format_traits(config.format).ggml) return out;
    if (flat < 0 || flat >= view.numel()) throw Error("element index out of range");
    // Codes start on a byte boundary every `period` codes: pack that run (core packing, as --out-packed
    // does for the whole tensor) and pick the byte holding `flat`.
    const std::int64_t period = 8 / std::gcd(bits, 8);
    const std::int64_t first = flat / period * period;
    const std::int64_t count = std::min(period, view.numel() - first);
    std::vector<std::int32_t> codes(static_cast<std::size_t>(count));
    for (std::int64_t k = 0; k < count; ++k) codes[static_cast<std::size_t>(k)] = trace_element(view, params, config, first + k).code;
    const std::vector<std::uint8_t> run = pack_codes(codes.data(), count, bits);
    const std::int64_t byte_in_run = (flat - first) * bits / 8;
    out.offset = first * bits / 8 + byte_in_run;
    out.value = run[static_cast<std::size_t>(byte_in_run)];
    for (std::int64_t k = 0; k < count; ++k) {
        const std::int64_t low = k * bits - byte_in_run * 8;
        if (low + bits <= 0 || low >= 8) continue;  // no bit in this byte
        out.slots.push_back(PackedSlot{first + k, codes[static_cast<std::size_t>(k)], static_cast<int>(low), bits});
    }
    return out;
}

}  // namespace qs
