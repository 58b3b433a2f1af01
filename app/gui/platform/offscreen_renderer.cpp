#include "gui/platform/offscreen_renderer.hpp"

#include <algorithm>
#include <cmath>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>
#include <GL/glext.h>

#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include "gui/platform/png_encoder.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {

struct OffscreenRenderer::Saved {
    ImGuiContext* imgui = nullptr;
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    EGLSurface draw = EGL_NO_SURFACE, read = EGL_NO_SURFACE;
};

void OffscreenRenderer::make_current(Saved& saved) const {
    saved.imgui = ImGui::GetCurrentContext();
    saved.display = eglGetCurrentDisplay();
    saved.context = eglGetCurrentContext();
    saved.draw = eglGetCurrentSurface(EGL_DRAW);
    saved.read = eglGetCurrentSurface(EGL_READ);
    eglMakeCurrent(static_cast<EGLDisplay>(display_), EGL_NO_SURFACE, EGL_NO_SURFACE, static_cast<EGLContext>(context_));
    if (imgui_) ImGui::SetCurrentContext(imgui_);
}

void OffscreenRenderer::restore(const Saved& saved) const {
    ImGui::SetCurrentContext(saved.imgui);
    if (saved.context != EGL_NO_CONTEXT) {
        eglMakeCurrent(saved.display, saved.draw, saved.read, saved.context);
    } else {
        eglMakeCurrent(static_cast<EGLDisplay>(display_), EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    }
}

OffscreenRenderer::~OffscreenRenderer() {
    if (!context_) return;
    Saved saved;
    make_current(saved);
    if (imgui_) {
        if (backend_) ImGui_ImplOpenGL3_Shutdown();
        ImGui::DestroyContext(imgui_);
        if (saved.imgui == imgui_) saved.imgui = nullptr;
        imgui_ = nullptr;
    }
    if (color_rb_) glDeleteRenderbuffers(1, &color_rb_);
    if (fbo_) glDeleteFramebuffers(1, &fbo_);
    restore(saved);
    eglDestroyContext(static_cast<EGLDisplay>(display_), static_cast<EGLContext>(context_));
    // No eglTerminate: the surfaceless display is one shared object per process, and another renderer (or a
    // later one) may still use it; Mesa frees it at exit.
}

bool OffscreenRenderer::init(int width, int height, const std::function<void()>& setup, std::string* error) {
    auto fail = [&](const std::string& what) {
        if (error) *error = what;
        return false;
    };
    if (width < 1 || height < 1 || width > 16384 || height > 16384)
        return fail("offscreen size " + std::to_string(width) + "x" + std::to_string(height) + " out of range");
    EGLDisplay dpy = eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (dpy == EGL_NO_DISPLAY) return fail("EGL: no surfaceless display (Mesa's libEGL is needed for headless rendering)");
    EGLint major = 0, minor = 0;
    if (!eglInitialize(dpy, &major, &minor)) return fail("EGL: eglInitialize failed on the surfaceless display");
    // Without EGL_PBUFFER_BIT no config of the surfaceless platform matches.
    const EGLint config_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                     EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (!eglChooseConfig(dpy, config_attribs, &config, 1, &count) || count < 1)
        return fail("EGL: no OpenGL config on the surfaceless display");
    if (!eglBindAPI(EGL_OPENGL_API)) return fail("EGL: cannot bind the OpenGL API");
    const EGLint ctx_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, ctx_attribs);
    if (ctx == EGL_NO_CONTEXT) return fail("EGL: cannot create an OpenGL 3.3 core context");
    display_ = dpy;
    context_ = ctx;

    Saved saved;
    make_current(saved);
    if (eglGetCurrentContext() != ctx) {
        restore(saved);
        return fail("EGL: eglMakeCurrent failed");
    }
    imgui_ = ImGui::CreateContext();
    ImGui::SetCurrentContext(imgui_);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;  // no imgui.ini: the output must not depend on a previous run
    io.LogFilename = nullptr;
    io.DisplaySize = ImVec2(static_cast<float>(width), static_cast<float>(height));
    if (setup) setup();
    backend_ = ImGui_ImplOpenGL3_Init("#version 330 core");
    if (!backend_) {
        restore(saved);
        return fail("ImGui OpenGL3 backend failed to start on the EGL context");
    }
    restore(saved);
    if (!resize(width, height)) return fail("OpenGL: cannot create a " + std::to_string(width) + "x" +
                                            std::to_string(height) + " framebuffer");
    return true;
}

bool OffscreenRenderer::resize(int width, int height) {
    if (!context_ || width < 1 || height < 1) return false;
    if (fbo_ && width == w_ && height == h_) return true;
    Saved saved;
    make_current(saved);
    if (!fbo_) glGenFramebuffers(1, &fbo_);
    if (!color_rb_) glGenRenderbuffers(1, &color_rb_);
    glBindRenderbuffer(GL_RENDERBUFFER, color_rb_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_rb_);
    const bool ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    w_ = width;
    h_ = height;
    restore(saved);
    return ok;
}

void OffscreenRenderer::frame(const std::function<void()>& draw, ImVec2 mouse, bool mouse_down, float wheel) {
    if (!context_ || !imgui_) return;
    Saved saved;
    make_current(saved);
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(w_), static_cast<float>(h_));
    io.DeltaTime = 1.0f / 60.0f;  // fixed: nothing time-dependent may reach the pixels
    io.MousePos = mouse;
    io.MouseDown[0] = mouse_down;
    io.MouseWheel = wheel;
    ImGui_ImplOpenGL3_NewFrame();
    ImGui::NewFrame();
    if (draw) draw();
    ImGui::Render();
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glViewport(0, 0, w_, h_);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    glFinish();
    restore(saved);
}

void OffscreenRenderer::run(const std::function<void()>& fn) {
    if (!context_ || !fn) return;
    Saved saved;
    make_current(saved);
    fn();
    restore(saved);
}

void OffscreenRenderer::read_pixels(std::vector<std::uint8_t>& rgba) const {
    rgba.assign(static_cast<std::size_t>(w_) * static_cast<std::size_t>(h_) * 4u, 0);
    if (!context_) return;
    Saved saved;
    make_current(saved);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glReadPixels(0, 0, w_, h_, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    restore(saved);
}

bool WritePngAtomic(const std::string& path, int width, int height, const std::vector<std::uint8_t>& rgba,
                      bool bottom_up, std::string* error) {
    auto fail = [&](const std::string& what) {
        if (error) *error = what;
        return false;
    };
    if (width < 1 || height < 1 || rgba.size() < static_cast<std::size_t>(width) * height * 4u)
        return fail("PNG: image buffer does not match " + std::to_string(width) + "x" + std::to_string(height));
    std::vector<std::uint8_t> png;
    if (!EncodePng(width, height, rgba.data(), bottom_up, png)) return fail("PNG: out of memory while encoding");

    try {
        write_file_atomic(path, png.data(), png.size());
    } catch (const Error& e) {
        return fail(error_text(e));
    }
    return true;
}

}  // namespace qs::gui
