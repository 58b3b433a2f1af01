// Fonts and colors for a projected classroom screen: DejaVu Sans (fonts-dejavu-core) when installed, else
// ImGui's built-in font; a light, high-contrast theme like a matplotlib figure, or ImGui's dark one.
#pragma once

#include <imgui.h>

namespace qs::gui {

struct FontSet {
    ImFont* ui = nullptr;          // every label and number of the interface
    ImFont* annotation = nullptr;  // values printed in heatmap cells: baked large, drawn at the size a cell fits
    float pixel_size = 0.0f;       // of `ui`
    bool dejavu = false;           // false: ImGui's built-in font (ASCII only; arrows fall back to "->")
};

// Clears and rebuilds io.Fonts: the UI font at `pixel_size` (with arrows, minus and primes when DejaVu is there)
// and the annotation font at `annotation_scale` times that. Call outside a frame. A renderer that already
// uploaded the old atlas must re-upload it (ImGui_ImplOpenGL3_DestroyFontsTexture + CreateFontsTexture).
FontSet BuildFonts(float pixel_size, float annotation_scale = 1.8f);

// Sets ImGui's colors and sizes: light (white background, near-black text; what the PNG export uses) or dark,
// with paddings and rounding scaled by `scale` (1 = ImGui's defaults).
void ApplyStyle(bool light, float scale);

}  // namespace qs::gui
