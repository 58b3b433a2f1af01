// libFuzzer target: any byte string given as a session file ends in a Session or one qs::Error, and an
// accepted session writes back to JSON that parses to the same text.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "quantscope/error.hpp"
#include "quantscope/session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const qs::Session session = qs::parse_session(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
        const std::string again = qs::session_to_json(session);
        if (qs::session_to_json(qs::parse_session(again, "again.json")) != again) std::abort();
    } catch (const qs::Error&) {
    }
    return 0;
}
