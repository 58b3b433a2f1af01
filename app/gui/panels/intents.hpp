// What a panel asks for. Panels draw from a read-only document and queue their requests here; the app applies
// them in order after the panel has drawn (app/apply_intents.cpp), so no panel changes the document or
// another panel's state, and a panel is a drawing function plus its own UI state.
#pragma once

#include <cstdint>
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
// A tool's result picked (a calibrator's Apply, a point or row of the Formats tab): its settings replace the
// document's as one undo step. Dropped while a tensor job runs: the tool's numbers are of the tensor it replaces.
// `checked`: refused as Intents::apply_config refuses, with the reason as the error (the formats' rows are of
// every format, some of which this tensor's shape may not take).
struct PickConfigIntent {
    QuantConfig config;
    bool checked = false;
};
// A point of the error landscape: manual s and z for the whole tensor, on the document's settings (one undo
// step; dropped while a tensor job runs, as PickConfigIntent).
struct PickManualIntent {
    double scale = 1.0;
    std::int32_t zero_point = 0;
};
// Select an element of the figure (flat index) and show its slice: the Bits tab follows a code of the packed byte.
struct SelectElementIntent {
    std::int64_t flat = -1;
};

using Intent = std::variant<ApplyConfigIntent, ApplyTensorIntent, TensorJobIntent, OpenFileIntent, LoadPresetIntent,
                            ShowModelListIntent, LessonStepIntent, LessonRevealIntent, ErrorIntent, PickConfigIntent,
                            PickManualIntent, SelectElementIntent>;

// The settings `requested` becomes when applied to `doc` as Intents::apply_config applies it (a control that
// changes anything but the naive recipe's norm leaves the recipe), checked against the document's tensor: false
// with the reason in *message when it does not fit (or there is no tensor).
bool CheckedConfig(const Document& doc, const QuantConfig& requested, QuantConfig& next, std::string* message = nullptr);

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
