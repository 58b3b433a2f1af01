#include "quantscope/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <functional>
#include <limits>
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

// The text of one shard's tensors' names and types, end to end, and views of it: names in list order, and
// each distinct type once (a hostile header may hold a million distinct unknown type ids).
class ShardText {
public:
    template <class List, class Name, class Type>
    ShardText(const List& list, Name name_of, Type type_of) {
        std::size_t bytes = 0;
        std::vector<std::pair<std::string, std::size_t>> types;  // distinct type labels, by first use
        std::unordered_map<std::string, std::size_t> type_index;
        type_of_.reserve(list.size());
        for (const auto& t : list) {
            bytes += name_of(t).size();
            std::string label = type_of(t);
            const auto [at, added] = type_index.emplace(label, types.size());
            if (added) {
                types.emplace_back(label, 0);
                bytes += label.size();
            }
            type_of_.push_back(static_cast<std::uint32_t>(at->second));
        }
        std::shared_ptr<char[]> text(new char[bytes + 1]);
        char* at = text.get();
        names_.reserve(list.size());
        for (const auto& t : list) {
            const std::string_view name = name_of(t);
            std::memcpy(at, name.data(), name.size());
            names_.emplace_back(at, name.size());
            at += name.size();
        }
        for (const auto& [label, unused] : types) {
            std::memcpy(at, label.data(), label.size());
            types_.emplace_back(at, label.size());
            at += label.size();
        }
        text_ = std::move(text);
    }
    std::string_view name(std::size_t i) const { return names_[i]; }
    std::string_view type(std::size_t i) const { return types_[type_of_[i]]; }
    std::shared_ptr<const char[]> text() const { return text_; }

private:
    std::shared_ptr<const char[]> text_;
    std::vector<std::string_view> names_, types_;
    std::vector<std::uint32_t> type_of_;
};

// Each tensor of a shard in file order (by data offset), as a checkpoint lists it, to `take`; its names and types
// view `text` (kept by the caller while it uses them).
void each_shard_tensor(const SafetensorsFile& file, std::size_t shard, const std::function<void(CheckpointTensor)>& take,
                       std::shared_ptr<const char[]>* text) {
    const ShardText names(
        file.list(), [](const SafetensorsEntry& e) { return std::string_view(e.name); },
        [](const SafetensorsEntry& e) { return e.dtype; });
    std::vector<std::uint32_t> order(file.list().size());  // indices, not a copy of the header's strings
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    const auto& list = file.list();
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return list[a].begin < list[b].begin; });
    for (const std::uint32_t i : order) {
        const SafetensorsEntry& e = list[i];
        const bool readable = e.dtype == "F32" || e.dtype == "F16" || e.dtype == "BF16" || e.dtype == "F64";
        take({names.name(i), names.type(i), e.shape, readable, i, shard, e.begin, e.end});
    }
    *text = names.text();
}

void each_gguf_tensor(const GgufFile& file, const std::function<void(CheckpointTensor)>& take,
                      std::shared_ptr<const char[]>* text) {
    const ShardText names(
        file.list(), [](const GgufTensor& t) { return t.name; }, [](const GgufTensor& t) { return gguf_type_label(t); });
    std::vector<std::uint32_t> order(file.list().size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    const auto& list = file.list();
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return list[a].offset < list[b].offset; });
    for (const std::uint32_t i : order) {
        const GgufTensor& t = list[i];
        take({names.name(i), names.type(i), t.shape(), t.type != nullptr && t.type->decodes, i, 0, t.offset,
              t.offset + t.bytes});
    }
    *text = names.text();
}

void add_shard_tensors(const SafetensorsFile& file, std::size_t shard, Checkpoint& out) {
    out.data_offsets.push_back(file.data_offset());
    out.text.emplace_back();
    each_shard_tensor(file, shard, [&](CheckpointTensor t) { out.tensors.push_back(std::move(t)); }, &out.text.back());
}

