#include "quantscope/npy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr const char* kSupported = "QuantScope reads <f2, <f4, <f8";

[[noreturn]] void fail(const std::string& name, const std::string& message) {
    throw Error(printable(name) + ": " + message);
}

// Python's repr of a shape tuple, the way the user sees it in numpy: "(3,)", "(3, 4)", "()".
std::string shape_to_tuple(const Shape& shape) {
    std::string out = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0) out += ", ";
        out += std::to_string(shape[i]);
    }
    if (shape.size() == 1) out += ",";
    return out + ")";
}

// The header dict is a Python literal; numpy only ever writes the three keys below, but hand-made and
// other writers' files vary in quoting, spacing, key order and trailing commas.
class HeaderParser {
public:
    HeaderParser(std::string_view text, const std::string& name) : text_(text), name_(name) {}

    void parse(NpyHeader& out) {
        bool seen_descr = false, seen_order = false, seen_shape = false;
        skip_space();
        expect('{', "the header must start with '{'");
        while (true) {
            skip_space();
            if (eat('}')) break;
            const std::size_t key_at = pos_;
            const std::string key = string_literal("a quoted key");
            skip_space();
            expect(':', "expected ':' after key " + quoted_text(key));
            skip_space();
            if (key == "descr") {
                if (seen_descr) fail_at("duplicate key 'descr'", key_at);
                seen_descr = true;
                if (peek() == '[') {
                    fail(name_, "unsupported dtype: a structured (record) array; " + std::string(kSupported));
                }
                out.descr = string_literal("a quoted dtype string for 'descr'");
            } else if (key == "fortran_order") {
                if (seen_order) fail_at("duplicate key 'fortran_order'", key_at);
                seen_order = true;
                out.fortran_order = boolean();
            } else if (key == "shape") {
                if (seen_shape) fail_at("duplicate key 'shape'", key_at);
                seen_shape = true;
                out.shape = tuple();
            } else {
                fail_at("unknown key " + quoted_text(key), key_at);
            }
            skip_space();
            if (eat(',')) continue;
            expect('}', "expected ',' or '}'");
            break;
        }
        skip_space();
        if (pos_ != text_.size()) fail_at("unexpected text after the closing '}'", pos_);
        if (!seen_descr) fail_at("missing key 'descr'", pos_);
        if (!seen_order) fail_at("missing key 'fortran_order'", pos_);
        if (!seen_shape) fail_at("missing key 'shape'", pos_);
    }

private:
    [[noreturn]] void fail_at(const std::string& what, std::size_t at) const {
        fail(name_, "bad .npy header: " + what + " (header byte " + std::to_string(at) + ")");
    }
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    bool eat(char c) {
        if (peek() != c || pos_ >= text_.size()) return false;
        ++pos_;
        return true;
    }
    void expect(char c, const std::string& what) {
        if (!eat(c)) fail_at(what, pos_);
    }
    void skip_space() {
        while (pos_ < text_.size() &&
               (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
    }

    std::string string_literal(const std::string& what) {
        const char quote = peek();
        if (quote != '\'' && quote != '"') fail_at("expected " + what, pos_);
        const std::size_t start = ++pos_;
        while (pos_ < text_.size() && text_[pos_] != quote) {
            // Escapes never occur in the keys or dtypes numpy writes; refusing them keeps this exact.
            if (text_[pos_] == '\\' || text_[pos_] == '\n') fail_at("unsupported character in a string", pos_);
            ++pos_;
        }
        if (pos_ >= text_.size()) fail_at("unterminated string", start - 1);
        return std::string(text_.substr(start, pos_++ - start));
    }

    bool boolean() {
        if (text_.substr(pos_, 4) == "True") {
            pos_ += 4;
            return true;
        }
        if (text_.substr(pos_, 5) == "False") {
            pos_ += 5;
            return false;
        }
        fail_at("'fortran_order' must be True or False", pos_);
    }

    std::int64_t integer() {
        const std::size_t start = pos_;
        std::int64_t value = 0;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
            if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
                fail_at("dimension too large", start);
            }
            value = value * 10 + (text_[pos_++] - '0');
        }
        if (pos_ == start) {
            fail_at(peek() == '-' ? "negative dimension in 'shape'" : "expected a dimension in 'shape'", pos_);
        }
        if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 longs, as old numpy wrote them
        return value;
    }

