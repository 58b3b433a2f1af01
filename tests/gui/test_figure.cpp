// Tests of the figure: colormaps, the block reduction and binning in core, and an offscreen render of the
// lessons' tensor read back as a PNG. The render needs EGL (Mesa's surfaceless platform): without it the test
// fails, on purpose, rather than skipping.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <stb_image.h>  // implementation in libstb

#include "gui/widgets/colormap.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/widgets/heatmap.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/platform/png_encoder.hpp"
#include "gui_test_support.hpp"
#include "gui/app/figure_png.hpp"
#include "gui/document/quant_view.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/downsample.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

namespace {

using qs::gui::Colormap;
using qs::gui::GetColormapLut;

struct Rgb {
    int r, g, b;
};
Rgb Unpack(std::uint32_t c) { return {int(c & 0xFF), int((c >> 8) & 0xFF), int((c >> 16) & 0xFF)}; }

// A tensor with its quantization, owning everything a QuantView borrows (and the full-size result, which
// the tests compare the figure's values with).
struct Quantized {
    std::shared_ptr<const qs::gui::TensorData> data;
    const qs::Tensor& tensor;
    qs::QuantConfig config;
    qs::QuantParams params;
    qs::QuantResult result;
    qs::QuantOverview overview;
    qs::gui::QuantView view() const {
        qs::gui::QuantView v;
        v.data = data.get();
        v.tensor = &tensor;
        v.config = &config;
        v.params = &params;
        v.overview = &overview;
        v.generation = 1;
        return v;
    }
};

Quantized Make(qs::Tensor tensor, qs::QuantConfig config) {
    auto data = qs::gui::MakeTensorData(std::make_shared<const qs::Tensor>(std::move(tensor)));
    Quantized q{data, *data->floats, config, {}, {}, {}};
    q.result = qs::quantize(q.tensor, q.config, &q.params);
    q.overview = qs::quantize_overview(data->view, q.params, q.config, data->values.grid);
    return q;
}

Quantized Lesson() {
    qs::Preset p = qs::make_preset("lesson");
    return Make(std::move(p.tensor), p.config);
}

std::string TempPath(const std::string& name) {
    const char* dir = std::getenv("QS_FIGURE_PNG_DIR");  // set it to keep the images for a look
    std::string base = dir ? dir : (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    return base + "/qs_test_" + name;
}

std::vector<unsigned char> ReadFile(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(f), {});
}

// The pixel at the center of cell (row, col) of heatmap `panel`.
Rgb CellPixel(const std::vector<std::uint8_t>& rgba, int width, const qs::gui::FigureImageInfo& info, int panel,
              int rows, int cols, int row, int col, float fx = 0.5f, float fy = 0.5f) {
    const float* r = info.image_rects[panel];
    const int x = static_cast<int>(r[0] + (r[2] - r[0]) * (col + fx) / cols);
    const int y = static_cast<int>(r[1] + (r[3] - r[1]) * (row + fy) / rows);
    const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 4;
    return {rgba[i], rgba[i + 1], rgba[i + 2]};
}

}  // namespace

TEST_CASE("coolwarm / viridis and greys have their published end colors") {
    const Rgb blue = Unpack(GetColormapLut(Colormap::Coolwarm)[0]);
    const Rgb red = Unpack(GetColormapLut(Colormap::Coolwarm)[255]);
    CHECK(blue.r == 59);
    CHECK(blue.g == 76);
    CHECK(blue.b == 192);
    CHECK(red.r == 180);
    CHECK(red.g == 4);
    CHECK(red.b == 38);
    // Moreland's midpoint is a light neutral grey (matplotlib: 221, 221, 221).
    const Rgb mid = Unpack(GetColormapLut(Colormap::Coolwarm)[128]);
    CHECK(std::abs(mid.r - 221) <= 4);
    CHECK(std::abs(mid.g - 221) <= 4);
    CHECK(std::abs(mid.b - 221) <= 6);
    // Smooth: no jump between neighbours larger than a few units.
    for (int i = 1; i < 256; ++i) {
        const Rgb a = Unpack(GetColormapLut(Colormap::Coolwarm)[i - 1]);
        const Rgb b = Unpack(GetColormapLut(Colormap::Coolwarm)[i]);
        CHECK(std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b) <= 12);
    }
    const Rgb v0 = Unpack(GetColormapLut(Colormap::Viridis)[0]);
    const Rgb v1 = Unpack(GetColormapLut(Colormap::Viridis)[255]);
    CHECK((v0.r == 0x44 && v0.g == 0x01 && v0.b == 0x54));
    CHECK((v1.r == 0xFD && v1.g == 0xE7 && v1.b == 0x25));
    const Rgb g0 = Unpack(GetColormapLut(Colormap::Greys)[0]);
    const Rgb g1 = Unpack(GetColormapLut(Colormap::Greys)[255]);
    CHECK((g0.r == 255 && g1.r == 0));
}

