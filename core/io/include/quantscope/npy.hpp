// NumPy .npy files (format versions 1.0, 2.0, 3.0): reading float arrays, writing float32 and integer codes.
// Reads '<f2', '<f4', '<f8' of rank 1 to 3, C or Fortran order (Fortran is transposed to row-major).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "quantscope/element_type.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs {

class AtomicFileWriter;
class MappedFile;

// The header of a .npy file as written, before any QuantScope restriction on rank or dtype.
struct NpyHeader {
    int major_version = 1;
    std::string descr;          // e.g. "<f4"
    bool fortran_order = false;
    Shape shape;                // as in the file: any rank (0 for a scalar), dimensions >= 0
    std::size_t data_offset = 0;  // where the array bytes start
};

// Parses and checks magic, version, header length against `size`, and the header dict (keys in any
// order, either quote, whitespace, trailing commas, "()" / "(3,)" / "(3)"). Throws qs::Error
// "<name>: ..." on anything else. Touches no array data.
NpyHeader parse_npy_header(const std::uint8_t* data, std::size_t size, const std::string& name);

// What parse_npy checks before it reads a value (header, dtype, rank, element count, exact data length):
// where the elements are and how to read them. Throws qs::Error "<name>: ...".
struct NpyData {
    Shape shape;                      // rank 1..3 (rank > 3 in C order folded; `note` says how)
    ElementType type = ElementType::F32;
    bool fortran_order = false;       // column-major data (rank > 1 only)
    std::size_t data_offset = 0;
};
NpyData inspect_npy(const std::uint8_t* data, std::size_t size, const std::string& name, std::string* note = nullptr);

// The whole reader on an in-memory file: header, dtype and rank checks, element count (kMaxElements) and
// exact data length — all before allocating — then one conversion pass and check_tensor.
// `name` prefixes every error message.
// Rank > 3 (C order) is folded to 3-D; `note` (if given) then says how, e.g. "2x3x4x5 viewed as 6x4x5".
Tensor parse_npy(const std::uint8_t* data, std::size_t size, const std::string& name, std::string* note = nullptr);

// parse_npy on a memory-mapped file (a file that shrinks while it is read is an error, not a crash).
Tensor read_npy(const std::string& path, std::string* note = nullptr);
Tensor read_npy(const MappedFile& file, std::string* note = nullptr);

// The bytes of a v1.0 header (v2.0 if it would not fit) for `descr` and `shape`, padded with spaces and
// a newline so the data starts at a multiple of 64 bytes, as numpy writes it.
std::string npy_header_bytes(const std::string& descr, const Shape& shape);

// A .npy array written piece by piece as its values are computed: the header on construction (the shape
// checked: rank 1..3, not empty), then append() in flat order: floats as '<f4'; codes as '|i1', '|u1',
// '<i2' or '<u2' (the smallest type that holds them; NpyDtype::F4 writes them as '<f4'), a code that does
// not fit being an error naming its index. The caller commits `out` (its target names the file in messages).
class NpyArrayWriter {
public:
    NpyArrayWriter(AtomicFileWriter& out, const Shape& shape, NpyDtype dtype);
    void append(const float* values, std::int64_t count);       // dtype F4
    void append(const std::int32_t* codes, std::int64_t count);  // any dtype (F4: codes as floats)

private:
    AtomicFileWriter& out_;
    Shape shape_;
    NpyDtype dtype_;
    std::int64_t written_ = 0;
};

}  // namespace qs
