// libFuzzer target: any byte string given to the JSON reader ends in a value or one qs::Error.
#include <cstdint>
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
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        qs::JsonLimits limits;
        limits.max_values = 10000;
        const qs::JsonValue value =
            qs::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", limits);
        walk(value);
    } catch (const qs::Error&) {
    }
    return 0;
}
