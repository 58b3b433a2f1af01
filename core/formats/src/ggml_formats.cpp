// ggml's formats q8_0, q4_0 and q4_1 (FORMATS.md "ggml"): blocks of 32, an fp16 d (and Q4_1's fp16 m) per
// block, codes by the reference quantizers' recipes. The pass recomputes each block's float32 d from its
// values (the params keep only fp16(d)).
#include "format_rows.hpp"
#include "quantscope/ggml_types.hpp"

namespace qs::detail {
namespace {

// A chunk of whole blocks: each block's scale from its values, its codes and r' (AVX2 where built with it:
// `Kind` is ggml_block_avx2's 0, 1, 2 for q8_0, q4_0, q4_1).
template <int Kind, BlockScale (*Scale)(const float*, int), ElementResult (*Element)(float, const BlockScale&)>
std::int64_t ggml_chunk(const FormatTraits& row, const float* r, const float*, std::int64_t len, std::int32_t* codes,
                        float* deq, const ChunkPlace& place) {
    if (place.importance) return codec_chunk(row, r, nullptr, len, codes, deq, place);  // the weighted quantizer
    const int size = row.block_size;
    std::int64_t clipped = 0;
    for (std::int64_t b = 0; b < len; b += size) {
        const BlockScale scale = Scale(r + b, size);
        std::int64_t k = b;
#ifdef QS_HAVE_FORMAT_AVX2
        if (scale.scale != 0) {
            k = b + size - size % 8;
            clipped += ggml_block_avx2(Kind, r + b, k - b, scale.inv, scale.scale, scale.low, scale.offset, codes + b,
                                       deq + b);
        }
#endif
        for (; k < b + size; ++k) {
            const ElementResult e = Element(r[k], scale);
            codes[k] = e.code;
            deq[k] = e.deq;
            clipped += e.clipped ? 1 : 0;
        }
    }
    return clipped;
}

template <BlockScale (*Scale)(const float*, int)>
BlockScale ggml_block_scale(const FormatTraits&, const float* r, int n, float) {
    return Scale(r, n);
}

// Weighted by importance (q4_0, q4_1), the codec's importance-weighted quantizer; the recipe otherwise.
template <BlockScale (*Scale)(const float*, int)>
void ggml_block_scales(const FormatTraits& row, const float* r, std::int64_t blocks, float* scale,
                       std::uint16_t* stored, float* offset, const ChunkPlace& place) {
    if (place.importance) return codec_block_scales(row, r, blocks, scale, stored, offset, place);
    block_scales_of<ggml_block_scale<Scale>>(row, r, blocks, scale, stored, offset, place);
}

ElementResult ggml_element_in_block(const FormatTraits& row, const float* block, int index, const ChunkPlace& place,
                                    BlockScale& scale) {
    if (place.importance) return codec_element_in_block(row, block, index, place, scale);
    return element_at_block_scale(row, block, index, place, scale);
}

template <ElementResult (*Element)(float, const BlockScale&)>
ElementResult ggml_element(const FormatTraits&, float r, const BlockScale& b) {
    return Element(r, b);
}

std::vector<float> integer_grid(int lo, int hi) {
    std::vector<float> grid;
    for (int q = lo; q <= hi; ++q) grid.push_back(static_cast<float>(q));
    return grid;
}

std::vector<float> q8_0_grid(const FormatTraits&) { return integer_grid(-127, 127); }
std::vector<float> q4_0_grid(const FormatTraits&) { return integer_grid(-8, 7); }
std::vector<float> q4_1_grid(const FormatTraits&) { return integer_grid(0, 15); }

CodeSpace q8_0_codes(const FormatTraits&, const QuantConfig&) { return {8, -127, 127, true}; }

template <int Kind, BlockScale (*Scale)(const float*, int), ElementResult (*Element)(float, const BlockScale&)>
FormatTraits ggml_row(const char* name, int bits, int scale_bits) {
    FormatTraits row;
    row.name = name;
    row.kind = FormatKind::Block;
    row.element_bits = bits;
    row.block_size = 32;
    row.scale_bits = scale_bits;
    row.scale_from_values = true;
    row.ggml = ggml_type_named(name);
    row.scale_encoding = ScaleEncoding::Fp16;
    row.code_encoding = "uint4";
    row.scale_label = "d";
    row.code_space = unsigned_code_space;
    row.check = check_block_format;
    row.stored_scale_bits = block_scale_bits;
    row.kernels.chunk = ggml_chunk<Kind, Scale, Element>;
    row.kernels.element = ggml_element<Element>;
    row.kernels.block_scale = ggml_block_scale<Scale>;
    row.kernels.block_scales = ggml_block_scales<Scale>;
    row.kernels.element_in_block = ggml_element_in_block;
    return row;
}

}  // namespace

FormatTraits q8_0_format_row() {
    FormatTraits row = ggml_row<0, q8_0_scale, q8_0_element>("q8_0", 8, 16);
    row.code_encoding = "int8";
    row.grid = q8_0_grid;
    row.code_space = q8_0_codes;
    return row;
}

FormatTraits q4_0_format_row() {
    FormatTraits row = ggml_row<1, q4_0_scale, q4_0_element>("q4_0", 4, 16);
    row.grid = q4_0_grid;
    return row;
}

FormatTraits q4_1_format_row() {
    FormatTraits row = ggml_row<2, q4_1_scale, q4_1_element>("q4_1", 4, 32);  // d and m
    row.has_offset = true;
    row.grid = q4_1_grid;
    return row;
}

}  // namespace qs::detail