void add_gguf_tensors(const GgufFile& file, Checkpoint& out) {
    out.data_offsets.push_back(file.data_offset());
    out.text.emplace_back();
    each_gguf_tensor(file, [&](CheckpointTensor t) { out.tensors.push_back(std::move(t)); }, &out.text.back());
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
        const GgufFile file(path);
        checkpoint.tensors.reserve(file.list().size());  // grown by doubling, a million tensors peaked at 1.5x
        add_gguf_tensors(file, checkpoint);
        return checkpoint;
    }
    if (extension == ".safetensors") {
        checkpoint.shards.push_back(path);
        const SafetensorsFile file(path);
        checkpoint.tensors.reserve(file.list().size());
        add_shard_tensors(file, 0, checkpoint);
        return checkpoint;
    }
    const CheckpointIndex index = read_checkpoint_index(path);
    checkpoint.tensors.reserve(index.weight_map.size());  // what the shards must hold, once
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
    // The tensors' places were read from the header when the checkpoint was opened, and its readers trust
    // them: a file replaced or rewritten since (another model, a shorter one) would have them read past its
    // end or from another tensor's bytes. The header now must list the same tensors in the same places.
    // The checkpoint lists its tensors shard by shard: this shard's are one run, found by binary search.
    const auto by_shard = [](const CheckpointTensor& t, std::size_t s) { return t.shard < s; };
    const auto first = std::lower_bound(checkpoint.tensors.begin(), checkpoint.tensors.end(), shard, by_shard);
    const auto last = std::lower_bound(first, checkpoint.tensors.end(), shard + 1, by_shard);
    auto expected = first;
    std::size_t listed = 0;
    bool same = true;
    const auto check = [&](const CheckpointTensor& now) {
        ++listed;
        if (!same || expected == last) return void(same = false);
        const CheckpointTensor& was = *expected++;
        same = now.name == was.name && now.dtype == was.dtype && now.shape == was.shape &&
               now.readable == was.readable && now.begin == was.begin && now.end == was.end;
    };
    if (lower_extension(path) == ".gguf") {
        // Tensor by tensor as the header lists them, nothing kept per tensor (a second list of a million tensors
        // was 100 MB); the checkpoint lists them by data offset and keeps each one's place in the header.
        const auto count = static_cast<std::size_t>(last - first);
        std::vector<std::uint32_t> at_place(count, std::numeric_limits<std::uint32_t>::max());
        for (auto t = first; t != last; ++t)
            if (t->place < count) at_place[t->place] = static_cast<std::uint32_t>(t - first);
        gguf_ = std::make_unique<GgufFile>(path, [&](const GgufTensor& t) {
            const std::size_t k = listed++;
            if (!same || k >= count || at_place[k] == std::numeric_limits<std::uint32_t>::max()) return void(same = false);
            const CheckpointTensor& was = first[at_place[k]];
            bool shape = was.shape.size() == t.n_dims;
            for (std::size_t d = 0; shape && d < t.n_dims; ++d) shape = was.shape[d] == t.ne[t.n_dims - 1 - d];
            same = shape && t.name == was.name && gguf_type_label(t) == was.dtype &&
                   (t.type != nullptr && t.type->decodes) == was.readable && t.offset == was.begin &&
                   t.offset + t.bytes == was.end;
        });
        // The checkpoint's tensors were checked inside the file it opened: this one may be shorter.
        const std::uint64_t data_size = gguf_->file().size() >= gguf_->data_offset() ? gguf_->file().size() - gguf_->data_offset() : 0;
        for (auto t = first; same && t != last; ++t) same = t->end <= data_size;
    } else {
        safetensors_ = std::make_unique<SafetensorsFile>(path);
        std::shared_ptr<const char[]> text;
        each_shard_tensor(*safetensors_, shard, check, &text);
    }
    // The same tensors at the same offsets of a data region that moved (metadata rewritten longer or shorter)
    // would be read from other bytes.
    if (shard < checkpoint.data_offsets.size() && data_offset() != checkpoint.data_offsets[shard])
        throw Error(printable(path) + ": the file changed since it was opened (its data now starts at byte " +
                    std::to_string(data_offset()) + ", not " + std::to_string(checkpoint.data_offsets[shard]) +
                    "); open it again");
    const auto was = static_cast<std::size_t>(last - first);
    if (!same || listed != was)
        throw Error(printable(path) + ": the file changed since it was opened (its header lists " +
                    std::to_string(listed) + " tensors" +
                    (listed == was ? std::string(", not as they were") : ", not " + std::to_string(was)) +
                    "); open it again");
}

CheckpointShard::~CheckpointShard() = default;
CheckpointShard::CheckpointShard(CheckpointShard&&) noexcept = default;

TensorView CheckpointShard::view(const CheckpointTensor& tensor, Tensor& decoded, std::string* folding) const {
    if (!gguf_) return safetensors_->view(std::string(tensor.name), folding);
    GgufTensor t;  // as the header listed it when the checkpoint was opened, and still does
    t.name = tensor.name;
    t.type = ggml_type_named(tensor.dtype);
    if (!tensor.readable || t.type == nullptr)
        throw Error(printable(gguf_->name()) + ": tensor " + quoted_text(tensor.name) + " has type " +
                    printable(tensor.dtype) +
                    ", which QuantScope cannot decode (it reads F32, F16, BF16, F64 and the ggml types it quantizes)");
    t.type_id = static_cast<std::uint32_t>(t.type->type);
    t.n_dims = static_cast<std::uint32_t>(tensor.shape.size());
    t.elements = 1;
    for (std::uint32_t d = 0; d < t.n_dims; ++d) {
        t.ne[d] = tensor.shape[t.n_dims - 1 - d];
        t.elements *= t.ne[d];
    }
    t.offset = tensor.begin;
    t.bytes = tensor.end - tensor.begin;
    return gguf_->view(t, decoded, folding);
}

std::size_t CheckpointShard::data_offset() const { return gguf_ ? gguf_->data_offset() : safetensors_->data_offset(); }

const MappedFile& CheckpointShard::file() const { return gguf_ ? gguf_->file() : safetensors_->file(); }

}  // namespace qs
