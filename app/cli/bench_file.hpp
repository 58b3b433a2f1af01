// The whole-process rows of `quantscope bench`: `quantscope quantize FILE.npy` against `cp` of the file.
#pragma once

#include "quantscope/json_writer.hpp"
#include "quantscope/tensor.hpp"

namespace qs::cli {

// Writes `tensor` as a .npy in a temporary folder, then times (wall, medians over `rounds`) and measures
// (peak resident memory) child processes: `cp` of the file, `quantize` of it with metrics only, and with
// its three outputs; adds the figures, and the ratios to cp taken round by round, to `json`.
void add_file_rows(JsonObject& json, const Tensor& tensor, int rounds);

}  // namespace qs::cli
