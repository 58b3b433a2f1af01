// The per-channel / per-group blocks drawn over a heatmap (heatmap.hpp: DrawBlockGrid). Three layouts cover
// QuantParams' blocks without testing every cell: blocks of whole rows (channels along rows, groups that are
// a multiple of a row), blocks that tile a row (channels along columns, groups dividing a row), and ragged
// groups, which are drawn cell by cell only while few, big cells are in view.
#include <algorithm>
#include <cmath>

#include "gui/widgets/heatmap.hpp"
#include "gui/widgets/palette.hpp"

namespace qs::gui {
namespace {

constexpr float kMinBlockPx = 4.0f;          // closer outlines would be a grey wash, not a grid
constexpr std::int64_t kMaxRaggedCells = 65536;

struct Mapping {
    const HeatmapView& view;
    ImVec2 img_min, img_max;
    float cw, ch;
    float x(double col) const { return std::round(img_min.x + static_cast<float>((col - view.x0) * cw)); }
    float y(double row) const { return std::round(img_min.y + static_cast<float>((row - view.y0) * ch)); }
};

float LineWidth(float block_px) { return block_px >= 24.0f ? 2.0f : 1.0f; }

// Blocks of `band` whole rows each.
void DrawRowBands(ImDrawList* dl, const BlockGrid& g, std::int64_t rows, std::int64_t cols, const Mapping& m,
                  std::int64_t r0, std::int64_t r1) {
    const std::int64_t band = g.stride / cols;
    if (band >= rows || static_cast<float>(band) * m.ch < kMinBlockPx) return;
    const float w = LineWidth(static_cast<float>(band) * m.ch);
    // Band starts are the rows whose first cell starts a block: offset is a multiple of cols.
    const std::int64_t first = ((g.offset + r0 * cols) / g.stride * g.stride - g.offset) / cols;
    for (std::int64_t r = first; r < r1; r += band) {
        const std::int64_t block = ((g.offset + r * cols) / g.stride) % g.count;
        if (block % 2 == 1) dl->AddRectFilled(ImVec2(m.img_min.x, m.y(static_cast<double>(r))),
                                              ImVec2(m.img_max.x, m.y(static_cast<double>(std::min(r + band, rows)))),
                                              palette::kBlockTint);
        if (r > 0) dl->AddLine(ImVec2(m.img_min.x, m.y(static_cast<double>(r))), ImVec2(m.img_max.x, m.y(static_cast<double>(r))),
                               palette::kBlockOutline, w);
    }
}

// Blocks of `stride` cells tiling each row.
void DrawColumnBands(ImDrawList* dl, const BlockGrid& g, std::int64_t cols, const Mapping& m, std::int64_t r0,
                     std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    if (static_cast<float>(g.stride) * m.cw < kMinBlockPx) return;
    const std::int64_t per_row = cols / g.stride;
    const bool rows_share = per_row % g.count == 0;  // (r, c) and (r + 1, c) in one block: columns of blocks
    const float w = LineWidth(static_cast<float>(g.stride) * m.cw);
    const std::int64_t k0 = c0 / g.stride;
    if (rows_share || m.ch >= kMinBlockPx) {
        const std::int64_t last = rows_share ? r0 + 1 : r1;  // shared: one row's pattern, drawn full height
        for (std::int64_t r = r0; r < last; ++r) {
            for (std::int64_t k = k0; k * g.stride < c1; ++k) {
                if (g.block_at(cols, r, k * g.stride) % 2 == 0) continue;
                const float top = rows_share ? m.img_min.y : m.y(static_cast<double>(r));
                const float bottom = rows_share ? m.img_max.y : m.y(static_cast<double>(r + 1));
                dl->AddRectFilled(ImVec2(m.x(static_cast<double>(k * g.stride)), top),
                                  ImVec2(m.x(static_cast<double>((k + 1) * g.stride)), bottom), palette::kBlockTint);
            }
        }
    }
    for (std::int64_t k = std::max<std::int64_t>(k0, 1); k * g.stride < c1; ++k) {
        const float x = m.x(static_cast<double>(k * g.stride));
        dl->AddLine(ImVec2(x, m.img_min.y), ImVec2(x, m.img_max.y), palette::kBlockOutline, w);
    }
    if (!rows_share && m.ch >= kMinBlockPx) {
        for (std::int64_t r = std::max<std::int64_t>(r0, 1); r < r1; ++r)
            dl->AddLine(ImVec2(m.img_min.x, m.y(static_cast<double>(r))), ImVec2(m.img_max.x, m.y(static_cast<double>(r))),
                        palette::kBlockOutline, LineWidth(m.ch));
    }
}

// Groups that neither divide a row nor are whole rows: cell by cell.
void DrawRagged(ImDrawList* dl, const BlockGrid& g, std::int64_t rows, std::int64_t cols, const Mapping& m,
                std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
    if (m.cw < kMinBlockPx || m.ch < kMinBlockPx || (r1 - r0) * (c1 - c0) > kMaxRaggedCells) return;
    const float w = LineWidth(std::min(m.cw, m.ch));
    for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
            const std::int64_t b = g.block_at(cols, r, c);
            const ImVec2 a(m.x(static_cast<double>(c)), m.y(static_cast<double>(r)));
            const ImVec2 z(m.x(static_cast<double>(c + 1)), m.y(static_cast<double>(r + 1)));
            if (b % 2 == 1) dl->AddRectFilled(a, z, palette::kBlockTint);
            if (c + 1 < cols && g.block_at(cols, r, c + 1) != b) dl->AddLine(ImVec2(z.x, a.y), z, palette::kBlockOutline, w);
            if (r + 1 < rows && g.block_at(cols, r + 1, c) != b) dl->AddLine(ImVec2(a.x, z.y), z, palette::kBlockOutline, w);
        }
    }
}

}  // namespace

void DrawBlockGrid(ImDrawList* dl, const BlockGrid& g, std::int64_t rows, std::int64_t cols, const HeatmapView& view,
                   ImVec2 img_min, ImVec2 img_max, float cw, float ch) {
    if (!g.active() || rows <= 0 || cols <= 0) return;
    const Mapping m{view, img_min, img_max, cw, ch};
    const std::int64_t r0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(view.y0)));
    const std::int64_t r1 = std::min<std::int64_t>(rows, static_cast<std::int64_t>(std::ceil(view.y1)));
    const std::int64_t c0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(view.x0)));
    const std::int64_t c1 = std::min<std::int64_t>(cols, static_cast<std::int64_t>(std::ceil(view.x1)));
    if (g.stride % cols == 0) DrawRowBands(dl, g, rows, cols, m, r0, r1);
    else if (cols % g.stride == 0) DrawColumnBands(dl, g, cols, m, r0, r1, c0, c1);
    else DrawRagged(dl, g, rows, cols, m, r0, r1, c0, c1);
}

}  // namespace qs::gui
