#include "quantscope/format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace qs {

std::string format_g(double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
}

std::string format_exact(double value) {
    char buf[64];
    for (int digits = 6; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, value);
        if (!std::isfinite(value) || std::strtod(buf, nullptr) == value) break;
    }
    return buf;
}

std::string format_json_number(double value) {
    if (!std::isfinite(value)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    return buf;
}

}  // namespace qs
