// The blocks' results of either overview pass (overview_blocks.hpp). A file of its own, so that neither pass's
// file grows (the fused pass's inlining is its own) and neither calls into the other's.
#include "overview_blocks.hpp"

namespace qs::detail {

void finish_blocks(const OverviewGrid& grid, const QuantParams& params, std::int32_t q_min, const std::vector<double>& code_sums,
                   std::vector<float>&& err_max, const std::vector<double>* deq_sums, float deq_lo, float deq_hi,
                   QuantOverview& out) {
    const auto used = [](std::int64_t c) { return c > 0; };
    const auto& counts = out.code_counts;
    const std::int32_t lo = q_min + static_cast<std::int32_t>(std::find_if(counts.begin(), counts.end(), used) - counts.begin());
    const std::int32_t hi = q_min + static_cast<std::int32_t>(counts.rend() - std::find_if(counts.rbegin(), counts.rend(), used)) - 1;
    finish_blocks_in_range(grid, params, lo, hi, code_sums, std::move(err_max), deq_sums, deq_lo, deq_hi, out);
}

void finish_blocks_in_range(const OverviewGrid& grid, const QuantParams& params, std::int32_t code_lo, std::int32_t code_hi,
                            const std::vector<double>& code_sums, std::vector<float>&& err_max,
                            const std::vector<double>* deq_sums, float deq_lo, float deq_hi, QuantOverview& out) {
    out.code_lo = code_lo;
    out.code_hi = code_hi;
    out.codes_mean = block_means(grid, code_sums);
    out.error_max = std::move(err_max);
    if (deq_sums != nullptr) {
        out.dequantized_lo = deq_lo;
        out.dequantized_hi = deq_hi;
        out.dequantized_mean = block_means(grid, *deq_sums);
        return;
    }
    // r' = s (q - z) in float32, as the quantizer computes it; a mean commutes with the affine map.
    const float s = static_cast<float>(params.scale_of(0));
    const float z = static_cast<float>(params.zero_point_of(0));
    out.dequantized_lo = s * (static_cast<float>(out.code_lo) - z);
    out.dequantized_hi = s * (static_cast<float>(out.code_hi) - z);
    out.dequantized_mean.resize(out.codes_mean.size());
    for (std::size_t i = 0; i < out.codes_mean.size(); ++i)
        out.dequantized_mean[i] = static_cast<float>(static_cast<double>(s) * (static_cast<double>(out.codes_mean[i]) - z));
}

}  // namespace qs::detail
