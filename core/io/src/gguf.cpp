#include "quantscope/gguf.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "gguf_tensor_list.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

// The smallest a KV and a tensor info can be: a key length and a type (and one byte of value); a name
// length, n_dims, a type and an offset. A count beyond what the rest of the file could hold is a lie found
// before anything is allocated.
constexpr std::uint64_t kMinKvBytes = 8 + 4 + 1;
constexpr std::uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;
constexpr std::uint32_t kMaxDims = 4;  // GGML_MAX_DIMS
// A key is at most 65535 bytes (the GGUF spec). ggml refuses a tensor name of 64 bytes or more (GGML_MAX_NAME;
// stable-diffusion.cpp builds it with 128): 4096 leaves room for any writer, and a name of 100 MB, copied into
// every listing and row, cost compare 1 GB.
constexpr std::uint64_t kMaxKeyBytes = 65535;
constexpr std::uint64_t kMaxNameBytes = 4096;
// A tensor-by-tensor open gives the header's pages back in steps of this many bytes.
constexpr std::size_t kGiveBack = std::size_t{2} << 20;

std::size_t value_size(GgufValueType type) {
    switch (type) {
        case GgufValueType::U8: case GgufValueType::I8: case GgufValueType::BOOL: return 1;
        case GgufValueType::U16: case GgufValueType::I16: return 2;
        case GgufValueType::U32: case GgufValueType::I32: case GgufValueType::F32: return 4;
        case GgufValueType::U64: case GgufValueType::I64: case GgufValueType::F64: return 8;
        case GgufValueType::STRING: case GgufValueType::ARRAY: return 0;  // variable
    }
    return 0;
}

bool known_value_type(std::uint32_t id) { return id <= static_cast<std::uint32_t>(GgufValueType::F64); }

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
}

// Reads the header front to back; every read is checked against the end of the file and names the field.
class Cursor {
public:
    Cursor(const std::uint8_t* data, std::size_t size, const std::string& file) : data_(data), size_(size), file_(file) {}

    [[noreturn]] void fail(const std::string& field, const std::string& what) const {
        throw Error(printable(file_) + ": " + field + ": " + what);
    }
    std::size_t position() const { return pos_; }
    std::uint64_t remaining() const { return size_ - pos_; }

    const std::uint8_t* take(std::uint64_t n, const std::string& field) {
        if (n > remaining())
            fail(field, "needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) + ", the file ends at " +
                            std::to_string(size_) + " (truncated)");
        const std::uint8_t* at = data_ + pos_;
        pos_ += static_cast<std::size_t>(n);
        return at;
    }
    std::uint32_t u32(const std::string& field) { return load_le32(take(4, field)); }
    std::uint64_t u64(const std::string& field) { return load_le64(take(8, field)); }
    // `limit`: the longest the field may be, and what says so ("GGUF's 65535").
    std::string string(const std::string& field, std::uint64_t max_length = std::numeric_limits<std::uint64_t>::max(),
                       const char* limit = nullptr) {
        const std::uint64_t length = u64(field + " (its length)");
        if (length > max_length)
            fail(field, std::to_string(length) + " bytes, longer than " + limit);
        if (length > remaining())
            fail(field, "a string of " + std::to_string(length) + " bytes runs past the end of the file (" +
                            std::to_string(remaining()) + " bytes left)");
        const std::uint8_t* at = take(length, field);
        return std::string(reinterpret_cast<const char*>(at), static_cast<std::size_t>(length));
    }
    // The same as a view of the bytes, copied by no one.
    std::string_view text(const std::string& field, std::uint64_t max_length, const char* limit) {
        const std::uint64_t length = u64(field + " (its length)");
        if (length > max_length) fail(field, std::to_string(length) + " bytes, longer than " + limit);
        if (length > remaining())
            fail(field, "a string of " + std::to_string(length) + " bytes runs past the end of the file (" +
                            std::to_string(remaining()) + " bytes left)");
        return std::string_view(reinterpret_cast<const char*>(take(length, field)), static_cast<std::size_t>(length));
    }

private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
    const std::string& file_;
};

