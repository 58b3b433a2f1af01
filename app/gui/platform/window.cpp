#include "gui/platform/window.hpp"

#include <algorithm>
#include <cfloat>
#include <csignal>
#include <cstdlib>

#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>

#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

constexpr int kGlfwNoDisplay = 0x00010008;  // GLFW_PLATFORM_ERROR: what glfwInit reports without X/Wayland

volatile std::sig_atomic_t g_stop_requested = 0;
extern "C" void RequestStop(int) { g_stop_requested = 1; }

WindowEvents& Events(GLFWwindow* w) { return *static_cast<WindowEvents*>(glfwGetWindowUserPointer(w)); }
void Wake(GLFWwindow* w) { Events(w).wake_frames = 3; }

void InstallCallbacks(GLFWwindow* window) {
    // Installed before ImGui's backend, which chains to them.
    glfwSetCursorPosCallback(window, [](GLFWwindow* w, double, double) { Wake(w); });
    glfwSetMouseButtonCallback(window, [](GLFWwindow* w, int, int, int) { Wake(w); });
    glfwSetScrollCallback(window, [](GLFWwindow* w, double, double) { Wake(w); });
    glfwSetKeyCallback(window, [](GLFWwindow* w, int, int, int, int) { Wake(w); });
    glfwSetCharCallback(window, [](GLFWwindow* w, unsigned int) { Wake(w); });
    glfwSetWindowSizeCallback(window, [](GLFWwindow* w, int, int) { Wake(w); });
    glfwSetWindowRefreshCallback(window, [](GLFWwindow* w) { Wake(w); });
    glfwSetWindowContentScaleCallback(window, [](GLFWwindow* w, float, float) {
        Events(w).rescale = true;
        Wake(w);
    });
    glfwSetDropCallback(window, [](GLFWwindow* w, int count, const char** paths) {
        for (int i = 0; i < count; ++i) Events(w).dropped.emplace_back(paths[i]);
        Wake(w);
    });
}

std::string GlfwProblem() {
    const char* description = nullptr;
    glfwGetError(&description);
    return description ? description : "unknown error";
}

}  // namespace

bool HaveDisplayVariable() { return std::getenv("DISPLAY") || std::getenv("WAYLAND_DISPLAY"); }

std::unique_ptr<AppWindow> AppWindow::Open(const WindowGeometry& geometry, const std::string& title, bool vsync) {
    if (!glfwInit()) {
        const char* description = nullptr;
        if (glfwGetError(&description) == kGlfwNoDisplay) return nullptr;
        throw Error(std::string("cannot start the window system: ") + (description ? description : "unknown error"));
    }
    // GL 3.3 core, forward-compatible, as the shaders say "#version 330 core".
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_MAXIMIZED, geometry.maximized ? GLFW_TRUE : GLFW_FALSE);
    GLFWwindow* window = glfwCreateWindow(geometry.width, geometry.height, title.c_str(), nullptr, nullptr);
    if (!window) {
        const std::string problem = GlfwProblem();
        glfwTerminate();
        throw Error("cannot open an OpenGL 3.3 window: " + problem);
    }
    if (geometry.x >= 0 && geometry.y >= 0 && !geometry.maximized) glfwSetWindowPos(window, geometry.x, geometry.y);
    glfwMakeContextCurrent(window);
    glfwSwapInterval(vsync ? 1 : 0);
    std::unique_ptr<AppWindow> w(new AppWindow(window));

    IMGUI_CHECKVERSION();
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // the layout is fixed; what is worth keeping goes to settings.ini
    io.ConfigFlags |= ImGuiConfigFlags_NavEnableKeyboard;
    ImGui_ImplGlfw_InitForOpenGL(window, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
    return w;
}

AppWindow::AppWindow(GLFWwindow* window) : window_(window) {
    glfwSetWindowUserPointer(window_, &events_);
    InstallCallbacks(window_);
}

AppWindow::~AppWindow() {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window_);
    glfwTerminate();
}

void AppWindow::wait_for_events(Wait wait) {
    if (wait == Wait::Poll) glfwPollEvents();
    else glfwWaitEventsTimeout(wait == Wait::Throttle ? 1.0 / 30.0 : 0.5);
    if (events_.wake_frames > 0) --events_.wake_frames;
}

bool AppWindow::iconified() const { return glfwGetWindowAttrib(window_, GLFW_ICONIFIED) != 0; }
void AppWindow::rest() { glfwWaitEventsTimeout(0.1); }

float AppWindow::content_scale() const {
    float x = 1.0f, y = 1.0f;
    glfwGetWindowContentScale(window_, &x, &y);
    return std::max(x, 0.5f);
}

void AppWindow::set_title(const std::string& title) { glfwSetWindowTitle(window_, title.c_str()); }
bool AppWindow::should_close() const { return glfwWindowShouldClose(window_) != 0; }
void AppWindow::request_close() { glfwSetWindowShouldClose(window_, GLFW_TRUE); }

WindowGeometry AppWindow::geometry() const {
    WindowGeometry g;
    g.maximized = glfwGetWindowAttrib(window_, GLFW_MAXIMIZED) != 0;
    glfwGetWindowPos(window_, &g.x, &g.y);
    glfwGetWindowSize(window_, &g.width, &g.height);
    return g;
}

void AppWindow::reload_fonts() {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
}

void AppWindow::begin_frame(bool ignore_mouse) {
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (ignore_mouse) ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    ImGui::NewFrame();
}

void AppWindow::render_frame() {
    ImGui::Render();
    int w = 0, h = 0;
    glfwGetFramebufferSize(window_, &w, &h);
    glViewport(0, 0, w, h);
    glClearColor(0.09f, 0.10f, 0.12f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
}

void AppWindow::read_back_buffer(std::vector<std::uint8_t>& rgba, int& width, int& height) const {
    glfwGetFramebufferSize(window_, &width, &height);
    rgba.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4u, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadBuffer(GL_BACK);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    for (std::size_t i = 3; i < rgba.size(); i += 4) rgba[i] = 255;  // opaque, whatever GL left
}

void AppWindow::swap() { glfwSwapBuffers(window_); }
void AppWindow::release_context() { glfwMakeContextCurrent(nullptr); }
void AppWindow::make_context_current() { glfwMakeContextCurrent(window_); }

void InstallStopSignals() {
    std::signal(SIGINT, RequestStop);
    std::signal(SIGTERM, RequestStop);
}

bool StopRequested() { return g_stop_requested != 0; }

}  // namespace qs::gui
