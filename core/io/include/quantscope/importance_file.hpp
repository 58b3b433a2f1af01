// A tensor's importance (one weight per column of its last axis, QuantConfig::importance) from a file, in the
// two forms a user has one: a .npy row of weights, or llama-imatrix's GGUF. The command line, the window and
// the Python module read it here, so the three accept and refuse the same files with the same words.
#pragma once

#include <cstdint>
#include <string>

#include "quantscope/config.hpp"

namespace qs {

// A .npy of rank 1 that check_importance accepts for a tensor of `columns` columns. Throws qs::Error
// "'PATH': why".
Importance read_importance_npy(const std::string& path, std::int64_t columns);

// Weight `tensor`'s importance in an imatrix GGUF (read_gguf_imatrix: in_sum2 / counts), which must hold one
// matrix (a merged-experts tensor holds several and is refused by name) that check_importance accepts.
// Throws qs::Error naming the file and the tensor.
Importance read_imatrix_importance(const std::string& path, const std::string& tensor, std::int64_t columns);

}  // namespace qs
