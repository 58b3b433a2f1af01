// Two checkpoints compared tensor by tensor (`quantscope compare A B`, issue 23): "what did llama-quantize do
// to my model". Tensors are matched by name; each one's stored values are decoded (its type's to_float: F32,
// F16, BF16, F64 or a ggml type) in tiles from both mappings by threads that go from tensor to tensor, each 2 MiB
// of a mapping given back once the groups of tiles that read it are summed, so memory follows a few groups, never
// a whole tensor.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "quantscope/checkpoint.hpp"

namespace qs {

struct CompareRow {
    std::string name;
    Shape shape;                          // as stored in A (numpy's order)
    std::string dtype_a, dtype_b;         // as the headers name them ("F16", "Q4_K"); empty where absent
    std::int64_t elements = 0;
    double bits_per_weight_a = 0, bits_per_weight_b = 0;  // stored bytes x 8 / elements
    // Empty when compared; else why not (only in one file, shapes differ, a type QuantScope cannot decode),
    // and the numbers below are unset.
    std::string error;
    double mse = 0;                       // mean (a - b)^2
    std::optional<double> relative_rmse;  // sqrt(mse) / rms(a); empty when a is all zeros
    std::optional<double> sqnr_db;        // 10 log10(Σ a² / Σ (a - b)²); empty when either sum is 0
    double max_abs_error = 0;
};

struct CompareTotal {
    std::int64_t tensors = 0;             // compared rows
    std::int64_t error_rows = 0;
    std::int64_t elements = 0;            // of the compared rows, as every field here
    std::uint64_t bytes_a = 0, bytes_b = 0;
    double bits_per_weight_a = 0, bits_per_weight_b = 0;
    double mse = 0;                       // element-weighted: Σ (a - b)^2 / elements
    std::optional<double> relative_rmse;
    std::optional<double> sqnr_db;        // from the summed energies
    double max_abs_error = 0;
    double seconds = 0;
    bool cancelled = false;
};

// Stored bytes of both files read so far and in all.
using CompareProgress = std::function<void(std::uint64_t bytes_done, std::uint64_t bytes_total)>;

// One row per tensor of A in A's file order, then the tensors only B has. A file that changed since it was
// opened (it shrank) throws qs::Error; a cancel between tensors ends the rows early (total.cancelled).
CompareTotal compare_checkpoints(const Checkpoint& a, const Checkpoint& b,
                                 const std::function<void(const CompareRow&)>& on_row,
                                 const CompareProgress& progress = nullptr, const std::atomic<bool>* cancel = nullptr);

// The rows as `compare --csv` prints them: a header line, then a line per row (no line break included).
std::string compare_csv_header();
std::string compare_csv_line(const CompareRow& row);

}  // namespace qs
