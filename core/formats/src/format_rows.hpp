// Internal: the pieces the format files share (the element formats' scale and checks, the block formats'),
// and the builders the table lists (format_table_rows.cpp), one per format or family of formats.
#pragma once

#include "format_kernels.hpp"
#include "quantscope/format_traits.hpp"

namespace qs::detail {

// The codes of a format: element_bits wide, 0 .. 2^bits - 1 (bit patterns, indices, offset codes).
CodeSpace unsigned_code_space(const FormatTraits& row, const QuantConfig& config);

// Element formats (float, nf4): a float32 s per block of the int<N> layout, none when cast; the checks of
// --mode, --scale and the layout.
void check_element_format(const FormatTraits& row, const FormatConfig& config, const Shape& shape);
double element_scale_bits(const FormatTraits& row, const QuantConfig& config, std::int64_t n, std::int64_t blocks);

// Block formats: their own block of block_size along the last axis, scale_bits per block (+ 32 for a
// per-tensor g); no --mode, --scale or --granularity.
void check_block_format(const FormatTraits& row, const FormatConfig& config, const Shape& shape);
double block_scale_bits(const FormatTraits& row, const QuantConfig& config, std::int64_t n, std::int64_t blocks);

// The generic float pass over a chunk (element formats, MX and NVFP4 elements at their block's scale).
std::int64_t float_chunk(const FormatTraits& row, const float* r, const float* scale, std::int64_t n,
                         std::int32_t* codes, float* deq, const ChunkPlace& place);
// The row's float element as its grid (float_grid of row.element).
std::vector<float> element_grid(const FormatTraits& row);

// A block row's block_scales: its per-block recipe `Scale` in one loop over `blocks` blocks (inlined).
template <BlockScale (*Scale)(const FormatTraits&, const float*, int, float)>
void block_scales_of(const FormatTraits& row, const float* r, std::int64_t blocks, float* scale,
                     std::uint16_t* stored, float* offset, const ChunkPlace& place) {
    const int size = row.block_size;
    for (std::int64_t b = 0; b < blocks; ++b) {
        const BlockScale s = Scale(row, r + b * size, size, place.global_scale);
        scale[b] = s.scale;
        stored[b] = s.stored;
        if (offset) offset[b] = s.offset;
    }
}

// A block row's element_in_block where its element is a function of its block's scale alone: the block's
// scale by its recipe (at place's g), then the element (the table gives it to every block row without one).
ElementResult element_at_block_scale(const FormatTraits& row, const float* block, int index, const ChunkPlace& place,
                                     BlockScale& scale);

// ggml's codec rows' kernels (ggml_codec_formats.cpp): whole blocks through the row's ggml codec, with the
// importance `place` carries; q4_0 and q4_1 take this path when weighted by importance.
std::int64_t codec_chunk(const FormatTraits& row, const float* r, const float* scale, std::int64_t n,
                         std::int32_t* codes, float* deq, const ChunkPlace& place);
void codec_block_scales(const FormatTraits& row, const float* r, std::int64_t blocks, float* scale,
                        std::uint16_t* stored, float* offset, const ChunkPlace& place);
ElementResult codec_element_in_block(const FormatTraits& row, const float* block, int index, const ChunkPlace& place,
                                     BlockScale& scale);

// The built-in rows, one builder per format file.
FormatTraits int_format_row();
FormatTraits nf4_format_row();
FormatTraits mx_format_row(const char* name, const char* element_name, const FloatSpec& element);
FormatTraits nvfp4_format_row();
FormatTraits q8_0_format_row();
FormatTraits q4_0_format_row();
FormatTraits q4_1_format_row();
std::vector<FormatTraits> ggml_codec_format_rows();  // q5_0 ... tq2_0, in FORMATS.md's order

}  // namespace qs::detail
