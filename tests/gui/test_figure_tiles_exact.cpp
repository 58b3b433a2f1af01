// A tensor whose overview is exact (at most kOverviewCells cells): the figure's tiles reduce the overview,
// which holds every cell as quantize gives it, and compute no full-resolution window (issue 25 item 1: the
// window was a second pass over every visible cell per slider step).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gui/panels/figure_tiles.hpp"
#include "gui_test_support.hpp"
#include "quantscope/downsample.hpp"
#include "quantscope/config.hpp"
#include "quantscope/random.hpp"

using namespace qs::gui_test;

TEST_CASE("figure tiles of an exact overview are quantize's cells without a window pass") {
    qs::RandomSpec spec;
    spec.shape = {256, 384};
    spec.seed = 25;
    spec.outliers = 3;
    for (const char* dtype : {"int8", "fp8-e4m3", "q4_0", "nf4"}) {
        CAPTURE(std::string(dtype));
        qs::QuantConfig c;
        if (std::string(dtype) != "int8") {
            qs::parse_dtype(dtype, c);
            c.mode = qs::Mode::Symmetric;
        }
        const SharedQuant q = MakeSharedQuant(qs::generate_random(spec), c);
        REQUIRE(q.data->values.grid.exact());
        qs::gui::FigureTiles tiles;
        tiles.bind(q.view(), 0);
        const std::int64_t cols = 384;
        const auto kinds = {qs::gui::FigureTiles::Original, qs::gui::FigureTiles::Codes,
                            qs::gui::FigureTiles::Dequantized, qs::gui::FigureTiles::Error};
        int mismatches = 0;
        for (const auto& [w, f] : {std::pair{qs::CellWindow{100, 200, 20, 30}, 1}, std::pair{qs::CellWindow{0, 0, 256, 384}, 3}}) {
            const std::int64_t n = qs::reduced_extent(w.rows, f) * qs::reduced_extent(w.cols, f);
            for (int kind : kinds) {
                const qs::Reduction red = kind == qs::gui::FigureTiles::Error ? qs::Reduction::Max : qs::Reduction::Mean;
                std::vector<float> got(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n));
                tiles.tiles(kind)->reduce(w, f, f, red, got.data());
                if (kind == qs::gui::FigureTiles::Codes)
                    qs::downsample(q.result.codes.data(), cols, w, f, f, red, want.data());
                else
                    qs::downsample(kind == qs::gui::FigureTiles::Original      ? q.tensor->values.data()
                                   : kind == qs::gui::FigureTiles::Dequantized ? q.result.dequantized.data()
                                                                               : q.result.error.data(),
                                   cols, w, f, f, red, want.data());
                for (std::int64_t i = 0; i < n; ++i) mismatches += got[static_cast<std::size_t>(i)] != want[static_cast<std::size_t>(i)];
            }
        }
        // Tooltips and printed values: every cell exact.
        for (std::int64_t flat = 0; flat < 256 * cols; flat += 97) {
            const std::int64_t row = flat / cols, col = flat % cols;
            const auto k = static_cast<std::size_t>(flat);
            mismatches += tiles.tiles(qs::gui::FigureTiles::Original)->value(row, col) != q.tensor->values[k];
            mismatches += tiles.tiles(qs::gui::FigureTiles::Codes)->value(row, col) != q.result.codes[k];
            mismatches += tiles.tiles(qs::gui::FigureTiles::Dequantized)->value(row, col) != q.result.dequantized[k];
            mismatches += tiles.tiles(qs::gui::FigureTiles::Error)->value(row, col) != q.result.error[k];
        }
        CHECK(mismatches == 0);
        CHECK(tiles.windows_computed() == 0);
    }
}
