// A small strict JSON (RFC 8259) reader for the files QuantScope reads: safetensors headers, session
// files. Bounded: nesting depth, value count and input size are limited, so hostile input cannot exhaust
// the stack or memory. Duplicate keys, lone surrogates (but see JsonLimits::byte_escapes), invalid UTF-8
// and trailing garbage are errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qs {

struct JsonValue {
    enum class Type { Null, Bool, Number, String, Array, Object };

    Type type = Type::Null;
    bool boolean = false;
    double number = 0;               // Number: the nearest double
    std::string text;                // String: decoded UTF-8; Number: the literal as written
    std::vector<JsonValue> items;    // Array
    std::vector<std::pair<std::string, JsonValue>> members;  // Object, in file order, keys unique
    std::size_t offset = 0;          // byte offset of the value in the input, for messages

    bool is_null() const { return type == Type::Null; }
    bool is_bool() const { return type == Type::Bool; }
    bool is_number() const { return type == Type::Number; }
    bool is_string() const { return type == Type::String; }
    bool is_array() const { return type == Type::Array; }
    bool is_object() const { return type == Type::Object; }

    // The member named `key` of an object; nullptr when absent or when this is not an object.
    const JsonValue* find(std::string_view key) const;
    // The number as an exact integer: false for a fraction, an exponent, a non-number, or out of range.
    // (Integers above 2^53 are exact here, unlike `number`.)
    bool to_int64(std::int64_t& out) const;
    bool to_uint64(std::uint64_t& out) const;
};

const char* json_type_name(JsonValue::Type type);  // "null", "boolean", "number", ...

struct JsonLimits {
    std::size_t max_depth = 64;            // nested arrays/objects
    std::size_t max_values = 1000000;      // values of any kind in the document
    std::size_t max_bytes = 100u << 20;    // input size
    // Accept \udc80..\udcff as the raw bytes 0x80..0xff (Python's "surrogateescape", PEP 383): how
    // JsonObject::quote writes bytes that are not UTF-8, e.g. a Latin-1 file name. Off: lone surrogates are
    // errors, as for any strict reader (safetensors headers).
    bool byte_escapes = false;
};

// Parses one JSON document (surrounding whitespace allowed). Throws qs::Error
// "<name>: invalid JSON at line L, column C: <what>" on anything else.
JsonValue parse_json(std::string_view text, const std::string& name, const JsonLimits& limits = {});

// A document checked as parse_json checks it (the same errors, the same limits) but read value by value, never as a
// whole tree: a safetensors header of 140k tensors was some 1 KB of tree a tensor. `text` must outlive it.
class JsonScan {
public:
    // `passed` (if any) is called now and then with an offset: the text before it was read, by the check or by
    // members(), and may be given back.
    JsonScan(std::string_view text, const std::string& name, const JsonLimits& limits = {},
             std::function<void(std::size_t read)> passed = {});
    // The offset of the root value (of any value: the offsets below).
    std::size_t root() const { return root_; }
    JsonValue::Type type(std::size_t at) const;
    // The value at `at` as a tree.
    JsonValue value(std::size_t at) const;
    // For an object at `at`: each member's key (decoded) and its value's offset, in file order.
    void members(std::size_t at, const std::function<void(const std::string& key, std::size_t value)>& take) const;

private:
    std::string_view text_;
    std::string name_;
    bool byte_escapes_ = false;
    std::function<void(std::size_t)> passed_;
    std::size_t root_ = 0;
};

// `text` after a leading UTF-8 byte order mark, if any: for the files people edit (lessons, sessions), which
// some editors start with one. (RFC 8259 lets a reader ignore it; a safetensors header keeps refusing it.)
std::string_view without_utf8_bom(std::string_view text);

// "line L, column C" of byte `offset` in `text` (1-based, columns in bytes).
std::string json_location(std::string_view text, std::size_t offset);

}  // namespace qs
