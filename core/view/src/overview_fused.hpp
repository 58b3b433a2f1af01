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

// The window's slider step on the heatmaps alone: out's grid, codes_mean, dequantized_mean, error_max and the
// ranges of codes and r' (each the bits the full pass gives; dequantized_mean with `ranges` within float32 rounding) and metrics.max_abs_error, with out.blocks_only
// set and no other metric nor code counts. AVX-512 only, where fused_int_overview applies and the layout has
// one (s, z) per run of at least kMinRun elements; else false. `max_abs_r` bounds |r| over the view (the
// margin of the reciprocal's boundary check). `ranges` (or null): the blocks' min/max under this layout
// (block_ranges_for); with them a bf16 row of its own (s, z) takes a leaner kernel where they verify it.
bool fused_int_blocks(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid,
                      float max_abs_r, const BlockRanges* ranges, QuantOverview& out);

// What both integer passes share. A unit of work: elements [first, end), whole bands of blocks, ending on a
// work item's end (items [item_begin, item_end) of quantize's plan).
struct OverviewUnit {
    std::int64_t first, end, item_begin, item_end;
};
struct Plan;  // quantize_plan.hpp
std::vector<OverviewUnit> cut_overview_units(const OverviewGrid& grid, const Plan& plan);
// Whether the fused passes take this quantization (else the general pass does).
bool fused_overview_applies(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& grid);
// use_avx2_overview(true) in force: the AVX-512 kernels are not used.
bool avx2_overview_only();

// The values' overview (overview_values) in one AVX2 pass over a bf16, f16 or f32 view: false where it does
// not apply (float64, more than 2^20 columns, a build without AVX2).
bool fused_values_overview(const TensorView& view, const OverviewGrid& grid, ValueOverview& out);

}  // namespace qs::detail
