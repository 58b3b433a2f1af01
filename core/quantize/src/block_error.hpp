// Internal to the MSE calibrator: the exact squared error of quantizing a block with one (s, z), and the
// moment histogram that estimates it for large blocks. Measurement only; mse_search.cpp searches with it.
#pragma once

#include <cstdint>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs::detail {

struct PatternTable;  // bit_patterns.hpp

// Elements per cache-sized chunk of a measurement.
constexpr std::int64_t kSseChunk = 4096;

// Sum of squared errors of one cache-sized chunk (clamped codes, config's rounding), in double.
double chunk_sse(const float* r_ptr, std::int64_t n, float s, float z, float q_min, float q_max, Rounding rounding);

// The exact sum of squared errors on the calling thread (blocks are calibrated in parallel).
double serial_sse(const float* values, std::int64_t n, double scale, std::int32_t zero_point, const QuantConfig& config);

// A block's values in equal bins over [min, max], with each bin's count, sum and sum of squares: the squared
// error of mapping a whole bin to one code's value c is then sum_sq - 2 c sum + count c^2, exactly.
class MomentHistogram {
public:
    MomentHistogram(const float* values, std::int64_t n, double lo, double hi, bool parallel);
    // The same of a whole view in its stored type, read in pieces under its guard on every core: the same
    // slices summed in the same order, so the same bits as the float32 version of its decoded values.
    MomentHistogram(const TensorView& view, double lo, double hi);
    // The same of a bf16/f16 tensor from its bit patterns: each pattern's value into its bin with its count as
    // weight, in pattern order (the bins' sums equal the element order's up to the order of addition).
    MomentHistogram(const PatternTable& table, double lo, double hi);

    // The squared error of quantizing the block with (s, z), estimated: a bin inside one code's interval is
    // exact; a bin wider than a step, inside the representable range, counts the uniform rounding error s^2/12.
    double sse(double scale, std::int32_t zero_point, const QuantConfig& config) const;

    // The same histogram with every `factor` neighbouring bins as one: a cheaper, rougher estimate.
    MomentHistogram merged(std::size_t factor) const;
    std::size_t size() const { return bins_.size(); }

private:
    MomentHistogram() = default;
    // Bins and width for n values over [lo, hi]; then each slice's sums, merged in slice order.
    std::size_t start(std::int64_t n, double lo, double hi);
    void finish(const std::vector<double>& slices, std::size_t bins, double lo);
    struct Bin {
        double lo = 0, count = 0, sum = 0, sum_sq = 0;
    };
    double width_ = 1.0;
    std::vector<Bin> bins_;  // the non-empty ones
};

}  // namespace qs::detail
