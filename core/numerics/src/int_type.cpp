#include "quantscope/int_type.hpp"

#include <cctype>

#include "quantscope/error.hpp"

namespace qs {

IntType IntType::parse(const std::string& text) {
    // Type names in any case ("INT8", as the format names are): every option and file that names a type
    // reads it here.
    std::string lower = text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    IntType type;
    std::string digits;
    if (lower.rfind("uint", 0) == 0) {
        type.is_signed = false;
        digits = lower.substr(4);
    } else if (lower.rfind("int", 0) == 0) {
        digits = lower.substr(3);
    }
    bool ok = !digits.empty() && digits.size() <= 2 && digits[0] != '0';
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    if (ok) type.bits = std::stoi(digits);
    if (!ok || type.bits < 2 || type.bits > 16)
        throw Error("unknown dtype " + quoted_text(text) + ": expected int2..int16 or uint2..uint16");
    return type;
}

}  // namespace qs
