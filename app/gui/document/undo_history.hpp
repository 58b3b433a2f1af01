// Undo and redo of the document: whole snapshots of (tensor, config), cheap because tensors are shared and
// immutable (a settings-only step copies no data). Bounded in steps and in the bytes of distinct tensors.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "gui/document/tensor_data.hpp"
#include "quantscope/config.hpp"

namespace qs::gui {

// Everything one undo step restores.
struct Snapshot {
    std::shared_ptr<const TensorData> data;
    QuantConfig config;
    Mode base_mode = Mode::Asymmetric;
    std::string label;
    // The importance vector loaded (File > Open importance..., a lesson step, --importance) and the file it
    // came from ("" for a lesson's inline weights); config.importance is it while "weighted by importance" is on.
    Importance importance;
    std::string importance_path;
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

}  // namespace qs::gui
