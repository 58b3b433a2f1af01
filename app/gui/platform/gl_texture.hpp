// A move-only owner of one OpenGL RGBA8 texture, drawn by ImGui::Image. Needs the GL context it was created
// in to be current for upload and destruction: destroy (or reset) it before that context goes, and never while
// another context is current (the name would delete that context's texture).
#pragma once

#include <cstdint>

#include <imgui.h>

namespace qs::gui {

class GlTexture {
public:
    GlTexture() = default;
    ~GlTexture();
    GlTexture(const GlTexture&) = delete;
    GlTexture& operator=(const GlTexture&) = delete;
    GlTexture(GlTexture&& other) noexcept;
    GlTexture& operator=(GlTexture&& other) noexcept;

    // Uploads w x h texels, row-major, top row first, packed RGBA8 (colormap.hpp's PackRgba), tightly packed.
    // Reuses the storage (glTexSubImage2D) when the size is unchanged. Filtering is GL_NEAREST so that
    // magnified cells stay crisp squares. `key` identifies the content (see is_current).
    void upload_rgba(int w, int h, const std::uint32_t* rgba, std::uint64_t key);
    // True when the last upload carried `key`: the caller skips colormapping and uploading altogether.
    bool is_current(std::uint64_t key) const { return tex_ != 0 && has_key_ && key_ == key; }
    // Forgets the key so that the next is_current() is false (e.g. after the GL context was recreated).
    void invalidate() { key_ = 0; has_key_ = false; }
    void reset();  // deletes the GL object

    ImTextureID id() const { return reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(tex_)); }
    bool valid() const { return tex_ != 0; }
    int width() const { return w_; }
    int height() const { return h_; }

private:
    unsigned int tex_ = 0;  // GLuint
    int w_ = 0, h_ = 0;
    std::uint64_t key_ = 0;
    bool has_key_ = false;
};

}  // namespace qs::gui
