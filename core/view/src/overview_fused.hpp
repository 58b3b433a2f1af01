// Internal to the window's overview (overview_passes.cpp): the integer quantization's overview as one fused pass.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "overview_blocks.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"

namespace qs::detail {

// A pass's position in the grid as it streams elements in flat order: the slice, row and column of the next
// element, and the first block of the band of blocks being filled. Both fused passes' folders keep one.
struct GridCursor {
    std::int64_t slice = 0, row = 0, col = 0, base = 0;
    // At flat index `flat`, the first element of a band.
    void start(const OverviewGrid& g, std::int64_t flat) {
        const std::int64_t slice_size = g.rows * g.cols;
        slice = flat / slice_size;
        row = flat % slice_size / g.cols;
        col = flat % g.cols;
        base = band_base(g);
    }
    std::int64_t band_base(const OverviewGrid& g) const { return slice * g.cells_per_slice() + (row / g.fy) * g.out_cols(); }
    // Past the end of a row; true when the next row starts a new band (the caller flushes, then moves `base`).
    bool next_row(const OverviewGrid& g) {
        col = 0;
        if (++row == g.rows) row = 0, ++slice;
        return row % g.fy == 0;
    }
};

// The overview of an integer quantization in one read of the view: each element is loaded in its stored type
// (bf16, f16, f32 converted in registers), quantized with quantize's AVX2 arithmetic and folded at once into
// the metrics, the code counts and the per-column sums of the band of blocks being filled; no result is
// written to memory. The work items and their sums are quantize_view's, added in its order, so the metrics
// equal quantize_view's to the bit. Returns false, leaving `out` alone, where it does not apply (a number
// format, wrap-around or the naive recipe, channels of the last axis or groups under 64 elements, pairs
// computed on demand, a build without AVX2, the portable kernel forced, more than 2^20 columns): the caller
// then runs the general pass.
// `bit_counts` (ValueOverview's, or null): with one (s, z) for the tensor, the code counts, the clipped count
// and the largest error come from the 2^16 patterns' counts instead of from every element.
bool fused_int_overview(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                        const OverviewGrid& grid, const std::vector<std::int64_t>* bit_counts, QuantOverview& out);

// The values' overview (overview_values) in one AVX2 pass over a bf16, f16 or f32 view: false where it does
// not apply (float64, more than 2^20 columns, a build without AVX2).
bool fused_values_overview(const TensorView& view, const OverviewGrid& grid, ValueOverview& out);

}  // namespace qs::detail
