// What the last frame drew, read back from its draw lists glyph by glyph: the text a class sees (a test that
// nothing gives a covered number away, that a slide shows its tab) and whether any two glyphs overlap (text
// run over other text).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>  // ImRect

#include "gui/widgets/palette.hpp"

namespace qs::gui_test {

struct DrawnGlyph {
    int list = 0, at = 0;  // draw list and first vertex
    ImVec2 a, b;           // the quad's corners
    unsigned c = 0;        // its code point
};

// Every glyph quad (four vertices with a glyph's texture corners) in drawing order, without those a cover (an
// opaque rectangle of palette::kCover drawn later in the same list) hides from view.
inline std::vector<DrawnGlyph> DrawnGlyphs() {
    using Key = std::tuple<float, float, float, float>;
    std::map<Key, unsigned> glyphs;
    for (const ImFont* font : ImGui::GetIO().Fonts->Fonts)
        for (const ImFontGlyph& g : font->Glyphs)
            if (g.Visible) glyphs[Key(g.U0, g.V0, g.U1, g.V1)] = g.Codepoint;
    const ImVec2 white = ImGui::GetIO().Fonts->TexUvWhitePixel;
    std::vector<DrawnGlyph> shown;
    const ImDrawData* dd = ImGui::GetDrawData();
    REQUIRE(dd != nullptr);
    for (int l = 0; l < dd->CmdListsCount; ++l) {
        const ImVector<ImDrawVert>& v = dd->CmdLists[l]->VtxBuffer;
        std::vector<DrawnGlyph> found;
        std::vector<std::pair<int, ImRect>> covers;
        for (int i = 0; i + 3 < v.Size;) {
            const bool solid = v[i].uv.x == white.x && v[i].uv.y == white.y;
            if (solid && v[i].col == qs::gui::palette::kCover && v[i + 1].col == v[i].col && v[i + 2].col == v[i].col) {
                covers.emplace_back(i, ImRect(v[i].pos, v[i + 2].pos));
                i += 4;
                continue;
            }
            const auto it = glyphs.find(Key(v[i].uv.x, v[i].uv.y, v[i + 2].uv.x, v[i + 2].uv.y));
            if (it == glyphs.end() || v[i + 1].uv.x != v[i + 2].uv.x || v[i + 3].uv.x != v[i].uv.x) {
                ++i;
                continue;
            }
            found.push_back(DrawnGlyph{l, i, v[i].pos, v[i + 2].pos, it->second});
            i += 4;
        }
        for (const DrawnGlyph& g : found) {
            const ImVec2 mid((g.a.x + g.b.x) * 0.5f, (g.a.y + g.b.y) * 0.5f);
            bool hidden = false;
            for (const auto& [at, rect] : covers) hidden = hidden || (at > g.at && rect.Contains(mid));
            if (!hidden) shown.push_back(g);
        }
    }
    return shown;
}

// The text the last frame shows, in drawing order. Spaces are left out (a search needs no guess at word gaps:
// "z = -77" reads "z=-77"); a new line where the text's baseline changes. A real minus sign reads as '-'.
inline std::string DrawnText() {
    std::string out;
    int list = -1;
    float last_bottom = -1e9f;
    for (const DrawnGlyph& g : DrawnGlyphs()) {
        if (g.list != list && list >= 0) out += '\n';
        list = g.list;
        if (std::fabs(g.b.y - last_bottom) > (g.b.y - g.a.y) && g.c != '-' && g.c != 0x2212 && g.c != '.') out += '\n';
        if (g.c != '-' && g.c != 0x2212 && g.c != '.') last_bottom = g.b.y;
        out += g.c == 0x2212 ? '-' : g.c < 0x80 ? static_cast<char>(g.c) : '~';
    }
    return out + '\n';
}

// Pairs of glyphs of one draw list that overlap by more than a third of the smaller one's area: text drawn
// over other text. Returns the first such pair's two characters and position as a message, empty for none.
inline std::string OverlappingGlyphs() {
    const std::vector<DrawnGlyph> g = DrawnGlyphs();
    for (std::size_t i = 0; i < g.size(); ++i)
        for (std::size_t j = i + 1; j < g.size(); ++j) {
            if (g[i].list != g[j].list) continue;
            const float w = std::min(g[i].b.x, g[j].b.x) - std::max(g[i].a.x, g[j].a.x);
            const float h = std::min(g[i].b.y, g[j].b.y) - std::max(g[i].a.y, g[j].a.y);
            if (w <= 0.0f || h <= 0.0f) continue;
            const float area_i = (g[i].b.x - g[i].a.x) * (g[i].b.y - g[i].a.y);
            const float area_j = (g[j].b.x - g[j].a.x) * (g[j].b.y - g[j].a.y);
            if (w * h > std::min(area_i, area_j) / 3.0f)
                return std::string("'") + static_cast<char>(g[i].c < 0x80 ? g[i].c : '~') + "' and '" +
                       static_cast<char>(g[j].c < 0x80 ? g[j].c : '~') + "' at " + std::to_string(g[i].a.x) + ", " +
                       std::to_string(g[i].a.y);
        }
    return {};
}

// The drawn glyphs' centre of the first character of `text` (spaces left out, as DrawnText reads), else none.
inline std::optional<ImVec2> DrawnAt(const std::string& text) {
    const std::vector<DrawnGlyph> glyphs = DrawnGlyphs();
    std::string chars;
    for (const DrawnGlyph& g : glyphs) chars += g.c < 0x80 ? static_cast<char>(g.c) : '~';
    const std::size_t i = chars.find(text);
    if (i == std::string::npos) return std::nullopt;
    return ImVec2((glyphs[i].a.x + glyphs[i].b.x) * 0.5f, (glyphs[i].a.y + glyphs[i].b.y) * 0.5f);
}

}  // namespace qs::gui_test
