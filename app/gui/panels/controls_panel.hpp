// The quantization controls: integer type, mode (asymmetric / symmetric / manual scale and zero point),
// granularity, rounding, and the teaching switch "naive cast, no clamp". Every change goes through
// Document::apply_config, which validates it, records it for undo and schedules one recompute; nothing
// here computes a quantization.
#pragma once

#include <cstdint>
#include <string>

namespace qs::gui {

class Document;
class Intents;

struct ControlsPanelState {
    // Granularity is edited as a draft: a combination the tensor's shape does not allow (an axis out of
    // range, a group size that does not divide the last dimension) is shown with `granularity_message`
    // and not applied.
    int granularity = 0;  // index into tensor / channel / group
    int axis = 0;
    int group_size = 32;
    std::string granularity_message;
    std::string manual_message;  // a typed scale that is not a positive finite number
    double scale_entry = 1.0;    // the exact-entry box of the manual scale
    bool scale_entry_active = false;  // being typed into: do not overwrite it with the applied scale
    // The "naive cast" note, found once per result generation: the element it traces (largest error) and
    // the sentence of what the wrap does to the farthest overflow (the core's overflow_sentence).
    std::uint64_t traced_generation = ~std::uint64_t{0};
    std::int64_t traced_index = -1;
    std::string overflow_sentence;
    std::uint64_t synced_revision = 0;  // the document revision the drafts were taken from
};

// Contents only (no Begin/End): draws inside the current window or child.
void DrawControlsPanel(ControlsPanelState& state, const Document& doc, Intents& out);

}  // namespace qs::gui
