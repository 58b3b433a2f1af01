// Histograms for the GUI's distribution panel: real values in equal-width bins, and integer codes counted
// per code. Pure counting, no drawing.
#pragma once

#include <cstdint>
#include <vector>

#include "quantscope/params.hpp"
#include "quantscope/pass_control.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

struct Histogram {
    double lo = 0.0, hi = 0.0;          // bin i covers [lo + i*w, lo + (i+1)*w), w = (hi - lo) / bins; the last
                                        // bin also holds hi
    std::vector<std::int64_t> counts;
    std::int64_t below = 0, above = 0;  // values < lo or > hi (not in any bin)
    std::int64_t max_count = 0;         // largest bin, for scaling bars

    double bin_width() const { return counts.empty() ? 0.0 : (hi - lo) / static_cast<double>(counts.size()); }
};

// Counts `n` values into `bins` (>= 1) equal bins over [lo, hi] (all threads; integer counts, so the result
// does not depend on the thread count). When hi <= lo (a constant tensor) the range is
// widened by 0.5 on each side so the one spike sits in the middle of a visible range.
Histogram histogram(const float* values, std::int64_t n, int bins, double lo, double hi);

// The same over the range of the data itself (min..max), one pass for the range, one for the counts.
Histogram histogram(const float* values, std::int64_t n, int bins);

// Smallest and largest of n >= 1 values, in one vectorised, multithreaded pass.
void value_range(const float* values, std::int64_t n, float& lo, float& hi);

// The same three over a view in its stored type (bf16/f16/f32/f64, e.g. a file's mapping), read in pieces
// under its guard with every core: the counts and the range equal those of the decoded float32 values (the
// bins are chosen by the same arithmetic), without a float32 copy of the tensor. A cancelled pass (control)
// returns early with incomplete counts, which the caller drops.
Histogram histogram(const TensorView& view, int bins, double lo, double hi, const PassControl& control = {});
Histogram histogram(const TensorView& view, int bins, const PassControl& control = {});
// histogram(view, bins, lo, hi) of a bf16/f16 view from its bit patterns' counts (ValueOverview::bit_counts,
// 2^16 entries): each pattern's bin found by the same arithmetic, its count added, so the same counts without
// a pass over the view. Other views, or counts of another size: the pass.
Histogram histogram(const TensorView& view, const std::vector<std::int64_t>& bit_counts, int bins, double lo, double hi);

// Occurrences of each code q in [q_min, q_max]: result[q - q_min]. Codes outside the range (there are none
// after a clamp; a wrap keeps them inside too) are ignored.
std::vector<std::int64_t> code_counts(const std::int32_t* codes, std::int64_t n, std::int32_t q_min,
                                      std::int32_t q_max);

// The same over a sample, for a display that must keep up while the codes change every frame: the runs of
// `chunk` consecutive codes starting at 0, step*chunk, 2*step*chunk, ... (step >= 1; 1 counts everything).
// Counts are of the sampled elements; `sampled` (if given) receives how many there were.
std::vector<std::int64_t> code_counts_sampled(const std::int32_t* codes, std::int64_t n, std::int32_t q_min,
                                              std::int32_t q_max, std::int64_t chunk, std::int64_t step,
                                              std::int64_t* sampled = nullptr);

// h's counts spread over `bins` equal bins of [lo, hi], each source bin in proportion to its overlap with
// them (as if its values were uniform within it): a fine histogram computed once, shown at any axis range.
// Source bins outside [lo, hi] contribute only their overlapping part. A zero-width source (all values
// equal) puts its count in the bin holding its position.
std::vector<double> rebin(const Histogram& h, int bins, double lo, double hi);

}  // namespace qs
