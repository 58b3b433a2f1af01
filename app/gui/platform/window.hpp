// The desktop window: GLFW, an OpenGL 3.3 core context and Dear ImGui with its GLFW and OpenGL3 backends, set
// up in the order of imgui's example_glfw_opengl3 and torn down in reverse when the object goes. Everything
// else about the frame loop (what to draw, when to stop) belongs to the app.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct GLFWwindow;

namespace qs::gui {

// Whether a window system is reachable ($DISPLAY or $WAYLAND_DISPLAY).
bool HaveDisplayVariable();

// Where the window is and how big, as settings keep it.
struct WindowGeometry {
    int x = -1, y = -1;  // -1: let the window manager place it
    int width = 1600, height = 900;
    bool maximized = false;
};

// What reached the window since the last frame, from GLFW's callbacks.
struct WindowEvents {
    int wake_frames = 3;               // frames still to draw after input before waiting again
    std::vector<std::string> dropped;  // files dropped on the window
    bool rescale = true;               // the content scale changed (and at start): rebuild fonts and sizes
};

class AppWindow {
public:
    // Opens the window. Returns nullptr when GLFW finds no display (the caller falls back to headless);
    // throws qs::Error for any other failure (no OpenGL 3.3, ...).
    static std::unique_ptr<AppWindow> Open(const WindowGeometry& geometry, const std::string& title, bool vsync);
    ~AppWindow();
    AppWindow(const AppWindow&) = delete;
    AppWindow& operator=(const AppWindow&) = delete;

    WindowEvents& events() { return events_; }
    // How the next frame waits: Poll (input, a script, something animating: at once), Throttle (only
    // background work's progress to show: for input or a 30th of a second, so that a software renderer,
    // whose frame costs a core, leaves the work its processors), Idle (for input or half a second: an
    // idle window costs no CPU and still notices SIGINT soon).
    enum class Wait { Poll, Throttle, Idle };
    void wait_for_events(Wait wait);
    // After input ImGui needs a few frames to show a hover or a click.
    void wake() { events_.wake_frames = 3; }
    bool iconified() const;
    // Nothing to draw (iconified): sleep until an event or a tenth of a second.
    void rest();
    float content_scale() const;
    void set_title(const std::string& title);
    bool should_close() const;
    void request_close();
    WindowGeometry geometry() const;

    // Re-uploads ImGui's font atlas after io.Fonts was rebuilt (between frames).
    void reload_fonts();
    void begin_frame(bool ignore_mouse);  // backends' NewFrame + ImGui::NewFrame
    void render_frame();                   // ImGui::Render + clear + draw, into the back buffer
    // The back buffer as opaque RGBA8, bottom row first, with its size.
    void read_back_buffer(std::vector<std::uint8_t>& rgba, int& width, int& height) const;
    void swap();
    // The figure export renders in its own EGL context: libglvnd refuses to make it current while this
    // window's GLX context is, and leaves neither current afterwards. Release before, restore after.
    void release_context();
    void make_context_current();

private:
    explicit AppWindow(GLFWwindow* window);
    GLFWwindow* window_;
    WindowEvents events_;
};

// SIGINT and SIGTERM ask the loop to close the window the normal way (settings saved, GPU objects freed in
// order) instead of killing the process.
void InstallStopSignals();
bool StopRequested();

}  // namespace qs::gui
