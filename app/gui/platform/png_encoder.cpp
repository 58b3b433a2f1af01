#include "gui/platform/png_encoder.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <unordered_set>

namespace {

// What the encoder holds at the moment: freed on a failure, since stb keeps no record of it.
thread_local std::unordered_set<std::uintptr_t> g_live;  // addresses: kept past a realloc
thread_local long g_allowed = -1;  // tests: allocations left before they fail

struct EncodeFailed {};

bool AllowAllocation() { return g_allowed < 0 || g_allowed-- > 0; }

// Lists a block the encoder now holds (or frees it and fails when the list cannot grow).
void* Track(void* p) {
    if (p == nullptr) throw EncodeFailed{};
    try {
        g_live.insert(reinterpret_cast<std::uintptr_t>(p));
    } catch (const std::bad_alloc&) {
        std::free(p);
        throw EncodeFailed{};
    }
    return p;
}

void* PngMalloc(std::size_t size) { return Track(AllowAllocation() ? std::malloc(size) : nullptr); }

void* PngRealloc(void* old, std::size_t size) {
    if (old == nullptr) return PngMalloc(size);
    const auto old_address = reinterpret_cast<std::uintptr_t>(old);
    void* p = AllowAllocation() ? std::realloc(old, size) : nullptr;
    if (p == nullptr) throw EncodeFailed{};  // `old` is still live and still listed
    g_live.erase(old_address);
    return Track(p);
}

void PngFree(void* p) {
    if (p == nullptr) return;
    g_live.erase(reinterpret_cast<std::uintptr_t>(p));
    std::free(p);
}

// stb's own checks (all on its allocations or internal invariants) end the encoding instead of the process.
void PngCheck(bool ok) {
    if (!ok) throw EncodeFailed{};
}

}  // namespace

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#define STBIW_MALLOC(size) PngMalloc(size)
#define STBIW_REALLOC(p, size) PngRealloc(p, size)
#define STBIW_FREE(p) PngFree(p)
#define STBIW_ASSERT(x) PngCheck(static_cast<bool>(x))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <stb_image_write.h>
#pragma GCC diagnostic pop

namespace qs::gui {
namespace {

void AppendBytes(void* context, void* data, int size) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(context);
    const auto* p = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), p, p + size);
}

}  // namespace

bool EncodePng(int width, int height, const std::uint8_t* rgba, bool bottom_up, std::vector<std::uint8_t>& png) {
    png.clear();
    g_live.clear();
    bool ok = false;
    try {
        stbi_flip_vertically_on_write(bottom_up ? 1 : 0);
        ok = stbi_write_png_to_func(AppendBytes, &png, width, height, 4, rgba, width * 4) != 0 && !png.empty();
    } catch (const EncodeFailed&) {
    } catch (const std::bad_alloc&) {  // the output vector's growth
    }
    for (const std::uintptr_t p : g_live) std::free(reinterpret_cast<void*>(p));
    g_live.clear();
    if (!ok) std::vector<std::uint8_t>().swap(png);
    return ok;
}

void FailPngAllocationsAfterForTest(long count) { g_allowed = count; }

}  // namespace qs::gui
