#include "quantscope/safetensors.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

constexpr const char* kReadable = "QuantScope reads F32, F16, BF16 and F64";

std::string shape_to_list(const Shape& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) out += ", ";
        out += std::to_string(shape[i]);
    }
    return out + "]";
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t product;
    return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<std::uint64_t>::max() : product;
}

bool readable_type(const std::string& dtype, ElementType& type) {
    if (dtype == "F32") type = ElementType::F32;
    else if (dtype == "F16") type = ElementType::F16;
    else if (dtype == "BF16") type = ElementType::BF16;
    else if (dtype == "F64") type = ElementType::F64;
    else return false;
    return true;
}

}  // namespace

std::size_t safetensors_item_size(const std::string& dtype) {
    static const std::pair<const char*, std::size_t> kSizes[] = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1},
        {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},     {"U32", 4},
        {"F32", 4},  {"I64", 8}, {"U64", 8}, {"F64", 8},     {"C64", 8},
    };
    for (const auto& [name, size] : kSizes) {
        if (dtype == name) return size;
    }
    return 0;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : SafetensorsFile(MappedFile(path)) {}

SafetensorsFile::SafetensorsFile(MappedFile file) : file_(std::move(file)), name_(file_.path()) {
    data_ = file_.data();
    size_ = file_.size();
    file_.read_guarded([&] {
        parse();
        return 0;
    });
}

SafetensorsFile::SafetensorsFile(MappedFile file, const EachEntry& each) : file_(std::move(file)), name_(file_.path()) {
    data_ = file_.data();
    size_ = file_.size();
    file_.read_guarded([&] {
        parse(&each);
        return 0;
    });
}

SafetensorsFile::SafetensorsFile(const std::uint8_t* data, std::size_t size, std::string name)
    : data_(data), size_(size), name_(std::move(name)) {
    parse();
}

void SafetensorsFile::parse(const EachEntry* each) {
    const auto fail = [&](const std::string& what) { throw Error(printable(name_) + ": " + what); };
    if (size_ < 8) {
        fail("too short to be a .safetensors file (" + std::to_string(size_) + " bytes)");
    }
    const std::uint64_t header_length = load_le64(data_);
    if (header_length > size_ - 8) {
        fail("the header length " + std::to_string(header_length) + " runs past the end of the file (" +
             std::to_string(size_) + " bytes)");
    }
    if (header_length > kMaxSafetensorsHeader) {
        fail("the header is " + std::to_string(header_length) + " bytes, more than the " +
             std::to_string(kMaxSafetensorsHeader >> 20) + " MB limit");
    }
    data_start_ = 8 + static_cast<std::size_t>(header_length);
    const std::uint64_t data_size = size_ - data_start_;
    const std::string_view header(reinterpret_cast<const char*>(data_ + 8), static_cast<std::size_t>(header_length));
    // Checked as a whole first (a syntax error anywhere comes before a tensor's fault), then read tensor by tensor:
    // never a tree of the whole header (some 1 KB a tensor).
    // A header read is given back as the reading goes (twice: checked, then read), so that a 100 MB header is not
    // all resident beside what is made of it.
    const JsonScan scan(header, name_, JsonLimits{}, [&](std::size_t read) { file_.done_reading(0, 8 + read); });
    const JsonValue::Type root_type = scan.type(scan.root());
    if (root_type != JsonValue::Type::Object)
        fail("the header is a JSON " + std::string(json_type_name(root_type)) + ", not an object");

    scan.members(scan.root(), [&](const std::string& key, std::size_t at) {
        const JsonValue value = scan.value(at);
        if (key == "__metadata__") {
            if (!value.is_object()) fail("\"__metadata__\" must be an object");
            for (const auto& [meta_key, meta_value] : value.members) {
                if (meta_value.is_string()) metadata_.emplace_back(meta_key, meta_value.text);
            }
            return;
        }
        const std::string where = "tensor " + quoted_text(key);
        if (!value.is_object()) fail(where + ": expected an object with dtype, shape and data_offsets");
        const JsonValue* dtype = value.find("dtype");
        const JsonValue* shape = value.find("shape");
        const JsonValue* offsets = value.find("data_offsets");
        if (dtype == nullptr || !dtype->is_string()) fail(where + ": missing or non-string \"dtype\"");
        if (shape == nullptr || !shape->is_array()) fail(where + ": missing or non-array \"shape\"");
        if (offsets == nullptr || !offsets->is_array() || offsets->items.size() != 2) {
            fail(where + ": \"data_offsets\" must be [begin, end]");
        }
        SafetensorsEntry entry;
        entry.name = key;
        entry.dtype = dtype->text;
        const std::size_t item_size = safetensors_item_size(entry.dtype);
        if (item_size == 0) fail(where + ": unknown dtype " + quoted_text(entry.dtype));
        std::uint64_t numel = 1;
        for (const JsonValue& dim : shape->items) {
            std::int64_t n = 0;
            if (!dim.to_int64(n) || n < 0) fail(where + ": \"shape\" must hold non-negative integers");
            entry.shape.push_back(n);
            numel = saturating_mul(numel, static_cast<std::uint64_t>(n));
        }
        if (!offsets->items[0].to_uint64(entry.begin) || !offsets->items[1].to_uint64(entry.end)) {
            fail(where + ": \"data_offsets\" must be non-negative integers");
        }
        if (entry.begin > entry.end) {
            fail(where + ": data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                 "] end before they begin");
        }
        if (entry.end > data_size) {
            fail(where + ": data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
                 "] run past the end of the data (" + std::to_string(data_size) + " bytes)");
        }
        const std::uint64_t expected = saturating_mul(numel, item_size);
        if (expected != entry.end - entry.begin) {
            fail(where + ": shape " + shape_to_list(entry.shape) + " of " + entry.dtype + " needs " +
                 (expected == std::numeric_limits<std::uint64_t>::max() ? std::string("more than 2^64")
                                                                          : std::to_string(expected)) +
                 " bytes, data_offsets give " + std::to_string(entry.end - entry.begin));
        }
        if (each != nullptr) {
            (*each)(entry);
        } else {
            entries_.push_back(std::move(entry));
        }
    });
    if (each != nullptr) return;  // the taker checks the list as a whole (check_safetensors_overlaps)

    by_name_.resize(entries_.size());
    for (std::size_t i = 0; i < entries_.size(); ++i) by_name_[i] = static_cast<std::uint32_t>(i);
    std::sort(by_name_.begin(), by_name_.end(),
              [&](std::uint32_t a, std::uint32_t b) { return entries_[a].name < entries_[b].name; });

    check_safetensors_overlaps(name_, entries_.size(), [&](std::size_t i) -> const SafetensorsEntry& { return entries_[i]; });
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& tensor_name) const {
    const auto at = std::lower_bound(by_name_.begin(), by_name_.end(), tensor_name,
                                     [&](std::uint32_t i, const std::string& name) { return entries_[i].name < name; });
    return at != by_name_.end() && entries_[*at].name == tensor_name ? &entries_[*at] : nullptr;
}

