#include "quantscope/downsample.hpp"

#include <algorithm>
#include <vector>

namespace qs {
namespace {

// Accumulator per element type: float sums of a float block column are exact enough over the few rows of a
// block and vectorise; integer codes add up exactly in 64 bits.
template <typename T>
struct Acc {
    using type = float;
};
template <>
struct Acc<std::int32_t> {
    using type = std::int64_t;
};

// One output row at a time, in two steps: first the fy source rows are combined column by column (contiguous,
// vectorised, the memory-bound part), then each run of fx columns is combined into one output value.
template <typename T>
void downsample_impl(const T* src, std::int64_t stride, const CellWindow& w, std::int64_t fy, std::int64_t fx,
                     Reduction reduction, float* out) {
    using A = typename Acc<T>::type;
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
        std::vector<A> acc(static_cast<std::size_t>(w.cols));
#pragma omp for schedule(static)
        for (std::int64_t orow = 0; orow < out_rows; ++orow) {
            const std::int64_t r_begin = orow * fy;
            const std::int64_t r_end = std::min(w.rows, r_begin + fy);
            A* a = acc.data();
            const T* first = src + (w.row0 + r_begin) * stride + w.col0;
            for (std::int64_t c = 0; c < w.cols; ++c) a[c] = static_cast<A>(first[c]);
            for (std::int64_t r = r_begin + 1; r < r_end; ++r) {
                const T* row = src + (w.row0 + r) * stride + w.col0;
                if (reduction == Reduction::Mean) {
                    for (std::int64_t c = 0; c < w.cols; ++c) a[c] += static_cast<A>(row[c]);
                } else {
                    for (std::int64_t c = 0; c < w.cols; ++c) a[c] = a[c] < static_cast<A>(row[c]) ? static_cast<A>(row[c]) : a[c];
                }
            }
            float* dst = out + orow * out_cols;
            for (std::int64_t oc = 0; oc < out_cols; ++oc) {
                const std::int64_t c_begin = oc * fx;
                const std::int64_t c_end = std::min(w.cols, c_begin + fx);
                if (reduction == Reduction::Mean) {
                    double s = 0.0;
                    for (std::int64_t c = c_begin; c < c_end; ++c) s += static_cast<double>(a[c]);
                    dst[oc] = static_cast<float>(s / static_cast<double>((c_end - c_begin) * (r_end - r_begin)));
                } else {
                    A m = a[c_begin];
                    for (std::int64_t c = c_begin + 1; c < c_end; ++c) m = m < a[c] ? a[c] : m;
                    dst[oc] = static_cast<float>(m);
                }
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
