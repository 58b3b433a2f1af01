// What every block format shares (FORMATS.md "Block formats"): its own block of B values along the last
// axis, whose scale its recipe chooses, so it refuses the scale options; its stored scales' cost.
#include "format_rows.hpp"
#include "quantscope/config.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_config.hpp"

namespace qs::detail {

void check_block_format(const FormatTraits& row, const FormatConfig& config, const Shape& shape) {
    const std::string name = row.name;
    if (config.scaling != ElementScaling::Symmetric || config.granularity != Granularity::Tensor)
        throw Error(name + " has its own block scale: it takes no --mode, --scale or --granularity");
    const std::int64_t last = shape.empty() ? 0 : shape.back();
    if (last % row.block_size != 0)
        throw Error(name + ": its block of " + std::to_string(row.block_size) + " elements must divide the last axis (" +
                    std::to_string(last) + ")");
}

double block_scale_bits(const FormatTraits& row, const QuantConfig&, std::int64_t n, std::int64_t) {
    // The blocks are the format's own; a per-tensor g is one float32 more.
    return static_cast<double>(n / row.block_size) * row.scale_bits + (row.has_global_scale() ? 32.0 : 0.0);
}

ElementResult element_at_block_scale(const FormatTraits& row, const float* block, int index, const ChunkPlace& place,
                                     BlockScale& scale) {
    scale = row.kernels.block_scale(row, block, row.block_size, place.global_scale);
    return row.kernels.element(row, block[index], scale);
}

}  // namespace qs::detail