// One value of `type`: its JSON for display (when `shown` is non-null) and its integer where it has one.
void read_value(Cursor& in, GgufValueType type, const std::string& field, int depth, std::string* shown,
                std::int64_t* integer);

void read_array(Cursor& in, const std::string& field, int depth, std::string* shown, GgufValueType* item_type_out,
                std::uint64_t* count_out) {
    if (depth > kGgufMaxArrayDepth)
        in.fail(field, "arrays nested more than " + std::to_string(kGgufMaxArrayDepth) + " deep");
    const std::uint32_t id = in.u32(field + " (array item type)");
    if (!known_value_type(id)) in.fail(field, "unknown array item type " + std::to_string(id));
    const auto item_type = static_cast<GgufValueType>(id);
    const std::uint64_t count = in.u64(field + " (array length)");
    const std::size_t fixed = value_size(item_type);
    // Strings take at least their 8-byte length, arrays their type and length.
    const std::uint64_t least = fixed != 0 ? fixed : item_type == GgufValueType::STRING ? 8 : 12;
    if (count > in.remaining() / least)
        in.fail(field, "an array of " + std::to_string(count) + " " + gguf_value_type_name(item_type) +
                           " items runs past the end of the file (" + std::to_string(in.remaining()) + " bytes left)");
    if (item_type_out != nullptr) *item_type_out = item_type;
    if (count_out != nullptr) *count_out = count;
    if (shown != nullptr) *shown = "[";
    // An item is shown while the list is shorter than kGgufShownBytes: arrays of arrays 8 deep showed 8^8 items.
    const auto show_item = [&](std::uint64_t i) {
        return shown != nullptr && i < kGgufShownItems && shown->size() < kGgufShownBytes;
    };
    if (fixed != 0 && count > kGgufShownItems) {
        // Only the shown items are decoded; the rest is skipped in one step (a vocabulary's scores).
        for (std::uint64_t i = 0; i < kGgufShownItems; ++i) {
            std::string item;
            const bool show = show_item(i);
            read_value(in, item_type, field, depth + 1, show ? &item : nullptr, nullptr);
            if (show) *shown += (i ? ", " : "") + item;
        }
        in.take((count - kGgufShownItems) * fixed, field);
    } else {
        for (std::uint64_t i = 0; i < count; ++i) {
            std::string item;
            const bool show = show_item(i);
            read_value(in, item_type, field, depth + 1, show ? &item : nullptr, nullptr);
            if (show) *shown += (i ? ", " : "") + item;
        }
    }
    if (shown != nullptr) *shown += "]";
}

void read_value(Cursor& in, GgufValueType type, const std::string& field, int depth, std::string* shown,
                std::int64_t* integer) {
    const auto set_int = [&](std::int64_t v) {
        if (integer != nullptr) *integer = v;
        if (shown != nullptr) *shown = std::to_string(v);
    };
    switch (type) {
        case GgufValueType::U8: set_int(*in.take(1, field)); return;
        case GgufValueType::I8: set_int(static_cast<std::int8_t>(*in.take(1, field))); return;
        case GgufValueType::U16: set_int(load_le16(in.take(2, field))); return;
        case GgufValueType::I16: set_int(static_cast<std::int16_t>(load_le16(in.take(2, field)))); return;
        case GgufValueType::U32: set_int(in.u32(field)); return;
        case GgufValueType::I32: set_int(static_cast<std::int32_t>(in.u32(field))); return;
        case GgufValueType::I64: set_int(static_cast<std::int64_t>(in.u64(field))); return;
        case GgufValueType::U64: {
            const std::uint64_t v = in.u64(field);
            if (v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) && integer != nullptr)
                *integer = static_cast<std::int64_t>(v);
            if (shown != nullptr) *shown = std::to_string(v);
            return;
        }
        case GgufValueType::BOOL: {
            const std::uint8_t b = *in.take(1, field);
            if (b > 1) in.fail(field, "a bool of value " + std::to_string(b) + " (0 or 1 expected)");
            set_int(b);
            if (shown != nullptr) *shown = b ? "true" : "false";
            return;
        }
        case GgufValueType::F32: {
            const std::uint32_t bits = in.u32(field);
            float f;
            std::memcpy(&f, &bits, 4);
            if (shown != nullptr) *shown = json_number(f);
            return;
        }
        case GgufValueType::F64: {
            const std::uint64_t bits = in.u64(field);
            double d;
            std::memcpy(&d, &bits, 8);
            if (shown != nullptr) *shown = json_number(d);
            return;
        }
        case GgufValueType::STRING: {
            const std::string_view text = in.text(field, std::numeric_limits<std::uint64_t>::max(), "");
            if (shown != nullptr) *shown = JsonObject::quote(gguf_shown_string(text));
            return;
        }
        case GgufValueType::ARRAY: read_array(in, field, depth, shown, nullptr, nullptr); return;
    }
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t product;
    return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::uint64_t>::max() : product;
}

}  // namespace