TEST_CASE("value mapping: clamped / centered / constant data") {
    const auto& lut = GetColormapLut(Colormap::Coolwarm);
    const qs::gui::ColorNorm sym{-10.0, 10.0};
    CHECK(qs::gui::MapValue(lut, sym, -10.0) == lut[0]);
    CHECK(qs::gui::MapValue(lut, sym, 10.0) == lut[255]);
    CHECK(qs::gui::MapValue(lut, sym, 1e9) == lut[255]);
    CHECK(qs::gui::MapValue(lut, sym, 0.0) == lut[128]);
    // Two slopes around 0: the lessons' lopsided range still spans blue .. red with 0 neutral.
    const auto two = qs::gui::ColorNorm::Centered(-184.0, 728.6, 0.0);
    CHECK(qs::gui::MapValue(lut, two, -184.0) == lut[0]);
    CHECK(qs::gui::MapValue(lut, two, 0.0) == lut[128]);
    CHECK(qs::gui::MapValue(lut, two, 728.6) == lut[255]);
    CHECK(two.to_unit(-92.0) == doctest::Approx(0.25));
    const auto one_sided = qs::gui::ColorNorm::Centered(0.0, 2.0, 0.0);  // an error tensor: 0 is neutral
    CHECK(one_sided.to_unit(0.0) == doctest::Approx(0.5));
    CHECK(one_sided.to_unit(2.0) == doctest::Approx(1.0));
    const qs::gui::ColorNorm flat{3.0, 3.0};
    CHECK(qs::gui::MapValue(lut, flat, 3.0) == lut[128]);
    const float values[] = {-10.f, 0.f, 10.f, 99.f};
    std::uint32_t out[4];
    qs::gui::MapValues(lut, sym, values, 4, out);
    CHECK(out[0] == lut[0]);
    CHECK(out[1] == lut[128]);
    CHECK(out[2] == lut[255]);
    CHECK(out[3] == lut[255]);
    // Annotation text: dark on the pale middle, white on the saturated ends.
    CHECK(qs::gui::TextColorFor(lut[128]) != qs::gui::PackRgba(255, 255, 255));
    CHECK(qs::gui::TextColorFor(lut[255]) == qs::gui::PackRgba(255, 255, 255));
    CHECK(qs::gui::TextColorFor(qs::gui::PackRgba(255, 255, 255)) != qs::gui::PackRgba(255, 255, 255));
}

TEST_CASE("downsample: mean of blocks / partial edge blocks / max keeps an outlier") {
    // 4 x 5, values = flat index.
    std::vector<float> v(20);
    for (int i = 0; i < 20; ++i) v[i] = static_cast<float>(i);
    const qs::CellWindow all{0, 0, 4, 5};
    std::vector<float> out(qs::reduced_extent(4, 2) * qs::reduced_extent(5, 2));
    REQUIRE(out.size() == 6);
    qs::downsample(v.data(), 5, all, 2, 2, qs::Reduction::Mean, out.data());
    CHECK(out[0] == doctest::Approx((0 + 1 + 5 + 6) / 4.0));
    CHECK(out[2] == doctest::Approx((4 + 9) / 2.0));  // partial last column block
    CHECK(out[3] == doctest::Approx((10 + 11 + 15 + 16) / 4.0));
    qs::downsample(v.data(), 5, all, 2, 2, qs::Reduction::Max, out.data());
    CHECK(out[0] == 6.0f);
    CHECK(out[5] == 19.0f);

    // A window in the middle, factor 1: a plain copy.
    std::vector<float> w(4);
    qs::downsample(v.data(), 5, qs::CellWindow{1, 2, 2, 2}, 1, 1, qs::Reduction::Mean, w.data());
    CHECK(w == std::vector<float>{7, 8, 12, 13});

    // 1000 x 1000 of small errors with one spike: max-reduction to 10 x 10 keeps it, mean nearly loses it.
    const std::int64_t n = 1000;
    std::vector<float> err(static_cast<std::size_t>(n * n), 0.01f);
    err[static_cast<std::size_t>(537 * n + 911)] = 50.0f;
    std::vector<float> red(100);
    qs::downsample(err.data(), n, qs::CellWindow{0, 0, n, n}, 100, 100, qs::Reduction::Max, red.data());
    CHECK(red[5 * 10 + 9] == 50.0f);
    CHECK(red[0] == 0.01f);
    qs::downsample(err.data(), n, qs::CellWindow{0, 0, n, n}, 100, 100, qs::Reduction::Mean, red.data());
    CHECK(red[5 * 10 + 9] < 0.02f);

    // Integer codes.
    const std::int32_t codes[] = {-128, 127, 0, 1};
    float cm = 0;
    qs::downsample(codes, 2, qs::CellWindow{0, 0, 2, 2}, 2, 2, qs::Reduction::Mean, &cm);
    CHECK(cm == doctest::Approx(0.0));
    qs::downsample(codes, 2, qs::CellWindow{0, 0, 2, 2}, 2, 2, qs::Reduction::Max, &cm);
    CHECK(cm == 127.0f);
}

