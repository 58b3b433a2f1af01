#include "gui/panels/figure_tiles.hpp"

#include <algorithm>
#include <numeric>

#include "gui/document/document.hpp"
#include "quantscope/fnv1a.hpp"

namespace qs::gui {
namespace {

std::uint64_t KeyOf(const QuantView& v, std::int64_t slice) {
    Fnv1a h;
    h.add(v.generation);
    h.add(v.tensor_generation);
    h.add(static_cast<const void*>(v.data));
    h.add(slice);
    return h.value();
}

}  // namespace

void FigureTiles::bind(const QuantView& view, std::int64_t slice) {
    view_ = view;
    slice_ = slice;
    if (has_window_ && window_generation_ != KeyOf(view, slice)) has_window_ = false;
    for (int k = 0; k < 4; ++k) {
        tiles_[static_cast<std::size_t>(k)].reduce = [this, k](const CellWindow& w, std::int64_t fy, std::int64_t fx,
                                                              Reduction r, float* out) { reduce(k, w, fy, fx, r, out); };
        tiles_[static_cast<std::size_t>(k)].value = [this, k](std::int64_t row, std::int64_t col) {
            return value(k, row, col);
        };
    }
}

bool FigureTiles::window_holds(const CellWindow& w) const {
    const CellWindow& h = window_.window;
    return has_window_ && w.row0 >= h.row0 && w.col0 >= h.col0 && w.row0 + w.rows <= h.row0 + h.rows &&
           w.col0 + w.cols <= h.col0 + h.cols;
}

void FigureTiles::take_asked_blocks(std::int64_t& fy, std::int64_t& fx) {
    fy = asked_fy_;
    fx = asked_fx_;
    asked_fy_ = asked_fx_ = 0;
}

const OverviewGrid& FigureTiles::grid_of(int kind, const QuantOverview& o) const {
    return kind == Original ? view_.data->values.grid : o.grid;
}

const float* FigureTiles::overview_blocks(int kind, const QuantOverview& o) const {
    const float* blocks = kind == Original      ? view_.data->values.mean.data()
                          : kind == Codes       ? o.codes_mean.data()
                          : kind == Dequantized ? o.dequantized_mean.data()
                                                : o.error_max.data();
    return blocks + slice_ * grid_of(kind, o).cells_per_slice();
}

const QuantOverview& FigureTiles::overview_for(std::int64_t fy, std::int64_t fx) {
    const QuantOverview& doc = *view_.overview;
    const TensorData& data = *view_.data;
    // Texels of whole blocks (both grids start at cell 0, a texture's window at a multiple of its blocks).
    if ((fy % doc.grid.fy == 0 && fx % doc.grid.fx == 0) || data.numel() > kSyncElements) return doc;
    OverviewGrid grid = data.values.grid;  // never finer than the document's finest
    grid.fy = std::max(grid.fy, fy);
    grid.fx = std::max(grid.fx, fx);
    Fnv1a key;
    key.add(KeyOf(view_, slice_));
    key.add(grid.fy);
    key.add(grid.fx);
    if (!has_own_ || own_key_ != key.value()) {
        own_ = quantize_overview(data.view, *view_.params, *view_.config, grid, &data.values);
        own_key_ = key.value();
        has_own_ = true;
    }
    return own_;
}

void FigureTiles::reduce(int kind, const CellWindow& w, std::int64_t fy, std::int64_t fx, Reduction reduction,
                         float* out) {
    if (kind != Original) {  // what the document's next overview is computed at
        asked_fy_ = std::gcd(asked_fy_, fy);
        asked_fx_ = std::gcd(asked_fx_, fx);
    }
    // The finest overview there is: the tensor's own grid (exact up to kOverviewCells cells). The quantization's
    // overview follows the textures' blocks down to it; the values' stays on it. Cells finer than that, in a
    // window small enough, are computed at full resolution. Computing them again where an overview holds them
    // cost a second pass over every visible cell per slider step (issue 25).
    const OverviewGrid& finest = view_.data->values.grid;
    const bool finer = kind == Original ? !finest.exact() : fy < finest.fy || fx < finest.fx;
    if (window_holds(w) || (finer && w.rows * w.cols <= kExactWindowCells)) {
        if (!window_holds(w)) {
            quantize_window(view_.data->view, *view_.params, *view_.config, slice_, w, window_);
            has_window_ = true;
            window_generation_ = KeyOf(view_, slice_);
            ++windows_computed_;
        }
        const CellWindow& h = window_.window;
        const CellWindow local{w.row0 - h.row0, w.col0 - h.col0, w.rows, w.cols};
        switch (kind) {
            case Original: return downsample(window_.original.data(), h.cols, local, fy, fx, reduction, out);
            case Codes: return downsample(window_.codes.data(), h.cols, local, fy, fx, reduction, out);
            case Dequantized: return downsample(window_.dequantized.data(), h.cols, local, fy, fx, reduction, out);
            default: return downsample(window_.error.data(), h.cols, local, fy, fx, reduction, out);
        }
    }
    reduce_overview(kind, kind == Original ? *view_.overview : overview_for(fy, fx), w, fy, fx, reduction, out);
}

// Each texel of the window from the overview blocks it overlaps: their mean weighted by the overlap, or their
// maximum (an outlier's block stays visible, as in a max-reduction of the cells). A texel that is one block
// (the overview computed at the texture's blocks) is that block.
void FigureTiles::reduce_overview(int kind, const QuantOverview& o, const CellWindow& w, std::int64_t fy, std::int64_t fx,
                                  Reduction reduction, float* out) const {
    const OverviewGrid& g = grid_of(kind, o);
    const float* blocks = overview_blocks(kind, o);
    if (g.exact()) {
        downsample(blocks, g.cols, w, fy, fx, reduction, out);
        return;
    }
    const std::int64_t out_rows = reduced_extent(w.rows, fy), out_cols = reduced_extent(w.cols, fx);
    if (g.fy == fy && g.fx == fx && w.row0 % fy == 0 && w.col0 % fx == 0) {
        for (std::int64_t i = 0; i < out_rows; ++i)
            std::copy_n(blocks + (w.row0 / fy + i) * g.out_cols() + w.col0 / fx, out_cols, out + i * out_cols);
        return;
    }
    for (std::int64_t i = 0; i < out_rows; ++i) {
        const std::int64_t r0 = w.row0 + i * fy, r1 = std::min(w.row0 + w.rows, r0 + fy);
        for (std::int64_t j = 0; j < out_cols; ++j) {
            const std::int64_t c0 = w.col0 + j * fx, c1 = std::min(w.col0 + w.cols, c0 + fx);
            double sum = 0, area = 0;
            float top = 0;
            bool first = true;
            for (std::int64_t br = r0 / g.fy; br <= (r1 - 1) / g.fy; ++br) {
                const double h = static_cast<double>(std::min(r1, (br + 1) * g.fy) - std::max(r0, br * g.fy));
                for (std::int64_t bc = c0 / g.fx; bc <= (c1 - 1) / g.fx; ++bc) {
                    const double wd = static_cast<double>(std::min(c1, (bc + 1) * g.fx) - std::max(c0, bc * g.fx));
                    const float v = blocks[br * g.out_cols() + bc];
                    sum += static_cast<double>(v) * h * wd;
                    area += h * wd;
                    top = first ? v : std::max(top, v);
                    first = false;
                }
            }
            out[i * out_cols + j] = reduction == Reduction::Max ? top : static_cast<float>(sum / area);
        }
    }
}

double FigureTiles::value(int kind, std::int64_t row, std::int64_t col) const {
    if (window_holds(CellWindow{row, col, 1, 1})) {
        const CellWindow& h = window_.window;
        const auto i = static_cast<std::size_t>((row - h.row0) * h.cols + (col - h.col0));
        switch (kind) {
            case Original: return window_.original[i];
            case Codes: return window_.codes[i];
            case Dequantized: return window_.dequantized[i];
            default: return window_.error[i];
        }
    }
    const QuantOverview& o = *view_.overview;
    const OverviewGrid& g = grid_of(kind, o);
    if (g.exact()) return overview_blocks(kind, o)[row * g.cols + col];  // the cell itself
    const std::int64_t flat = (slice_ * view_.data->rows() + row) * view_.data->cols() + col;
    const ElementTrace t = TraceOf(view_, flat);
    switch (kind) {
        case Original: return t.r;
        case Codes: return t.code;
        case Dequantized: return t.dequantized;
        default: return t.error;
    }
}

}  // namespace qs::gui
