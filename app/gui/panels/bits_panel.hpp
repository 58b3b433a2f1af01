// The Bits tab (issue 12 item 5): the selected cell's code as a row of bit boxes (a float's sign, exponent
// and mantissa coloured, an integer's bits with their weights, NF4's index), what they decode to, the
// block's stored scale(s) as their own rows (E8M0, E4M3 sb and float32 g, fp16 d, float32 s), and for codes
// narrower than a byte the packed byte that holds the code, with the codes it shares that byte with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/quant_view.hpp"
#include "gui/panels/intents.hpp"
#include "quantscope/cell_bits.hpp"

namespace qs::gui {

struct BitsPanelState {
    // [In] the compact look, for a window short for its text (a projector's 1280 x 720 at font scale 2): each
    // row's name beside its boxes and what they stand for beside or under them, no header rules between rows.
    bool compact = false;
    // [Internal] the selected cell's bits, recomputed when the selection or the quantization changes.
    std::uint64_t generation = 0;
    std::int64_t flat = -1;
    bool valid = false;
    CellBits bits;
    std::string error;
    // [Out] the lines the panel printed last frame (BitsReportLines; empty without a selection), for tests
    // and --layout-report.
    std::vector<std::string> report;
    // [Out] where last frame put each code of the packed byte (screen x0, y0, x1, y1; the packed slots' order).
    std::vector<ImVec4> packed_rects;
};

// Contents only (draw inside any window). `selected`: the figure's selected flat index (-1: none);
// `hidden`: a lesson step covers that cell's code (predict first), so its bits are not shown either.
// A code clicked in the packed byte asks for its element to be selected (SelectElementIntent).
void DrawBitsPanel(BitsPanelState& state, const QuantView& view, std::int64_t selected, bool hidden, Intents& out);

}  // namespace qs::gui