std::string gguf_shown_string(std::string_view text) {
    if (text.size() <= kGgufShownStringBytes) return std::string(text);
    std::size_t cut = kGgufShownStringBytes;
    // Not inside a UTF-8 sequence: back to the first byte of the character that would be cut.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "… (" + std::to_string(text.size()) + " bytes)";
}

const char* gguf_value_type_name(GgufValueType type) {
    switch (type) {
        case GgufValueType::U8: return "u8";
        case GgufValueType::I8: return "i8";
        case GgufValueType::U16: return "u16";
        case GgufValueType::I16: return "i16";
        case GgufValueType::U32: return "u32";
        case GgufValueType::I32: return "i32";
        case GgufValueType::F32: return "f32";
        case GgufValueType::BOOL: return "bool";
        case GgufValueType::STRING: return "string";
        case GgufValueType::ARRAY: return "array";
        case GgufValueType::U64: return "u64";
        case GgufValueType::I64: return "i64";
        case GgufValueType::F64: return "f64";
    }
    return "?";
}

std::string gguf_type_label(const GgufTensor& tensor) {
    if (tensor.type == nullptr) return "type " + std::to_string(tensor.type_id);
    std::string label = tensor.type->name;
    for (char& c : label) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return label;
}

GgufFile::GgufFile(const std::string& path) : file_(path), name_(path) {
    data_ = file_.data();
    size_ = file_.size();
    file_.read_guarded([&] {
        parse();
        return 0;
    });
}

GgufFile::GgufFile(const std::string& path, const EachTensor& each, Walk walk) : file_(path), name_(path) {
    data_ = file_.data();
    size_ = file_.size();
    file_.read_guarded([&] {
        parse(&each, walk);
        return 0;
    });
}

GgufFile::GgufFile(const std::uint8_t* data, std::size_t size, std::string name)
    : data_(data), size_(size), name_(std::move(name)) {
    parse();
}

