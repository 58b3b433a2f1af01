// Reading and writing tensors by file extension: .npy and .csv (and .safetensors and .gguf for reading).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

class AtomicFileWriter;
class CsvTableWriter;
class MappedFile;
class NpyArrayWriter;

// Picks the reader by extension (.npy, .csv, .safetensors, .gguf; case-insensitive). Every length and shape is
// checked against the real file size before anything is allocated; the result has passed check_tensor.
// Throws qs::Error naming the file. A .safetensors or .gguf file must hold exactly one tensor here.
Tensor load_tensor(const std::string& path);
// As above; for .safetensors and .gguf, `tensor_name` picks the tensor (empty: the only one). Rank > 3 is folded to
// 3-D and `note` (if given) receives e.g. "2x3x4x5 viewed as 6x4x5", else is cleared. A non-empty
// `tensor_name` with another format is an error.
Tensor load_tensor(const std::string& path, const std::string& tensor_name, std::string* note = nullptr);

class GgufFile;
class SafetensorsFile;

// A tensor file opened for passes over its values without a float32 copy: view() reads the elements in
// their stored type straight from the file's mapping (.npy in C order: <f2, <f4, <f8; .safetensors: F16,
// BF16, F32, F64; .gguf: F16, BF16, F32, F64). A .csv, a Fortran-order .npy or a quantized .gguf tensor has no
// such layout: it is decoded into memory on open (a GGUF tensor by its type's to_float).
// Opening checks what load_tensor checks, with the same messages, except the values: the first pass over
// the view reports a NaN or Inf (compute_params does). Not movable: the view points into it.
class TensorFile {
public:
    // `tensor_name` picks a .safetensors or .gguf tensor (empty: the only one); with another format it is an error.
    TensorFile(const std::string& path, const std::string& tensor_name);
    ~TensorFile();
    TensorFile(const TensorFile&) = delete;
    TensorFile& operator=(const TensorFile&) = delete;

    const TensorView& view() const { return view_; }
    // How the tensor was viewed, e.g. "2x3x4x5 viewed as 6x4x5"; usually empty.
    const std::string& note() const { return note_; }

private:
    std::unique_ptr<MappedFile> file_;
    std::unique_ptr<SafetensorsFile> safetensors_;
    std::unique_ptr<GgufFile> gguf_;
    Tensor decoded_;
    TensorView view_;
    std::string note_;
};

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

// The same piece by piece, as the values are computed: construction checks the layout (and writes a .npy
// header), append() takes the values in flat order, finish() checks that every element came.
class TensorWriter {
public:
    TensorWriter(AtomicFileWriter& out, const Shape& shape, NpyDtype dtype);  // F4 for floats
    ~TensorWriter();
    void append(const float* values, std::int64_t count);
    void append(const std::int32_t* codes, std::int64_t count);
    void finish() const;

private:
    template <class T>
    void append_values(const T* values, std::int64_t count);

    AtomicFileWriter& out_;
    std::int64_t numel_ = 0, written_ = 0;
    std::unique_ptr<NpyArrayWriter> npy_;
    std::unique_ptr<CsvTableWriter> csv_;
};

}  // namespace qs