std::string SafetensorsFile::names_for_message() const {
    // A few short names keep the message one readable line, however many tensors and however long their names.
    constexpr std::size_t kShown = 6, kNameChars = 40;
    std::string names;
    for (std::size_t i = 0; i < entries_.size() && i < kShown; ++i)
        names += (i > 0 ? ", " : "") + printable(entries_[i].name, kNameChars);
    if (entries_.size() > kShown) names += ", … (" + std::to_string(entries_.size()) + " in all)";
    return names;
}

TensorView SafetensorsFile::view(const std::string& tensor_name, std::string* folding) const {
    if (folding != nullptr) folding->clear();
    const SafetensorsEntry* found = find(tensor_name);
    if (found == nullptr) {
        throw Error(printable(name_) + ": no tensor named " + quoted_text(tensor_name) +
                    (entries_.empty() ? std::string(" (the file holds no tensors)") : " (it has: " + names_for_message() + ")"));
    }
    return view(*found, folding);
}

TensorView SafetensorsFile::view(const SafetensorsEntry& entry, std::string* folding) const {
    if (folding != nullptr) folding->clear();
    TensorView view;
    view.name = name_ + ": tensor " + quoted_text(entry.name);
    if (!readable_type(entry.dtype, view.type)) {
        throw Error(printable(view.name) + " has dtype " + printable(entry.dtype) + "; " + kReadable);
    }
    if (entry.shape.empty()) {
        throw Error(printable(view.name) + " is a scalar (rank 0); QuantScope reads tensors of rank 1 or more");
    }
    for (const auto dim : entry.shape) {
        if (dim == 0) throw Error(printable(view.name) + " is empty (shape " + shape_to_list(entry.shape) + ")");
    }
    view.shape = fold_to_rank3(entry.shape, folding);
    try {
        checked_numel(view.shape, kMaxViewElements);
    } catch (const Error& error) {
        throw Error(printable(view.name) + ": " + error.what());
    }
    // parse() already tied the byte range to the shape; numel is bounded now, so this cannot overflow.
    view.data = data_ + data_start_ + entry.begin;
    view.guard = file_.guard();
    return view;
}

Tensor SafetensorsFile::read(const std::string& tensor_name, std::string* folding) const {
    const TensorView v = view(tensor_name, folding);
    const SafetensorsEntry& entry = *find(tensor_name);  // view() found it
    file_.will_read(data_start_ + static_cast<std::size_t>(entry.begin), static_cast<std::size_t>(entry.end - entry.begin));
    return materialize(v);
}

}  // namespace qs
