// The Bits view's reading of one element (see cell_bits.hpp): its code's fields, its block's stored scales,
// and the packed byte that holds it.
#include "quantscope/cell_bits.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "format_kernels.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/ggml_rows.hpp"
#include "quantscope/packing.hpp"
#include "quantscope/quantize.hpp"

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

// The bits of a ggml type's stored sub-block scale and min, and whether they read as signed (FORMATS.md's
// sub_scales: q3_K and iq4_xs store 6 bits minus 32, q6_K an int8).
int sub_scale_bits(GgmlType type, bool& is_signed) {
    is_signed = type == GgmlType::Q3_K || type == GgmlType::IQ4_XS || type == GgmlType::Q6_K;
    if (type == GgmlType::Q2_K) return 4;
    return type == GgmlType::Q6_K ? 8 : 6;
}

// A ggml row's block as the pass quantizes it (the config's importance with its row's sum of squares where
// the type takes it): d, dmin and the element's sub-block scale and min, read from the block's fields.
void ggml_block_rows(const TensorView& view, const QuantConfig& config, std::int64_t flat, CellBits& out) {
    const FormatTraits& info = format_traits(config.format);
    const GgmlTypeInfo& type = *info.ggml;
    const int n = type.block_size;
    const std::int64_t start = flat / n * n;
    std::vector<float> block(static_cast<std::size_t>(n)), row_values;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(type.type_size));
    ChunkPlace place;
    float row_sum = 0;
    view.guarded([&] {
        const float* r = floats_at(view, start, n, block.data());
        if (r != block.data()) std::copy_n(r, n, block.data());
        if (config.importance && type.takes_importance) {
            const std::int64_t columns = view.shape.back(), first = start / columns * columns;
            row_values.resize(static_cast<std::size_t>(columns));
            row_sum = ggml_row_sum_squares(floats_at(view, first, columns, row_values.data()), columns);
            place.first = start - first;
            place.row_length = columns;
            place.importance = config.importance->data();
            place.row_sum_squares = &row_sum;
        }
    });
    ggml_quantize_at(type, block.data(), n, place, bytes.data());
    GgmlBlockFields f;
    ggml_block_fields(type, bytes.data(), f);
    const FloatSpec fp16 = scale_spec(ScaleEncoding::Fp16);
    out.scales.push_back(float_row(BitRowRole::BlockScale, "fp16", f.d_bits, fp16));
    if (f.has_dmin) out.scales.push_back(float_row(BitRowRole::Offset, "fp16", f.dmin_bits, fp16));
    if (f.sub_blocks == 0) return;
    const int sub = static_cast<int>((flat - start) / f.sub_size);
    bool is_signed = false;
    const int bits = sub_scale_bits(type.type, is_signed);
    const std::string encoding = (is_signed ? "int" : "uint") + std::to_string(bits);
    BitRow scale = int_row(encoding, f.sub_scale[sub], bits, is_signed);
    scale.role = BitRowRole::SubScale;
    scale.used = f.sub_scale_used[sub];
    scale.sub_block = sub;
    out.scales.push_back(scale);
    if (!info.has_offset) return;  // q2_K, q4_K, q5_K store a min per sub-block
    BitRow min = int_row(encoding, f.sub_min[sub], bits, false);
    min.role = BitRowRole::SubMin;
    min.used = f.sub_min_used[sub];
    min.sub_block = sub;
    out.scales.push_back(min);
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
    } else {
        out.code = format_code_row(config, t.code, t.rounded);
        if (row.ggml)
            ggml_block_rows(view, config, flat, out);  // a ggml row: its block's fields as the codec stores them
        else if (row.own_blocks())
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
