// The document: the tensor, the settings being edited, the quantization on show, the undo history, where
// tensors came from, and the background work that produces them. No panel, no ImGui: panels read view()
// and the app changes the document only through its apply_* functions, which validate, record an undo step
// and schedule a recompute. Quantization is recomputed only when something changed, never per frame; above
// kSyncElements it runs on a worker while the last result stays on screen. Every applied change bumps
// `revision`, which is what the panels' drafts (a typed scale, a granularity being edited) re-sync on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "gui/document/quant_view.hpp"
#include "gui/document/recompute.hpp"
#include "gui/document/task.hpp"
#include "gui/document/tensor_origins.hpp"
#include "gui/document/undo_history.hpp"
#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

// Recomputes of up to this many elements run on the UI thread (a few ms); bigger ones on a worker.
constexpr std::int64_t kSyncElements = std::int64_t{1} << 21;

class Document {
public:
    Document() = default;
    Document(const Document&) = delete;
    Document& operator=(const Document&) = delete;

    // --- The data and the settings being edited. `data` is the tensor; `tensor` its float32 values when they
    // are in memory (always data->floats: null with no tensor, or a mapped one above kInMemoryElements).
    std::shared_ptr<const TensorData> data;
    std::shared_ptr<const Tensor> tensor;
    std::string label;  // "lesson", "data.npy", "random normal 1024x1024 seed 0"
    QuantConfig config;
    // The mode whose (s, z) manual mode offers as "computed": the last non-manual mode.
    Mode base_mode = Mode::Asymmetric;
    // The importance vector loaded, one weight per column (null: none), and its file's absolute path ("": not
    // from a file). Weighting by it is config.importance (set to it, or null): the toggle is a config change.
    Importance importance;
    std::string importance_path;
    // Bumped by every applied change of tensor, label or config (an edit, undo, redo, a finished job).
    std::uint64_t revision = 1;

    // --- What is on screen: the quantization of `shown_data` with `shown_config`. These lag `data`
    // and `config` while a worker recompute runs.
    std::shared_ptr<const TensorData> shown_data;
    QuantConfig shown_config;
    QuantParams params;
    QuantOverview overview;  // metrics and screen-resolution images of one pass
    std::optional<double> importance_mse;  // importance_weighted_mse of the result on show, when it is weighted
    // The shown tensor's float32 values when in memory (what whole-tensor tools take), else null.
    std::shared_ptr<const Tensor> shown_floats() const { return shown_data ? shown_data->floats : nullptr; }
    QuantParams computed_params;   // the base mode's (s, z), valid when has_computed
    Metrics computed_metrics;      // quantizing with computed_params, shown beside manual ones
    bool has_computed = false;
    std::uint64_t generation = 0;         // bumped whenever the shown tensor, params or result change
    std::uint64_t tensor_generation = 0;  // bumped whenever the shown tensor changes (not its quantization)
    double last_recompute_ms = 0;

    // --- Messages, history, provenance, background work.
    std::string error;   // last error, shown in the window until dismissed
    std::string notice;  // what a load changed by itself (e.g. granularity reset to tensor), until dismissed
    UndoHistory history;
    TensorOrigins origins;  // where unedited tensors came from (sessions refer to it)
    Task<TensorJobResult> jobs{TaskPriority::Normal};
    bool force_sync = false;  // --bench-frames and scripts: recompute on the UI thread

    // The borrowed view every panel draws.
    QuantView view() const;
    bool busy() const { return jobs.busy(); }  // controls are disabled while true (until update() takes the job)
    bool recomputing() const { return recompute_.busy(); }

