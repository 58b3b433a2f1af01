// What a window shows of a tensor too large for full-size result buffers (issue 10): one pass over a view
// (in its stored type) gives the metrics and every slice's block-reduced images at about screen resolution
// (the heatmaps' textures: mean of values and codes, max of errors), and full-resolution results are
// computed only for a window of cells when it is looked at closely. Nothing here is O(numel) in memory.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/downsample.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The block grid of a tensor's overview: every slice's rows x cols cut into blocks of fy x fx cells from cell
// (0, 0) (the last block of a row or column partial), as a heatmap's reduction does.
struct OverviewGrid {
    std::int64_t slices = 1, rows = 1, cols = 1;  // the 2-D slices a heatmap shows (rank 3: shape[0] of them)
    std::int64_t fy = 1, fx = 1;
    std::int64_t out_rows() const { return reduced_extent(rows, fy); }
    std::int64_t out_cols() const { return reduced_extent(cols, fx); }
    std::int64_t cells_per_slice() const { return out_rows() * out_cols(); }
    std::int64_t cells() const { return slices * cells_per_slice(); }
    // Full resolution: the overview is the tensor itself.
    bool exact() const { return fy == 1 && fx == 1; }
};

// The grid of `shape` with at most `max_cells` blocks over all slices: 1 x 1 blocks when the tensor fits,
// else the smallest blocks of about the slice's aspect (a 128256 x 4096 slice in 1 M cells: 126 x 4).
OverviewGrid overview_grid(const Shape& shape, std::int64_t max_cells);

// The tensor's own figures, which no quantization setting changes: per block the mean of the values (slice
// after slice, row-major), the smallest and largest value and where they first occur. One pass, which also
// checks that every value is finite (qs::Error naming the first bad index, as compute_params does).
struct ValueOverview {
    OverviewGrid grid;
    std::vector<float> mean;
    float lo = 0, hi = 0;
    std::int64_t argmin = 0, argmax = 0;
    // max |r| over the tensor (what NVFP4's g and a symmetric s come from), so callers need not derive it.
    float amax() const { return std::max(std::fabs(lo), std::fabs(hi)); }
    // A bf16 or f16 view: how many elements hold each of the 2^16 bit patterns (else empty). No quantization
    // setting changes it, and with one (s, z) for the tensor it gives the code counts, the clipped count and
    // the largest error of any (s, z) without a pass (quantize_overview's `values`).
    std::vector<std::int64_t> bit_counts;
};
ValueOverview overview_values(const TensorView& view, const OverviewGrid& grid);

// A quantization as a window shows it, from one pass over the view (quantize_view streaming its results in
// batches): the metrics (the same bits as quantize_view's), per block the mean code, the mean r' and the
// largest |r - r'|, the range of r', and how many elements got each code.
struct QuantOverview {
    OverviewGrid grid;
    Metrics metrics;
    std::vector<float> codes_mean, dequantized_mean, error_max;
    double dequantized_lo = 0, dequantized_hi = 0;
    std::int32_t code_lo = 0, code_hi = 0;      // the smallest and largest code that occurs
    std::int64_t error_argmax = 0;              // the first element with the largest |r - r'|
    std::vector<std::int64_t> code_counts;      // index q - q_min; empty above kMaxCountedLevels
    // Made by quantize_overview_blocks: the blocks, the ranges and metrics.max_abs_error only (no other metric,
    // no code counts, error_argmax 0).
    bool blocks_only = false;
};
// `values`, if given, is overview_values of the same view: its bit_counts then spare the pass the counting.
QuantOverview quantize_overview(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                                const OverviewGrid& grid, const ValueOverview* values = nullptr);

// The heatmaps of quantize_overview alone, in a fraction of its time, for a slider being dragged: the grid,
// codes_mean, dequantized_mean, error_max, the codes' and r''s ranges and metrics.max_abs_error, each with the
// bits quantize_overview gives (but dequantized_mean with `ranges`, below), and blocks_only set; the other metrics, the code counts and error_argmax are
// left out (they need every element's error summed in quantize's order and every code counted, several
// times the read of the tensor). Returns false (out untouched) where no such pass applies: a number format,
// wrap-around, the naive recipe, (s, z) that change within runs of 64 elements, float64, a CPU without
// AVX-512, and one (s, z) on a view whose bit patterns `values` counted (the whole pass is quicker there). `values` is overview_values of the same view.
// `ranges`, if given, are the blocks' min/max under this layout (block_ranges_for, which `params` came from): on a
// bf16 view with one (s, z) per row they let most rows skip the per-element boundary check and clamp (same codes
// and errors; dequantized_mean within 2^-21 of the largest |r'| of quantize_overview's, to the bit only where a
// block is one row: the rows' r' are added in float32 first).
bool quantize_overview_blocks(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                              const OverviewGrid& grid, const ValueOverview& values, QuantOverview& out,
                              const BlockRanges* ranges = nullptr);

// Full-resolution results for a window of cells of one slice: row-major window.rows x window.cols arrays of
// the values, codes, r' and |r - r'|, each element exactly as quantize_view computes it.
struct WindowResults {
    std::int64_t slice = 0;
    CellWindow window;
    std::vector<float> original, dequantized, error;
    std::vector<std::int32_t> codes;
};
void quantize_window(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                     std::int64_t slice, const CellWindow& window, WindowResults& out);

// The bytes of `view` read once, as 64-bit words summed on as many threads as quantize_overview uses (the sum
// is returned so that the read is not optimised away): the yardstick a recompute is measured against ("about
// one read pass of the tensor"), a plain read with next to no arithmetic.
double read_pass(const TensorView& view);

// For tests: the window's fused overview runs its AVX2 kernels even where AVX-512 ones exist, so both are
// checked on a machine that has AVX-512. Process-wide; off by default.
void use_avx2_overview(bool on);

}  // namespace qs
