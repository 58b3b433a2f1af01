// A GGUF tensor's stored blocks as they are in the file (issue 23 item 6: the window shows B's stored values
// against A's), read whole into memory under the file's guard: a quantized tensor's bytes are a fraction of its
// float32 values (q4_K: 4.5 bits a value), and nothing is decoded here.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "quantscope/error.hpp"
#include "quantscope/stored_blocks.hpp"

namespace qs {

// The blocks of tensor `tensor_name` of the .gguf file at `path` (or the values of a .safetensors file's
// F32/F16/BF16/F64 tensor: StoredBlocks::values), its shape as GgufFile::view gives it (rank above 3 folded
// into the first axis). Throws qs::Error "<path>: tensor '<name>' ..." (one line) for a missing tensor, a type
// ggml does not define, one QuantScope cannot show (IQ2_*, the integer types, ...), codes a quantizer never
// writes, or a file that shrinks. `expected`, if given: a tensor of another shape (folded as above) is refused
// from the file's header, before its bytes are read ("... is <shape>, not <expected>"): a file named by a
// session may hold gigabytes under that name.
std::shared_ptr<const StoredBlocks> read_stored_blocks(const std::string& path, const std::string& tensor_name,
                                                       const Shape* expected = nullptr);

// read_stored_blocks' refusal of a tensor that is not of the expected shape: `found`, the shape its header gives
// (folded), for the caller's own line.
class StoredShapeMismatch : public Error {
public:
    StoredShapeMismatch(const std::string& message, Shape found_shape) : Error(message), found(std::move(found_shape)) {}
    Shape found;
};

}  // namespace qs
