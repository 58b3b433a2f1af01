#include "gui/platform/gl_texture.hpp"

#include <utility>

#define GL_GLEXT_PROTOTYPES 1
#include <GL/gl.h>

namespace qs::gui {

GlTexture::~GlTexture() { reset(); }

GlTexture::GlTexture(GlTexture&& other) noexcept
    : tex_(std::exchange(other.tex_, 0u)),
      w_(std::exchange(other.w_, 0)),
      h_(std::exchange(other.h_, 0)),
      key_(std::exchange(other.key_, 0u)),
      has_key_(std::exchange(other.has_key_, false)) {}

GlTexture& GlTexture::operator=(GlTexture&& other) noexcept {
    if (this != &other) {
        reset();
        tex_ = std::exchange(other.tex_, 0u);
        w_ = std::exchange(other.w_, 0);
        h_ = std::exchange(other.h_, 0);
        key_ = std::exchange(other.key_, 0u);
        has_key_ = std::exchange(other.has_key_, false);
    }
    return *this;
}

void GlTexture::reset() {
    if (tex_ != 0) {
        const GLuint t = tex_;
        glDeleteTextures(1, &t);
    }
    tex_ = 0;
    w_ = h_ = 0;
    has_key_ = false;
}

void GlTexture::upload_rgba(int w, int h, const std::uint32_t* rgba, std::uint64_t key) {
    if (w <= 0 || h <= 0) return;
    GLint previous = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &previous);
    if (tex_ == 0) {
        GLuint t = 0;
        glGenTextures(1, &t);
        tex_ = t;
        w_ = h_ = 0;
    }
    glBindTexture(GL_TEXTURE_2D, tex_);
    // Rows are tightly packed 4-byte texels: state left by someone else must not skew them.
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    if (w == w_ && h == h_) {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    } else {
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
        w_ = w;
        h_ = h;
    }
    glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(previous));
    key_ = key;
    has_key_ = true;
}

}  // namespace qs::gui
