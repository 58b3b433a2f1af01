// Reading .safetensors files: an 8-byte little-endian header length N, N bytes of JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the data region.
// The header is validated in full on open; a read touches only the chosen tensor's bytes (memory-mapped).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

struct SafetensorsEntry {
    std::string name;
    std::string dtype;            // as in the file: "F32", "BF16", "I64", ...
    Shape shape;                  // as in the file: any rank (0 for a scalar), dimensions >= 0
    std::uint64_t begin = 0;      // byte offsets relative to the start of the data region
    std::uint64_t end = 0;
};

// The largest header accepted (the format's reference implementation uses the same bound).
constexpr std::uint64_t kMaxSafetensorsHeader = 100u << 20;

class SafetensorsFile {
public:
    // Maps the file and validates its header: N <= file size - 8 and <= kMaxSafetensorsHeader, strict JSON,
    // known dtypes, non-negative shapes, 0 <= begin <= end <= data size, end - begin == numel * itemsize,
    // no two tensors overlapping. Throws qs::Error "<path>: ..." otherwise.
    explicit SafetensorsFile(const std::string& path);
    // The same over a file already open (a file that shrinks while it is read is an error, not a crash).
    explicit SafetensorsFile(MappedFile file);
    // The same, each tensor given to `each` in header order as it is read, none kept (list() is empty, view() by
    // name finds nothing): a checkpoint keeps its own list of 140k tensors, not a second one here. The tensors are
    // not checked against each other: the caller checks its list with check_safetensors_overlaps.
    using EachEntry = std::function<void(const SafetensorsEntry& entry)>;
    SafetensorsFile(MappedFile file, const EachEntry& each);
    // The same over bytes owned by the caller, which must outlive this object (for tests and fuzzing).
    SafetensorsFile(const std::uint8_t* data, std::size_t size, std::string name);

    SafetensorsFile(SafetensorsFile&&) noexcept = default;
    SafetensorsFile& operator=(SafetensorsFile&&) noexcept = default;

    // Every tensor, in header order.
    const std::vector<SafetensorsEntry>& list() const { return entries_; }
    // "__metadata__" string entries, in header order (non-string values are skipped).
    const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
    const std::string& name() const { return name_; }
    // The first few tensor names, escaped and shortened, for a message: "a, b, … (12 in all)".
    std::string names_for_message() const;

    // Reads tensor `tensor_name` as float32. F32, F16 and BF16 convert exactly; F64 is rounded to the nearest
    // float32 (a value outside the float32 range is an error). Other dtypes, scalars (rank 0) and empty
    // tensors are refused. Rank > 3 is folded to 3-D by multiplying the leading dimensions; then `folding`
    // (if given) receives e.g. "2x3x4x5 viewed as 6x4x5", else it is cleared. The result passed check_tensor.
    Tensor read(const std::string& tensor_name, std::string* folding = nullptr) const;
    // The same tensor (same checks and folding) as a view of its bytes in the file, in their stored type:
    // nothing is read or copied yet. Valid while this object lives; its guard covers a file that shrinks.
    TensorView view(const std::string& tensor_name, std::string* folding = nullptr) const;
    // The same of an entry as parse() gives it (a list kept by the caller).
    TensorView view(const SafetensorsEntry& entry, std::string* folding = nullptr) const;
    // Byte offset of the data region in the file (8 + header length): entry.begin + data_offset() is where a
    // tensor's bytes start.
    std::size_t data_offset() const { return data_start_; }
    // The mapping this file reads from (empty for caller-owned memory).
    const MappedFile& file() const { return file_; }

private:
    void parse(const EachEntry* each = nullptr);
    // The entry named `tensor_name`, or nullptr: a binary search of by_name_ (a sweep asks once per tensor,
    // so a linear search made 100k tensors quadratic).
    const SafetensorsEntry* find(const std::string& tensor_name) const;

    MappedFile file_;                   // empty when reading caller-owned memory
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    std::string name_;
    std::size_t data_start_ = 0;        // 8 + N
    std::vector<SafetensorsEntry> entries_;
    std::vector<std::uint32_t> by_name_;  // indices into entries_ sorted by name (names are unique)
    std::vector<std::pair<std::string, std::string>> metadata_;
};

// Bytes per element of a safetensors dtype ("F32" → 4), or 0 for an unknown dtype.
std::size_t safetensors_item_size(const std::string& dtype);

// The last check of a header, over its whole list (`at(i)` gives entry i, or any type with name, begin and end, of
// the `count` in header order): no two tensors' bytes overlap. Throws qs::Error "<name>: tensors 'a' and 'b'
// overlap (bytes B to E)".
template <class At>
void check_safetensors_overlaps(const std::string& name, std::size_t count, const At& at);


template <class At>
void check_safetensors_overlaps(const std::string& name, std::size_t count, const At& at) {
    // Overlapping tensors would alias each other's bytes: a malformed (or malicious) file.
    std::vector<std::uint32_t> order;
    for (std::size_t i = 0; i < count; ++i) {
        if (at(i).end > at(i).begin) order.push_back(static_cast<std::uint32_t>(i));  // empty ranges hold no bytes
    }
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return at(a).begin < at(b).begin; });
    for (std::size_t i = 1; i < order.size(); ++i) {
        const auto& previous = at(order[i - 1]);
        const auto& current = at(order[i]);
        if (current.begin < previous.end) {
            throw Error(printable(name) + ": tensors " + quoted_text(std::string(previous.name)) + " and " +
                        quoted_text(std::string(current.name)) + " overlap (bytes " + std::to_string(current.begin) +
                        " to " + std::to_string(std::min(previous.end, current.end)) + ")");
        }
    }
}

}  // namespace qs
