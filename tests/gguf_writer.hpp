// A GGUF writer for test fixtures (not part of QuantScope, which only reads GGUF): KVs of every value type,
// tensors of any ggml type id from raw block bytes, laid out as gguf.cpp writes them (each tensor at the next
// multiple of the alignment). Hostile fixtures override what a real writer computes: the counts, a tensor's
// offset, the version.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace qs::test {

class GgufWriter {
public:
    enum Type : std::uint32_t { U8 = 0, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 };

    std::uint32_t version = 3;
    std::uint64_t alignment = 32;                 // where tensors are placed (general.alignment is a KV of its own)
    std::optional<std::uint64_t> tensor_count;    // overrides the real counts in the header
    std::optional<std::uint64_t> kv_count;

    // Little-endian encodings of one value, for kv() and for building arrays.
    template <class T>
    static std::string le(T value) {
        std::string out(sizeof(T), '\0');
        std::memcpy(out.data(), &value, sizeof(T));  // the test machines are little-endian
        return out;
    }
    static std::string str(const std::string& text) { return le<std::uint64_t>(text.size()) + text; }
    // An array value: item type, count, then the items' encodings.
    static std::string array(std::uint32_t item_type, std::uint64_t count, const std::string& items) {
        return le(item_type) + le(count) + items;
    }

    // A KV whose value bytes are already encoded (`type` is the value's type: ARRAY for array()).
    GgufWriter& kv(const std::string& key, std::uint32_t type, const std::string& value) {
        kvs_ += str(key) + le(type) + value;
        ++kvs_written_;
        return *this;
    }
    GgufWriter& kv_u32(const std::string& key, std::uint32_t v) { return kv(key, U32, le(v)); }
    GgufWriter& kv_string(const std::string& key, const std::string& v) { return kv(key, STRING, str(v)); }

    // A tensor: ggml's ne (ne[0] the row length), its type id and its stored bytes. `offset` overrides where
    // the header says it is (the bytes still go at the next aligned place).
    GgufWriter& tensor(const std::string& name, const std::vector<std::uint64_t>& ne, std::uint32_t type,
                       const std::string& bytes, std::optional<std::uint64_t> offset = std::nullopt) {
        tensors_.push_back({name, ne, type, bytes, offset});
        return *this;
    }
    template <class T>
    static std::string raw(const std::vector<T>& values) {
        std::string out(values.size() * sizeof(T), '\0');
        if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
        return out;
    }

    std::string build() const {
        std::string data;
        std::vector<std::uint64_t> offsets;
        for (const Tensor& t : tensors_) {
            pad(data);
            offsets.push_back(t.offset ? *t.offset : data.size());
            data += t.bytes;
        }
        std::string out = "GGUF" + le(version) + le<std::uint64_t>(tensor_count ? *tensor_count : tensors_.size()) +
                          le<std::uint64_t>(kv_count ? *kv_count : kvs_written_) + kvs_;
        for (std::size_t i = 0; i < tensors_.size(); ++i) {
            const Tensor& t = tensors_[i];
            out += str(t.name) + le<std::uint32_t>(static_cast<std::uint32_t>(t.ne.size()));
            for (const std::uint64_t n : t.ne) out += le(n);
            out += le(t.type) + le(offsets[i]);
        }
        if (!tensors_.empty()) {
            pad(out);
            out += data;
        }
        return out;
    }

private:
    struct Tensor {
        std::string name;
        std::vector<std::uint64_t> ne;
        std::uint32_t type;
        std::string bytes;
        std::optional<std::uint64_t> offset;
    };
    void pad(std::string& s) const { s.resize((s.size() + alignment - 1) / alignment * alignment, '\0'); }

    std::string kvs_;
    std::uint64_t kvs_written_ = 0;
    std::vector<Tensor> tensors_;
};

}  // namespace qs::test