    Shape tuple() {
        expect('(', "'shape' must be a tuple such as (3, 4)");
        Shape shape;
        skip_space();
        while (!eat(')')) {
            if (shape.size() >= 64) fail_at("'shape' has too many dimensions", pos_);
            shape.push_back(integer());
            skip_space();
            if (eat(',')) {
                skip_space();
                continue;
            }
            expect(')', "expected ',' or ')' in 'shape'");
            break;
        }
        return shape;
    }

    std::string_view text_;
    const std::string& name_;
    std::size_t pos_ = 0;
};

ElementType dtype_of(const std::string& descr, const std::string& name) {
    if (descr == "<f4") return ElementType::F32;
    if (descr == "<f8") return ElementType::F64;
    if (descr == "<f2") return ElementType::F16;
    std::string what;
    if (descr.size() >= 2 && descr[0] == '>') {
        what = "big-endian";
    } else {
        const char kind = descr.size() >= 2 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')
                              ? descr[1]
                              : (descr.empty() ? '\0' : descr[0]);
        switch (kind) {
            case 'i': what = "signed integer"; break;
            case 'u': what = "unsigned integer"; break;
            case 'b': what = "boolean"; break;
            case 'f': what = "float of this size or byte order"; break;
            case 'c': what = "complex"; break;
            case 'O': what = "Python objects"; break;
            case 'U': what = "unicode strings"; break;
            case 'S':
            case 'a': what = "byte strings"; break;
            case 'V': what = "raw bytes"; break;
            case 'M': what = "datetime"; break;
            case 'm': what = "timedelta"; break;
            default: what = "unknown"; break;
        }
    }
    fail(name, "unsupported dtype " + quoted_text(descr) + " (" + what + "); " + kSupported);
}

// Rank and emptiness as QuantScope needs them. The one place a later change would fold rank > 3.
// The shape QuantScope works with: rank 1 to 3 as is, rank > 3 (C order) folded to 3-D.
Shape tensor_shape(const Shape& file_shape, bool fortran_order, const std::string& name, std::string* note) {
    if (file_shape.empty()) {
        fail(name, "shape () is a 0-d array (a scalar); QuantScope reads arrays of rank 1 or more");
    }
    for (const auto dim : file_shape) {
        if (dim == 0) fail(name, "shape " + shape_to_tuple(file_shape) + " is empty (a dimension is 0)");
    }
    if (file_shape.size() > 3 && fortran_order) {
        fail(name, "shape " + shape_to_tuple(file_shape) +
                       " in Fortran order has rank > 3; save it in C order (numpy.ascontiguousarray)");
    }
    return fold_to_rank3(file_shape, note);
}

// Column-major (Fortran) source of `shape` into row-major `dst`.
void fortran_to_row_major(const float* src, const Shape& shape, float* dst) {
    const std::int64_t d0 = shape[0];
    const std::int64_t d1 = shape.size() > 1 ? shape[1] : 1;
    const std::int64_t d2 = shape.size() > 2 ? shape[2] : 1;
    std::int64_t out = 0;
    for (std::int64_t i = 0; i < d0; ++i) {
        for (std::int64_t j = 0; j < d1; ++j) {
            const float* column = src + i + d0 * j;
            for (std::int64_t k = 0; k < d2; ++k) dst[out++] = column[d0 * d1 * k];
        }
    }
}

}  // namespace

