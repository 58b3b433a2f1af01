// The steps of the formula for one element, shared by the figure's tooltip, its pipeline line and the PNG.
#pragma once

#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "quantscope/stored_blocks.hpp"

namespace qs::gui {

// The pipeline of one element, one step a line:
//   r = 728.6 | r / s + z = 728.6 / 3.57882 + (-77) = 126.586 | round(126.586) = 127 |
//   q = clamp(127, -128, 127) = 127 | r' = s (q - z) = 730.08 | |r - r'| = 1.48
std::vector<std::string> PipelineLines(const QuantView& view, const ElementTrace& trace);

// What one block of this quantization is called: "channel" or "group" (int<N> and element formats), "block"
// (MX, NVFP4, ggml's blocks of 32) or "super-block" (ggml's 256: the k-quants, iq4_xs, tq*).
std::string BlockKind(const QuantConfig& config);
// Block `block`'s stored pair under the format's names (core's stored_pair): "s = 3.57882,  z = -77",
// "d = 0.00495,  dmin = 0.0388" (a k-quant), "block scale X = 0.5".
std::string StoredPairText(const QuantView& view, std::int64_t block);

// A stored type's name as compare's table writes it ("F16", "Q4_K").
std::string StoredTypeName(const StoredBlocks& stored);
// Whether the view shows a Model-tab row against a B that stores plain values (F16, BF16, F32, F64): r' is B's
// values, and there are no codes or scales for the quantized panel and the Bits view to show.
bool ShowsStoredValues(const QuantView& view);

}  // namespace qs::gui
