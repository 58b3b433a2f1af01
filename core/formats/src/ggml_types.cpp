// The ggml type table (ids, names, block geometry as ggml.c's type_traits give them) and the dispatch to
// each family's codec.
#include <array>
#include <cctype>
#include <cstddef>
#include <cstring>

#include <vector>

#include "ggml_codecs.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"

namespace qs {
namespace {

// decodes / quantizes / takes_importance as FORMATS.md lists them; the IQ1..IQ3 types need ggml's lattice
// tables and are listed only.
constexpr std::array<GgmlTypeInfo, 32> kTypes = {{
    {GgmlType::F32, "f32", 1, 4, true, false, false},
    {GgmlType::F16, "f16", 1, 2, true, false, false},
    {GgmlType::Q4_0, "q4_0", 32, 18, true, true, true},
    {GgmlType::Q4_1, "q4_1", 32, 20, true, true, true},
    {GgmlType::Q5_0, "q5_0", 32, 22, true, true, true},
    {GgmlType::Q5_1, "q5_1", 32, 24, true, true, true},
    {GgmlType::Q8_0, "q8_0", 32, 34, true, true, false},
    {GgmlType::Q8_1, "q8_1", 32, 36, false, false, false},
    {GgmlType::Q2_K, "q2_K", 256, 84, true, true, true},
    {GgmlType::Q3_K, "q3_K", 256, 110, true, true, true},
    {GgmlType::Q4_K, "q4_K", 256, 144, true, true, true},
    {GgmlType::Q5_K, "q5_K", 256, 176, true, true, true},
    {GgmlType::Q6_K, "q6_K", 256, 210, true, true, true},
    {GgmlType::Q8_K, "q8_K", 256, 292, false, false, false},
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66, false, false, false},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74, false, false, false},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98, false, false, false},
    {GgmlType::IQ1_S, "iq1_s", 256, 50, false, false, false},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18, true, true, true},
    {GgmlType::IQ3_S, "iq3_s", 256, 110, false, false, false},
    {GgmlType::IQ2_S, "iq2_s", 256, 82, false, false, false},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136, true, true, true},
    {GgmlType::I8, "i8", 1, 1, false, false, false},
    {GgmlType::I16, "i16", 1, 2, false, false, false},
    {GgmlType::I32, "i32", 1, 4, false, false, false},
    {GgmlType::I64, "i64", 1, 8, false, false, false},
    {GgmlType::F64, "f64", 1, 8, true, false, false},
    {GgmlType::IQ1_M, "iq1_m", 256, 56, false, false, false},
    {GgmlType::BF16, "bf16", 1, 2, true, false, false},
    {GgmlType::TQ1_0, "tq1_0", 256, 54, true, true, false},
    {GgmlType::TQ2_0, "tq2_0", 256, 66, true, true, false},
    {GgmlType::MXFP4, "mxfp4", 32, 17, true, false, false},
}};

bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

detail::GgmlCodec codec_of(GgmlType type) {
    switch (type) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::F64:
            return detail::ggml_plain_codec(type);
        case GgmlType::Q4_0: case GgmlType::Q4_1: case GgmlType::Q5_0: case GgmlType::Q5_1: case GgmlType::Q8_0:
            return detail::ggml_legacy_codec(type);
        case GgmlType::Q2_K: case GgmlType::Q3_K: case GgmlType::Q4_K: case GgmlType::Q5_K: case GgmlType::Q6_K:
            return detail::ggml_k_codec(type);
        case GgmlType::IQ4_NL: case GgmlType::IQ4_XS: return detail::ggml_iq_codec(type);
        case GgmlType::TQ1_0: case GgmlType::TQ2_0: case GgmlType::MXFP4: return detail::ggml_ternary_mxfp4_codec(type);
        default: return {};
    }
}

[[noreturn]] void cannot(const GgmlTypeInfo& type, const char* what) {
    throw Error(std::string("ggml type ") + type.name + ": cannot " + what);
}

}  // namespace

const GgmlTypeInfo* ggml_type_info(std::uint32_t id) {
    for (const GgmlTypeInfo& t : kTypes)
        if (static_cast<std::uint32_t>(t.type) == id) return &t;
    return nullptr;
}

