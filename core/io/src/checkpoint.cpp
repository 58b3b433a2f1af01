#include "quantscope/checkpoint.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <cstring>
#include <functional>
#include <limits>
#include <string_view>
#include <unordered_map>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "gguf_tensor_list.hpp"
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

// Freed heap back to the system (glibc keeps it resident, for the next allocations of the process).
void give_back_freed_memory() {
#if defined(__GLIBC__)
    ::malloc_trim(0);
#endif
}

bool plain_file_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

}  // namespace

// The index at `path` checked as read_checkpoint_index says, each weight_map entry given to `take` (its tensor, its
// shard's number in `shards`, the shards in order of first appearance) in file order, no list of them kept here.
void scan_checkpoint_index(const std::string& path, std::vector<std::string>& shards,
                           const std::function<void(const std::string& tensor, std::size_t shard)>& take) {
    const std::string where = printable(path);
    const MappedFile file(path);
    if (file.size() > kMaxIndexBytes)
        throw Error(where + ": " + std::to_string(file.size() >> 20) + " MB is too large for a checkpoint index");
    JsonLimits limits;
    limits.max_bytes = kMaxIndexBytes;
    limits.max_values = 4000000;
    // Checked as a whole, then read entry by entry: never a tree of the whole index (a 1M-tensor index was some
    // 250 MB of tree).
    file.read_guarded([&] {
        const JsonScan scan(std::string_view(reinterpret_cast<const char*>(file.data()), file.size()), where, limits);
        const JsonValue::Type root = scan.type(scan.root());
        if (root != JsonValue::Type::Object)
            throw Error(where + ": the index is a JSON " + json_type_name(root) + ", not an object");
        constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
        std::size_t map = kNone;
        scan.members(scan.root(), [&](const std::string& key, std::size_t at) {
            if (map == kNone && key == "weight_map") map = at;
        });
        if (map == kNone || scan.type(map) != JsonValue::Type::Object)
            throw Error(where + ": no \"weight_map\" object (not a checkpoint index)");
        std::unordered_map<std::string, std::size_t> shard_number;  // a map, not a search of shards: 100k were quadratic
        bool empty = true;
        scan.members(map, [&](const std::string& tensor, std::size_t at) {
            const JsonValue::Type type = scan.type(at);
            if (type != JsonValue::Type::String)
                throw Error(where + ": \"weight_map\" entry " + quoted_text(tensor) + " is a " + json_type_name(type) +
                            ", not a shard file name");
            std::string shard = scan.value(at).text;
            if (!plain_file_name(shard))
                throw Error(where + ": shard " + quoted_text(shard) + " of " + quoted_text(tensor) +
                            " is not a file name in the index's folder");
            // A shard is read as a .safetensors file, and every reader picks a file's kind by its name: a shard
            // named x.gguf (or the index itself) was checked as one kind here and read as another later.
            if (lower_extension(shard) != ".safetensors")
                throw Error(where + ": shard " + quoted_text(shard) + " of " + quoted_text(tensor) +
                            " is not a .safetensors file");
            const auto number = shard_number.emplace(shard, shards.size());
            if (number.second) shards.push_back(shard);
            take(tensor, number.first->second);
            empty = false;
        });
        if (empty) throw Error(where + ": the \"weight_map\" is empty");
        return 0;
    });
}

CheckpointIndex read_checkpoint_index(const std::string& path) {
    CheckpointIndex index;
    scan_checkpoint_index(path, index.shards, [&](const std::string& tensor, std::size_t shard) {
        index.weight_map.emplace_back(tensor, index.shards[shard]);
    });
    return index;
}

namespace {

// Copies of the names and types a checkpoint's tensors view, and their shapes' dimensions, in blocks the
// Checkpoint keeps and that never move: a block doubles from 4 KiB to 1 MiB (a shard of a few tensors costs a
// few KiB, a million tensors' names some 1 MiB more than they are), an item longer than that gets one of its
// own. Each distinct type is kept once (a hostile header may hold a million distinct unknown type ids).
class CheckpointStore {
public:
    explicit CheckpointStore(Checkpoint& out) : out_(out) {}

