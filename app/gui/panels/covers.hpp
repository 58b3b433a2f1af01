// "Is this number covered?": while a lesson step hides part of the figure until R (the class predicts first),
// every drawer of a number that would give the answer away asks this one question -- the figure's captions and
// colorbar legends, its tooltip and pipeline, the metrics table and presenter strip, the histograms, the Bits
// tab and the analysis tabs that quantize -- instead of each deciding on its own (a caption under a covered
// panel once read "centred on z = -77"). figure_cover.hpp draws the covers themselves.
#pragma once

#include <array>
#include <cstdint>

namespace qs::gui {

// A kind of number the figure's panels show. A covered panel covers its kind and what is derived from it.
enum class Secret : int {
    Codes,        // the quantized panel: codes, z, s, levels used, clipped count, code histogram
    Dequantized,  // the dequantized panel: r', the representable range s(q_min - z) .. s(q_max - z)
    Error,        // the error panel: |r - r'|, MSE, SQNR and every error metric
};

struct Covers {
    std::array<bool, 4> panels{};  // by FigureHeatmap: original, quantized, dequantized, error
    std::int64_t code = -1;        // one element whose code, r' and error are covered (-1: none)

    bool any() const { return code >= 0 || panels[1] || panels[2] || panels[3] || panels[0]; }
    bool hides(Secret s) const { return panels[static_cast<std::size_t>(s) + 1]; }
    // Whether element `flat`'s pipeline (r/s + z, the code, r', the error) would tell something covered.
    bool hides_pipeline(std::int64_t flat) const {
        return panels[1] || panels[2] || panels[3] || (flat >= 0 && flat == code);
    }
};

// What a covered number shows in its place.
inline const char* CoveredText() { return "? (R)"; }

}  // namespace qs::gui
