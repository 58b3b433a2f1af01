// Where the values fall against the quantization grid. Top: histogram of the original values with the levels
// s (q - z) as thin lines and the representable range [s (q_min - z), s (q_max - z)] as two strong lines with
// the outside shaded, so clipped mass shows as red bars beyond them. Bottom: histogram of the codes, i.e. how
// many of the type's levels the tensor actually uses. Counting is in qs::histogram (core), redone only when
// the view's generation (or the plot width) changes; drawing is ImDrawList only.
#pragma once

#include <cstdint>
#include <vector>

#include "quant_view.hpp"
#include "quantscope/histogram.hpp"

namespace qs::gui {

struct HistogramPanelState {
    bool log_counts = false;            // log scale for the bar heights (a few clipped outliers beside a big peak)
    // Per-channel / group parameters: the levels drawn are those of the block of this element (flat index;
    // the app may copy the figure's selection here), or of block 0 when it is -1.
    std::int64_t follow_element = -1;

    // [Internal state] cached counts and what they were computed for
    Histogram values;
    std::vector<std::int64_t> codes;    // per code, q_min..q_max
    std::uint64_t generation = 0;
    const void* tensor = nullptr;
    int bins = 0;
    double lo = 0, hi = 0;
    bool valid = false;
    double data_min = 0, data_max = 0;  // of the tensor, for data_generation
    std::uint64_t data_generation = 0;
    const void* data_tensor = nullptr;
    bool data_valid = false;
};

// Contents only: fills the available region of the current window (height: at least a few text lines).
void DrawHistogramPanel(HistogramPanelState& state, const QuantView& view);

}  // namespace qs::gui
