#include "gui/widgets/style.hpp"

#include <string>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

// Latin-1 plus the symbols the figure's text uses: dashes, primes, arrows, minus, multiplication, <= >=.
// Read by the atlas builder after BuildFonts returns, hence constant storage.
const ImWchar kGlyphRanges[] = {
    0x0020, 0x00FF,  // Basic Latin + Latin-1 (x, middle dot, superscripts)
    0x0394, 0x0394,  // Greek capital delta
    0x03B1, 0x03B1,  // alpha (the clipping range of the landscape panel)
    0x2010, 0x2044,  // dashes, quotes, primes, ellipsis
    0x2190, 0x2193,  // arrows
    0x2212, 0x2212,  // minus sign
    0x2248, 0x2248,  // almost equal
    0x2264, 0x2265,  // <= >=
    0,
};

// DejaVuSans.ttf is 740 KB.
constexpr std::size_t kMaxFontBytes = std::size_t{16} << 20;

// The font's bytes (empty when it is not installed), read once.
const std::string& DejaVuSans() {
    static const std::string font = [] {
        for (const char* path : {"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                 "/usr/share/fonts/TTF/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"}) {
            try {
                return read_small_file(path, kMaxFontBytes);
            } catch (const Error&) {
                // not there (or not a font file): try the next place
            }
        }
        return std::string();
    }();
    return font;
}

}  // namespace

FontSet BuildFonts(float pixel_size, float annotation_scale) {
    ImGuiIO& io = ImGui::GetIO();
    io.Fonts->Clear();
    FontSet set;
    set.pixel_size = pixel_size;
    const std::string& font = DejaVuSans();
    if (!font.empty()) {
        ImFontConfig cfg;
        cfg.OversampleH = 2;
        cfg.OversampleV = 1;
        cfg.FontDataOwnedByAtlas = false;  // read once, kept for the process
        void* data = const_cast<char*>(font.data());
        const int size = static_cast<int>(font.size());
        set.ui = io.Fonts->AddFontFromMemoryTTF(data, size, pixel_size, &cfg, kGlyphRanges);
        set.annotation =
            io.Fonts->AddFontFromMemoryTTF(data, size, pixel_size * annotation_scale, &cfg, kGlyphRanges);
        set.dejavu = set.ui && set.annotation;
    }
    if (!set.dejavu) {
        io.Fonts->Clear();
        // The built-in font is a 13 px bitmap: scale it as a whole (blurry but legible) rather than not at all.
        ImFontConfig cfg;
        cfg.SizePixels = pixel_size;
        set.ui = io.Fonts->AddFontDefault(&cfg);
        cfg.SizePixels = pixel_size * annotation_scale;
        set.annotation = io.Fonts->AddFontDefault(&cfg);
    }
    io.FontDefault = set.ui;
    io.Fonts->Build();
    return set;
}

void ApplyStyle(bool light, float scale) {
    ImGuiStyle style;  // start from the defaults so that repeated calls do not compound the scale
    if (light) {
        ImGui::StyleColorsLight(&style);
        ImVec4* c = style.Colors;
        c[ImGuiCol_WindowBg] = ImVec4(1.0f, 1.0f, 1.0f, 1.0f);
        c[ImGuiCol_ChildBg] = ImVec4(1.0f, 1.0f, 1.0f, 0.0f);
        c[ImGuiCol_Text] = ImVec4(0.08f, 0.08f, 0.08f, 1.0f);
        c[ImGuiCol_TextDisabled] = ImVec4(0.38f, 0.38f, 0.38f, 1.0f);
        c[ImGuiCol_Border] = ImVec4(0.55f, 0.55f, 0.55f, 1.0f);
        c[ImGuiCol_PopupBg] = ImVec4(1.0f, 1.0f, 0.97f, 0.98f);
    } else {
        ImGui::StyleColorsDark(&style);
        style.Colors[ImGuiCol_Text] = ImVec4(0.96f, 0.96f, 0.96f, 1.0f);
        style.Colors[ImGuiCol_Border] = ImVec4(0.50f, 0.50f, 0.55f, 1.0f);
    }
    style.WindowRounding = 4.0f;
    style.FrameRounding = 3.0f;
    style.GrabRounding = 3.0f;
    style.FrameBorderSize = light ? 1.0f : 0.0f;
    style.ScaleAllSizes(scale);
    ImGui::GetStyle() = style;
}

}  // namespace qs::gui
