// Picking one tensor of a model's .safetensors or .gguf file: opening the file reads and validates only its header
// (the data stays unread) and shows every tensor with its stored type (F16, Q4_K, ...) and shape in a list with a
// filter box.
// Picking one loads just that tensor's bytes, as a background job with progress; rank > 3 is folded to 3-D and
// the window says how.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/panels/intents.hpp"
#include "quantscope/checkpoint.hpp"

namespace qs::gui {


struct SafetensorsBrowserState {
    bool open = false;       // the window is shown
    bool appearing = false;  // its first frame after an open: bring it to the front
    std::string path;
    // The file's header: its tensors in data order.
    std::shared_ptr<const Checkpoint> checkpoint;
    ImGuiTextFilter filter;  // matches tensor names ("attn", "-bias", "q_proj,k_proj")
    std::string loaded;      // name of the tensor last picked from this file

    // [Internal state] checkpoint->tensors indices that pass the filter, redone when the filter or the file changes.
    std::vector<int> visible;
    bool visible_valid = false;
};

// True for a .safetensors or .gguf path (case-insensitive): a file of many tensors to pick from.
bool IsModelFilePath(const std::string& path);

// Whether the GUI can show tensor `t` (F32, F16, BF16, F64 or a ggml type QuantScope decodes; rank >= 1; not
// empty; at most kMaxViewElements); otherwise `why` says why not.
bool TensorLoadable(const CheckpointTensor& t, std::string* why);

// Opens `path`'s header and shows the list. Returns false with *error (the state is then unchanged).
bool OpenSafetensorsBrowser(SafetensorsBrowserState& state, const std::string& path, std::string* error);

// The job that loads tensor `name` of the file at `path` with `config` (mapped anew, only that tensor read); its
// label is "<path> : <name>". With `stored_in` (a .gguf or .safetensors file holding a tensor of the same name and
// shape: the Model tab's B), that tensor's stored blocks (or plain F16/BF16/F32/F64 values) come with it, and the
// config takes their type: the window shows them as
// the quantization of the values at `path` (r' B's stored values, the error |A - B|). A B that does not fit
// fails the job with one line.
TensorJobIntent ModelFileTensorJob(const std::string& path, const std::string& name, const QuantConfig& config,
                                   const std::string& stored_in = "");

// The list as its own window (outside any other Begin/End); nothing when closed.
void DrawSafetensorsBrowser(SafetensorsBrowserState& state, const Document& doc, Intents& out);

}  // namespace qs::gui