NpyHeader parse_npy_header(const std::uint8_t* data, std::size_t size, const std::string& name) {
    if (size < 10 || std::memcmp(data, kMagic, kMagicSize) != 0) {
        if (size >= kMagicSize && std::memcmp(data, kMagic, kMagicSize) == 0) {
            fail(name, "truncated .npy file (" + std::to_string(size) + " bytes)");
        }
        fail(name, "not a .npy file (it does not start with \\x93NUMPY)");
    }
    NpyHeader header;
    header.major_version = data[6];
    const int minor = data[7];
    std::size_t header_length = 0;
    std::size_t prefix = 0;
    if (header.major_version == 1 && minor == 0) {
        header_length = load_le16(data + 8);
        prefix = 10;
    } else if ((header.major_version == 2 || header.major_version == 3) && minor == 0) {
        if (size < 12) fail(name, "truncated .npy file (" + std::to_string(size) + " bytes)");
        header_length = load_le32(data + 8);
        prefix = 12;
    } else {
        fail(name, "unsupported .npy format version " + std::to_string(header.major_version) + "." +
                       std::to_string(minor) + " (QuantScope reads 1.0, 2.0 and 3.0)");
    }
    if (header_length > size - prefix) {
        fail(name, "the .npy header claims " + std::to_string(header_length) + " bytes but the file has only " +
                       std::to_string(size - prefix) + " after the preamble");
    }
    header.data_offset = prefix + header_length;
    const std::string_view text(reinterpret_cast<const char*>(data + prefix), header_length);
    HeaderParser(text, name).parse(header);
    return header;
}

NpyData inspect_npy(const std::uint8_t* data, std::size_t size, const std::string& name, std::string* note) {
    const NpyHeader header = parse_npy_header(data, size, name);
    NpyData out;
    out.type = dtype_of(header.descr, name);
    out.shape = tensor_shape(header.shape, header.fortran_order, name, note);
    std::int64_t numel = 0;
    try {
        numel = checked_numel(out.shape);
    } catch (const Error& error) {
        fail(name, error.what());
    }
    // The exact data length is known now: compare it with the file before allocating anything.
    const std::size_t needed = static_cast<std::size_t>(numel) * element_size(out.type);
    const std::size_t present = size - header.data_offset;
    if (present != needed) {
        const std::string what = "shape " + shape_to_tuple(out.shape) + " of " + quoted_text(header.descr) + " needs " +
                                 std::to_string(needed) + " bytes of data, the file has " +
                                 std::to_string(present);
        if (present < needed) fail(name, "truncated: " + what);
        fail(name, what + " (" + std::to_string(present - needed) + " unexpected trailing bytes)");
    }
    out.fortran_order = header.fortran_order && out.shape.size() > 1;
    out.data_offset = header.data_offset;
    return out;
}

Tensor parse_npy(const std::uint8_t* data, std::size_t size, const std::string& name, std::string* note) {
    const NpyData layout = inspect_npy(data, size, name, note);
    TensorView view;
    view.shape = layout.shape;
    view.type = layout.type;
    view.data = data + layout.data_offset;
    view.name = name;
    if (!layout.fortran_order) return materialize(view);
    // Checked once in row-major order, so that a message's index is the one numpy shows.
    std::vector<float> column_major(static_cast<std::size_t>(view.numel()));
    decode_elements(view.type, view.data, column_major.size(), column_major.data());
    Tensor tensor;
    tensor.shape = layout.shape;
    tensor.values.resize(column_major.size());
    fortran_to_row_major(column_major.data(), layout.shape, tensor.values.data());
    try {
        check_tensor(tensor);
    } catch (const Error& error) {
        fail(name, error.what());
    }
    return tensor;
}

Tensor read_npy(const std::string& path, std::string* note) { return read_npy(MappedFile(path), note); }

Tensor read_npy(const MappedFile& file, std::string* note) {
    file.will_read(0, file.size());
    return file.read_guarded([&] { return parse_npy(file.data(), file.size(), file.path(), note); });
}

