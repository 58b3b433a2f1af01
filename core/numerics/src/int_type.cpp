#include "quantscope/int_type.hpp"

#include "quantscope/error.hpp"

namespace qs {

IntType IntType::parse(const std::string& text) {
    IntType type;
    std::string digits;
    if (text.rfind("uint", 0) == 0) {
        type.is_signed = false;
        digits = text.substr(4);
    } else if (text.rfind("int", 0) == 0) {
        digits = text.substr(3);
    }
    bool ok = !digits.empty() && digits.size() <= 2 && digits[0] != '0';
    for (char c : digits) ok = ok && c >= '0' && c <= '9';
    if (ok) type.bits = std::stoi(digits);
    if (!ok || type.bits < 2 || type.bits > 16)
        throw Error("unknown dtype " + quoted_text(text) + ": expected int2..int16 or uint2..uint16");
    return type;
}

}  // namespace qs