void GgufFile::parse(const EachTensor* each, Walk walk) {
    Cursor in(data_, size_, name_);
    if (size_ < 4 || std::memcmp(data_, "GGUF", 4) != 0) in.fail("magic", "not a GGUF file (it does not start with \"GGUF\")");
    in.take(4, "magic");
    version_ = in.u32("version");
    if (version_ != 2 && version_ != 3) {
        // A big-endian file stores its version byte-swapped: 2 or 3 in the top byte.
        if ((version_ & 0x00ffffffu) == 0 && ((version_ >> 24) == 2 || (version_ >> 24) == 3))
            in.fail("version", "a big-endian GGUF file; QuantScope reads little-endian GGUF only");
        if (version_ == 1) in.fail("version", "GGUF version 1 (32-bit counts) is not supported; QuantScope reads versions 2 and 3");
        in.fail("version", "unknown GGUF version " + std::to_string(version_) + "; QuantScope reads versions 2 and 3");
    }
    const std::uint64_t n_tensors = in.u64("tensor count");
    const std::uint64_t n_kv = in.u64("KV count");
    if (n_kv > in.remaining() / kMinKvBytes)
        in.fail("KV count", std::to_string(n_kv) + " KVs cannot fit in the " + std::to_string(in.remaining()) +
                                " bytes left");

    // A reader of tensors only (`each`) keeps no KV but the alignment; reading the header for the first time, it
    // still checks that no key appears twice, through views of the keys (every KV kept was 1M KVs' 100 MB).
    if (each == nullptr) kvs_.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n_kv, 1u << 16)));
    std::vector<std::string_view> keys;
    if (each != nullptr && walk == Walk::First)
        keys.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n_kv, 1u << 16)));
    for (std::uint64_t i = 0; i < n_kv; ++i) {
        GgufKv kv;
        const std::string_view key = in.text("KV " + std::to_string(i) + " key", kMaxKeyBytes, "GGUF's 65535 for a key");
        kv.key = std::string(key);
        const std::string field = "KV " + quoted_text(kv.key);
        if (kv.key.empty()) in.fail("KV " + std::to_string(i) + " key", "an empty key");
        const std::uint32_t id = in.u32(field + " (type)");
        if (!known_value_type(id)) in.fail(field, "unknown value type " + std::to_string(id));
        kv.type = static_cast<GgufValueType>(id);
        if (kv.type == GgufValueType::ARRAY)
            read_array(in, field, 1, &kv.shown, &kv.item_type, &kv.count);
        else
            read_value(in, kv.type, field, 0, &kv.shown, &kv.integer);
        if (each != nullptr && walk == Walk::First)
            keys.push_back(key);
        if (each == nullptr || kv.key == "general.alignment") kvs_.push_back(std::move(kv));
    }
    // A key twice: the first repeat in file order. Sorted indices, not a set of copied keys (a file of a million
    // KVs held each key twice).
    const auto check_keys = [&](std::size_t count, const auto& key_of) {
        std::vector<std::uint32_t> by_key(count);
        for (std::size_t i = 0; i < count; ++i) by_key[i] = static_cast<std::uint32_t>(i);
        std::sort(by_key.begin(), by_key.end(), [&](std::uint32_t a, std::uint32_t b) {
            return key_of(a) != key_of(b) ? key_of(a) < key_of(b) : a < b;
        });
        std::size_t repeat = count;
        for (std::size_t i = 1; i < count; ++i)
            if (key_of(by_key[i]) == key_of(by_key[i - 1])) repeat = std::min<std::size_t>(repeat, by_key[i]);
        if (repeat < count) in.fail("KV " + quoted_text(key_of(repeat)), "the key appears twice");
    };
    if (each != nullptr && walk == Walk::First)
        check_keys(keys.size(), [&](std::size_t i) { return keys[i]; });
    else
        check_keys(kvs_.size(), [&](std::size_t i) { return std::string_view(kvs_[i].key); });
    keys = {};
    if (const GgufKv* align = find_kv("general.alignment")) {
        if (align->type != GgufValueType::U32)
            in.fail("KV 'general.alignment'", std::string("must be a u32, not ") + gguf_value_type_name(align->type));
        alignment_ = static_cast<std::uint64_t>(align->integer);
        if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0)
            in.fail("KV 'general.alignment'", std::to_string(alignment_) + " is not a power of two");
    }

    if (n_tensors > in.remaining() / kMinTensorInfoBytes)
        in.fail("tensor count", std::to_string(n_tensors) + " tensors cannot fit in the " +
                                    std::to_string(in.remaining()) + " bytes left");
    if (each == nullptr) tensors_.reserve(static_cast<std::size_t>(n_tensors));
    std::uint64_t name_bytes = 0;
    std::size_t given_back = 0;
    for (std::uint64_t i = 0; i < n_tensors; ++i) {
        GgufTensor t;
        // A view of the mapping for now (read here under the guard); copied into names_ below.
        t.name = in.text("tensor " + std::to_string(i) + " name", kMaxNameBytes,
                         "the 4096 QuantScope reads for a tensor name (ggml's are under 64)");
        if (each == nullptr) name_bytes += t.name.size();  // checked one at a time: no name is kept
        const std::string field = "tensor " + quoted_text(t.name);
        t.n_dims = in.u32(field + " (n_dims)");
        if (t.n_dims > kMaxDims)
            in.fail(field, std::to_string(t.n_dims) + " dimensions, more than ggml's " + std::to_string(kMaxDims));
        std::uint64_t elements = 1;
        bool overflow = false;
        for (std::uint32_t d = 0; d < t.n_dims; ++d) {
            const std::uint64_t n = in.u64(field + " (ne)");
            if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) overflow = true;
            t.ne[d] = static_cast<std::int64_t>(n);
            elements = saturating_mul(elements, n);
        }
        if (overflow || elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            in.fail(field, "the element count of ne [" + [&] {
                std::string s;
                for (std::size_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(static_cast<std::uint64_t>(t.ne[d]));
                return s;
            }() + "] overflows");
        t.elements = static_cast<std::int64_t>(elements);
        t.type_id = in.u32(field + " (type)");
        t.type = ggml_type_info(t.type_id);
        t.offset = in.u64(field + " (offset)");
        if (t.type != nullptr) {
            if (t.row() % t.type->block_size != 0)
                in.fail(field, "a row of " + std::to_string(t.row()) + " values is not a multiple of " + gguf_type_label(t) +
                                     "'s block of " + std::to_string(t.type->block_size));
            t.bytes = saturating_mul(static_cast<std::uint64_t>(t.elements / t.type->block_size),
                                     static_cast<std::uint64_t>(t.type->type_size));
        }
        if (each != nullptr) {
            (*each)(t, n_tensors);
            // What was read is not read again: its pages leave this process's memory, 2 MiB at a time.
            const std::size_t read = in.position() / kGiveBack * kGiveBack;
            if (read > given_back) {
                file_.done_reading(given_back, read - given_back);
                given_back = read;
            }
        } else {
            tensors_.push_back(t);
        }
    }
    // The names, copied once out of the mapping: a listing read after the file shrank reads no missing page.
    names_.reset(new char[static_cast<std::size_t>(name_bytes) + 1]);  // not zeroed: every byte is written below
    char* at = names_.get();
    for (GgufTensor& t : tensors_) {
        std::memcpy(at, t.name.data(), t.name.size());
        t.name = std::string_view(at, t.name.size());
        at += t.name.size();
    }

    const std::uint64_t end_of_infos = in.position();
    data_start_ = static_cast<std::size_t>((end_of_infos + alignment_ - 1) / alignment_ * alignment_);
    if (each != nullptr) return;  // the checks of the whole list are the reader's
    detail::check_gguf_tensor_list(
        name_, tensors_.size(),
        [&](std::size_t i) {
            const GgufTensor& t = tensors_[i];
            return detail::GgufListed{t.name, t.offset, t.bytes};
        },
        alignment_, data_start_, size_, by_name_);
}

