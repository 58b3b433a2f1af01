// A checkpoint as `sweep` reads it (SPEC "Sweep"): one .safetensors file, or a sharded checkpoint's
// `*.safetensors.index.json` whose `weight_map` names the shard of every tensor. Opening reads and checks every
// header and the index against them, so a bad shard or a lying index is found before any tensor is read.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "quantscope/tensor.hpp"

namespace qs {

// The index file's `weight_map`, in file order, and its shards in order of first appearance. Strict: the
// document must be an object with an object `weight_map` of string values, each a plain file name (no folder,
// so an index cannot point outside its own folder). Throws qs::Error "<path>: ...".
struct CheckpointIndex {
    std::vector<std::pair<std::string, std::string>> weight_map;  // tensor name → shard file name
    std::vector<std::string> shards;
};
CheckpointIndex read_checkpoint_index(const std::string& path);

struct CheckpointTensor {
    std::string name;
    std::string dtype;          // as the header names it: "F32", "BF16", "I64", ...
    Shape shape;                // as stored (any rank)
    std::size_t shard = 0;      // index into Checkpoint::shards
    std::uint64_t begin = 0;    // the tensor's bytes within the shard's data region
    std::uint64_t end = 0;
};

struct Checkpoint {
    std::vector<std::string> shards;         // paths; one for a plain .safetensors file
    std::vector<CheckpointTensor> tensors;   // file order: shards in order, then by data offset
};

// Opens `path` (a .safetensors file or an index .json), validates every shard's header in full and, for an
// index, that it and the headers agree: every shard exists, every listed tensor is in the shard the index
// names, no tensor is in two shards or missing from the index. The shards are closed again (a sweep maps one
// at a time). Throws qs::Error naming the offending file.
Checkpoint open_checkpoint(const std::string& path);

}  // namespace qs