TEST_CASE("histogram binning and code counts") {
    const float v[] = {0.0f, 0.5f, 0.99f, 1.0f, 2.0f, 3.9f, 4.0f, -1.0f, 5.0f};
    const qs::Histogram h = qs::histogram(v, 9, 4, 0.0, 4.0);
    REQUIRE(h.counts.size() == 4);
    CHECK(h.counts[0] == 3);  // 0, 0.5, 0.99
    CHECK(h.counts[1] == 1);  // 1
    CHECK(h.counts[2] == 1);  // 2
    CHECK(h.counts[3] == 2);  // 3.9 and the closed right edge 4
    CHECK(h.below == 1);
    CHECK(h.above == 1);
    CHECK(h.max_count == 3);

    const float constant[] = {7.0f, 7.0f};
    const qs::Histogram hc = qs::histogram(constant, 2, 5);
    CHECK(hc.hi > hc.lo);
    std::int64_t total = 0;
    for (auto c : hc.counts) total += c;
    CHECK(total == 2);

    const std::int32_t codes[] = {-128, -128, 0, 127, 5};
    const auto cc = qs::code_counts(codes, 5, -128, 127);
    REQUIRE(cc.size() == 256);
    CHECK(cc[0] == 2);
    CHECK(cc[128] == 1);
    CHECK(cc[255] == 1);
    CHECK(cc[133] == 1);
}

TEST_CASE("plot kit: log ticks and labels and axes") {
    using qs::gui::LogTicks;
    // 1-2-5 when few, powers of ten when many, every k-th power when still too many, the ends when none fits.
    CHECK(LogTicks(0.1, 10.0, 10) == std::vector<double>{0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0});
    CHECK(LogTicks(1e-6, 1e2, 4).size() <= 4);
    CHECK(LogTicks(1e-6, 1e2, 20).size() == 9);
    CHECK(LogTicks(3.0, 4.0, 5) == std::vector<double>{3.0, 4.0});
    CHECK(LogTicks(0.0, 1.0, 5).empty());  // a log axis has no zero: no ticks rather than log(0)
    CHECK(LogTicks(1.0, std::numeric_limits<double>::infinity(), 5).empty());
    CHECK(qs::gui::LogTickLabel(1e-5) == "1e-5");
    CHECK(qs::gui::LogTickLabel(3e6) == "3e6");
    CHECK(qs::gui::LogTickLabel(0.002) == "0.002");
    CHECK(qs::gui::TickLabel(-0.0001, 2) == "0.00");  // no "-0.00" from rounding noise
    CHECK(qs::gui::TickLabel(2.5e6, 0) == "2.5e+06");
    CHECK(qs::gui::TickLabel(-1.5, 1) == "-1.5");
    const qs::gui::PlotAxis lin{0.0, 10.0, 100.0f, 200.0f};
    CHECK(lin.at(5.0) == doctest::Approx(150.0f));
    const qs::gui::PlotAxis log_axis{1.0, 100.0, 300.0f, 100.0f, true};  // vertical: bottom to top
    CHECK(log_axis.at(10.0) == doctest::Approx(200.0f));
    CHECK(log_axis.at(-1.0) == doctest::Approx(200.0f));  // off a log axis: the middle, never NaN
}

