// Inside quantscope_io: a strict reader of one JSON object's members for the files whose schema the program
// owns (sessions, lessons): unknown keys and wrong types are errors naming the file and the key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/text.hpp"

namespace qs {

// Reads members of one JSON object, refusing unknown ones and wrong types, with messages naming the key.
class ObjectReader {
public:
    ObjectReader(const JsonValue& value, std::string where, const std::string& name) : name_(name), where_(std::move(where)) {
        if (!value.is_object()) fail(where_ + " must be an object");
        object_ = &value;
    }
    ~ObjectReader() = default;

    const JsonValue* optional(const std::string& key, JsonValue::Type type) {
        seen_.push_back(key);
        const JsonValue* v = object_->find(key);
        if (v && v->type != type)
            fail(where_ + "." + key + " must be a " + json_type_name(type) + ", not a " + json_type_name(v->type));
        return v;
    }
    const JsonValue& required(const std::string& key, JsonValue::Type type) {
        const JsonValue* v = optional(key, type);
        if (!v) fail(where_ + " lacks \"" + key + "\"");
        return *v;
    }
    std::string string(const std::string& key) { return required(key, JsonValue::Type::String).text; }
    double number(const std::string& key, double fallback) {
        const JsonValue* v = optional(key, JsonValue::Type::Number);
        return v ? v->number : fallback;
    }
    // An integer in [min, max]: a fraction, or a number outside the range (10^15 for an axis), is an error
    // that shows the number as written, never a clamped or wrapped value.
    std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
        const JsonValue* v = optional(key, JsonValue::Type::Number);
        if (!v) return fallback;
        std::int64_t out = 0;
        const bool integral = v->text.find_first_of(".eE") == std::string::npos;
        if (!integral) fail(where_ + "." + key + " must be an integer, not " + printable(v->text));
        if (!v->to_int64(out) || out < min || out > max)
            fail(where_ + "." + key + " " + printable(v->text) + " is out of range [" + std::to_string(min) + ", " +
                 std::to_string(max) + "]");
        return out;
    }
    bool boolean(const std::string& key, bool fallback) {
        const JsonValue* v = optional(key, JsonValue::Type::Bool);
        return v ? v->boolean : fallback;
    }
    // Every member must have been asked for.
    void finish() {
        for (const auto& [key, value] : object_->members) {
            bool known = false;
            for (const auto& k : seen_) known = known || k == key;
            if (!known) fail(where_ + " has an unknown key " + quoted_text(key));
        }
    }
    [[noreturn]] void fail(const std::string& what) const { throw Error(printable(name_) + ": " + what); }

private:
    const JsonValue* object_ = nullptr;
    const std::string& name_;
    std::string where_;
    std::vector<std::string> seen_;
};

}  // namespace qs
