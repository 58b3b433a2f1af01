#include "gui/widgets/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <imgui.h>
#include <imgui_internal.h>  // the current window's name, for CutTextWindows

namespace qs::gui {

Sym Symbols() {
    const ImFont* f = ImGui::GetFont();
    const bool rich = f && f->FindGlyphNoFallback(0x2192) && f->FindGlyphNoFallback(0x2212) &&
                      f->FindGlyphNoFallback(0x2032) && f->FindGlyphNoFallback(0x2014);
    const char* alpha = f && f->FindGlyphNoFallback(0x03B1) ? "\xCE\xB1" : "alpha";
    if (rich) return Sym{"\xE2\x86\x92", "\xE2\x88\x92", "\xE2\x80\xB2", "\xC3\x97", "\xE2\x80\x94", alpha};
    return Sym{"->", "-", "'", "x", "-", alpha};
}

std::string FormatNumber(double v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    std::string s = buf;
    if (!s.empty() && s[0] == '-') s = std::string(Symbols().minus) + s.substr(1);
    return s;
}

std::string FormatInteger(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(std::llround(v)));
    return buf;
}

std::string FormatFixed(double v, int decimals, int max_decimals) {
    char buf[48];
    if (decimals > max_decimals) {
        std::snprintf(buf, sizeof buf, "%.3g", v);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "%.*f", std::max(decimals, 0), v);
    if (buf[0] == '-' && std::strspn(buf + 1, "0.") == std::strlen(buf + 1)) std::memmove(buf, buf + 1, std::strlen(buf));
    return buf;
}

std::string SqnrWord(double comparable_db) {
    if (std::isfinite(comparable_db)) return "";
    return comparable_db > 0 ? "exact" : "no signal";
}

std::string FormatSqnr(double comparable_db, bool unit) {
    if (!std::isfinite(comparable_db)) return SqnrWord(comparable_db);
    return FormatFixed(comparable_db, 2, 4) + (unit ? " dB" : "");
}

std::string FitText(const std::string& text, float width) {
    if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
    const char* const dots = "...";
    const float room = width - ImGui::CalcTextSize(dots).x;
    std::size_t cut = text.size();
    // Whole words first: drop them from the end while the rest does not fit.
    while (cut > 0) {
        const std::size_t space = text.rfind(' ', cut - 1);
        if (space == std::string::npos || space == 0) break;
        cut = space;
        if (ImGui::CalcTextSize(text.substr(0, cut).c_str()).x <= room) return text.substr(0, cut) + dots;
    }
    // One long word: cut it at a character boundary (never inside a UTF-8 sequence).
    cut = text.size();
    while (cut > 0 && ImGui::CalcTextSize(text.substr(0, cut).c_str()).x > room) {
        --cut;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    }
    return text.substr(0, cut) + dots;
}

namespace {

std::vector<std::string> SplitAtSpaces(const std::string& text) {
    std::vector<std::string> words;
    for (std::size_t start = 0; start <= text.size();) {
        const std::size_t end = std::min(text.find(' ', start), text.size());
        if (end > start) words.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

// Lays the parts out from `start` (drawing them into `dl` unless it is null); returns the height used.
float LayOutParts(ImDrawList* dl, ImVec2 start, const std::vector<std::string>& parts, float width, int highlight,
                  const char* separator, int gap_spaces) {
    const float space = ImGui::CalcTextSize(" ").x;
    const float gap = static_cast<float>(gap_spaces) * space;
    const float sep_w = separator ? ImGui::CalcTextSize(separator).x + gap : gap;
    const float line_h = ImGui::GetTextLineHeightWithSpacing();
    const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
    const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
    float x = start.x, y = start.y;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const bool joined = i >= 2 && separator;  // part 0 is the heading, 1 the first step
        const ImU32 col = static_cast<int>(i) == highlight ? WarningColor() : text;
        // A part wider than the whole width (a code's bits line at a projector's text size) breaks at its
        // spaces instead of running past the edge.
        const std::vector<std::string> pieces =
            ImGui::CalcTextSize(parts[i].c_str()).x > width ? SplitAtSpaces(parts[i]) : std::vector<std::string>{parts[i]};
        for (std::size_t k = 0; k < pieces.size(); ++k) {
            const ImVec2 ts = ImGui::CalcTextSize(pieces[k].c_str());
            const float lead = k > 0 ? space : i == 0 ? 0.0f : (joined ? sep_w : gap);
            if (x > start.x && x + lead + ts.x > start.x + width) {
                x = start.x;
                y += line_h;
            } else if (x > start.x) {
                if (dl && joined && k == 0) dl->AddText(ImVec2(std::round(x + space), std::round(y)), dim, separator);
                x += lead;
            }
            if (dl) DrawTextAt(dl, ImVec2(std::round(x), std::round(y)), col, pieces[k], start.x + width + 1.0f);
            x += ts.x;
        }
    }
    return y + line_h - start.y;
}

}  // namespace

void DrawWrappedParts(const std::vector<std::string>& parts, float width, int highlight, const char* separator,
                      int gap_spaces) {
    const ImVec2 start = ImGui::GetCursorScreenPos();
    const float h = LayOutParts(ImGui::GetWindowDrawList(), start, parts, width, highlight, separator, gap_spaces);
    ImGui::SetCursorScreenPos(start);
    ImGui::Dummy(ImVec2(width, h));
}

float WrappedPartsHeight(const std::vector<std::string>& parts, float width, const char* separator, int gap_spaces) {
    return LayOutParts(nullptr, ImVec2(0.0f, 0.0f), parts, width, -1, separator, gap_spaces);
}

namespace {

struct CutText {
    int frame = -1;
    std::vector<std::string> windows;
};
CutText& Cuts() {
    static CutText cuts;  // the UI thread's: only ever drawn from there
    return cuts;
}

}  // namespace

void DrawTextAt(ImDrawList* dl, ImVec2 pos, ImU32 color, const std::string& text, float right) {
    dl->AddText(pos, color, text.c_str());
    const float end = pos.x + ImGui::CalcTextSize(text.c_str()).x;
    if (end <= std::min(right, dl->GetClipRectMax().x) + 1.0f) return;
    CutText& c = Cuts();
    if (c.frame != ImGui::GetFrameCount()) c = CutText{ImGui::GetFrameCount(), {}};
    const char* name = ImGui::GetCurrentWindow()->Name;
    if (std::find(c.windows.begin(), c.windows.end(), name) == c.windows.end()) c.windows.push_back(name);
}

std::vector<std::string> CutTextWindows() {
    const CutText& c = Cuts();
    return c.frame == ImGui::GetFrameCount() ? c.windows : std::vector<std::string>{};
}

void TextWrappedAtSpaces(const std::string& text) {
    DrawWrappedParts(SplitAtSpaces(text), ImGui::GetContentRegionAvail().x, -1, nullptr, 1);
}

}  // namespace qs::gui
