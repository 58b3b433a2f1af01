// A checkpoint as `sweep` reads it (SPEC "Sweep"): one .safetensors or .gguf file, or a sharded checkpoint's
// `*.safetensors.index.json` whose `weight_map` names the shard of every tensor. Opening reads and checks every
// header and the index against them, so a bad shard or a lying index is found before any tensor is read.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The index file's `weight_map`, in file order, and its shards in order of first appearance. Strict: the
// document must be an object with an object `weight_map` of string values, each a plain file name (no folder,
// so an index cannot point outside its own folder) ending in .safetensors. Throws qs::Error "<path>: ...".
struct CheckpointIndex {
    std::vector<std::pair<std::string, std::string>> weight_map;  // tensor name → shard file name
    std::vector<std::string> shards;
};
CheckpointIndex read_checkpoint_index(const std::string& path);

// A tensor's shape as a checkpoint lists it: a view of dimensions the Checkpoint owns, 16 bytes (a Shape was 24
// and a heap block of 32 or more: 56 MB for a million tensors). Converts to a Shape (a copy) where one is needed.
class CheckpointShape {
public:
    CheckpointShape() = default;
    CheckpointShape(const std::int64_t* dims, std::uint32_t rank) : dims_(dims), rank_(rank) {}

    std::size_t size() const { return rank_; }
    bool empty() const { return rank_ == 0; }
    const std::int64_t* begin() const { return dims_; }
    const std::int64_t* end() const { return dims_ + rank_; }
    std::int64_t operator[](std::size_t d) const { return dims_[d]; }
    operator Shape() const { return Shape(begin(), end()); }  // implicit: where a Shape was

    friend bool operator==(const CheckpointShape& a, const CheckpointShape& b) {
        return a.rank_ == b.rank_ && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator!=(const CheckpointShape& a, const CheckpointShape& b) { return !(a == b); }
    friend bool operator==(const CheckpointShape& a, const Shape& b) {
        return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }
    friend bool operator==(const Shape& a, const CheckpointShape& b) { return b == a; }
    friend bool operator!=(const CheckpointShape& a, const Shape& b) { return !(a == b); }
    friend bool operator!=(const Shape& a, const CheckpointShape& b) { return !(b == a); }

private:
    const std::int64_t* dims_ = nullptr;
    std::uint32_t rank_ = 0;
};

// Names, types and shapes are views of text and dimensions the Checkpoint owns (once: a header of a million tensors
// held each name in several copies and maps, 1 GB for compare): a CheckpointTensor lives as long as its
// Checkpoint, or a copy of it. 80 bytes.
struct CheckpointTensor {
    std::string_view name;
    std::string_view dtype;     // as the header names it: "F32", "BF16", "I64", ...; GGUF: "F16", "Q4_K", ...
    CheckpointShape shape;      // as stored (any rank; GGUF: ggml's ne reversed, as numpy shows it)
    std::uint64_t begin = 0;    // the tensor's bytes within the shard's data region
    std::uint64_t end = 0;
    std::uint32_t place = 0;    // its place in its shard's header (the checkpoint lists tensors by data offset)
    std::uint32_t shard = 0;    // index into Checkpoint::shards
    bool readable = false;      // QuantScope reads its values (F32, F16, BF16, F64, a ggml type it decodes)
};

struct Checkpoint {
    std::vector<std::string> shards;         // paths; one for a plain .safetensors file
    std::vector<std::uint64_t> data_offsets; // each shard's data region in its file, as opened
    std::vector<CheckpointTensor> tensors;   // file order: shards in order, then by data offset
    // The text and dimensions the tensors' names, types and shapes view, in blocks that never move. Shared, so
    // that a copy of the Checkpoint views the same blocks.
    std::vector<std::shared_ptr<const char[]>> text;
    std::vector<std::shared_ptr<const std::int64_t[]>> dims;
};

// Opens `path` (a .safetensors or .gguf file, or an index .json), validates every shard's header in full and, for an
// index, that it and the headers agree: every shard exists, every listed tensor is in the shard the index
// names, no tensor is in two shards or missing from the index. The shards are closed again (a sweep maps one
// at a time). Throws qs::Error naming the offending file.
Checkpoint open_checkpoint(const std::string& path);

class GgufFile;
class MappedFile;
class SafetensorsFile;

// One shard opened again for reading its tensors (a .safetensors or a .gguf file, by extension), mapped. Its
// header must still list what `checkpoint` lists for it (every tensor's name, dtype, shape and bytes), since
// readers take a tensor's place from the checkpoint: else Error "<path>: the file changed since it was opened".
class CheckpointShard {
public:
    CheckpointShard(const Checkpoint& checkpoint, std::size_t shard);
    ~CheckpointShard();
    CheckpointShard(CheckpointShard&&) noexcept;

    // The tensor's float32 values (SafetensorsFile::view, GgufFile::view): a view of the mapping, or of
    // `decoded` for a quantized GGUF tensor.
    TensorView view(const CheckpointTensor& tensor, Tensor& decoded, std::string* folding = nullptr) const;
    // Byte offset of the data region: CheckpointTensor::begin + data_offset() is where a tensor starts.
    std::size_t data_offset() const;
    const MappedFile& file() const;

private:
    std::unique_ptr<SafetensorsFile> safetensors_;
    std::unique_ptr<GgufFile> gguf_;
};

}  // namespace qs
