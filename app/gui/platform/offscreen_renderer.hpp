// Rendering without any display: an EGL surfaceless (Mesa) OpenGL 3.3 core context drawing into a framebuffer
// object, with its own Dear ImGui context and ImGui's OpenGL3 backend, and the one PNG writer of the window.
// What it draws is up to the caller (app/figure_png.hpp draws the figure panel, as the window does).
#pragma once

#include <cfloat>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <imgui.h>


namespace qs::gui {

// One offscreen GL + ImGui context. Not copyable. Create, draw frames, read pixels; the destructor releases the
// GL objects and the ImGui context. Every member call makes its contexts current for its duration and restores
// the caller's ImGui and EGL contexts afterwards (a GLX context of a window is not restored: don't call it
// from inside a GLFW frame).
class OffscreenRenderer {
public:
    OffscreenRenderer() = default;
    ~OffscreenRenderer();
    OffscreenRenderer(const OffscreenRenderer&) = delete;
    OffscreenRenderer& operator=(const OffscreenRenderer&) = delete;

    // Creates the EGL context, a w x h framebuffer and the ImGui context; `setup` runs with that ImGui context
    // current before the backend starts (build fonts, set the style there). False with *error on failure
    // (no EGL, no surfaceless platform, no 3.3 core context).
    bool init(int width, int height, const std::function<void()>& setup, std::string* error);
    bool resize(int width, int height);

    // One ImGui frame: `draw` runs inside NewFrame/Render with io.DisplaySize = the framebuffer size, then the
    // frame is rasterised over a white background. Render at least 3 frames before reading: auto-sized
    // windows and tables settle over the first frames.
    // `mouse` (framebuffer pixels) and `mouse_down` feed ImGui's input, for tests that hover and click;
    // by default there is no mouse at all.
    void frame(const std::function<void()>& draw, ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX), bool mouse_down = false,
               float wheel = 0.0f);
    // Runs `fn` with this renderer's GL and ImGui contexts current, e.g. to release GL objects (GlTexture) that
    // were created in it: destroyed later with another context current, they would delete that context's names.
    void run(const std::function<void()>& fn);
    // RGBA8 pixels of the framebuffer, bottom row first (as glReadPixels gives them).
    void read_pixels(std::vector<std::uint8_t>& rgba) const;

    int width() const { return w_; }
    int height() const { return h_; }
    ImGuiContext* imgui_context() const { return imgui_; }

private:
    struct Saved;
    void make_current(Saved& saved) const;
    void restore(const Saved& saved) const;

    void* display_ = nullptr;  // EGLDisplay
    void* context_ = nullptr;  // EGLContext
    unsigned int fbo_ = 0, color_rb_ = 0;
    int w_ = 0, h_ = 0;
    ImGuiContext* imgui_ = nullptr;
    bool backend_ = false;
};

// Writes an RGBA8 image as PNG through a temporary file in the same directory and a rename, so a reader never
// sees half a file and a failure leaves nothing. `bottom_up`: rows are bottom first (a glReadPixels buffer).
bool WritePngAtomic(const std::string& path, int width, int height, const std::vector<std::uint8_t>& rgba,
                      bool bottom_up, std::string* error);

}  // namespace qs::gui
