// Reading GGUF files (llama.cpp's models; ggml's gguf.h), versions 2 and 3, little-endian: "GGUF", a u32
// version, u64 tensor and KV counts, the KVs (u64-length strings, typed values, typed arrays), the tensor
// infos (name, u32 n_dims <= 4, n_dims u64 ne, u32 ggml type id, u64 offset into the data section), then the
// data section at the next multiple of `general.alignment` (a u32, default 32). The header is validated in full
// on open against the file's real size; a read touches only the chosen tensor's bytes (memory-mapped).
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// gguf.h's gguf_type: the type of a KV's value (or of its array's items).
enum class GgufValueType : std::uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STRING = 8, ARRAY = 9,
    U64 = 10, I64 = 11, F64 = 12,
};
// "u8", "string", "array", ...
const char* gguf_value_type_name(GgufValueType type);

// How many items of an array a KV keeps for display (inspect shows "[count] first items..."): at most 8, and
// no more once the shown list is 1024 bytes long.
constexpr std::size_t kGgufShownItems = 8;
constexpr std::size_t kGgufShownBytes = 1024;
// A string value (or item) is shown by its first 200 bytes and its length: gguf_shown_string.
constexpr std::size_t kGgufShownStringBytes = 200;
// `text` whole up to kGgufShownStringBytes; longer, its first kGgufShownStringBytes bytes (cut before a UTF-8
// character, not inside it) and "… (104857600 bytes)": a 100 MB chat template is not printed whole.
std::string gguf_shown_string(std::string_view text);
// Arrays of arrays deeper than this are refused (ggml itself accepts none).
constexpr int kGgufMaxArrayDepth = 8;

struct GgufKv {
    std::string key;
    GgufValueType type = GgufValueType::U8;  // the value's type; ARRAY for an array
    GgufValueType item_type = GgufValueType::U8;  // an array's item type
    std::uint64_t count = 1;                  // an array's items; 1 for a scalar
    // The value as JSON: a number, true/false, a string (gguf_shown_string: a long one cut), or for an array its
    // first kGgufShownItems items (nested arrays the same way), so a 150k-token vocabulary costs a few bytes.
    std::string shown;
    // A scalar integer or bool value (u8 ... i64); 0 otherwise. A u64 beyond int64 is not kept here.
    std::int64_t integer = 0;
};

// 88 bytes and no allocation of its own: a header of a million tiny tensors costs 88 MB and its names, once.
struct GgufTensor {
    std::string_view name;               // in the GgufFile's own copy of the names (never the mapping)
    std::uint32_t type_id = 0;
    std::uint32_t n_dims = 0;            // <= 4
    const GgmlTypeInfo* type = nullptr;  // null: a type id ggml does not define
    std::array<std::int64_t, 4> ne{};    // ggml's order: ne[0] is the row length; the first n_dims are set
    std::int64_t elements = 0;
    std::uint64_t offset = 0;            // relative to the data section
    std::uint64_t bytes = 0;             // 0 for an unknown type (its size is not known)

    Shape shape() const { return Shape(ne.rend() - n_dims, ne.rend()); }  // as numpy shows it: ne reversed
    std::int64_t row() const { return n_dims == 0 ? 1 : ne[0]; }           // values in a row (1 for a scalar)
};

class GgufFile {
public:
    // Maps the file and validates its header. Throws qs::Error "<path>: <field>: ..." naming what lies.
    explicit GgufFile(const std::string& path);
    // What a tensor-by-tensor open (below) passes on: each tensor in header order (its name a view valid during
    // the call) and the header's tensor count (the same at every call: a reader may reserve for it at the first).
    using EachTensor = std::function<void(const GgufTensor& tensor, std::uint64_t count)>;
    // What such an open checks beyond each tensor's own fields. Neither keeps a KV but the alignment.
    enum class Walk {
        // A header read for the first time (open_checkpoint): every KV as GgufFile(path) checks it (a key twice).
        First,
        // A header read again and checked against what was read before (a checkpoint's shard): no key twice was
        // found then.
        Again,
    };
    // Maps the file and validates its header as far as one tensor at a time can be, passing each tensor to `each`
    // and keeping none: list() is empty. The checks of the whole list (names twice, overlaps, data inside the
    // file) are the reader's: for a reader that keeps a list of its own (a checkpoint) or checks the tensors
    // against one. Costs no memory per tensor, and the header's pages are given back as they are read (a
    // million tensors' header is 40 MB).
    GgufFile(const std::string& path, const EachTensor& each, Walk walk);
    // The same over bytes owned by the caller, which must outlive this object (for tests and fuzzing).
    GgufFile(const std::uint8_t* data, std::size_t size, std::string name);