    // Validates `next` against the tensor's shape; on success records an undo step (one per drag:
    // `continuous` merges the changes of a slider held down) and schedules a recompute. Returns false
    // with the reason in `message` otherwise, changing nothing.
    bool apply_config(const QuantConfig& next, bool continuous, std::string* message = nullptr);
    // Replaces the tensor (checked with check_tensor; errors go to `error`). A config that no longer fits
    // the new shape falls back to per-tensor granularity. `next_config` also replaces the settings.
    bool apply_tensor(std::shared_ptr<const Tensor> next, std::string next_label,
                      const QuantConfig* next_config = nullptr);
    // The same for a tensor already wrapped (e.g. a mapped file).
    bool apply_data(std::shared_ptr<const TensorData> next, std::string next_label,
                    const QuantConfig* next_config = nullptr);
    // Loads an importance vector (checked against the tensor's columns with check_importance) as one undo step;
    // `weighted`: the config weighs by it from now on (else it keeps weighing by nothing). False with the reason in
    // `message`, changing nothing. A null `weights` unloads it (and stops weighting).
    bool apply_importance(Importance weights, std::string path, bool weighted, std::string* message = nullptr);
    // Renames the tensor and/or sets the mode whose (s, z) manual mode offers (a session's label and base_mode;
    // null: unchanged). `new_step`: an undo step of its own; else part of the last one (a session's view
    // belongs to the opening of its tensor). False, changing nothing, for an empty label or a manual base.
    bool apply_names(const std::string* next_label, const Mode* next_base_mode, bool new_step);
    // Whether a tensor is open, and its shape (empty without one).
    bool has_tensor() const { return data != nullptr; }
    void undo();
    void redo();

    // Starts a background job producing a new tensor; its result is taken in update().
    void start_tensor_job(std::string job_label, TensorWork work);

    // Once per frame before drawing: takes a finished job or recompute, starts the pending recompute.
    void update();
    // What the figure's textures show: blocks of fy x fx cells (0: nothing asked, the tensor's own grid). The
    // quantization's overview is computed at that resolution (OverviewGridFor), so a slider step costs what
    // the panels show, not the tensor's every cell; a new block size (a zoom, a resized window) recomputes it.
    // Not an edit: no undo step, no new revision.
    void show_blocks(std::int64_t fy, std::int64_t fx);
    // Once per frame after drawing: a slider drag ends when no item is active.
    void end_frame(bool any_item_active);
    // Waits for the worker recompute (if any) and applies the pending one on this thread: the whole pass (a drag
    // step's heatmaps alone, blocks_only, are completed), as an export or a script saves it.
    void finish_recompute_now();

private:
    Snapshot snapshot() const;
    void restore(const Snapshot& s);
    void mark_dirty(bool computed_too);
    // `may_drag`: a step of a drag may show the heatmaps alone (RecomputeJob::drag); false: the whole pass.
    void start_recompute(bool may_drag = true);
    void take_recompute(RecomputeJob& job);
    void take_tensor_job(TensorJobResult& done);
    void set_data(std::shared_ptr<const TensorData> next);
    // A config that weighs by weights not loaded (a lesson's step, a session, --importance) loads them: the
    // toggle then turns them off and on again. Their file is unknown here ("").
    void adopt_importance();

    bool dirty_ = false;
    std::int64_t shown_fy_ = 0, shown_fx_ = 0;  // what show_blocks said last
    // Changes to what the computed (s, z) depend on (tensor, dtype, rounding, overflow), and the change
    // the shown computed values answer: manual mode recomputes them only when these differ.
    std::uint64_t computed_inputs_ = 1;
    std::uint64_t computed_done_ = 0;
    bool gesture_open_ = false;
    Task<std::shared_ptr<RecomputeJob>> recompute_{TaskPriority::Normal};
    std::shared_ptr<RecomputeJob> spare_;  // the buffers of the previous result, reused
    std::string overflow_shown_;  // the float32 overflow line the error banner shows for the result on show
    std::string computed_overflow_;  // the computed (s, z)'s float32 overflow line, with computed_metrics
};

// A job's `then` that records the job's tensor (now the document's) as coming from `origin`.
std::function<void(Document&)> RecordOrigin(TensorOrigin origin);

}  // namespace qs::gui
