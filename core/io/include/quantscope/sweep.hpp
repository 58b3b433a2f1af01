// The sweep of a checkpoint (SPEC "Sweep"): every floating tensor quantized with one configuration through
// quantize_checked (what `quantize --tensor NAME` computes), its outlier statistics and metrics as a row, and
// a total. For `quantscope sweep` and the window's model view: rows are handed over as they are made, progress
// is reported, and a cancel flag is honoured between tensors.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "quantscope/checkpoint.hpp"
#include "quantscope/config.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

struct SweepRow {
    std::string name;
    Shape shape;                         // as stored
    std::string dtype;                   // the stored type: "F32", "F16", "BF16", "F64"; GGUF also "Q4_K", ...
    std::int64_t elements = 0;
    std::uint64_t bytes = 0;             // stored bytes
    // Empty when the tensor was quantized; else why not (e.g. the group size does not divide it), and the
    // numbers below are unset.
    std::string error;
    double min = 0, max = 0, mean = 0;
    double std = 0;                      // population standard deviation
    std::optional<double> max_over_std;  // max|x| / std; empty when std is 0
    Metrics metrics;
    double bits_per_weight = 0;          // see sweep_bits_per_weight
    // Set when the numbers are those of the wrong cast on purpose (--overflow wrap, as quantize warns): why.
    std::string warning;
};

struct SweepTotal {
    std::int64_t tensors = 0;            // quantized rows
    std::int64_t error_rows = 0;
    std::int64_t elements = 0;           // of the quantized rows, as every field here
    std::uint64_t bytes_in = 0;          // their stored bytes
    std::uint64_t bytes_quantized = 0;   // their size quantized: elements x bits_per_weight / 8, rounded up per row
    double mse = 0;                      // element-weighted
    std::optional<double> sqnr_db;       // from the summed energies; empty when either sum is 0
    double seconds = 0;
    double gb_per_s = 0;                 // bytes_in / seconds / 1e9
    bool cancelled = false;
};

struct SweepSettings {
    QuantConfig config;
    // Keeps a tensor by name (the CLI's --filter); empty: every tensor.
    std::function<bool(const std::string& name)> keep;
    // Adjusts the configuration for one tensor (a recipe that depends on the values); may throw qs::Error,
    // which becomes the row's error. Empty: `config` as it is.
    std::function<QuantConfig(const TensorView& values, const QuantConfig& config)> configure;
};

// Called after each row with the stored bytes done so far and in all (of the tensors that get a row).
using SweepProgress = std::function<void(std::uint64_t bytes_done, std::uint64_t bytes_total)>;

// The tensors of `checkpoint` that get a row: readable (F32, F16, BF16, F64; in a GGUF also the ggml types
// QuantScope decodes, swept as their dequantized values), at least 2 elements, kept by
// the filter; in file order.
std::vector<const CheckpointTensor*> sweep_tensors(const Checkpoint& checkpoint, const SweepSettings& settings);

// Runs the sweep: one shard mapped at a time and each tensor's pages released once it is done, so resident
// memory follows the largest tensor (and address space the largest shard), not the checkpoint. Any qs::Error while a tensor is
// quantized (the configuration cannot apply to its rank, axis or group size; a value that is not finite)
// becomes that row's error; a shard that cannot be opened again (it changed since open_checkpoint) throws.
SweepTotal sweep_checkpoint(const Checkpoint& checkpoint, const SweepSettings& settings,
                            const std::function<void(const SweepRow&)>& on_row, const SweepProgress& progress = nullptr,
                            const std::atomic<bool>* cancel = nullptr);

// The rows as `quantscope sweep --csv` prints them (SPEC "Sweep"): the header line and one line a row (no line
// breaks included); numbers as the JSON prints them, null as an empty field, the name and error quoted as
// RFC 4180 asks. The window's model view exports the same text.
std::string sweep_csv_header();
std::string sweep_csv_line(const SweepRow& row);

// Bits per weight of a quantization, by quantization_cost (FORMATS.md, as quantize and formats print it): the
// code's bits plus each block's float32 scale and (unless symmetric, where z = 0 is implied) its float32 zero
// point, spread over the elements.
double sweep_bits_per_weight(const QuantConfig& config, std::size_t blocks, std::int64_t elements);

}  // namespace qs
