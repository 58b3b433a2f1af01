#include "quantscope/json_writer.hpp"

#include <cstdio>

#include "quantscope/format.hpp"
#include "quantscope/text.hpp"

namespace qs {

JsonObject& JsonObject::number(const std::string& key, double value) {
    return raw(key, format_json_number(value));
}

JsonObject& JsonObject::number(const std::string& key, std::optional<double> value) {
    return raw(key, value ? format_json_number(*value) : "null");
}

JsonObject& JsonObject::integer(const std::string& key, std::int64_t value) {
    return raw(key, std::to_string(value));
}

JsonObject& JsonObject::string(const std::string& key, const std::string& value) {
    return raw(key, quote(value));
}

JsonObject& JsonObject::boolean(const std::string& key, bool value) {
    return raw(key, value ? "true" : "false");
}

JsonObject& JsonObject::raw(const std::string& key, const std::string& json) {
    fields_.emplace_back(key, json);
    return *this;
}

std::string JsonObject::str() const {
    std::string out = "{";
    for (std::size_t i = 0; i < fields_.size(); ++i) {
        if (i) out += ", ";
        out += quote(fields_[i].first) + ": " + fields_[i].second;
    }
    return out + "}";
}

std::string JsonObject::quote(const std::string& text) {
    std::string out = "\"";
    char buf[8];
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t length = utf8_sequence_length(text, i);
        if (length == 0) {
            // Not UTF-8 (a Latin-1 file name): written as PEP 383's \udcXX, which parse_json with
            // JsonLimits::byte_escapes (and Python's os.fsencode) turns back into the same byte.
            std::snprintf(buf, sizeof buf, "\\udc%02x", c);
            out += buf;
        } else if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20 || c == 0x7f) {
            // Controls and DEL escaped too: JSON printed to a terminal (inspect --json) must not act on it.
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else if (length > 1 && acts_on_terminal(text, i, length)) {
            // The same characters printable() escapes in the text listing (C1, line separators, bidi overrides).
            std::snprintf(buf, sizeof buf, "\\u%04x", utf8_code_point(text, i, length));
            out += buf;
        } else {
            out.append(text, i, length);
        }
        i += length == 0 ? 1 : length;
    }
    return out + "\"";
}

std::string JsonObject::array(const std::vector<double>& values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + format_json_number(values[i]);
    return out + "]";
}

std::string JsonObject::array(const std::vector<std::int32_t>& values) {
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
    return out + "]";
}

}  // namespace qs
