#include "gui/document/undo_history.hpp"

#include <set>
#include <utility>

namespace qs::gui {
namespace {

constexpr std::size_t kMaxUndoSteps = 200;
// Undo keeps old tensors alive; past this many bytes of distinct tensors the oldest steps are dropped.
constexpr std::size_t kMaxUndoBytes = std::size_t{768} << 20;

}  // namespace

void UndoHistory::push(Snapshot before) {
    undo_.push_back(std::move(before));
    redo_.clear();
    trim();
}

std::optional<Snapshot> UndoHistory::undo(Snapshot current) {
    if (undo_.empty()) return std::nullopt;
    Snapshot s = std::move(undo_.back());
    undo_.pop_back();
    redo_.push_back(std::move(current));
    return s;
}

std::optional<Snapshot> UndoHistory::redo(Snapshot current) {
    if (redo_.empty()) return std::nullopt;
    Snapshot s = std::move(redo_.back());
    redo_.pop_back();
    undo_.push_back(std::move(current));
    return s;
}

void UndoHistory::trim() {
    while (undo_.size() > kMaxUndoSteps) undo_.pop_front();
    auto bytes = [this] {
        std::set<const TensorData*> seen;
        std::size_t total = 0;
        for (const auto* side : {&undo_, &redo_}) {
            for (const Snapshot& s : *side) {
                // A mapped tensor holds no memory of its own (the file's pages can be dropped and read again).
                if (s.data && s.data->floats && seen.insert(s.data.get()).second)
                    total += s.data->floats->values.size() * sizeof(float);
            }
        }
        return total;
    };
    while (!undo_.empty() && bytes() > kMaxUndoBytes) undo_.pop_front();
}

}  // namespace qs::gui
