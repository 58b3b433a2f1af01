// The OCP MX formats (mxfp8-e4m3, mxfp8-e5m2, mxfp6-e3m2, mxfp6-e2m3, mxfp4): a float element per value and
// one E8M0 power of two X per block of 32 (FORMATS.md "MX").
#include "format_rows.hpp"

namespace qs::detail {
namespace {

BlockScale mx_block_scale(const FormatTraits& row, const float* r, int n, float) { return mx_scale(r, n, row.element); }

ElementResult mx_element(const FormatTraits& row, float r, const BlockScale& b) {
    return block_float_element(r, b.scale, row.element);
}

}  // namespace

FormatTraits mx_format_row(const char* name, const char* element_name, const FloatSpec& element) {
    FormatTraits row;
    row.name = name;
    row.kind = FormatKind::Block;
    row.element = element;
    row.element_bits = element.bits();
    row.block_size = 32;
    row.scale_bits = 8;
    row.largest = element.largest();
    row.scale_encoding = ScaleEncoding::E8M0;
    row.code_encoding = element_name;  // the Bits view names the code by its element (fp8-e4m3)
    row.scale_label = "block scale X";
    row.grid = element_grid;
    row.code_space = unsigned_code_space;
    row.check = check_block_format;
    row.stored_scale_bits = block_scale_bits;
    row.kernels.chunk = float_chunk;
    row.kernels.element = mx_element;
    row.kernels.block_scale = mx_block_scale;
    row.kernels.block_scales = block_scales_of<mx_block_scale>;
    return row;
}

}  // namespace qs::detail
