// The figure as a PNG without any display: the same panel code as the window (DrawFigurePanel and the metrics
// line) drawn by an OffscreenRenderer, so the PNG a test or `quantscope render` writes is what the GUI shows.
// Same input, same bytes: nothing depends on time, mouse or settings files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gui/document/quant_view.hpp"
#include "gui/panels/figure_panel.hpp"

namespace qs::gui {

struct FigurePngOptions {
    bool metrics_line = true;      // one line of metrics under the figure
    std::int64_t selected = -1;    // flat index whose pipeline is printed under the figure, -1: none
    int slice = 0;                 // rank 3: which slice
    float font_px = 0.0f;          // 0: from the width (about width / 75, at least 14)
    bool light = true;             // white background like the lessons' matplotlib figure
};

// Lays out DrawFigurePanel (and the metrics line) in a full-size window `width` pixels wide, as tall as the
// figure needs, renders it offscreen and writes a PNG atomically. False with a one-line *error (EGL
// unavailable, bad width, write failure): it also runs between the window's frames, where a throw would be lost.
bool RenderFigurePng(const QuantView& view, const FigurePanelSettings& settings, int width,
                       const std::string& out_path, std::string* error);
bool RenderFigurePng(const QuantView& view, const FigurePanelSettings& settings, const FigurePngOptions& options,
                       int width, const std::string& out_path, std::string* error);

// What RenderFigureRgba produced besides the pixels.
struct FigureImageInfo {
    int height = 0;
    // Pixel rectangles of the four heatmap images (original, quantized, dequantized, error): x0, y0, x1, y1.
    float image_rects[4][4] = {};
};

// The same figure as RGBA8 pixels (top row first) instead of a file: for tests and for a caller that encodes
// the image itself. `info` may be null.
bool RenderFigureRgba(const QuantView& view, const FigurePanelSettings& settings, const FigurePngOptions& options,
                        int width, std::vector<std::uint8_t>& rgba, FigureImageInfo* info, std::string* error);

}  // namespace qs::gui
