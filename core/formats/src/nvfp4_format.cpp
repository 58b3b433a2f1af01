// NVFP4 (FORMATS.md "nvfp4"): E2M1 elements, an E4M3 scale sb per block of 16 and a float32 g per tensor.
#include "format_rows.hpp"

namespace qs::detail {
namespace {

constexpr FloatSpec kE2M1{2, 1, 1, FloatSpecials::None};

BlockScale nvfp4_block_scale(const FormatTraits&, const float* r, int n, float g) { return nvfp4_scale(r, n, g); }

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
    row.kernels.scale_of_amax = nvfp4_scale_of_amax;
    return row;
}

}  // namespace qs::detail
