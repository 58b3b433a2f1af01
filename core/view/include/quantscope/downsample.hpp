// Block reduction of a 2-D row-major slice to display resolution, for heatmaps of tensors larger than the
// screen. Mean keeps the look of smooth data; Max keeps a single outlier visible (an error heatmap reduced by
// mean would average one bad element away, which is exactly what a student must see).
#pragma once

#include <cstdint>

namespace qs {

enum class Reduction { Mean, Max };

// A rectangle of cells of a row-major slice, in whole cells.
struct CellWindow {
    std::int64_t row0 = 0, col0 = 0;  // first cell
    std::int64_t rows = 0, cols = 0;  // extent, >= 1
};

// Output size of reducing `window` by blocks of fy x fx cells (fy, fx >= 1): ceil(rows / fy) x ceil(cols / fx).
// The last block of a row or column may be partial; it is reduced over the cells it has.
inline std::int64_t reduced_extent(std::int64_t cells, std::int64_t factor) { return (cells + factor - 1) / factor; }

// Reduces the cells of `window` in `src` (row-major, `stride` elements per row) into `out`, which must hold
// reduced_extent(window.rows, fy) * reduced_extent(window.cols, fx) floats, row-major. The window must lie
// inside the slice. Deterministic: the same input gives the same bits (fixed summation order, in double).
void downsample(const float* src, std::int64_t stride, const CellWindow& window, std::int64_t fy, std::int64_t fx,
                Reduction reduction, float* out);
// The same for integer codes (the quantized tensor); the mean of codes is a real number.
void downsample(const std::int32_t* src, std::int64_t stride, const CellWindow& window, std::int64_t fy,
                std::int64_t fx, Reduction reduction, float* out);

}  // namespace qs
