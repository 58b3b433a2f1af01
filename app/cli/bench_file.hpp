// The whole-process rows of `quantscope bench`: `quantscope quantize FILE.npy` against `cp` of the file.
#pragma once

#include "quantscope/json_writer.hpp"
#include "quantscope/random.hpp"

namespace qs::cli {

struct FileFigures {
    int rounds = 0;
    double file_mib = 0;
    double cp_ms = 0;                                        // cp of the file
    double metrics_ms = 0, metrics_ratio = 0, metrics_peak_mib = 0;  // quantize FILE
    double outputs_ms = 0, outputs_ratio = 0, outputs_peak_mib = 0;  // with its three outputs
};

// Writes the tensor `spec` makes as a .npy in a temporary folder, then times (wall, medians over `rounds`)
// and measures (peak resident memory) child processes: `cp` of the file, `quantize` of it with metrics
// only, and with its three outputs; ratios to cp are taken round by round. Call it while this process is
// small (before the big allocations): a child's peak memory counts from the parent's size at the fork.
FileFigures measure_file_rows(const RandomSpec& spec, int rounds);

void add_file_rows(JsonObject& json, const FileFigures& figures);

}  // namespace qs::cli