TEST_CASE("nice ticks and view clamping") {
    int decimals = -1;
    const auto t = qs::gui::NiceTicks(-184.0, 728.6, 5, &decimals);
    REQUIRE(!t.empty());
    CHECK(t.front() >= -184.0);
    CHECK(t.back() <= 728.6);
    CHECK(decimals == 0);
    qs::gui::HeatmapView v;
    qs::gui::ClampView(v, 3, 3);
    CHECK((v.x0 == 0 && v.x1 == 3 && v.y0 == 0 && v.y1 == 3));
    v = qs::gui::HeatmapView{-5, -5, 0.1, 0.1};
    qs::gui::ClampView(v, 100, 200);
    CHECK(v.x0 >= 0);
    CHECK(v.x1 - v.x0 >= 1.0);
    CHECK(v.x1 <= 200);
}

TEST_CASE("settings round-trip through their key/value pairs") {
    qs::gui::FigurePanelSettings s;
    s.colormap = Colormap::Viridis;
    s.lesson_look = true;
    s.annotate = qs::gui::AnnotateMode::Off;
    s.layout = qs::gui::FigureLayoutMode::Grid;
    qs::gui::FigurePanelSettings back;
    for (const auto& [key, value] : qs::gui::FigurePanelSettingPairs(s))
        CHECK(qs::gui::ApplyFigurePanelSetting(back, key.c_str(), value.c_str()));
    CHECK(back.colormap == Colormap::Viridis);
    CHECK(back.lesson_look);
    CHECK(back.annotate == qs::gui::AnnotateMode::Off);
    CHECK(back.layout == qs::gui::FigureLayoutMode::Grid);
    // Settings and sessions of older versions kept a grid flag: 0 is the automatic layout, 1 the grid.
    CHECK(qs::gui::ApplyFigurePanelSetting(back, "grid", "0"));
    CHECK(back.layout == qs::gui::FigureLayoutMode::Auto);
    CHECK(qs::gui::ApplyFigurePanelSetting(back, "grid", "1"));
    CHECK(back.layout == qs::gui::FigureLayoutMode::Grid);
    CHECK_FALSE(qs::gui::ApplyFigurePanelSetting(back, "layout", "3x3"));
    CHECK_FALSE(qs::gui::ApplyFigurePanelSetting(back, "colormap", "rainbow"));
    CHECK_FALSE(qs::gui::ApplyFigurePanelSetting(back, "nonsense", "1"));
}

TEST_CASE("the 2x2 grid puts the panels in two rows of two with bigger images") {
    const Quantized q = Lesson();
    const qs::gui::QuantView view = q.view();
    qs::gui::FigurePanelSettings row, grid;
    grid.layout = qs::gui::FigureLayoutMode::Grid;
    std::vector<std::uint8_t> rgba;
    qs::gui::FigureImageInfo a, b;
    std::string error;
    REQUIRE(qs::gui::RenderFigureRgba(view, row, qs::gui::FigurePngOptions{}, 1200, rgba, &a, &error));
    REQUIRE(qs::gui::RenderFigureRgba(view, grid, qs::gui::FigurePngOptions{}, 1200, rgba, &b, &error));
    const auto width = [](const qs::gui::FigureImageInfo& info, int i) { return info.image_rects[i][2] - info.image_rects[i][0]; };
    CHECK(width(b, 0) > 1.5f * width(a, 0));
    // Original | quantized on top, dequantized | error below.
    CHECK(b.image_rects[1][0] > b.image_rects[0][2]);
    CHECK(b.image_rects[2][1] > b.image_rects[0][3]);
    CHECK(b.image_rects[2][0] == doctest::Approx(b.image_rects[0][0]));
    CHECK(b.image_rects[3][1] == doctest::Approx(b.image_rects[2][1]));
}

