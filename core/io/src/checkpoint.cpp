#include "quantscope/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

// An index lists one entry per tensor: a few hundred thousand at most for the largest models known.
constexpr std::size_t kMaxIndexBytes = 64u << 20;

bool plain_file_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

CheckpointIndex read_checkpoint_index(const std::string& path) {
    const std::string where = printable(path);
    const MappedFile file(path);
    if (file.size() > kMaxIndexBytes)
        throw Error(where + ": " + std::to_string(file.size() >> 20) + " MB is too large for a checkpoint index");
    JsonLimits limits;
    limits.max_bytes = kMaxIndexBytes;
    limits.max_values = 4000000;
    const JsonValue doc = file.read_guarded([&] {
        return parse_json(std::string_view(reinterpret_cast<const char*>(file.data()), file.size()), where, limits);
    });
    if (!doc.is_object()) throw Error(where + ": the index is a JSON " + json_type_name(doc.type) + ", not an object");
    const JsonValue* map = doc.find("weight_map");
    if (map == nullptr || !map->is_object()) throw Error(where + ": no \"weight_map\" object (not a checkpoint index)");
    if (map->members.empty()) throw Error(where + ": the \"weight_map\" is empty");
    CheckpointIndex index;
    std::unordered_set<std::string_view> shards;  // a set, not a search of index.shards: 100k shards were quadratic
    for (const auto& [tensor, shard] : map->members) {
        if (!shard.is_string())
            throw Error(where + ": \"weight_map\" entry " + quoted_text(tensor) + " is a " + json_type_name(shard.type) +
                        ", not a shard file name");
        if (!plain_file_name(shard.text))
            throw Error(where + ": shard " + quoted_text(shard.text) + " of " + quoted_text(tensor) +
                        " is not a file name in the index's folder");
        // A shard is read as a .safetensors file, and every reader picks a file's kind by its name: a shard
        // named x.gguf (or the index itself) was checked as one kind here and read as another later.
        if (lower_extension(shard.text) != ".safetensors")
            throw Error(where + ": shard " + quoted_text(shard.text) + " of " + quoted_text(tensor) +
                        " is not a .safetensors file");
        if (shards.insert(shard.text).second) index.shards.push_back(shard.text);
        index.weight_map.emplace_back(tensor, shard.text);
    }
    return index;
}

