// An importance vector from a file put in the document (FORMATS.md "llama.cpp (ggml) types": a float32 .npy,
// one weight per column of the last axis, read by core's read_importance_npy as `quantize --importance`
// reads it): File > Open importance... and a session's "importance" key.
#pragma once

#include <string>

namespace qs::gui {

struct AppState;

// Reads `path` for the open tensor and loads it into the document as one undo step, weighing by it when the
// type takes importance (`weighted` given: as it says). False with the one line in app.doc.error otherwise.
bool OpenImportance(AppState& app, const std::string& path, const bool* weighted = nullptr);

}  // namespace qs::gui