const GgufKv* GgufFile::find_kv(const std::string& key) const {
    for (const GgufKv& kv : kvs_)
        if (kv.key == key) return &kv;
    return nullptr;
}

const GgufTensor* GgufFile::find(std::string_view tensor_name) const {
    const auto at = std::lower_bound(by_name_.begin(), by_name_.end(), tensor_name,
                                     [&](std::uint32_t i, std::string_view n) { return tensors_[i].name < n; });
    return at != by_name_.end() && tensors_[*at].name == tensor_name ? &tensors_[*at] : nullptr;
}

std::string GgufFile::names_for_message() const {
    constexpr std::size_t kShown = 6, kNameChars = 40;
    std::string names;
    for (std::size_t i = 0; i < tensors_.size() && i < kShown; ++i)
        names += (i > 0 ? ", " : "") + printable(std::string(tensors_[i].name), kNameChars);
    if (tensors_.size() > kShown) names += ", … (" + std::to_string(tensors_.size()) + " in all)";
    return names;
}

const GgufTensor& GgufFile::decodable(const std::string& tensor_name) const {
    const GgufTensor* t = find(tensor_name);
    if (t == nullptr)
        throw Error(printable(name_) + ": no tensor named " + quoted_text(tensor_name) +
                    (tensors_.empty() ? std::string(" (the file holds no tensors)") : " (it has: " + names_for_message() + ")"));
    check_decodable(*t);
    return *t;
}

