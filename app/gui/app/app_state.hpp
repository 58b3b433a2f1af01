// The one state of the window: the tensor, the settings being edited, the quantization on show, the
// undo history, the background job and every panel's UI state. Panels read `view()` and change things
// only through the apply_* functions, which validate, record an undo step and schedule a recompute.
// Quantization is recomputed only when something changed, never per frame; above kSyncElements it runs
// on a worker thread into a second set of buffers while the last result stays on screen.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "gui/panels/calibration_panel.hpp"
#include "gui/panels/compare_panel.hpp"
#include "gui/panels/controls_panel.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/app/file_dialogs.hpp"
#include "gui/panels/histogram_panel.hpp"
#include "gui/document/jobs.hpp"
#include "gui/panels/landscape_panel.hpp"
#include "gui/document/quant_view.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "gui/app/session_io.hpp"
#include "gui/platform/settings.hpp"
#include "gui/panels/tensor_panel.hpp"
#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

// Recomputes of up to this many elements run on the UI thread (a few ms); bigger ones on a worker.
constexpr std::int64_t kSyncElements = std::int64_t{1} << 21;

// Everything one undo step restores. Tensors are shared and immutable, so a settings-only step costs
// no copy of the data.
struct Snapshot {
    std::shared_ptr<const Tensor> tensor;
    QuantConfig config;
    Mode base_mode = Mode::Asymmetric;
    std::string label;
};

class UndoHistory {
public:
    void push(Snapshot before);  // clears the redo side
    bool can_undo() const { return !undo_.empty(); }
    bool can_redo() const { return !redo_.empty(); }
    // Returns the state to restore and files `current` on the other side.
    std::optional<Snapshot> undo(Snapshot current);
    std::optional<Snapshot> redo(Snapshot current);

private:
    void trim();
    std::deque<Snapshot> undo_, redo_;
};

// One recompute of params, result and (in manual mode) the computed-parameter metrics.
struct RecomputeJob {
    std::shared_ptr<const Tensor> tensor;
    QuantConfig config;
    Mode base_mode = Mode::Asymmetric;
    bool want_computed = false;  // recompute the computed (s, z) and their metrics too
    std::uint64_t computed_stamp = 0;  // which change of the computed inputs this answers
    QuantParams params;
    QuantResult result;
    QuantParams computed_params;
    Metrics computed_metrics;
    double ms = 0;          // compute_params + quantize_into, wall time
    std::string error;
};

struct AppState {
    AppState() = default;
    AppState(const AppState&) = delete;
    AppState& operator=(const AppState&) = delete;
    ~AppState();

    // --- The data and the settings being edited.
    std::shared_ptr<const Tensor> tensor;
    std::string label;  // "lesson", "data.npy", "random normal 1024x1024 seed 0"
    QuantConfig config;
    // The mode whose (s, z) manual mode offers as "computed": the last non-manual mode.
    Mode base_mode = Mode::Asymmetric;

    // --- What is on screen: the quantization of `shown_tensor` with `shown_config`. These lag `tensor`
    // and `config` while a worker recompute runs.
    std::shared_ptr<const Tensor> shown_tensor;
    QuantConfig shown_config;
    QuantParams params;
    QuantResult result;
    QuantParams computed_params;   // the base mode's (s, z), valid when has_computed
    Metrics computed_metrics;      // quantizing with computed_params, shown beside manual ones
    bool has_computed = false;
    std::uint64_t generation = 0;         // bumped whenever the shown tensor, params or result change
    std::uint64_t tensor_generation = 0;  // bumped whenever the shown tensor changes (not its quantization)
    double last_recompute_ms = 0;

    // --- Messages, panels, history, background work.
    std::string error;   // last error, shown in the window until dismissed
    std::string notice;  // what a load changed by itself (e.g. granularity reset to tensor), until dismissed
    PanelToggles panels;
    UndoHistory history;
    JobRunner jobs;
    bool force_sync = false;  // --bench-frames: recompute on the UI thread so every frame is measured

    ControlsPanelState controls;
    TensorPanelState tensor_panel;
    FigurePanelState figure;
    HistogramPanelState histogram;
    LandscapePanelState landscape;
    FileDialogsState files;               // File menu: figure PNG, tensors, sessions
    SafetensorsBrowserState safetensors;  // the tensor list of an opened .safetensors file
    TensorOrigins origins;                // where unedited tensors came from (sessions refer to it)
    CalibrationPanelState calibration;
    ComparePanelState compare;
    // The tab the analysis area showed last frame (AnalysisTab): the wide ones take the metrics' column too.
    int analysis_tab = 0;

    // The borrowed view every panel draws.
    QuantView view() const;
    bool busy() const { return jobs.running(); }  // controls are disabled while true
    bool recomputing() const { return worker_.joinable(); }

    // Validates `next` against the tensor's shape; on success records an undo step (one per drag:
    // `continuous` merges the changes of a slider held down) and schedules a recompute. Returns false
    // with the reason in `message` otherwise, changing nothing.
    bool apply_config(const QuantConfig& next, bool continuous, std::string* message = nullptr);
    // Replaces the tensor (checked with check_tensor; errors go to `error`). A config that no longer fits
    // the new shape falls back to per-tensor granularity. `next_config` also replaces the settings.
    bool apply_tensor(std::shared_ptr<const Tensor> next, std::string next_label,
                      const QuantConfig* next_config = nullptr);
    void undo();
    void redo();

    // Starts a background job producing a new tensor; its result is taken in update().
    void start_tensor_job(std::string job_label, TensorWork work);

    // Once per frame before drawing: takes a finished job or recompute, starts the pending recompute.
    void update();
    // Once per frame after drawing: a slider drag ends when no item is active.
    void end_frame(bool any_item_active);
    // Waits for the worker recompute (if any) and applies the pending one on this thread.
    void finish_recompute_now();

private:
    Snapshot snapshot() const;
    void restore(const Snapshot& s);
    void mark_dirty(bool computed_too);
    void start_recompute();
    void take_recompute(RecomputeJob& job);

    bool dirty_ = false;
    // Changes to what the computed (s, z) depend on (tensor, dtype, rounding, overflow), and the change
    // the shown computed values answer: manual mode recomputes them only when these differ.
    std::uint64_t computed_inputs_ = 1;
    std::uint64_t computed_done_ = 0;
    bool gesture_open_ = false;
    std::thread worker_;
    std::atomic<bool> worker_done_{false};
    std::unique_ptr<RecomputeJob> work_;   // owned by the worker while it runs
    std::unique_ptr<RecomputeJob> spare_;  // the buffers of the previous result, reused
};

// The worker side of a tensor job: checks the tensor, fits `config` to its shape (per-tensor granularity
// when the old one does not apply), computes params and quantizes, reporting progress. Throws qs::Error.
TensorJobResult FinishTensorJob(Tensor tensor, QuantConfig config, std::string label, JobProgress& progress);

// A config that fits `shape`: `config` itself if check_config accepts it, else the same with per-tensor
// granularity (`note` says why). Throws qs::Error if even that does not fit.
QuantConfig FitConfig(QuantConfig config, const Shape& shape, std::string* note);

// Runs `job` (compute_params + quantize_into, and the computed parameters when asked) on this thread.
void run_recompute(RecomputeJob& job);

}  // namespace qs::gui
