// The whole-process rows of `quantscope bench`: `quantscope quantize FILE.npy` against `cp` of the file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "quantscope/json_writer.hpp"
#include "quantscope/random.hpp"

namespace qs::cli {

// The bench's child processes (its file and sweep rows).
struct ProcessRun {
    double wall_ms = 0;
    double peak_mib = 0;  // the child's peak resident memory, as the kernel counts it
};
// Runs `argv` (argv[0] looked up on PATH) with its stdout dropped (or kept in `captured`) and waits for it;
// it must exit 0.
ProcessRun run_process(const std::vector<std::string>& argv, std::string* captured = nullptr);
double median(std::vector<double> values);
std::string own_executable();

// A fresh folder under the temporary directory, removed with its files.
struct ScratchFolder {
    std::filesystem::path path;
    ScratchFolder();
    ~ScratchFolder();
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    std::string operator/(const char* name) const { return (path / name).string(); }
};

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

// `quantscope sweep` of a synthetic sharded checkpoint (two shards, each a BF16 tensor of `shape`, an F32 one
// of half its rows and a norm vector, written to a temporary folder) against `cp` of its shards: medians over
// `rounds`, GB/s and the ratio to cp.
struct SweepFigures {
    int rounds = 0;
    double checkpoint_mib = 0;
    int tensors = 0;
    std::string options;
    double cp_ms = 0, sweep_ms = 0, sweep_gb_per_s = 0, sweep_ratio = 0, sweep_peak_mib = 0;
};
SweepFigures measure_sweep_rows(const Shape& shape, int rounds);
void add_sweep_rows(JsonObject& json, const SweepFigures& figures);

// Writes one BF16 tensor "model.embed_tokens.weight" of `shape` (rank 2) as a .safetensors file through
// AtomicFileWriter, a band of rows at a time (memory stays a few MB whatever the size): weights of std ~0.02
// from a seeded generator, and an outlier of 1.5 in every 1000th row. Returns the file's size in bytes.
std::uint64_t write_large_tensor(const std::string& path, const Shape& shape, std::uint64_t seed);

// The window on a large tensor (issue 10, item 2): `quantscope gui FILE --bench-frames N` on a file
// write_large_tensor made in a temporary folder, as a child under the current display. Its own JSON: time to
// the first figure, median recompute of a slider step against a plain read pass of the same bytes, and the
// peak resident memory against the target 1.5 x the tensor's bytes + 300 MB.
struct WindowFigures {
    bool measured = false;  // false without a display
    Shape shape;
    double tensor_mib = 0, whole_process_ms = 0, open_ms = 0, recompute_ms = 0, read_pass_ms = 0, ratio = 0;
    double peak_mib = 0, peak_target_mib = 0;
};
WindowFigures measure_window_rows(const Shape& shape, int frames);
void add_window_rows(JsonObject& json, const WindowFigures& figures);

}  // namespace qs::cli
