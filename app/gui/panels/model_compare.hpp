// The Model tab's comparison (issue 23 item 6): the open checkpoint (A) against a second one (B), tensor by
// tensor, as `quantscope compare A B` prints it. core's compare_checkpoints runs in the background (progress,
// cancel between tensors, memory bounded by a tile as in the core); its rows are charted (SQNR per tensor in
// file order, coloured by B's stored type) beside a sortable table, with the total. A row opens the tensor with
// A's values as the original and B's stored blocks as their quantization.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/task.hpp"
#include "gui/panels/intents.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/compare.hpp"

namespace qs::gui {

struct ModelComparison {
    std::vector<CompareRow> rows;  // A's file order, then what only B has
    CompareTotal total;
};

struct ModelCompareState {
    std::string path_b;                              // the second checkpoint, "" for none
    std::shared_ptr<const Checkpoint> checkpoint_b;
    std::string field;                               // the "Compare with" path being typed
    Task<ModelComparison> task;
    ModelComparison shown;                           // the last finished comparison
    bool has_shown = false;
    bool on_show = false;                            // the tab shows the comparison rather than the sweep
    std::string error;                               // why B did not open

    // [Internal state] rows of `shown` in table order (sorted, filtered), redone when either changes.
    std::vector<int> order;
    bool order_valid = false;
};

// Opens B's headers (and index) and starts comparing `a` against it (cancelling a running comparison).
// False with *error (the state is then unchanged but for `error`).
bool StartModelCompare(ModelCompareState& state, std::shared_ptr<const Checkpoint> a, const std::string& path_b,
                       std::string* error);
bool ModelCompareBusy(const ModelCompareState& state);
// Waits for a running comparison and shows its result (tests and scripted screenshots).
void FinishModelCompare(ModelCompareState& state);

// What a row opens: A's tensor with B's stored values as its quantization (a click), or either one's values alone.
enum class CompareOpen { BAgainstA, A, B };

// The "Compare with" field and button, the progress and cancel, then (once shown) the total, the chart and the
// table; `a` is the open checkpoint. A row calls open_row(name, what) with what it asks to open.
void DrawModelCompare(ModelCompareState& state, const std::shared_ptr<const Checkpoint>& a, ImGuiTextFilter& filter,
                      const std::function<void(const std::string& name, CompareOpen what)>& open_row);

}  // namespace qs::gui
