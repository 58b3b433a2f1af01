// The document's computations, each a plain function that a worker thread or the UI thread can run: one
// recompute of (s, z) and the quantization's overview, and the end of every tensor job (check, fit the config,
// quantize). A recompute is one pass over the tensor in its stored type: the metrics and the screen-resolution
// images together (core's quantize_overview); no full-size result is ever allocated.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gui/document/task.hpp"
#include "gui/document/tensor_data.hpp"
#include "quantscope/config.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

class Document;

// One recompute of params, the overview and (in manual mode) the computed-parameter metrics.
struct RecomputeJob {
    std::shared_ptr<const TensorData> data;
    QuantConfig config;
    Mode base_mode = Mode::Asymmetric;
    // The overview's blocks: what the figure shows (OverviewGridFor); a grid of another shape is ignored and the
    // tensor's own (data->values.grid) used.
    OverviewGrid grid;
    bool want_computed = false;        // recompute the computed (s, z) and their metrics too
    // A step of a slider being dragged: on a tensor of at least kDragBlocksElements, the heatmaps alone
    // (quantize_overview_blocks) where that pass applies; the metrics follow when the drag rests.
    bool drag = false;
    std::uint64_t computed_stamp = 0;  // which change of the computed inputs this answers
    QuantParams params;
    QuantOverview overview;
    QuantParams computed_params;
    Metrics computed_metrics;
    double ms = 0;  // params + the pass, wall time
    std::string error;
    std::string overflow;  // quantize's line when r' overflowed float32 (the metrics came out inf), else empty
    std::string computed_overflow;  // the same for the computed (s, z), named as such (manual mode's comparison)
    std::optional<double> importance_mse;  // importance_weighted_mse when config weighs by importance
};

// From this many elements a drag step computes the heatmaps alone: below it the whole pass takes well under a
// millisecond and the metrics stay live while dragging.
constexpr std::int64_t kDragBlocksElements = std::int64_t{1} << 18;

// Runs `job` on this thread.
void RunRecompute(RecomputeJob& job);

// The overview grid for a figure whose textures show blocks of fy x fx cells (0: not known yet): those blocks
// exactly, so that a texture is the overview's blocks and a slider step computes no more cells than the panel
// has texels; never finer than the tensor's own grid (data.values.grid, at most kOverviewCells blocks).
OverviewGrid OverviewGridFor(const TensorData& data, std::int64_t fy, std::int64_t fx);

// (s, z) of `config` for the tensor: no pass over the values when the tensor's own range decides them
// (manual values; min/max over the whole tensor), else compute_params; the stored blocks the tensor came with
// when the config's format is theirs (nothing is quantized then). Throws qs::Error.
QuantParams ParamsFor(const TensorData& data, const QuantConfig& config);

// What a tensor job hands back: a checked tensor quantized with `config`.
struct TensorJobResult {
    std::shared_ptr<const TensorData> data;
    QuantConfig config;
    QuantParams params;
    QuantOverview overview;
    std::string label;
    std::string notice;  // what fitting the config to the new shape changed, if anything
    std::string overflow;  // as RecomputeJob::overflow
    std::optional<double> importance_mse;  // as RecomputeJob::importance_mse
    // Runs on the UI thread once the tensor is on screen (where it came from, a session's view settings).
    std::function<void(Document&)> then;
};

// The work of a tensor job, run on a worker thread; throws qs::Error on a bad tensor.
using TensorWork = std::function<TensorJobResult(TaskProgress&)>;

// The worker side of a tensor job: checks the tensor, fits `config` to its shape (per-tensor granularity
// when the old one does not apply), computes params and quantizes, reporting progress. Throws qs::Error.
TensorJobResult FinishTensorJob(Tensor tensor, QuantConfig config, std::string label, TaskProgress& progress);
// The same for a tensor already wrapped (a mapped file).
TensorJobResult FinishTensorJob(std::shared_ptr<const TensorData> data, QuantConfig config, std::string label,
                                TaskProgress& progress);

// Whether an importance vector has one weight per column of `shape` (its last axis).
bool ImportanceFits(const std::vector<float>& weights, const Shape& shape);
// importance_weighted_mse (core's ImportanceError: Σ w·e² / Σ w per row, averaged) of quantizing `data` with
// `params` and `config`, which weighs by importance: one more pass, streaming the errors. Throws qs::Error.
double ImportanceMse(const TensorData& data, const QuantParams& params, const QuantConfig& config);

// A config that fits `shape`: `config` itself if check_config accepts it, else the same with per-tensor
// granularity (`note` says why); an importance vector for other columns is dropped (`note` says so). Throws qs::Error if even that does not fit.
QuantConfig FitConfig(QuantConfig config, const Shape& shape, std::string* note);

}  // namespace qs::gui
