#include "quantscope/downsample.hpp"

#include <algorithm>
#include <limits>
#include <vector>

namespace qs {
namespace {

// One output row at a time: the fy source rows of a block row are walked contiguously (cache friendly, the
// inner loop over a row vectorises), accumulating per output column.
template <typename T>
void downsample_impl(const T* src, std::int64_t stride, const CellWindow& w, std::int64_t fy, std::int64_t fx,
                     Reduction reduction, float* out) {
    const std::int64_t out_rows = reduced_extent(w.rows, fy);
    const std::int64_t out_cols = reduced_extent(w.cols, fx);
    if (fy == 1 && fx == 1) {
        for (std::int64_t r = 0; r < w.rows; ++r) {
            const T* row = src + (w.row0 + r) * stride + w.col0;
            float* dst = out + r * out_cols;
            for (std::int64_t c = 0; c < w.cols; ++c) dst[c] = static_cast<float>(row[c]);
        }
        return;
    }
// Output rows are independent, so splitting them over threads keeps the result bit-identical.
#pragma omp parallel
    {
        std::vector<double> acc(static_cast<std::size_t>(out_cols));
        std::vector<float> mx(static_cast<std::size_t>(out_cols));
#pragma omp for schedule(static)
        for (std::int64_t orow = 0; orow < out_rows; ++orow) {
            const std::int64_t r_begin = orow * fy;
            const std::int64_t r_end = std::min(w.rows, r_begin + fy);
            if (reduction == Reduction::Mean) {
                std::fill(acc.begin(), acc.end(), 0.0);
                for (std::int64_t r = r_begin; r < r_end; ++r) {
                    const T* row = src + (w.row0 + r) * stride + w.col0;
                    for (std::int64_t oc = 0; oc < out_cols; ++oc) {
                        const std::int64_t c_begin = oc * fx;
                        const std::int64_t c_end = std::min(w.cols, c_begin + fx);
                        // Per block row in double, always in the same order, so the mean is reproducible.
                        double s = 0.0;
                        for (std::int64_t c = c_begin; c < c_end; ++c) s += static_cast<double>(row[c]);
                        acc[oc] += s;
                    }
                }
                for (std::int64_t oc = 0; oc < out_cols; ++oc) {
                    const std::int64_t n_cols = std::min(w.cols, (oc + 1) * fx) - oc * fx;
                    out[orow * out_cols + oc] = static_cast<float>(acc[oc] / static_cast<double>(n_cols * (r_end - r_begin)));
                }
            } else {
                std::fill(mx.begin(), mx.end(), -std::numeric_limits<float>::infinity());
                for (std::int64_t r = r_begin; r < r_end; ++r) {
                    const T* row = src + (w.row0 + r) * stride + w.col0;
                    for (std::int64_t oc = 0; oc < out_cols; ++oc) {
                        const std::int64_t c_begin = oc * fx;
                        const std::int64_t c_end = std::min(w.cols, c_begin + fx);
                        float m = mx[oc];
                        for (std::int64_t c = c_begin; c < c_end; ++c) m = std::max(m, static_cast<float>(row[c]));
                        mx[oc] = m;
                    }
                }
                std::copy(mx.begin(), mx.end(), out + orow * out_cols);
            }
        }
    }
}

}  // namespace

void downsample(const float* src, std::int64_t stride, const CellWindow& window, std::int64_t fy, std::int64_t fx,
                Reduction reduction, float* out) {
    downsample_impl(src, stride, window, fy, fx, reduction, out);
}

void downsample(const std::int32_t* src, std::int64_t stride, const CellWindow& window, std::int64_t fy,
                std::int64_t fx, Reduction reduction, float* out) {
    downsample_impl(src, stride, window, fy, fx, reduction, out);
}

}  // namespace qs
