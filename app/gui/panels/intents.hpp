// What a panel asks for. Panels draw from a read-only document and queue their requests here; the app applies
// them in order after the panel has drawn (app/apply_intents.cpp), so no panel changes the document or
// another panel's state, and a panel is a drawing function plus its own UI state.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gui/document/document.hpp"

namespace qs::gui {

struct ApplyConfigIntent {
    QuantConfig config;
    bool continuous = false;  // part of a slider drag: one undo step for the whole drag
};
struct ApplyTensorIntent {
    std::shared_ptr<const Tensor> tensor;
    std::string label;
};
struct TensorJobIntent {
    std::string label;
    TensorWork work;
};
struct OpenFileIntent {
    std::string path;  // a tensor file, a .safetensors model (its list) or a session
};
struct LoadPresetIntent {
    std::string name;
};
struct ShowModelListIntent {};
// The open lesson's step (0-based) to go to: its state replaces the document's.
struct LessonStepIntent {
    int step = 0;
};
// Uncover what the lesson's step hides ("predict, then reveal").
struct LessonRevealIntent {};
struct ErrorIntent {
    std::string message;
};

using Intent = std::variant<ApplyConfigIntent, ApplyTensorIntent, TensorJobIntent, OpenFileIntent, LoadPresetIntent,
                            ShowModelListIntent, LessonStepIntent, LessonRevealIntent, ErrorIntent>;

class Intents {
public:
    // Checks `next` against the document's tensor as Document::apply_config will (the reason in *message, or
    // *message cleared) and queues it when it fits.
    bool apply_config(const Document& doc, const QuantConfig& next, bool continuous, std::string* message = nullptr);
    void push(Intent intent) { list_.push_back(std::move(intent)); }
    bool empty() const { return list_.empty(); }
    // Hands the queue over (the app applies it) and leaves this one empty.
    std::vector<Intent> take() { return std::exchange(list_, {}); }

private:
    std::vector<Intent> list_;
};

}  // namespace qs::gui
