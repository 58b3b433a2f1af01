#include "quantscope/json_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>

#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs {

const JsonValue* JsonValue::find(std::string_view key) const {
    if (type != Type::Object) return nullptr;
    for (const auto& member : members) {
        if (member.first == key) return &member.second;
    }
    return nullptr;
}

bool JsonValue::to_int64(std::int64_t& out) const {
    if (type != Type::Number) return false;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    const auto result = std::from_chars(first, last, out);
    return result.ec == std::errc() && result.ptr == last;
}

bool JsonValue::to_uint64(std::uint64_t& out) const {
    if (type != Type::Number || text.empty() || text[0] == '-') return false;
    const char* first = text.data();
    const char* last = text.data() + text.size();
    const auto result = std::from_chars(first, last, out);
    return result.ec == std::errc() && result.ptr == last;
}

const char* json_type_name(JsonValue::Type type) {
    switch (type) {
        case JsonValue::Type::Null: return "null";
        case JsonValue::Type::Bool: return "boolean";
        case JsonValue::Type::Number: return "number";
        case JsonValue::Type::String: return "string";
        case JsonValue::Type::Array: return "array";
        case JsonValue::Type::Object: return "object";
    }
    return "value";
}

std::string_view without_utf8_bom(std::string_view text) {
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    return text.substr(0, kBom.size()) == kBom ? text.substr(kBom.size()) : text;
}