    std::string_view text(std::string_view s) {
        if (s.size() > text_left_) {
            const std::size_t size = std::max(s.size(), next_block(text_block_, kMaxTextBlock));
            std::shared_ptr<char[]> block(new char[size]);  // not zeroed: every byte used is written
            text_at_ = block.get();
            text_left_ = size;
            out_.text.emplace_back(std::move(block));
        }
        if (!s.empty()) std::memcpy(text_at_, s.data(), s.size());
        const std::string_view copy(text_at_, s.size());
        text_at_ += s.size();
        text_left_ -= s.size();
        return copy;
    }
    std::string_view type(std::string_view label) {
        const auto known = types_.find(label);
        if (known != types_.end()) return known->second;
        const std::string_view copy = text(label);
        types_.emplace(copy, copy);
        return copy;
    }
    // A shape of `rank` dimensions, dimension d being dim(d).
    template <class Dim>
    CheckpointShape shape(std::size_t rank, const Dim& dim) {
        if (rank > dims_left_) {
            const std::size_t size = std::max(rank, next_block(dims_block_, kMaxDimsBlock));
            std::shared_ptr<std::int64_t[]> block(new std::int64_t[size]);
            dims_at_ = block.get();
            dims_left_ = size;
            out_.dims.emplace_back(std::move(block));
        }
        for (std::size_t d = 0; d < rank; ++d) dims_at_[d] = dim(d);
        const CheckpointShape copy(dims_at_, static_cast<std::uint32_t>(rank));
        dims_at_ += rank;
        dims_left_ -= rank;
        return copy;
    }

private:
    static constexpr std::size_t kMaxTextBlock = std::size_t{1} << 20;
    static constexpr std::size_t kMaxDimsBlock = kMaxTextBlock / sizeof(std::int64_t);
    static std::size_t next_block(std::size_t& block, std::size_t most) {
        const std::size_t size = block;
        block = std::min(block * 2, most);
        return size;
    }

    Checkpoint& out_;
    char* text_at_ = nullptr;
    std::size_t text_left_ = 0, text_block_ = 4096;
    std::int64_t* dims_at_ = nullptr;
    std::size_t dims_left_ = 0, dims_block_ = 512;
    std::unordered_map<std::string_view, std::string_view> types_;  // views of the copies
};

bool readable_dtype(std::string_view dtype) {
    return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64";
}

// Each tensor of a shard in file order (by data offset), as a checkpoint lists it, to `take`; its name, type and
// shape view `file`'s header (a taker that keeps them copies them).
void each_shard_tensor(const SafetensorsFile& file, std::size_t shard, const std::function<void(const CheckpointTensor&)>& take) {
    std::vector<std::uint32_t> order(file.list().size());  // indices, not a copy of the header's strings
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    const auto& list = file.list();
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return list[a].begin < list[b].begin; });
    for (const std::uint32_t i : order) {
        const SafetensorsEntry& e = list[i];
        CheckpointTensor t;
        t.name = e.name;
        t.dtype = e.dtype;
        t.shape = CheckpointShape(e.shape.data(), static_cast<std::uint32_t>(e.shape.size()));
        t.begin = e.begin;
        t.end = e.end;
        t.place = i;
        t.shard = static_cast<std::uint32_t>(shard);
        t.readable = readable_dtype(e.dtype);
        take(t);
    }
}

// A shard's tensors read tensor by tensor from its header into `list`, in header order (no SafetensorsFile list beside
// the checkpoint's: 140k tensors of long names were 100 MB there), then checked as a whole as SafetensorsFile(path)
// checks its own list, so both say the same of the same file. Returns the shard's data offset.
std::size_t read_shard_tensors(const std::string& path, std::size_t shard, CheckpointStore& store,
                               std::vector<CheckpointTensor>& list) {
    const std::size_t first = list.size();
    const SafetensorsFile file(MappedFile(path), [&](const SafetensorsEntry& e) {
        CheckpointTensor t;
        t.name = store.text(e.name);
        t.dtype = store.type(e.dtype);
        t.shape = store.shape(e.shape.size(), [&](std::size_t d) { return e.shape[d]; });
        t.begin = e.begin;
        t.end = e.end;
        t.place = static_cast<std::uint32_t>(list.size() - first);
        t.shard = static_cast<std::uint32_t>(shard);
        t.readable = readable_dtype(e.dtype);
        list.push_back(t);
    });
    check_safetensors_overlaps(file.name(), list.size() - first,
                               [&](std::size_t i) -> const CheckpointTensor& { return list[first + i]; });
    return file.data_offset();
}

// Puts `list` in order of data offset (ties in header order) in place: a million tensors sorted as a copy would
// hold 80 MB twice. Files are mostly in that order already.
void sort_by_offset(std::vector<CheckpointTensor>& all, std::size_t from = 0) {
    CheckpointTensor* const list = all.data() + from;  // the tensors from `from` on
    const std::size_t count = all.size() - from;
    const auto by_offset = [](const CheckpointTensor& a, const CheckpointTensor& b) { return a.begin < b.begin; };
    if (std::is_sorted(list, list + count, by_offset)) return;
    std::vector<std::uint32_t> order(count);  // order[i]: the tensor that goes to place i
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return list[a].begin < list[b].begin; });
    // Each cycle of the permutation moved round once; a place done points to itself.
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (order[i] == i) continue;
        const CheckpointTensor first = list[i];
        std::size_t at = i;
        while (order[at] != i) {
            const std::size_t from = order[at];
            list[at] = list[from];
            order[at] = static_cast<std::uint32_t>(at);
            at = from;
        }
        list[at] = first;
        order[at] = static_cast<std::uint32_t>(at);
    }
}