const GgmlTypeInfo* ggml_type_named(std::string_view name) {
    for (const GgmlTypeInfo& t : kTypes)
        if (same_name(name, t.name)) return &t;
    return nullptr;
}

std::int64_t ggml_row_bytes(const GgmlTypeInfo& type, std::int64_t n) {
    return n / type.block_size * type.type_size;
}

float ggml_row_sum_squares(const float* x, std::int64_t n) {
    float sum = 0;
    for (std::int64_t k = 0; k < n; ++k) sum += x[k] * x[k];
    return sum;
}

void ggml_quantize_blocks(const GgmlTypeInfo& type, const float* x, std::int64_t blocks,
                          const GgmlImportance* importance, void* out) {
    const detail::GgmlCodec codec = codec_of(type.type);
    if (!type.quantizes || !codec.quantize) cannot(type, "quantize");
    codec.quantize(x, blocks, type.takes_importance ? importance : nullptr, out);
}

void ggml_dequantize(const GgmlTypeInfo& type, const void* in, std::int64_t n, float* y) {
    const detail::GgmlCodec codec = codec_of(type.type);
    if (!type.decodes || !codec.dequantize) cannot(type, "decode");
    codec.dequantize(in, n / type.block_size, y);
}

void ggml_block_fields(const GgmlTypeInfo& type, const void* block, GgmlBlockFields& out) {
    const detail::GgmlCodec codec = codec_of(type.type);
    if (!codec.fields) cannot(type, "show a block");
    // Every member before the codes back to its initial value; the codec writes all the block's codes. Not
    // the whole 1 KB of codes: a pass asks this of every block of 32 values.
    static const GgmlBlockFields blank{};
    std::memcpy(static_cast<void*>(&out), &blank, offsetof(GgmlBlockFields, codes));
    codec.fields(block, out);
}

int ggml_scale_group(const GgmlTypeInfo& type) {
    const detail::GgmlCodec codec = codec_of(type.type);
    if (codec.codes) return codec.scale_group;
    GgmlBlockFields fields;  // the sub-blocks' size, which every block of the type shares
    const std::vector<std::uint8_t> zeros(static_cast<std::size_t>(type.type_size), 0);
    ggml_block_fields(type, zeros.data(), fields);
    return fields.sub_blocks > 0 ? fields.sub_size : type.block_size;
}

void ggml_block_codes(const GgmlTypeInfo& type, const void* in, std::int64_t blocks, std::int32_t* codes,
                      float* group_scale) {
    const detail::GgmlCodec codec = codec_of(type.type);
    if (codec.codes) return codec.codes(in, blocks, codes, group_scale);
    const auto* bytes = static_cast<const std::uint8_t*>(in);
    GgmlBlockFields fields;
    for (std::int64_t b = 0; b < blocks; ++b, codes += type.block_size) {
        ggml_block_fields(type, bytes + b * type.type_size, fields);
        std::memcpy(codes, fields.codes, sizeof(std::int32_t) * static_cast<std::size_t>(type.block_size));
        if (fields.sub_blocks == 0) *group_scale++ = fields.d;
        for (int j = 0; j < fields.sub_blocks; ++j) *group_scale++ = fields.sub_scale_used[j];
    }
}

void ggml_block_scales(const GgmlTypeInfo& type, const void* in, std::int64_t blocks, float* d, std::uint16_t* d_bits,
                       float* dmin) {
    const detail::GgmlCodec codec = codec_of(type.type);
    const auto* bytes = static_cast<const std::uint8_t*>(in);
    if (codec.d_at < 0) {
        GgmlBlockFields fields;
        for (std::int64_t b = 0; b < blocks; ++b) {
            ggml_block_fields(type, bytes + b * type.type_size, fields);
            d[b] = fields.d, d_bits[b] = fields.d_bits, dmin[b] = fields.dmin;
        }
        return;
    }
    for (std::int64_t b = 0; b < blocks; ++b, bytes += type.type_size) {
        d_bits[b] = load_le16(bytes + codec.d_at);
        d[b] = half_to_float(d_bits[b]);
        dmin[b] = codec.dmin_at >= 0 ? half_to_float(load_le16(bytes + codec.dmin_at)) : 0.0f;
    }
}

}  // namespace qs