TEST_CASE("offscreen render of the lesson preset: four panels / colors that mean something / same bytes twice") {
    const Quantized q = Lesson();
    REQUIRE(q.tensor.rows() == 3);
    const qs::gui::QuantView view = q.view();
    qs::gui::FigurePanelSettings settings;  // coolwarm, shared range

    std::vector<std::uint8_t> rgba;
    qs::gui::FigureImageInfo info;
    std::string error;
    const int width = 1600;
    const bool ok = qs::gui::RenderFigureRgba(view, settings, qs::gui::FigurePngOptions{}, width, rgba, &info, &error);
    INFO("render error: " << error);
    REQUIRE_MESSAGE(ok, "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
    REQUIRE(info.height > 200);
    REQUIRE(rgba.size() == static_cast<std::size_t>(width) * info.height * 4);

    // Four heatmaps side by side, same size, in order, not overlapping.
    for (int i = 0; i < 4; ++i) {
        const float* r = info.image_rects[i];
        CHECK(r[2] - r[0] > 150.0f);
        CHECK(r[3] - r[1] > 150.0f);
        CHECK(r[2] <= width);
        if (i > 0) {
            CHECK(r[0] > info.image_rects[i - 1][2]);
            CHECK(r[2] - r[0] == doctest::Approx(info.image_rects[0][2] - info.image_rects[0][0]));
        }
    }
    // Original: the max 728.6 at [0, 2] is deep red, the min -184 at [1, 2] blue, 0 at [2, 0] neutral grey.
    // Sampled near a cell corner, away from the printed value.
    const Rgb max_cell = CellPixel(rgba, width, info, 0, 3, 3, 0, 2, 0.1f, 0.1f);
    CHECK(max_cell.r == 180);  // the red end of coolwarm
    CHECK(max_cell.g == 4);
    CHECK(max_cell.b == 38);
    const Rgb min_cell = CellPixel(rgba, width, info, 0, 3, 3, 1, 2, 0.1f, 0.1f);
    CHECK(min_cell.r == 59);  // the blue end of coolwarm: -184 is the most negative value
    CHECK(min_cell.g == 76);
    CHECK(min_cell.b == 192);
    const Rgb zero_cell = CellPixel(rgba, width, info, 0, 3, 3, 2, 0, 0.1f, 0.1f);
    CHECK(std::abs(zero_cell.r - zero_cell.b) < 30);
    CHECK(zero_cell.g > 180);
    // Dequantized looks like the original (shared range); quantized code 127 is deep red as well.
    const Rgb deq_max = CellPixel(rgba, width, info, 2, 3, 3, 0, 2, 0.1f, 0.1f);
    CHECK(std::abs(deq_max.r - max_cell.r) < 6);
    const Rgb q_max = CellPixel(rgba, width, info, 1, 3, 3, 0, 2, 0.1f, 0.1f);
    CHECK(q_max.r > 150);
    CHECK(q_max.g < 60);
    // Error: 0 at [2, 0] is neutral, the largest error red-ish.
    const Rgb err_zero = CellPixel(rgba, width, info, 3, 3, 3, 2, 0, 0.1f, 0.1f);
    CHECK(std::abs(err_zero.r - err_zero.b) < 30);
    // The values are printed: the center of a cell has text pixels different from its corner.
    int differing = 0;
    for (int dy = -6; dy <= 6; ++dy) {
        for (int dx = -30; dx <= 30; ++dx) {
            const float* r = info.image_rects[0];
            const int x = static_cast<int>(r[0] + (r[2] - r[0]) * 2.5f / 3) + dx;
            const int y = static_cast<int>(r[1] + (r[3] - r[1]) * 0.5f / 3) + dy;
            const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 4;
            differing += std::abs(int(rgba[i]) - max_cell.r) > 60;
        }
    }
    CHECK(differing > 20);

    // PNG, decoded again, twice: byte-identical files.
    const std::string a = TempPath("lesson_a.png"), b = TempPath("lesson_b.png");
    REQUIRE(qs::gui::RenderFigurePng(view, settings, width, a, &error));
    REQUIRE(qs::gui::RenderFigurePng(view, settings, width, b, &error));
    const auto bytes_a = ReadFile(a), bytes_b = ReadFile(b);
    REQUIRE(!bytes_a.empty());
    CHECK(bytes_a == bytes_b);
    int w = 0, h = 0, comp = 0;
    unsigned char* decoded = stbi_load(a.c_str(), &w, &h, &comp, 4);
    REQUIRE(decoded != nullptr);
    CHECK(w == width);
    CHECK(h == info.height);
    // The PNG holds exactly the rendered pixels (top row first).
    CHECK(std::equal(rgba.begin(), rgba.end(), decoded));
    stbi_image_free(decoded);
    if (!std::getenv("QS_FIGURE_PNG_DIR")) {
        std::remove(a.c_str());
        std::remove(b.c_str());
    }
}

TEST_CASE("lesson look: white original and error panels with printed values") {
    const Quantized q = Lesson();
    qs::gui::FigurePanelSettings settings;
    settings.lesson_look = true;
    std::vector<std::uint8_t> rgba;
    qs::gui::FigureImageInfo info;
    std::string error;
    REQUIRE_MESSAGE(qs::gui::RenderFigureRgba(q.view(), settings, {}, 1600, rgba, &info, &error), error);
    for (int panel : {0, 3}) {
        const Rgb c = CellPixel(rgba, 1600, info, panel, 3, 3, 1, 1, 0.08f, 0.08f);
        CHECK((c.r == 255 && c.g == 255 && c.b == 255));
    }
    const Rgb deq = CellPixel(rgba, 1600, info, 2, 3, 3, 0, 2, 0.1f, 0.1f);
    CHECK(deq.r > 150);
    if (const char* dir = std::getenv("QS_FIGURE_PNG_DIR")) {
        CHECK(qs::gui::WritePngAtomic(std::string(dir) + "/qs_test_lesson_look.png", 1600, info.height, rgba, false,
                                        &error));
    }
}

TEST_CASE("big tensors render quickly: 4x128x256 outliers and 2048x2048 random") {
    qs::Preset p = qs::make_preset("outliers-4x128x256");
    const Quantized outliers = Make(std::move(p.tensor), p.config);
    qs::RandomSpec spec;
    spec.shape = {2048, 2048};
    spec.seed = 7;
    const Quantized big = Make(qs::generate_random(spec), qs::QuantConfig{});
    std::string error;
    for (const auto* q : {&outliers, &big}) {
        std::vector<std::uint8_t> rgba;
        qs::gui::FigureImageInfo info;
        const auto t0 = std::chrono::steady_clock::now();
        REQUIRE_MESSAGE(qs::gui::RenderFigureRgba(q->view(), {}, {}, 1600, rgba, &info, &error), error);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        MESSAGE("rendered " << qs::shape_to_string(q->tensor.shape) << " in " << ms << " ms");
#if !defined(__SANITIZE_ADDRESS__)  // a budget for the optimised build; ASan on a loaded machine is 5-10x slower
        CHECK(ms < 5000.0);
#endif
        if (const char* dir = std::getenv("QS_FIGURE_PNG_DIR")) {
            const std::string name = q == &big ? "/qs_test_random2048.png" : "/qs_test_outliers.png";
            CHECK(qs::gui::WritePngAtomic(dir + name, 1600, info.height, rgba, false, &error));
        }
    }
}

TEST_CASE("textures are rebuilt only when the generation or the view changes") {
    const Quantized q = Lesson();
    qs::gui::QuantView view = q.view();
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1200, 500, nullptr, &error), error);
    qs::gui::FigurePanelState state;
    auto draw = [&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(state, view, ImVec2(0, 0));
        ImGui::End();
    };
    for (int i = 0; i < 3; ++i) r.frame(draw);
    const std::uint64_t before = state.maps[0].uploads, before_q = state.maps[1].uploads;
    CHECK(before >= 1);
    for (int i = 0; i < 10; ++i) r.frame(draw);
    CHECK(state.maps[0].uploads == before);
    CHECK(state.maps[1].uploads == before_q);
    view.generation = 2;  // a recompute happened: same tensor, new result
    r.frame(draw);
    CHECK(state.maps[1].uploads == before_q + 1);
    CHECK(state.maps[0].uploads == before);  // the original's values and color range did not change
    CHECK(state.maps[0].reductions == 1);
    state.view = qs::gui::HeatmapView{0, 0, 2, 2};  // zoom
    r.frame(draw);
    CHECK(state.maps[0].uploads == before + 1);
    CHECK(state.maps[1].uploads == before_q + 2);
    r.run([&] {  // the textures belong to the renderer's context
        for (auto& m : state.maps) m.texture.reset();
    });
}

