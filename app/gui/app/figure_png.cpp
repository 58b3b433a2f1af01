#include "gui/app/figure_png.hpp"

#include <algorithm>
#include <cmath>

#include <imgui.h>

#include "gui/panels/metrics_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {

bool RenderFigureRgba(const QuantView& view, const FigurePanelSettings& settings, const FigurePngOptions& options,
                        int width, std::vector<std::uint8_t>& rgba, FigureImageInfo* info, std::string* error) {
    if (!view.valid()) {
        if (error) *error = "nothing to render: no quantized tensor";
        return false;
    }
    if (width < 320 || width > 16384) {
        if (error) *error = "figure width " + std::to_string(width) + " out of range (320..16384)";
        return false;
    }
    const float font_px = options.font_px > 0.0f ? options.font_px : std::max(14.0f, std::round(width / 75.0f));
    FigurePanelState state;
    state.settings = settings;
    state.settings.show_toolbar = false;  // a picture has no use for combo boxes
    state.settings.show_pipeline = options.selected >= 0;
    state.selected = options.selected;
    state.slice = options.slice;
    // A picture's values fill its cells, and it has none of the window's decorations (the render goldens pin
    // its pixels): no block outlines or strip, no colorbar legends.
    FigureLook look;
    look.annotation_rule = AnnotationRule::Fill;
    look.block_outlines = false;
    look.block_strip = false;
    look.colorbar_legends = false;

    OffscreenRenderer r;
    FontSet fonts;
    auto setup = [&] {
        fonts = BuildFonts(font_px);
        ApplyStyle(options.light, font_px / 13.0f);
    };
    // Start square; the first frame measures the height the figure needs.
    if (!r.init(width, width, setup, error)) return false;
    state.annotation_font = fonts.annotation;

    float needed_h = 0.0f;
    auto draw = [&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                       ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus;
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(font_px, font_px * 0.8f));
        ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
        ImGui::Begin("##figure_png", nullptr, flags);
        const float top = ImGui::GetCursorScreenPos().y;
        const float w = ImGui::GetContentRegionAvail().x;
        DrawFigurePanel(state, view, ImVec2(w, FigurePanelHeight(state, view, w, look)), look);
        if (options.metrics_line) {
            ImGui::Dummy(ImVec2(0, font_px * 0.3f));
            DrawMetricsLine(view);
        }
        needed_h = ImGui::GetCursorScreenPos().y - top + 2.0f * font_px * 0.8f;
        ImGui::End();
        ImGui::PopStyleVar(2);
    };
    r.frame(draw);
    const int height = static_cast<int>(std::ceil(needed_h));
    if (!r.resize(width, std::max(16, height))) {
        if (error) *error = "OpenGL: cannot create a framebuffer of " + std::to_string(width) + "x" + std::to_string(height);
        return false;
    }
    for (int i = 0; i < 3; ++i) r.frame(draw);
    std::vector<std::uint8_t> bottom_up;
    r.read_pixels(bottom_up);
    const std::size_t row = static_cast<std::size_t>(r.width()) * 4u;
    rgba.resize(bottom_up.size());
    for (int y = 0; y < r.height(); ++y) {
        std::memcpy(rgba.data() + static_cast<std::size_t>(y) * row,
                    bottom_up.data() + static_cast<std::size_t>(r.height() - 1 - y) * row, row);
    }
    // The textures belong to this EGL context: free them in it, not in whatever context is current later.
    r.run([&] {
        for (HeatmapState& m : state.maps) m.texture.reset();
    });
    if (info) {
        info->height = r.height();
        for (int i = 0; i < 4; ++i) {
            info->image_rects[i][0] = state.image_min[i].x;
            info->image_rects[i][1] = state.image_min[i].y;
            info->image_rects[i][2] = state.image_max[i].x;
            info->image_rects[i][3] = state.image_max[i].y;
        }
    }
    return true;
}

bool RenderFigurePng(const QuantView& view, const FigurePanelSettings& settings, const FigurePngOptions& options,
                       int width, const std::string& out_path, std::string* error) {
    std::vector<std::uint8_t> rgba;
    FigureImageInfo info;
    return RenderFigureRgba(view, settings, options, width, rgba, &info, error) &&
           WritePngAtomic(out_path, width, info.height, rgba, false, error);
}

bool RenderFigurePng(const QuantView& view, const FigurePanelSettings& settings, int width,
                       const std::string& out_path, std::string* error) {
    return RenderFigurePng(view, settings, FigurePngOptions{}, width, out_path, error);
}

}  // namespace qs::gui