namespace {

void add_shard_tensors(const SafetensorsFile& file, std::size_t shard, Checkpoint& out) {
    std::vector<SafetensorsEntry> entries = file.list();
    std::stable_sort(entries.begin(), entries.end(),
                     [](const SafetensorsEntry& a, const SafetensorsEntry& b) { return a.begin < b.begin; });
    for (auto& e : entries) {
        const bool readable = e.dtype == "F32" || e.dtype == "F16" || e.dtype == "BF16" || e.dtype == "F64";
        out.tensors.push_back({std::move(e.name), std::move(e.dtype), std::move(e.shape), readable, shard, e.begin, e.end});
    }
}

void add_gguf_tensors(const GgufFile& file, Checkpoint& out) {
    std::vector<const GgufTensor*> tensors;
    for (const GgufTensor& t : file.list()) tensors.push_back(&t);
    std::stable_sort(tensors.begin(), tensors.end(),
                     [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
    for (const GgufTensor* t : tensors)
        out.tensors.push_back({t->name, gguf_type_label(*t), t->shape, t->type != nullptr && t->type->decodes, 0,
                               t->offset, t->offset + t->bytes});
}

}  // namespace

Checkpoint open_checkpoint(const std::string& path) {
    Checkpoint checkpoint;
    const std::string extension = lower_extension(path);
    if (extension != ".json" && extension != ".safetensors" && extension != ".gguf")
        throw Error(printable(path) +
                    ": a checkpoint is a .safetensors or .gguf file or a sharded one's *.safetensors.index.json");
    if (extension == ".gguf") {
        checkpoint.shards.push_back(path);
        add_gguf_tensors(GgufFile(path), checkpoint);
        return checkpoint;
    }
    if (extension == ".safetensors") {
        checkpoint.shards.push_back(path);
        add_shard_tensors(SafetensorsFile(path), 0, checkpoint);
        return checkpoint;
    }
    const CheckpointIndex index = read_checkpoint_index(path);
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::unordered_map<std::string_view, std::size_t> shard_number;  // file name → index into index.shards
    for (std::size_t s = 0; s < index.shards.size(); ++s) shard_number.emplace(index.shards[s], s);
    std::unordered_map<std::string, std::size_t> shard_of_tensor;  // as the index says
    for (const auto& [tensor, shard] : index.weight_map) shard_of_tensor.emplace(tensor, shard_number.at(shard));
    std::unordered_map<std::string, std::size_t> found;  // tensor → shard whose header holds it
    for (std::size_t s = 0; s < index.shards.size(); ++s) {
        const std::string shard_path = (folder / index.shards[s]).string();
        checkpoint.shards.push_back(shard_path);
        const SafetensorsFile file(shard_path);  // validates the header against the file's real size
        const std::string where = printable(shard_path);
        for (const SafetensorsEntry& e : file.list()) {
            const auto previous = found.find(e.name);
            if (previous != found.end())
                throw Error(where + ": tensor " + quoted_text(e.name) + " is also in " +
                            quoted_text(index.shards[previous->second]));
            const auto listed = shard_of_tensor.find(e.name);
            if (listed == shard_of_tensor.end())
                throw Error(where + ": tensor " + quoted_text(e.name) + " is not in the index " + quoted_text(path));
            if (listed->second != s)
                throw Error(where + ": tensor " + quoted_text(e.name) + " is here, but the index " + quoted_text(path) +
                            " puts it in " + quoted_text(index.shards[listed->second]));
            found.emplace(e.name, s);
        }
        add_shard_tensors(file, s, checkpoint);
    }
    for (const auto& [tensor, shard] : index.weight_map)
        if (found.count(tensor) == 0)
            throw Error(printable(checkpoint.shards[shard_of_tensor[tensor]]) + ": has no tensor " + quoted_text(tensor) +
                        " (the index " + quoted_text(path) + " lists it there)");
    return checkpoint;
}

CheckpointShard::CheckpointShard(const Checkpoint& checkpoint, std::size_t shard) {
    const std::string& path = checkpoint.shards.at(shard);
    Checkpoint now;  // what the file's header says today, listed as open_checkpoint listed it
    if (lower_extension(path) == ".gguf") {
        gguf_ = std::make_unique<GgufFile>(path);
        add_gguf_tensors(*gguf_, now);
    } else {
        safetensors_ = std::make_unique<SafetensorsFile>(path);
        add_shard_tensors(*safetensors_, shard, now);
    }
    // The tensors' places were read from the header when the checkpoint was opened, and its readers trust
    // them: a file replaced or rewritten since (another model, a shorter one) would have them read past its
    // end or from another tensor's bytes.
    const auto first = std::find_if(checkpoint.tensors.begin(), checkpoint.tensors.end(),
                                    [&](const CheckpointTensor& t) { return t.shard == shard; });
    const auto last = std::find_if(first, checkpoint.tensors.end(),
                                   [&](const CheckpointTensor& t) { return t.shard != shard; });
    const auto same = [&](const CheckpointTensor& a, const CheckpointTensor& b) {
        return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.readable == b.readable &&
               a.begin == b.begin && a.end == b.end;
    };
    const auto was = static_cast<std::size_t>(last - first);
    if (now.tensors.size() != was || !std::equal(first, last, now.tensors.begin(), same))
        throw Error(printable(path) + ": the file changed since it was opened (its header lists " +
                    std::to_string(now.tensors.size()) + " tensors" +
                    (now.tensors.size() == was ? std::string(", not as they were") : ", not " + std::to_string(was)) +
                    "); open it again");
}

CheckpointShard::~CheckpointShard() = default;
CheckpointShard::CheckpointShard(CheckpointShard&&) noexcept = default;

TensorView CheckpointShard::view(const std::string& tensor_name, Tensor& decoded, std::string* folding) const {
    return gguf_ ? gguf_->view(tensor_name, decoded, folding) : safetensors_->view(tensor_name, folding);
}

std::size_t CheckpointShard::data_offset() const { return gguf_ ? gguf_->data_offset() : safetensors_->data_offset(); }

const MappedFile& CheckpointShard::file() const { return gguf_ ? gguf_->file() : safetensors_->file(); }

}  // namespace qs
