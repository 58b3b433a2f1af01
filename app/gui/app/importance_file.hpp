// An importance vector from a file (FORMATS.md "llama.cpp (ggml) types": a float32 .npy, one weight per column
// of the last axis, as `quantize --importance` reads it): File > Open importance..., `gui --importance` and a
// session's "importance" key all read it here, and put it in the document.
#pragma once

#include <string>

#include "quantscope/config.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

struct AppState;

// The weights of `path` for a tensor of `shape`: a .npy of rank 1 that core's check_importance accepts.
// Throws qs::Error, one line naming the file and what is wrong.
Importance ReadImportanceFile(const std::string& path, const Shape& shape);

// Reads `path` for the open tensor and loads it into the document as one undo step, weighing by it when the
// type takes importance (`weighted` given: as it says). False with the one line in app.doc.error otherwise.
bool OpenImportance(AppState& app, const std::string& path, const bool* weighted = nullptr);

}  // namespace qs::gui