TEST_CASE("mouse: hover / click selects in all panels / wheel zooms the shared view / drag pans") {
    qs::Preset p = qs::make_preset("lesson-manual");  // s = 3.5, z = -70: 728.6 clips
    const Quantized q = Make(std::move(p.tensor), p.config);
    const qs::gui::QuantView view = q.view();
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1400, 560, nullptr, &error), error);
    qs::gui::FigurePanelState state;
    auto draw = [&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(state, view, ImGui::GetContentRegionAvail());
        ImGui::End();
    };
    for (int i = 0; i < 3; ++i) r.frame(draw);
    auto cell_center = [&](int panel, int row, int col) {
        const ImVec2 a = state.image_min[panel], b = state.image_max[panel];
        return ImVec2(a.x + (b.x - a.x) * (col + 0.5f) / 3, a.y + (b.y - a.y) * (row + 0.5f) / 3);
    };
    // Click (press + release without moving) on the quantized panel's [0, 2].
    const ImVec2 c = cell_center(1, 0, 2);
    r.frame(draw, c, false);
    r.frame(draw, c, true);
    r.frame(draw, c, false);
    CHECK(state.selected == 2);
    r.frame(draw, c, false);
    if (const char* dir = std::getenv("QS_FIGURE_PNG_DIR")) {  // hover tooltip + selection, for a look
        std::vector<std::uint8_t> px;
        r.read_pixels(px);
        CHECK(qs::gui::WritePngAtomic(std::string(dir) + "/qs_test_hover.png", r.width(), r.height(), px, true, &error));
    }
    // Wheel up over the original panel zooms all four in.
    r.frame(draw, cell_center(0, 1, 1), false, 2.0f);
    CHECK(state.view.x1 - state.view.x0 < 3.0);
    const double x0_before = state.view.x0;
    // Drag to the right pans toward lower columns.
    const ImVec2 start = cell_center(2, 1, 1);
    r.frame(draw, start, true);
    for (int i = 1; i <= 4; ++i) r.frame(draw, ImVec2(start.x + 30.0f * i, start.y), true);
    r.frame(draw, ImVec2(start.x + 120.0f, start.y), false);
    CHECK(state.view.x0 < x0_before);
    CHECK(state.selected == 2);  // a drag does not select
    r.run([&] {  // the textures belong to the renderer's context
        for (auto& m : state.maps) m.texture.reset();
    });
}

