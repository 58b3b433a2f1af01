// Internal to the window's overview: what both of its passes (overview_passes.cpp, overview_fused.cpp) make of
// their blocks' folded sums.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"

namespace qs::detail {

// Sums per block into means (blocks at the end of a row or column hold fewer cells); both passes use it.
template <typename A>
std::vector<float> block_means(const OverviewGrid& g, const std::vector<A>& sums) {
    std::vector<float> out(sums.size());
    for (std::int64_t s = 0; s < g.slices; ++s)
        for (std::int64_t orow = 0; orow < g.out_rows(); ++orow) {
            const std::int64_t h = std::min(g.rows, (orow + 1) * g.fy) - orow * g.fy;
            for (std::int64_t oc = 0; oc < g.out_cols(); ++oc) {
                const std::int64_t w = std::min(g.cols, (oc + 1) * g.fx) - oc * g.fx;
                const std::size_t i = static_cast<std::size_t>(s * g.cells_per_slice() + orow * g.out_cols() + oc);
                out[i] = static_cast<float>(static_cast<double>(sums[i]) / static_cast<double>(h * w));
            }
        }
    return out;
}

// The blocks' results of either pass from its folded sums and maxima, once out.code_counts holds the code
// counts: the codes' range, the blocks' mean codes and largest errors, and r' (its sums, or from the codes
// when `deq_sums` is null: one (s, z) for the tensor).
void finish_blocks(const OverviewGrid& grid, const QuantParams& params, std::int32_t q_min, const std::vector<double>& code_sums,
                   std::vector<float>&& err_max, const std::vector<double>* deq_sums, float deq_lo, float deq_hi,
                   QuantOverview& out);

// The same when the codes' range is known without counts (the blocks-only pass): out.code_counts untouched.
void finish_blocks_in_range(const OverviewGrid& grid, const QuantParams& params, std::int32_t code_lo, std::int32_t code_hi,
                            const std::vector<double>& code_sums, std::vector<float>&& err_max,
                            const std::vector<double>* deq_sums, float deq_lo, float deq_hi, QuantOverview& out);

}  // namespace qs::detail
