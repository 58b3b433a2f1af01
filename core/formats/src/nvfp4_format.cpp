// NVFP4 (FORMATS.md "nvfp4"): E2M1 elements, an E4M3 scale sb per block of 16 and a float32 g per tensor.
#include "format_rows.hpp"

namespace qs::detail {
namespace {

constexpr FloatSpec kE2M1{2, 1, 1, FloatSpecials::None};

BlockScale nvfp4_block_scale(const FormatTraits&, const float* r, int n, float g) { return nvfp4_scale(r, n, g); }

// Each block's max |r|: its sb needs the tensor's g, known once every block has been read.
void nvfp4_block_amax(const FormatTraits& row, const float* r, std::int64_t blocks, float* scale, std::uint16_t*,
                      float*, const ChunkPlace&) {
    for (std::int64_t b = 0; b < blocks; ++b) scale[b] = block_amax(r + b * row.block_size, row.block_size);
}

void nvfp4_scales_from_amax(float g, std::int64_t n, float* scale, std::uint16_t* stored) {
    for (std::int64_t b = 0; b < n; ++b) {
        const BlockScale s = nvfp4_scale_of_amax(scale[b], g);
        scale[b] = s.scale;
        stored[b] = s.stored;
    }
}

ElementResult nvfp4_element(const FormatTraits& row, float r, const BlockScale& b) {
    return block_float_element(r, b.scale, row.element);
}

}  // namespace

FormatTraits nvfp4_format_row() {
    FormatTraits row;
    row.name = "nvfp4";
    row.kind = FormatKind::Block;
    row.element = kE2M1;
    row.element_bits = 4;
    row.block_size = 16;
    row.scale_bits = 8;
    row.largest = kE2M1.largest();
    row.scale_encoding = ScaleEncoding::E4M3;
    row.code_encoding = "fp4-e2m1";
    row.scale_label = "block scale sb";
    row.grid = element_grid;
    row.code_space = unsigned_code_space;
    row.check = check_block_format;
    row.stored_scale_bits = block_scale_bits;
    row.kernels.chunk = float_chunk;
    row.kernels.element = nvfp4_element;
    row.kernels.block_scale = nvfp4_block_scale;
    row.kernels.global_scale = nvfp4_global_scale;
    row.kernels.block_scales = nvfp4_block_amax;
    row.kernels.scales_from_amax = nvfp4_scales_from_amax;
    return row;
}

}  // namespace qs::detail
