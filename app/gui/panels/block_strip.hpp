// The strip under the figure in per-channel / per-group mode: each block's s (and z, when not all zero) as a
// small bar chart, so the scales that the outlined blocks use are seen side by side. Hover a bar for the
// block's parameters; click it to pick the block (the figure follows its first element, the histogram shows
// its values against its grid). Thousands of blocks share pixel columns (min to max per column).
#pragma once

#include <cstdint>
#include <vector>

#include <imgui.h>

#include "gui/document/quant_view.hpp"

namespace qs::gui {

// What the charts need beyond the params' own s (read in place), made once per quantization: z as the charts'
// doubles and the charts' ranges. A frame redraws from it instead of copying every block's pair.
struct BlockStripCache {
    std::uint64_t generation = 0;  // of the view it was made for (0: none; a view of generation 0 is never cached)
    const QuantParams* params = nullptr;
    std::vector<double> z;
    double s_lo = 0.0, s_hi = 1.0, z_lo = 0.0, z_hi = 1.0;  // s_lo < 0 for a signed scale (q4_0's d = max / -8)
    bool any_z = false;
    int builds = 0;  // how many times it was made (a test's way to see it is not remade each frame)
};

// The strip's height for the current font (0 when the view has one block).
float BlockStripHeight(const QuantView& view);

// Draws the strip in `size` at the cursor; `highlight` is the block to mark (the followed element's, or -1).
// Returns the block clicked this frame, or -1.
std::int64_t DrawBlockStrip(BlockStripCache& cache, const QuantView& view, std::int64_t highlight, ImVec2 size);

}  // namespace qs::gui