// A GGUF file's tensors read tensor by tensor as its header lists them (no GgufFile list beside the checkpoint's:
// a million tensors were 88 MB there), checked as a whole as GgufFile(path) checks them, then put in order of
// data offset.
void add_gguf_tensors(const std::string& path, Checkpoint& out) {
    CheckpointStore store(out);
    std::vector<CheckpointTensor>& list = out.tensors;
    std::array<std::string_view, 64> labels{};  // of the type ids below 64 (ggml's types), made once
    const GgufFile file(
        path,
        [&](const GgufTensor& t, std::uint64_t count) {
            if (list.empty()) list.reserve(static_cast<std::size_t>(count));  // grown by doubling, 1.5x the list
            CheckpointTensor c;
            c.name = store.text(t.name);
            if (t.type_id < labels.size()) {
                if (labels[t.type_id].empty()) labels[t.type_id] = store.type(gguf_type_label(t));
                c.dtype = labels[t.type_id];
            } else {
                c.dtype = store.type(gguf_type_label(t));
            }
            c.shape = store.shape(t.n_dims, [&](std::size_t d) { return t.ne[t.n_dims - 1 - d]; });
            c.begin = t.offset;
            c.end = t.offset + t.bytes;  // may wrap before the checks below refuse it: end - begin is still the size
            c.place = static_cast<std::uint32_t>(list.size());
            c.readable = t.type != nullptr && t.type->decodes;
            list.push_back(c);
        },
        GgufFile::Walk::First);
    std::vector<std::uint32_t> by_name;
    detail::check_gguf_tensor_list(
        file.name(), list.size(),
        [&](std::size_t i) {
            const CheckpointTensor& t = list[i];
            return detail::GgufListed{t.name, t.begin, t.end - t.begin};
        },
        file.alignment(), file.data_offset(), file.file().size(), by_name);
    by_name = {};
    out.data_offsets.push_back(file.data_offset());
    sort_by_offset(list);
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
        add_gguf_tensors(path, checkpoint);
        return checkpoint;
    }
    CheckpointStore store(checkpoint);
    if (extension == ".safetensors") {
        checkpoint.shards.push_back(path);
        checkpoint.data_offsets.push_back(read_shard_tensors(path, 0, store, checkpoint.tensors));
        sort_by_offset(checkpoint.tensors);
        give_back_freed_memory();
        return checkpoint;
    }
    [&] {
        // The weight_map as names and shard numbers (pairs of copied names were 96 MB for 1M tensors, and their freed
        // blocks stayed resident).
        std::vector<std::string> shards, names;
        std::vector<std::uint32_t> listed_in;  // each tensor's shard as the index says
        scan_checkpoint_index(path, shards, [&](const std::string& tensor, std::size_t shard) {
            names.push_back(tensor);
            listed_in.push_back(static_cast<std::uint32_t>(shard));
        });
        checkpoint.tensors.reserve(names.size());  // what the shards must hold, once
        const std::filesystem::path folder = std::filesystem::path(path).parent_path();
        // The shard whose header holds each tensor, by the tensor's place in the weight_map, found through indices
        // sorted by name: maps of copied names were two of a million nodes each (a 1M-tensor index swept at 480 MB).
        constexpr std::uint32_t kNowhere = std::numeric_limits<std::uint32_t>::max();
        const std::size_t listed = names.size();
        std::vector<std::uint32_t> found_in(listed, kNowhere), by_name(listed);
        for (std::size_t k = 0; k < listed; ++k) by_name[k] = static_cast<std::uint32_t>(k);
        std::sort(by_name.begin(), by_name.end(), [&](std::uint32_t a, std::uint32_t b) { return names[a] < names[b]; });
        const auto place_of = [&](const std::string& tensor) -> std::size_t {
            const auto at = std::lower_bound(by_name.begin(), by_name.end(), tensor,
                                             [&](std::uint32_t k, const std::string& name) { return names[k] < name; });
            return at != by_name.end() && names[*at] == tensor ? *at : listed;
        };
        for (std::size_t s = 0; s < shards.size(); ++s) {
            const std::string shard_path = (folder / shards[s]).string();
            checkpoint.shards.push_back(shard_path);
            // Validates the header against the file's real size, then the index against the header, tensor by tensor in
            // header order.
            const std::size_t first = checkpoint.tensors.size();
            checkpoint.data_offsets.push_back(read_shard_tensors(shard_path, s, store, checkpoint.tensors));
            const std::string where = printable(shard_path);
            std::string name;
            for (std::size_t i = first; i < checkpoint.tensors.size(); ++i) {
                name.assign(checkpoint.tensors[i].name);
                const std::size_t k = place_of(name);
                if (k == listed)
                    throw Error(where + ": tensor " + quoted_text(name) + " is not in the index " + quoted_text(path));
                if (found_in[k] != kNowhere)
                    throw Error(where + ": tensor " + quoted_text(name) + " is also in " +
                                quoted_text(shards[found_in[k]]));
                if (listed_in[k] != s)
                    throw Error(where + ": tensor " + quoted_text(name) + " is here, but the index " + quoted_text(path) +
                                " puts it in " + quoted_text(shards[listed_in[k]]));
                found_in[k] = static_cast<std::uint32_t>(s);
            }
            sort_by_offset(checkpoint.tensors, first);
        }
        for (std::size_t k = 0; k < listed; ++k)
            if (found_in[k] == kNowhere)
                throw Error(printable(checkpoint.shards[listed_in[k]]) + ": has no tensor " + quoted_text(names[k]) +
                            " (the index " + quoted_text(path) + " lists it there)");
    }();
    // The index's names and the shards' headers were freed in many small blocks: give them back (compare opens B's
    // checkpoint beside A's, then reads them both).
    give_back_freed_memory();
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
        gguf_ = std::make_unique<GgufFile>(path, [&](const GgufTensor& t, std::uint64_t) {
            const std::size_t k = listed++;
            if (!same || k >= count || at_place[k] == std::numeric_limits<std::uint32_t>::max()) return void(same = false);
            const CheckpointTensor& was = first[at_place[k]];
            bool shape = was.shape.size() == t.n_dims;
            for (std::size_t d = 0; shape && d < t.n_dims; ++d) shape = was.shape[d] == t.ne[t.n_dims - 1 - d];
            same = shape && t.name == was.name && gguf_type_label(t) == was.dtype &&
                   (t.type != nullptr && t.type->decodes) == was.readable && t.offset == was.begin &&
                   t.offset + t.bytes == was.end;
        }, GgufFile::Walk::Again);
        // The checkpoint's tensors were checked inside the file it opened: this one may be shorter.
        const std::uint64_t data_size = gguf_->file().size() >= gguf_->data_offset() ? gguf_->file().size() - gguf_->data_offset() : 0;
        for (auto t = first; same && t != last; ++t) same = t->end <= data_size;
    } else {
        // Tensor by tensor as the header lists them, nothing kept per tensor (a second list of 140k long names was
        // 100 MB): the k-th must be the checkpoint's tensor of place k. When it is not, the file is read in full
        // and compared by data offset, as the checkpoint lists tensors (the same tensors listed in another order
        // are the same file).
        const auto count = static_cast<std::size_t>(last - first);
        std::vector<std::uint32_t> at_place(count, std::numeric_limits<std::uint32_t>::max());
        for (auto t = first; t != last; ++t)
            if (t->place < count) at_place[t->place] = static_cast<std::uint32_t>(t - first);
        safetensors_ = std::make_unique<SafetensorsFile>(MappedFile(path), [&](const SafetensorsEntry& e) {
            const std::size_t k = listed++;
            if (!same || k >= count || at_place[k] == std::numeric_limits<std::uint32_t>::max()) return void(same = false);
            const CheckpointTensor& was = first[at_place[k]];
            same = e.name == was.name && e.dtype == was.dtype && was.shape == e.shape && e.begin == was.begin &&
                   e.end == was.end;
        });
        at_place = {};
        if (!same || listed != count) {
            listed = 0;
            same = true;
            expected = first;
            safetensors_ = std::make_unique<SafetensorsFile>(path);
            each_shard_tensor(*safetensors_, shard, check);
        }
        // The header was read into the checkpoint's list and is not read again: its pages leave this process's
        // memory (compare holds a shard of A and one of B, a 100 MB header each at most).
        safetensors_->file().done_reading(0, safetensors_->data_offset());
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
    if (!gguf_) {
        SafetensorsEntry entry;  // as the header lists it (checked when the shard was opened)
        entry.name = tensor.name;
        entry.dtype = tensor.dtype;
        entry.shape = tensor.shape;
        entry.begin = tensor.begin;
        entry.end = tensor.end;
        return safetensors_->view(entry, folding);
    }
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
