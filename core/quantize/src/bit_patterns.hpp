// Internal: a bf16 or f16 tensor quantized with one (s, z) for the whole tensor, from its 2^16 bit patterns'
// counts. Every per-element figure (code, r', |r - r'|, clipped or not) is then a function of the element's
// 16 bits, so a sum over 525 M elements is a sum over at most 65536 occurring patterns, each term times its
// count. All such sums are added here, in one order (ascending bit pattern), by one function each: the
// window's metrics (overview_fused.cpp), the landscape's map and curve, and the calibrators' measurements
// agree to the bit wherever they evaluate the same (s, z).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "quantize_plan.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/config.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/pass_control.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs::detail {

constexpr std::size_t kBitPatterns = std::size_t{1} << 16;

// Whether a view's values are 16-bit patterns (bf16, f16).
inline bool sixteen_bit(ElementType type) { return type == ElementType::BF16 || type == ElementType::F16; }

// How many elements of a bf16 or f16 view hold each bit pattern: one read pass on every core (what
// overview_values also counts, ValueOverview::bit_counts). A value that is not finite throws as every pass
// does. Cancelled (control): an empty result.
std::vector<std::int64_t> count_bit_patterns(const TensorView& view, const PassControl& control = {});

// The patterns that occur, decoded, in ascending order of their bits (the order of every sum below).
struct PatternTable {
    std::vector<float> values;
    std::vector<double> counts;  // exact: each count < 2^53
    std::int64_t n = 0;          // the tensor's element count (the counts' sum)
    float lo = 0, hi = 0;        // the smallest and largest value
    bool empty() const { return values.empty(); }
};
// `bit_counts` must have 2^16 entries (else an empty table).
PatternTable pattern_table(ElementType type, const std::vector<std::int64_t>& bit_counts);

// Sum of count x |r - r'|^2 over the patterns with (s, z) clamped under config.rounding: the quantizer's
// per-element formula (quantize_value, in float32, each term squared in double), added in pattern order.
// `scratch` is reused between calls (one per thread).
double pattern_sse(const PatternTable& table, float s, float z, const QuantConfig& config, std::vector<float>& scratch);

// The MSE (pattern_sse / n) at every (scales[si], zero_points[zi]) into mse[zi * ns + si], rows of scales on
// every core. false when `cancel` became true; `progress` (if given) gets the fraction of rows done.
bool pattern_mse_grid(const PatternTable& table, const QuantConfig& config, const std::vector<double>& scales,
                      const std::vector<std::int32_t>& zero_points, std::vector<double>& mse,
                      const std::atomic<bool>* cancel, const std::function<void(float)>& progress);

// What quantize's metrics need with one (s, z) for the tensor (config: int format, any overflow): the four
// sums (same terms as quantize's, in pattern order: their sum_sq_err is pattern_sse's bits), the clipped count,
// the largest error and |r|, and each pattern's count added to its code's (counts[q - q_min]).
struct PatternSummary {
    Sums sums;
    std::int64_t clipped = 0;
    float max_err = 0, max_abs_r = 0;
};
PatternSummary count_by_patterns(ElementType type, const std::vector<std::int64_t>& bit_counts, const QuantParams& params,
                                 const QuantConfig& config, std::vector<std::int64_t>& counts);

// mse_params of the whole tensor `view` whose patterns `table` holds: up to 16384 values on the values
// themselves (mse_params of the view), above on the patterns (the view's search, its histogram and exact
// measurements from the patterns: the same (s, z) as the element path up to ties within ~1e-13 relative).
void pattern_mse_params(const TensorView& view, const PatternTable& table, const QuantConfig& config, double& scale,
                        std::int32_t& zero_point);

// The percentile calibrator's range (calibrate.hpp percentile_range) from the patterns, exactly: the same
// order statistics, found among the patterns sorted by value with their counts.
ValueRange pattern_percentile_range(const PatternTable& table, const QuantConfig& config);

// Whether a view and config quantize with one (s, z) whose metrics come from the patterns: bf16/f16, the
// integer format of at most 16 bits per tensor, clamped, not the naive recipe (the window's fused pass
// takes its metrics from count_by_patterns in exactly these cases too).
bool metrics_by_patterns(const TensorView& view, const QuantConfig& config);

// The (s, z) of a whole bf16/f16 tensor (`table` its patterns) under config's mode and calibrator: manual,
// min/max from the patterns' range (compute_params' numbers), percentile and mse as above.
void pattern_params(const TensorView& view, const PatternTable& table, const QuantConfig& config, double& scale,
                    std::int32_t& zero_point);

// quantize_checked's params, range and metrics where metrics_by_patterns holds: the patterns' counts
// (`bit_counts` if given, else one counting pass, which also checks that every value is finite), then the
// patterns alone: pattern_params, and the metrics as metrics_from_sums of count_by_patterns (the window's to
// the bit). Cancelled (control): an incomplete result.
Quantization quantize_by_patterns(const TensorView& view, const QuantConfig& config,
                                  const std::vector<std::int64_t>* bit_counts = nullptr, const PassControl& control = {});

}  // namespace qs::detail