TEST_CASE("PNG with a selected / clipped element's pipeline") {
    qs::Preset p = qs::make_preset("lesson-manual");
    const Quantized q = Make(std::move(p.tensor), p.config);
    qs::gui::FigurePngOptions options;
    options.selected = 2;
    std::vector<std::uint8_t> rgba;
    qs::gui::FigureImageInfo info;
    std::string error;
    REQUIRE_MESSAGE(qs::gui::RenderFigureRgba(q.view(), {}, options, 1600, rgba, &info, &error), error);
    // The selection outline (gold) is in the original panel's [0, 2] cell.
    bool gold = false;
    const float* rect = info.image_rects[0];
    const int x0 = static_cast<int>(rect[0] + (rect[2] - rect[0]) * 2 / 3), y0 = static_cast<int>(rect[1]);
    for (int y = y0; y < y0 + 12 && !gold; ++y) {
        for (int x = x0; x < x0 + 12 && !gold; ++x) {
            const std::uint8_t* px = &rgba[(static_cast<std::size_t>(y) * 1600 + x) * 4];
            gold = px[0] > 230 && px[1] > 190 && px[2] < 60;
        }
    }
    CHECK(gold);
    if (const char* dir = std::getenv("QS_FIGURE_PNG_DIR")) {
        CHECK(qs::gui::WritePngAtomic(std::string(dir) + "/qs_test_selected.png", 1600, info.height, rgba, false, &error));
    }
}

