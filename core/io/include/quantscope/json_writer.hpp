// A minimal writer for the JSON QuantScope writes (command outputs, session files): keys in insertion order, numbers
// printed to round-trip (%.17g), non-finite numbers as null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qs {

class JsonObject {
public:
    JsonObject& number(const std::string& key, double value);
    JsonObject& number(const std::string& key, std::optional<double> value);
    JsonObject& integer(const std::string& key, std::int64_t value);
    JsonObject& string(const std::string& key, const std::string& value);
    JsonObject& boolean(const std::string& key, bool value);
    JsonObject& raw(const std::string& key, const std::string& json);  // an already-formatted value
    std::string str() const;  // {"a": 1, ...}

    // A JSON string literal of any bytes: valid UTF-8 as it is, each byte that is not as \udc80..\udcff
    // (see JsonLimits::byte_escapes), so the output is always valid UTF-8 and loses nothing.
    static std::string quote(const std::string& text);
    static std::string array(const std::vector<double>& values);
    static std::string array(const std::vector<std::int32_t>& values);

private:
    std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace qs