std::string json_location(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            line_start = i + 1;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

namespace {

class Parser {
public:
    // `build`: false checks the text as for a tree (the same errors in the same order) but keeps no value.
    Parser(std::string_view text, const std::string& name, const JsonLimits& limits, bool build = true,
           const std::function<void(std::size_t)>* passed = nullptr)
        : text_(text), name_(name), limits_(limits), build_(build), passed_(passed != nullptr && *passed ? passed : nullptr) {}

    // The value at byte `at` of a text validated already.
    JsonValue value_at(std::size_t at) {
        pos_ = at;
        JsonValue out;
        value(out, 0);
        return out;
    }
    // The members of the object at byte `at` of a text validated already, each key decoded, each value's offset.
    template <class Take>
    void members_at(std::size_t at, const Take& take) {
        pos_ = at + 1;
        skip_space();
        if (peek() == '}') return;
        std::string key;
        while (true) {
            skip_space();
            key.clear();
            string(key);
            skip_space();
            ++pos_;  // ':'
            skip_space();
            const std::size_t value_at = pos_;
            take(key, value_at);
            pos_ = value_at;
            skip_value();
            tell_passed();
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            return;
        }
    }

    JsonValue document() {
        if (text_.size() > limits_.max_bytes) {
            throw Error(printable(name_) + ": JSON too large (" + std::to_string(text_.size()) + " bytes, the limit is " +
                        std::to_string(limits_.max_bytes) + ")");
        }
        skip_space();
        JsonValue root;
        value(root, 0);
        skip_space();
        if (pos_ != text_.size()) fail("unexpected text after the JSON value");
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { fail_at(what, pos_); }
    [[noreturn]] void fail_at(const std::string& what, std::size_t at) const {
        throw Error(printable(name_) + ": invalid JSON at " + json_location(text_, at) + ": " + what);
    }

    bool at_end() const { return pos_ >= text_.size(); }
    char peek() const { return at_end() ? '\0' : text_[pos_]; }
    void skip_space() {
        while (!at_end() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
    }
    void expect(char c, const char* what) {
        if (at_end() || text_[pos_] != c) fail(what);
        ++pos_;
    }

    void value(JsonValue& out, std::size_t depth) {
        if (++count_ > limits_.max_values) {
            fail("more than " + std::to_string(limits_.max_values) + " values");
        }
        out.offset = pos_;
        if (at_end()) fail("unexpected end of input, expected a value");
        switch (text_[pos_]) {
            case '{': object(out, depth + 1); return;
            case '[': array(out, depth + 1); return;
            case '"':
                out.type = JsonValue::Type::String;
                string(out.text);
                return;
            case 't': literal("true", out, JsonValue::Type::Bool, true); return;
            case 'f': literal("false", out, JsonValue::Type::Bool, false); return;
            case 'n': literal("null", out, JsonValue::Type::Null, false); return;
            default:
                if (text_[pos_] == '-' || (text_[pos_] >= '0' && text_[pos_] <= '9')) {
                    number(out);
                    return;
                }
                fail("unexpected character, expected a value");
        }
    }

    void literal(std::string_view word, JsonValue& out, JsonValue::Type type, bool boolean) {
        if (text_.substr(pos_, word.size()) != word) fail("unexpected character, expected a value");
        pos_ += word.size();
        out.type = type;
        out.boolean = boolean;
    }

    void check_depth(std::size_t depth) const {
        if (depth > limits_.max_depth) fail("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    }

    // Every 8 MiB of text, the offset read to (a reader gives back the pages before it).
    void tell_passed() {
        constexpr std::size_t kEvery = std::size_t{8} << 20;
        if (passed_ == nullptr || pos_ < next_mark_) return;
        (*passed_)(pos_);
        next_mark_ = pos_ + kEvery;
    }

    // Past the value at pos_ of a text validated already.
    void skip_value() {
        std::size_t open = 0;
        do {
            const char c = peek();
            if (c == '"') {
                ++pos_;
                while (text_[pos_] != '"') pos_ += text_[pos_] == '\\' ? 2 : 1;
                ++pos_;
            } else if (c == '{' || c == '[') {
                ++open;
                ++pos_;
            } else if (c == '}' || c == ']') {
                --open;
                ++pos_;
            } else if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                ++pos_;
            } else {  // a number or a literal
                while (!at_end() && std::string_view(",:]} \t\n\r").find(text_[pos_]) == std::string_view::npos) ++pos_;
            }
        } while (open > 0);
    }

    void array(JsonValue& out, std::size_t depth) {
        check_depth(depth);
        out.type = JsonValue::Type::Array;
        ++pos_;
        skip_space();
        if (peek() == ']') {
            ++pos_;
            return;
        }
        while (true) {
            skip_space();
            if (!build_) {
                JsonValue item;
                value(item, depth);
            } else {
                out.items.emplace_back();
                value(out.items.back(), depth);
            }
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect(']', "expected ',' or ']'");
            return;
        }
    }

    void object(JsonValue& out, std::size_t depth) {
        check_depth(depth);
        out.type = JsonValue::Type::Object;
        ++pos_;
        skip_space();
        if (peek() == '}') {
            ++pos_;
            return;
        }
        std::vector<std::size_t> key_offsets;
        if (!build_) return check_object(depth);
        while (true) {
            skip_space();
            if (peek() != '"') fail("expected a string key");
            key_offsets.push_back(pos_);
            out.members.emplace_back();
            string(out.members.back().first);
            skip_space();
            expect(':', "expected ':' after the key");
            skip_space();
            value(out.members.back().second, depth);
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect('}', "expected ',' or '}'");
            break;
        }
        // Duplicate keys make "which one counts" ambiguous between readers: refuse them. Sorting keeps
        // this O(n log n) for headers with many thousands of tensors.
        std::vector<std::size_t> order(out.members.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return out.members[a].first < out.members[b].first ||
                   (out.members[a].first == out.members[b].first && a < b);
        });
        for (std::size_t i = 1; i < order.size(); ++i) {
            if (out.members[order[i]].first == out.members[order[i - 1]].first) {
                fail_at("duplicate key " + quoted_text(out.members[order[i]].first), key_offsets[order[i]]);
            }
        }
    }

    // object() keeping nothing: duplicate keys are found by the keys' hashes (a key's bytes read again only for
    // hashes that match), not a tree nor views of the keys: a million keys cost 24 MB, and the sort never reads a
    // header given back as it was read.
    void check_object(std::size_t depth) {
        std::vector<std::size_t> key_offsets;
        std::vector<std::pair<std::size_t, std::uint32_t>> hashes;  // (hash of the decoded key, member)
        std::string key;
        while (true) {
            skip_space();
            if (peek() != '"') fail("expected a string key");
            key_offsets.push_back(pos_);
            key.clear();
            string(key);
            hashes.emplace_back(std::hash<std::string>()(key), static_cast<std::uint32_t>(hashes.size()));
            skip_space();
            expect(':', "expected ':' after the key");
            skip_space();
            JsonValue member;
            value(member, depth);
            tell_passed();
            skip_space();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            expect('}', "expected ',' or '}'");
            break;
        }
        std::sort(hashes.begin(), hashes.end());
        // As object() says it: of the keys named twice, the least; at its second place.
        bool found = false;
        std::string least, other;
        std::uint32_t at = 0;
        for (std::size_t i = 0; i < hashes.size();) {
            std::size_t j = i + 1;
            while (j < hashes.size() && hashes[j].first == hashes[i].first) ++j;
            // Members i..j share a hash: those whose keys are equal, in member order.
            for (std::size_t x = i; x + 1 < j; ++x) {
                if (hashes[x].second == std::numeric_limits<std::uint32_t>::max()) continue;
                const std::string first = key_at(key_offsets[hashes[x].second]);
                for (std::size_t y = x + 1; y < j; ++y) {
                    if (hashes[y].second == std::numeric_limits<std::uint32_t>::max()) continue;
                    if (key_at(key_offsets[hashes[y].second]) != first) continue;
                    // The second place of `first` (places ascend within a hash)
                    if (!found || first < least) {
                        found = true;
                        least = first;
                        at = hashes[y].second;
                    }
                    break;
                }
            }
            i = j;
        }
        if (found) fail_at("duplicate key " + quoted_text(least), key_offsets[at]);
    }

    // The key at byte `at` decoded again (checked already).
    std::string key_at(std::size_t at) {
        const std::size_t was = pos_;
        pos_ = at;
        std::string out;
        string(out);
        pos_ = was;
        return out;
    }

    static int hex_digit(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    unsigned hex4() {
        if (text_.size() - pos_ < 4) fail("truncated \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const int digit = hex_digit(text_[pos_ + i]);
            if (digit < 0) fail("bad \\u escape");
            code = code * 16 + static_cast<unsigned>(digit);
        }
        pos_ += 4;
        return code;
    }

    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xc0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3f));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xe0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (code & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (code & 0x3f));
        }
    }

    void string(std::string& out) {
        const std::size_t start = pos_;
        ++pos_;  // opening quote
        while (true) {
            if (at_end()) fail_at("unterminated string", start);
            const auto c = static_cast<unsigned char>(text_[pos_]);
            if (c == '"') {
                ++pos_;
                return;
            }
            if (c < 0x20) fail("control character in a string");
            if (c == '\\') {
                ++pos_;
                if (at_end()) fail_at("unterminated string", start);
                const char escape = text_[pos_++];
                switch (escape) {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'n': out += '\n'; break;
                    case 'r': out += '\r'; break;
                    case 't': out += '\t'; break;
                    case 'u': {
                        unsigned code = hex4();
                        if (limits_.byte_escapes && code >= 0xdc80 && code <= 0xdcff) {
                            out += static_cast<char>(code - 0xdc00);  // a byte that is not UTF-8 (PEP 383)
                            break;
                        }
                        if (code >= 0xdc00 && code <= 0xdfff) fail("lone low surrogate in \\u escape");
                        if (code >= 0xd800 && code <= 0xdbff) {
                            if (text_.substr(pos_, 2) != "\\u") fail("lone high surrogate in \\u escape");
                            pos_ += 2;
                            const unsigned low = hex4();
                            if (low < 0xdc00 || low > 0xdfff) fail("bad surrogate pair in \\u escape");
                            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
                        }
                        append_utf8(out, code);
                        break;
                    }
                    default: --pos_; fail("bad escape sequence");
                }
                continue;
            }
            if (c < 0x80) {
                out += static_cast<char>(c);
                ++pos_;
                continue;
            }
            const std::size_t length = utf8_sequence_length(text_, pos_);
            if (length == 0) fail("invalid UTF-8 in a string");
            out.append(text_.data() + pos_, length);
            pos_ += length;
        }
    }

    void number(JsonValue& out) {
        const std::size_t start = pos_;
        const auto digits = [&] {
            const std::size_t first = pos_;
            while (!at_end() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            return pos_ - first;
        };
        if (peek() == '-') ++pos_;
        if (peek() == '0') {
            ++pos_;
            if (peek() >= '0' && peek() <= '9') fail("leading zeros are not allowed in numbers");
        } else if (digits() == 0) {
            fail("expected digits");
        }
        if (peek() == '.') {
            ++pos_;
            if (digits() == 0) fail("expected digits after '.'");
        }
        if (peek() == 'e' || peek() == 'E') {
            ++pos_;
            if (peek() == '+' || peek() == '-') ++pos_;
            if (digits() == 0) fail("expected digits in the exponent");
        }
        out.type = JsonValue::Type::Number;
        out.text.assign(text_.data() + start, pos_ - start);
        const auto result = std::from_chars(out.text.data(), out.text.data() + out.text.size(), out.number);
        if (result.ec == std::errc::result_out_of_range) {
            // Underflow is a harmless 0; overflow has no double to stand for it.
            bool mantissa_zero = true;
            for (const char c : out.text) {
                if (c == 'e' || c == 'E') break;
                if (c >= '1' && c <= '9') mantissa_zero = false;
            }
            const auto e = out.text.find_first_of("eE");
            const bool negative_exponent = e != std::string::npos && e + 1 < out.text.size() && out.text[e + 1] == '-';
            if (!negative_exponent && !mantissa_zero) fail_at("number out of range", start);
            out.number = out.text[0] == '-' ? -0.0 : 0.0;
        } else if (result.ec != std::errc() || result.ptr != out.text.data() + out.text.size()) {
            fail_at("bad number", start);
        }
    }

    std::string_view text_;
    const std::string& name_;
    const JsonLimits& limits_;
    bool build_ = true;
    const std::function<void(std::size_t)>* passed_ = nullptr;
    std::size_t next_mark_ = std::size_t{8} << 20;
    std::size_t pos_ = 0;
    std::size_t count_ = 0;
};

JsonValue::Type type_at(std::string_view text, std::size_t at) {
    switch (text[at]) {
        case '{': return JsonValue::Type::Object;
        case '[': return JsonValue::Type::Array;
        case '"': return JsonValue::Type::String;
        case 't': case 'f': return JsonValue::Type::Bool;
        case 'n': return JsonValue::Type::Null;
        default: return JsonValue::Type::Number;
    }
}

const JsonLimits kValidated{std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max(),
                            std::numeric_limits<std::size_t>::max(), false};

}  // namespace

JsonScan::JsonScan(std::string_view text, const std::string& name, const JsonLimits& limits,
                   std::function<void(std::size_t)> passed)
    : text_(text), name_(name), byte_escapes_(limits.byte_escapes), passed_(std::move(passed)) {
    Parser(text, name, limits, false, &passed_).document();
    root_ = text.find_first_not_of(" \t\n\r");
}

JsonValue::Type JsonScan::type(std::size_t at) const { return type_at(text_, at); }

JsonValue JsonScan::value(std::size_t at) const {
    JsonLimits limits = kValidated;
    limits.byte_escapes = byte_escapes_;
    return Parser(text_, name_, limits).value_at(at);
}

void JsonScan::members(std::size_t at, const std::function<void(const std::string&, std::size_t)>& take) const {
    JsonLimits limits = kValidated;
    limits.byte_escapes = byte_escapes_;
    Parser(text_, name_, limits, true, &passed_).members_at(at, take);
}

JsonValue parse_json(std::string_view text, const std::string& name, const JsonLimits& limits) {
    return Parser(text, name, limits).document();
}

}  // namespace qs
