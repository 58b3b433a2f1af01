// libFuzzer target: any byte string given to the JSON reader ends in a value or one qs::Error, and JsonScan says
// the same of it (the same error, or the same root members).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"

namespace {
// Touches every node, as a consumer would (and exercises the integer accessors).
std::size_t walk(const qs::JsonValue& value) {
    std::size_t count = 1;
    std::int64_t i;
    std::uint64_t u;
    value.to_int64(i);
    value.to_uint64(u);
    for (const auto& item : value.items) count += walk(item);
    for (const auto& member : value.members) count += walk(member.second) + member.first.size() % 2;
    return count;
}

bool same(const qs::JsonValue& a, const qs::JsonValue& b) {
    if (a.type != b.type || a.boolean != b.boolean || a.text != b.text || a.items.size() != b.items.size() ||
        a.members.size() != b.members.size())
        return false;
    for (std::size_t i = 0; i < a.items.size(); ++i)
        if (!same(a.items[i], b.items[i])) return false;
    for (std::size_t i = 0; i < a.members.size(); ++i)
        if (a.members[i].first != b.members[i].first || !same(a.members[i].second, b.members[i].second)) return false;
    return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    qs::JsonLimits limits;
    limits.max_values = 10000;
    std::string tree_error, scan_error;
    qs::JsonValue value;
    try {
        value = qs::parse_json(text, "fuzz.json", limits);
        walk(value);
    } catch (const qs::Error& e) {
        tree_error = e.what();
    }
    try {
        const qs::JsonScan scan(text, "fuzz.json", limits);
        if (tree_error.empty()) {
            if (scan.type(scan.root()) != value.type) std::abort();
            if (value.is_object()) {
                std::size_t i = 0;
                scan.members(scan.root(), [&](const std::string& key, std::size_t at) {
                    if (i >= value.members.size() || key != value.members[i].first ||
                        scan.type(at) != value.members[i].second.type || !same(scan.value(at), value.members[i].second))
                        std::abort();
                    ++i;
                });
                if (i != value.members.size()) std::abort();
            } else if (!same(scan.value(scan.root()), value)) {
                std::abort();
            }
        }
    } catch (const qs::Error& e) {
        scan_error = e.what();
    }
    if (scan_error != tree_error) std::abort();  // the same error, or none
    return 0;
}