TEST_CASE("zoomed into a big tensor the cells are full resolution with printed values and zoomed out they are reduced") {
    qs::RandomSpec spec;
    spec.shape = {512, 512};
    spec.seed = 3;
    spec.outliers = 1;
    const Quantized q = Make(qs::generate_random(spec), qs::QuantConfig{});
    const qs::gui::QuantView view = q.view();
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1600, 560, [] { qs::gui::BuildFonts(18.0f); qs::gui::ApplyStyle(true, 18.0f / 13.0f); }, &error),
                    error);
    qs::gui::FigurePanelState state;
    auto draw = [&] {
        // The annotation font is the second one BuildFonts added (the renderer's ImGui context is current here).
        if (!state.annotation_font && ImGui::GetIO().Fonts->Fonts.Size > 1) state.annotation_font = ImGui::GetIO().Fonts->Fonts[1];
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(state, view, ImGui::GetContentRegionAvail());
        ImGui::End();
    };
    for (int i = 0; i < 3; ++i) r.frame(draw);
    // Whole 512 x 512 in a few hundred pixels: block-reduced.
    CHECK(state.maps[0].fx > 1);
    CHECK(state.maps[3].fx > 1);
    // The top-left texel of the error panel is the max over its block: never below element 0's own error.
    CHECK(state.maps[3].reduced[0] >= q.result.error[0]);
    state.view = qs::gui::HeatmapView{0, 0, 6, 6};
    for (int i = 0; i < 3; ++i) r.frame(draw);
    CHECK(state.maps[0].fx == 1);
    CHECK(state.maps[0].tex_cols == 6);
    if (const char* dir = std::getenv("QS_FIGURE_PNG_DIR")) {
        std::vector<std::uint8_t> px;
        r.read_pixels(px);
        CHECK(qs::gui::WritePngAtomic(std::string(dir) + "/qs_test_zoomed.png", r.width(), r.height(), px, true, &error));
    }
    r.run([&] {  // the textures belong to the renderer's context
        for (auto& m : state.maps) m.texture.reset();
    });
}

TEST_CASE("large text (a projector's font scale): the four heatmaps go 2 x 2 instead of shrinking to thumbnails") {
    const Quantized q = Lesson();
    qs::gui::OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(1060, 800, [] { qs::gui::BuildFonts(36.0f); }, &error), error);
    qs::gui::FigurePanelState state;
    const qs::gui::QuantView view = q.view();
    for (int i = 0; i < 3; ++i) r.frame([&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("fig", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::DrawFigurePanel(state, view, ImVec2(0, 0));
        ImGui::End();
    });
    for (int i = 0; i < 4; ++i) {
        CAPTURE(i);
        // One row of four would leave ~20 px images beside 200 px of colorbar labels.
        CHECK(state.image_max[i].x - state.image_min[i].x > 150.0f);
    }
    CHECK(state.image_min[2].y > state.image_max[0].y);  // the second row is below the first
    r.run([&] {
        for (auto& m : state.maps) m.texture.reset();
    });
}

TEST_CASE("png encoding: memory that runs out is a false and not an abort") {
    // A 64 x 48 image of a gradient: its encoding needs the encoder's buffers, the hash table's chains and the
    // output's growth. libstb's own build asserted (SIGABRT) when one of them could not be had.
    const int w = 64, h = 48;
    std::vector<std::uint8_t> rgba(static_cast<std::size_t>(w) * h * 4);
    for (std::size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<std::uint8_t>((i * 7) ^ (i >> 5));
    std::vector<std::uint8_t> png;
    REQUIRE(qs::gui::EncodePng(w, h, rgba.data(), false, png));
    int dw = 0, dh = 0, comp = 0;
    unsigned char* decoded = stbi_load_from_memory(png.data(), static_cast<int>(png.size()), &dw, &dh, &comp, 4);
    REQUIRE(decoded != nullptr);
    CHECK(dw == w);
    CHECK(dh == h);
    CHECK(std::equal(rgba.begin(), rgba.end(), decoded));
    stbi_image_free(decoded);
    // Every allocation from the first to the twentieth failing in turn: each encoding reports it.
    for (long allowed = 0; allowed < 20; ++allowed) {
        CAPTURE(allowed);
        qs::gui::FailPngAllocationsAfterForTest(allowed);
        CHECK_FALSE(qs::gui::EncodePng(w, h, rgba.data(), false, png));
        CHECK(png.empty());
    }
    qs::gui::FailPngAllocationsAfterForTest(-1);
    CHECK(qs::gui::EncodePng(w, h, rgba.data(), true, png));
    // Through the writer: one line, no file.
    qs::gui_test::TempDir dir;
    const std::string path = dir / "out.png";
    qs::gui::FailPngAllocationsAfterForTest(3);
    std::string error;
    CHECK_FALSE(qs::gui::WritePngAtomic(path, w, h, rgba, false, &error));
    qs::gui::FailPngAllocationsAfterForTest(-1);
    CHECK(error == "PNG: out of memory while encoding");
    CHECK_FALSE(std::filesystem::exists(path));
}
