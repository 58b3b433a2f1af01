// Presenter mode (F5, --presenter): what a class sees on a projector. The figure takes the whole window
// (2x2 or 1x4, whichever gives the cells more room), with no toolbar; the followed element's pipeline and a
// one-line metrics strip stay under it; everything else is hidden. Esc or F5 leaves.
#pragma once

#include <cstdint>
#include <string>

#include <imgui.h>

#include "gui/document/quant_view.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/covers.hpp"

namespace qs::gui {

// The metrics strip's text, made once per quantization (and font): choosing the layout measures it a dozen
// times a frame.
struct PresenterViewState {
    std::uint64_t generation = 0;  // of the view it was made for (0: none; a view of generation 0 is never cached)
    const ImFont* font = nullptr;  // the text's symbols (a real minus sign) depend on the font
    std::string summary;
    Covers covers;                 // what it was made with covered (covers.hpp)
    int builds = 0;                // how many times it was made (for a test)
    float text_scale = 1.0f;       // [Out] how far the text around the figure was shrunk last frame
};

// Whether the four panels get bigger cells as a 2x2 grid than as a row, in a `size` area.
bool PresenterUsesGrid(const QuantView& view, ImVec2 size);

// The presenter's contents in `size` (inside any window): `figure` (its zoom, selection and caches) drawn with
// the presenter's own look (FigureLook); its settings and the window's look of it are not touched. Its text is
// at most `max_scale` times the window's (a slide's tab under it is drawn at that size); `trace` false leaves
// out the selected element's pipeline and the note that the values are hidden (a slide's Bits tab under the
// figure shows the element in full, and takes the room).
void DrawPresenterView(PresenterViewState& state, FigurePanelState& figure, const QuantView& view, ImVec2 size,
                       float max_scale = 1.0f, bool trace = true);

// The least height DrawPresenterView takes in `width` with its text at `scale` times the window's: the figure
// (whichever of the grid and the row needs less) with its images about three lines tall and the metrics strip
// (not the note on hidden values under it, which `trace` draws past `size`, as ever).
float PresenterMinHeight(PresenterViewState& state, FigurePanelState& figure, const QuantView& view, float width, float scale,
                         bool trace = true);

}  // namespace qs::gui
