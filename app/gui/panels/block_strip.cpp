#include "gui/panels/block_strip.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/quantize.hpp"

namespace qs::gui {
namespace {

struct StripChart {
    std::string title;
    const std::vector<double>* values = nullptr;  // the params' s or the cache's z: borrowed, not copied
    double lo = 0, hi = 1;
    bool integers = false;
};

// The z values as doubles and both charts' ranges, remade only for another quantization.
const BlockStripCache& UpdateCache(BlockStripCache& c, const QuantView& view) {
    const QuantParams& p = *view.params;
    if (view.generation != 0 && c.generation == view.generation && c.params == &p) return c;
    c.generation = view.generation;
    c.params = &p;
    ++c.builds;
    // From 0 to the largest, or down to the smallest where a ggml type stores negative d: its bars hang below
    // the axis and must stay inside the chart.
    c.s_lo = c.s_hi = 0.0;
    for (double v : p.scale) {
        c.s_lo = std::min(c.s_lo, v);
        c.s_hi = std::max(c.s_hi, v);
    }
    c.s_lo *= 1.05;
    c.s_hi *= 1.05;
    if (c.s_hi == c.s_lo) c.s_hi = 1.0;
    c.z.assign(p.zero_point.begin(), p.zero_point.end());
    c.z_lo = c.z_hi = 0.0;
    c.any_z = false;
    for (double v : c.z) {
        c.z_lo = std::min(c.z_lo, v);
        c.z_hi = std::max(c.z_hi, v);
        c.any_z = c.any_z || v != 0.0;
    }
    if (c.z_hi == c.z_lo) c.z_hi = c.z_lo + 1.0;
    return c;
}

// Draws one chart in [a, b]; returns the block under the mouse (or -1) and whether it was clicked.
std::int64_t DrawChart(ImDrawList* dl, const StripChart& c, ImVec2 a, ImVec2 b, std::int64_t highlight, bool& clicked,
                       std::int64_t& hover_last) {
    const float font = ImGui::GetFontSize();
    dl->AddText(a, ImGui::GetColorU32(ImGuiCol_Text), FitText(c.title, b.x - a.x).c_str());
    const float label_w = std::max(ImGui::CalcTextSize(TickLabel(c.hi, 4).c_str()).x, ImGui::CalcTextSize(TickLabel(c.lo, 4).c_str()).x);
    const float plot_x0 = a.x + std::min(label_w + font * 0.5f, (b.x - a.x) * 0.4f);
    const float top = a.y + ImGui::GetTextLineHeightWithSpacing() + font * 0.3f, bottom = b.y - font * 0.3f;
    if (bottom - top < 4.0f || b.x - plot_x0 < 8.0f) return -1;
    PlotAxis y;
    y.lo = c.lo;
    y.hi = c.hi;
    y.p0 = bottom;
    y.p1 = top;
    dl->AddRect(ImVec2(plot_x0 - 1.0f, top - 1.0f), ImVec2(b.x + 1.0f, bottom + 1.0f), ImGui::GetColorU32(ImGuiCol_Border));
    DrawTicksLeft(dl, y, plot_x0 - 1.0f, 2, c.integers);
    DrawBars(dl, *c.values, y, std::clamp(0.0, c.lo, c.hi), plot_x0, b.x, palette::kBlockBar, palette::kBlockBarSpan, highlight);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    if (!ImGui::IsWindowHovered() || mouse.y < top || mouse.y > bottom) return -1;
    std::int64_t first = 0, last = -1;
    BarsAt(c.values->size(), plot_x0, b.x, mouse.x, first, last);
    if (first > last) return -1;
    clicked = ImGui::IsMouseClicked(ImGuiMouseButton_Left);
    hover_last = last;
    return first;
}

}  // namespace

float BlockStripHeight(const QuantView& view) {
    if (!view.valid() || view.params->block_count <= 1) return 0.0f;
    return std::round(ImGui::GetTextLineHeightWithSpacing() + ImGui::GetFontSize() * 3.2f);
}

std::int64_t DrawBlockStrip(BlockStripCache& cache, const QuantView& view, std::int64_t highlight, ImVec2 size) {
    const QuantParams& p = *view.params;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImGui::Dummy(size);
    if (p.block_count <= 1) return -1;
    const std::string kind_name = BlockKind(*view.config);
    const char* kind = kind_name.c_str();
    const std::string scale_name = stored_pair_names(*view.config).scale;  // "s", "d", "block scale X"
    if (p.on_demand()) {
        // Too many tiny blocks to store their pairs (params.hpp): their ranges, not a bar each.
        double s_min, s_max;
        std::int32_t z_min, z_max;
        p.ranges(s_min, s_max, z_min, z_max);
        const std::string line = FormatInteger(p.block_count) + " " + kind + "s of " +
                                 FormatInteger(view.tensor->numel() / p.block_count) + ": s from " + FormatNumber(s_min) +
                                 " to " + FormatNumber(s_max) + ", z from " + FormatInteger(z_min) + " to " +
                                 FormatInteger(z_max) + " (hover a cell for its own)";
        ImGui::GetWindowDrawList()->AddText(origin, ImGui::GetColorU32(ImGuiCol_TextDisabled), line.c_str());
        return -1;
    }
    const BlockStripCache& c = UpdateCache(cache, view);
    const std::string count = std::to_string(p.block_count);
    const StripChart s{scale_name + " per " + kind + " (" + count + ")", &p.scale, c.s_lo, c.s_hi, false};
    const StripChart z{std::string("z per ") + kind, &c.z, c.z_lo, c.z_hi, true};
    const bool any_z = c.any_z;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float gap = ImGui::GetFontSize() * 1.5f;
    const float s_w = any_z ? std::floor((size.x - gap) * 0.6f) : size.x;
    bool clicked = false;
    std::int64_t last = -1;
    std::int64_t hovered = DrawChart(dl, s, origin, ImVec2(origin.x + s_w, origin.y + size.y), highlight, clicked, last);
    if (any_z && hovered < 0) {
        hovered = DrawChart(dl, z, ImVec2(origin.x + s_w + gap, origin.y), ImVec2(origin.x + size.x, origin.y + size.y),
                            highlight, clicked, last);
    } else if (any_z) {
        bool unused = false;
        std::int64_t unused_last = -1;
        DrawChart(dl, z, ImVec2(origin.x + s_w + gap, origin.y), ImVec2(origin.x + size.x, origin.y + size.y), highlight,
                  unused, unused_last);
    }
    if (hovered < 0) return -1;
    const std::size_t h = static_cast<std::size_t>(hovered);
    ImGui::BeginTooltip();
    if (last > hovered) {
        double lo = p.scale[h], hi = lo;
        for (std::int64_t i = hovered; i <= last; ++i) {
            lo = std::min(lo, p.scale[static_cast<std::size_t>(i)]);
            hi = std::max(hi, p.scale[static_cast<std::size_t>(i)]);
        }
        ImGui::Text("%ss %lld to %lld: %s from %s to %s", kind, static_cast<long long>(hovered), static_cast<long long>(last),
                    scale_name.c_str(), FormatNumber(lo).c_str(), FormatNumber(hi).c_str());
        ImGui::TextDisabled("zoom the window wider to see them one by one; click picks %s %lld", kind,
                            static_cast<long long>(hovered));
    } else {
        ImGui::Text("%s %lld of %lld", kind, static_cast<long long>(hovered), static_cast<long long>(p.block_count));
        ImGui::TextUnformatted(StoredPairText(view, hovered).c_str());
        ImGui::TextDisabled("click: follow its first element; the histogram shows its values and grid");
    }
    ImGui::EndTooltip();
    return clicked ? hovered : -1;
}

}  // namespace qs::gui