    GgufFile(GgufFile&&) noexcept = default;
    GgufFile& operator=(GgufFile&&) noexcept = default;

    std::uint32_t version() const { return version_; }
    std::uint64_t alignment() const { return alignment_; }
    const std::vector<GgufKv>& metadata() const { return kvs_; }
    // The KV named `key`, or nullptr.
    const GgufKv* find_kv(const std::string& key) const;
    // Every tensor, in header order.
    const std::vector<GgufTensor>& list() const { return tensors_; }
    // The tensor named `name`, or nullptr.
    const GgufTensor* find(std::string_view name) const;
    const std::string& name() const { return name_; }
    // Byte offset of the data section in the file: a tensor's bytes start at data_offset() + offset.
    std::size_t data_offset() const { return data_start_; }
    const MappedFile& file() const { return file_; }
    // The first few tensor names for a message: "a, b, … (12 in all)".
    std::string names_for_message() const;

    // The tensor's values as float32, as its type's to_float gives them, with the shape folded to rank <= 3
    // (`folding` receives e.g. "2x3x4x5 viewed as 6x4x5", else is cleared). F32/F16/BF16/F64 come as a view of
    // the mapping; a quantized type is decoded into `decoded` and viewed there. A type that does not decode
    // (IQ1_*, IQ2_*, IQ3_*, integers, an unknown id), a scalar or an empty tensor is refused, naming the tensor
    // and its type.
    TensorView view(const std::string& tensor_name, Tensor& decoded, std::string* folding = nullptr) const;
    // The same for a tensor described by the caller (a checkpoint's, after a GgufFile(path, each) open): its
    // bytes must lie inside the file.
    TensorView view(const GgufTensor& tensor, Tensor& decoded, std::string* folding = nullptr) const;
    // The same, always a float32 copy that passed check_tensor.
    Tensor read(const std::string& tensor_name, std::string* folding = nullptr) const;
    // view()'s checks and its shape (folded as view folds it), reading no value: for a reader that decodes the
    // tensor a piece at a time (export).
    Shape view_shape(const std::string& tensor_name, std::string* folding = nullptr) const;
    // The stored bytes of the tensor (tensor.bytes of them), to be read under file().read_guarded().
    const std::uint8_t* bytes_of(const GgufTensor& tensor) const { return data_ + data_start_ + tensor.offset; }

private:
    void parse(const EachTensor* each = nullptr, Walk walk = Walk::Again);
    const GgufTensor& decodable(const std::string& tensor_name) const;
    void check_decodable(const GgufTensor& t) const;
    Shape checked_shape(const GgufTensor& t, std::string* folding) const;

    MappedFile file_;                   // empty when reading caller-owned memory
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    std::string name_;
    std::uint32_t version_ = 0;
    std::uint64_t alignment_ = 32;
    std::size_t data_start_ = 0;
    std::vector<GgufKv> kvs_;
    std::vector<GgufTensor> tensors_;
    std::unique_ptr<char[]> names_;       // every tensor name, end to end: GgufTensor::name views it
    std::vector<std::uint32_t> by_name_;  // indices into tensors_ sorted by name
};

// The stored type as sweep and inspect name it: ggml's name upper-cased ("F16", "Q4_K", "IQ4_NL"), or
// "type 99" for an unknown id.
std::string gguf_type_label(const GgufTensor& tensor);

}  // namespace qs
