// Two settings of the same tensor side by side: A is the app's current quantization, B a second QuantConfig
// picked with a compact selector (dtype, mode, granularity, calibration). Both error tensors |r - r'| are drawn
// on ONE color scale (0 .. the larger of the two max errors), so the same color means the same error in both,
// and a table gives A's and B's metrics with B - A colored better (green) or worse (red).
// B is quantized by the core exactly as the document quantizes A (ParamsFor + qs::quantize_overview: one pass
// over the tensor in its stored type, its metrics and screen-resolution images; zoomed-in cells computed on
// demand through FigureTiles), so a tensor read from its file's mapping compares too. On the UI thread for
// small tensors, on a background thread for big ones (the last B stays on screen meanwhile).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include <imgui.h>

#include "gui/document/task.hpp"
#include "gui/widgets/heatmap.hpp"
#include "gui/document/quant_view.hpp"
#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "gui/panels/figure_tiles.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

// Tensors up to this many elements quantize B on the UI thread (well under a millisecond per 100k elements).
constexpr std::int64_t kCompareSyncElements = std::int64_t{1} << 18;

struct ComparePanelState {
    QuantConfig b;               // setting B; rounding and overflow follow A
    bool b_initialized = false;  // false: B starts as A with the other of int8 / int4 on the first draw
    int slice = 0;               // rank 3: which shape[0] slice the heatmaps show
    HeatmapView view;            // shared zoom / pan of the two heatmaps

    // [Internal state]
    struct Computed {
        QuantConfig config;
        TensorKey tensor;
        QuantParams params;
        QuantOverview overview;  // B's metrics, code counts and reduced images (one pass)
        std::string error;  // check_config's (or the core's) message; nothing else is set then
        double ms = 0;
    };
    Task<Computed> task;
    Computed shown;                   // B on screen
    bool has_shown = false;
    std::uint64_t b_generation = 0;   // bumped whenever `shown` changes: the B heatmap's texture key
    QuantConfig requested;            // what the running (or last) computation of B was for
    TensorKey requested_tensor;
    bool started = false;
    std::array<HeatmapState, 2> maps;
    FigureTiles a_tiles;              // A's errors: the document's quantization, as the figure reads it
    FigureTiles b_tiles;              // B's errors, read the same way from B's overview and params
    double shared_max = 0;            // the color scale's top: max(A's, B's max |r - r'|)
    std::array<ImVec2, 2> image_min{}, image_max{};  // where the last frame drew A's and B's images
};

// Contents only; fills the available region. `data` is the shared owner of view.data.
void DrawComparePanel(ComparePanelState& state, const QuantView& view, const std::shared_ptr<const TensorData>& data);

bool CompareBusy(const ComparePanelState& state);
// Blocks until B is computed and shown (tests, scripted screenshots).
void FinishCompare(ComparePanelState& state);

// "int4 symmetric, channel 0, mse": a config in a few words, for the titles.
std::string ConfigSummary(const QuantConfig& config);

}  // namespace qs::gui
