// The strip under the figure in per-channel / per-group mode: each block's s (and z, when not all zero) as a
// small bar chart, so the scales that the outlined blocks use are seen side by side. Hover a bar for the
// block's parameters; click it to pick the block (the figure follows its first element, the histogram shows
// its values against its grid). Thousands of blocks share pixel columns (min to max per column).
#pragma once

#include <cstdint>

#include <imgui.h>

#include "gui/document/quant_view.hpp"

namespace qs::gui {

// The strip's height for the current font (0 when the view has one block).
float BlockStripHeight(const QuantView& view);

// Draws the strip in `size` at the cursor; `highlight` is the block to mark (the followed element's, or -1).
// Returns the block clicked this frame, or -1.
std::int64_t DrawBlockStrip(const QuantView& view, std::int64_t highlight, ImVec2 size);

}  // namespace qs::gui
