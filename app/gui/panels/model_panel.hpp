// The model view (issue 10): a whole checkpoint (.safetensors or a sharded index) under the current settings.
// Every floating tensor is swept in the background (core's sweep_checkpoint, what `quantscope sweep` prints)
// into a sortable, filterable table and a bar chart of SQNR per tensor in file order, so that "every
// down_proj is worse" shows as a pattern; clicking a tensor opens it in the four panels; the table exports as
// the sweep's CSV.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/quant_view.hpp"
#include "gui/document/task.hpp"
#include "gui/panels/model_compare.hpp"
#include "gui/panels/intents.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/sweep.hpp"

namespace qs::gui {

struct ModelSweep {
    QuantConfig config;
    std::vector<SweepRow> rows;  // file order
    SweepTotal total;
};

struct ModelPanelState {
    std::string path;                                // the checkpoint opened, "" for none
    std::shared_ptr<const Checkpoint> checkpoint;
    Task<ModelSweep> task;
    ModelSweep shown;                                // the last finished sweep
    bool has_shown = false;
    bool started = false;                            // a sweep of this checkpoint was started (maybe cancelled)
    ImGuiTextFilter filter;                          // tensor names ("down_proj", "-bias")
    std::string export_path = "sweep.csv";
    std::string message;                             // the export's outcome
    bool message_is_error = false;
    ModelCompareState compare;                       // this checkpoint against a second one ("Compare with")

    // [Internal state] rows of `shown` in table order (sorted, filtered), redone when either changes.
    std::vector<int> order;
    bool order_valid = false;
};

// True for a sharded checkpoint's index ("*.safetensors.index.json", case-insensitive).
bool IsCheckpointIndexPath(const std::string& path);

// Reads and checks the checkpoint's headers (and index) now; the sweep starts from the panel. A comparison with
// B, of the previous A, is dropped. False with *error (the state is then unchanged).
bool OpenModel(ModelPanelState& state, const std::string& path, std::string* error);

// Starts the sweep of the whole checkpoint with `config` (cancelling a running one).
void StartModelSweep(ModelPanelState& state, const QuantConfig& config);
bool ModelSweepBusy(const ModelPanelState& state);
// Waits for a running sweep and shows its result (tests and scripted screenshots).
void FinishModelSweep(ModelPanelState& state);

// The job that opens tensor `name` of the checkpoint in the four panels, with `config`. Throws qs::Error
// when the tensor cannot be shown (its dtype, rank or size).
TensorJobIntent ModelTensorJob(const ModelPanelState& state, const std::string& name, const QuantConfig& config);
// The same for tensor `name` of any opened checkpoint (`path` names it in the label); a .gguf tensor is read
// as its stored values, decoded by its type's to_float.
TensorJobIntent CheckpointTensorJob(const Checkpoint& checkpoint, const std::string& path, const std::string& name,
                                    const QuantConfig& config);
// A comparison row opened against B: tensor `name` of the checkpoint (A) as the values, with B's stored blocks
// of the same name as their quantization (ModelFileTensorJob's `stored_in`; B's plain F16/BF16/F32/F64 values as
// r', with no codes). Throws qs::Error when no B is open or B has no such tensor; what B's tensor cannot be
// (another shape, a type QuantScope cannot show) fails the job.
TensorJobIntent CompareTensorJob(const ModelPanelState& state, const std::string& name, const QuantConfig& config);

// Writes the shown rows (all of them, in file order) as the sweep's CSV, through the one atomic writer.
bool ExportModelCsv(const ModelPanelState& state, const std::string& path, std::string* error);

// The panel's contents; `config` is the document's current one (what a sweep uses).
void DrawModelPanel(ModelPanelState& state, const QuantConfig& config, Intents& out);

}  // namespace qs::gui