void GgufFile::check_decodable(const GgufTensor& t) const {
    const std::string where = printable(name_) + ": tensor " + quoted_text(t.name);
    if (t.type == nullptr)
        throw Error(where + " has type id " + std::to_string(t.type_id) + ", which ggml does not define");
    if (!t.type->decodes)
        throw Error(where + " has type " + gguf_type_label(t) +
                    ", which QuantScope cannot decode (it reads F32, F16, BF16, F64 and the ggml types it quantizes)");
    if (t.n_dims == 0) throw Error(where + " is a scalar (rank 0); QuantScope reads tensors of rank 1 or more");
    if (t.elements == 0) throw Error(where + " is empty (shape " + shape_to_string(t.shape()) + ")");
    const std::uint64_t data_size = data_start_ <= size_ ? size_ - data_start_ : 0;
    if (t.offset > data_size || t.bytes > data_size - t.offset)
        throw Error(where + ": its bytes run past the end of the file (" + std::to_string(size_) + " bytes)");
}

Shape GgufFile::checked_shape(const GgufTensor& t, std::string* folding) const {
    Shape shape = fold_to_rank3(t.shape(), folding);
    try {
        checked_numel(shape, kMaxViewElements);
    } catch (const Error& error) {
        throw Error(printable(name_ + ": tensor " + quoted_text(t.name)) + ": " + error.what());
    }
    return shape;
}

Shape GgufFile::view_shape(const std::string& tensor_name, std::string* folding) const {
    return checked_shape(decodable(tensor_name), folding);
}

TensorView GgufFile::view(const std::string& tensor_name, Tensor& decoded, std::string* folding) const {
    const GgufTensor& t = decodable(tensor_name);
    return view(t, decoded, folding);
}

TensorView GgufFile::view(const GgufTensor& t, Tensor& decoded, std::string* folding) const {
    check_decodable(t);
    TensorView view;
    view.shape = checked_shape(t, folding);
    view.name = name_ + ": tensor " + quoted_text(t.name);
    const GgmlType type = t.type->type;
    if (type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::F64) {
        view.type = type == GgmlType::F32 ? ElementType::F32
                    : type == GgmlType::F16 ? ElementType::F16
                    : type == GgmlType::BF16 ? ElementType::BF16
                                             : ElementType::F64;
        view.data = bytes_of(t);
        view.guard = file_.guard();
        return view;
    }
    // A quantized type has no element layout to view: its rows are decoded (ggml's to_float) into float32.
    decoded.shape = view.shape;
    decoded.values.resize(static_cast<std::size_t>(t.elements));
    const std::int64_t row = t.row();
    const std::int64_t row_bytes = ggml_row_bytes(*t.type, row);
    file_.will_read(data_start_ + static_cast<std::size_t>(t.offset), static_cast<std::size_t>(t.bytes));
    file_.read_guarded([&] {
        const std::uint8_t* in = bytes_of(t);
        for (std::int64_t r = 0; r < t.elements / row; ++r)
            ggml_dequantize(*t.type, in + r * row_bytes, row, decoded.values.data() + r * row);
        return 0;
    });
    TensorView decoded_view = view_of(decoded);
    decoded_view.name = view.name;
    return decoded_view;
}

Tensor GgufFile::read(const std::string& tensor_name, std::string* folding) const {
    Tensor decoded;
    const TensorView v = view(tensor_name, decoded, folding);
    if (!decoded.values.empty()) {
        const std::int64_t bad = first_nonfinite(v);
        if (bad >= 0) throw_nonfinite(v, bad);
        return decoded;
    }
    const GgufTensor& t = *find(tensor_name);
    file_.will_read(data_start_ + static_cast<std::size_t>(t.offset), static_cast<std::size_t>(t.bytes));
    return materialize(v);
}

}  // namespace qs