std::string npy_header_bytes(const std::string& descr, const Shape& shape) {
    const std::string dict =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_to_tuple(shape) + ", }";
    // Version 1.0 stores the header length in 2 bytes; 2.0 in 4 (never needed for rank <= 3).
    const bool v2 = dict.size() + 1 + 64 > 0xffff;
    const std::size_t prefix = v2 ? 12 : 10;
    const std::size_t unpadded = prefix + dict.size() + 1;  // + '\n'
    const std::size_t padding = (64 - unpadded % 64) % 64;
    const std::size_t header_length = dict.size() + padding + 1;
    std::string out(kMagic, kMagicSize);
    out += static_cast<char>(v2 ? 2 : 1);
    out += '\0';
    for (std::size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((header_length >> (8 * i)) & 0xff);
    out += dict;
    out.append(padding, ' ');
    out += '\n';
    return out;
}

namespace {

std::int64_t checked_output_numel(const std::string& path, const Shape& shape) {
    try {
        return checked_numel(shape);
    } catch (const Error& error) {
        fail(path, error.what());
    }
}

// Writes `count` elements through `convert` in bounded chunks (no full-size temporary).
template <typename Out, typename In, typename Convert>
void write_converted(AtomicFileWriter& writer, const In* in, std::int64_t count, Convert convert) {
    constexpr std::int64_t kChunk = 16384;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(kChunk) * sizeof(Out));
    for (std::int64_t start = 0; start < count; start += kChunk) {
        const std::int64_t n = std::min(kChunk, count - start);
        if (host_is_little_endian()) {  // the plain narrowing loop, which vectorises
            Out narrow[kChunk];
            for (std::int64_t i = 0; i < n; ++i) narrow[i] = static_cast<Out>(convert(in[start + i]));
            writer.write(narrow, static_cast<std::size_t>(n) * sizeof(Out));
            continue;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const auto bits = convert(in[start + i]);
            for (std::size_t b = 0; b < sizeof(Out); ++b) {
                bytes[static_cast<std::size_t>(i) * sizeof(Out) + b] =
                    static_cast<std::uint8_t>((bits >> (8 * b)) & 0xff);
            }
        }
        writer.write(bytes.data(), static_cast<std::size_t>(n) * sizeof(Out));
    }
}

std::uint32_t float_bits(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
}

}  // namespace

namespace {

const char* npy_descr(NpyDtype dtype) {
    switch (dtype) {
        case NpyDtype::F4: return "<f4";
        case NpyDtype::I1: return "|i1";
        case NpyDtype::U1: return "|u1";
        case NpyDtype::I2: return "<i2";
        case NpyDtype::U2: return "<u2";
    }
    return "<f4";
}

}  // namespace

NpyArrayWriter::NpyArrayWriter(AtomicFileWriter& out, const Shape& shape, NpyDtype dtype)
    : out_(out), shape_(shape), dtype_(dtype) {
    checked_output_numel(out.target(), shape);
    out_.write(npy_header_bytes(npy_descr(dtype), shape));
}

void NpyArrayWriter::append(const float* values, std::int64_t count) {
    if (host_is_little_endian()) {
        out_.write(values, static_cast<std::size_t>(count) * sizeof(float));
    } else {
        write_converted<std::uint32_t>(out_, values, count, float_bits);
    }
    written_ += count;
}

void NpyArrayWriter::append(const std::int32_t* codes, std::int64_t count) {
    if (dtype_ == NpyDtype::F4) {
        write_converted<std::uint32_t>(out_, codes, count,
                                       [](std::int32_t q) { return float_bits(static_cast<float>(q)); });
        written_ += count;
        return;
    }
    const char* type_name = "int8";
    std::int32_t lo = -128, hi = 127;
    switch (dtype_) {
        case NpyDtype::I1: break;
        case NpyDtype::U1: type_name = "uint8", lo = 0, hi = 255; break;
        case NpyDtype::I2: type_name = "int16", lo = -32768, hi = 32767; break;
        case NpyDtype::U2: type_name = "uint16", lo = 0, hi = 65535; break;
        case NpyDtype::F4: break;
    }
    // A code that does not fit must not become a wrapped number (the file is then never committed).
    for (std::int64_t i = 0; i < count; ++i) {
        if (codes[i] < lo || codes[i] > hi) {
            fail(out_.target(), "code " + std::to_string(codes[i]) + " at index " +
                                    index_to_string(shape_, written_ + i) + " does not fit " + type_name + " [" +
                                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
        }
    }
    const auto two_complement = [](std::int32_t q) { return static_cast<std::uint32_t>(q); };
    if (dtype_ == NpyDtype::I1 || dtype_ == NpyDtype::U1) {
        write_converted<std::uint8_t>(out_, codes, count, two_complement);
    } else {
        write_converted<std::uint16_t>(out_, codes, count, two_complement);
    }
    written_ += count;
}

}  // namespace qs
