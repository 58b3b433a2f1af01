// Reading and writing tensors by file extension: .npy and .csv (and .safetensors for reading).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/tensor.hpp"

namespace qs {

class AtomicFileWriter;

// Picks the reader by extension (.npy, .csv, .safetensors; case-insensitive). Every length and shape is
// checked against the real file size before anything is allocated; the result has passed check_tensor.
// Throws qs::Error naming the file. A .safetensors file must hold exactly one tensor here.
Tensor load_tensor(const std::string& path);
// As above; for .safetensors, `tensor_name` picks the tensor (empty: the only one). Rank > 3 is folded to
// 3-D and `note` (if given) receives e.g. "2x3x4x5 viewed as 6x4x5", else is cleared. A non-empty
// `tensor_name` with another format is an error.
Tensor load_tensor(const std::string& path, const std::string& tensor_name, std::string* note = nullptr);

// The last path component's extension with its dot, lower-cased (".npy"), or "" when it has none: what
// every reader and writer here decides by.
std::string lower_extension(const std::string& path);

// The element types a tensor can be written as.
enum class NpyDtype { F4, I1, U1, I2, U2 };

// Writes atomically (temporary file in the same directory, then rename): on error nothing is created
// or changed. `.npy` ('<f4' floats, codes as the given dtype, a code that does not fit is an error);
// `.csv` (2-D; rank 1 is one row, rank 3 is refused; codes as integers). Other extensions are errors.
void save_floats(const std::string& path, const Shape& shape, const float* values);
void save_codes(const std::string& path, const Shape& shape, const std::int32_t* codes, NpyDtype dtype);
// The same into a writer the caller commits (alone, or with others through OutputFiles); the format
// follows the writer's target.
void save_floats(AtomicFileWriter& out, const Shape& shape, const float* values);
void save_codes(AtomicFileWriter& out, const Shape& shape, const std::int32_t* codes, NpyDtype dtype);

}  // namespace qs
