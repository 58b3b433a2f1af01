#include "quantscope/format.hpp"

#include <cmath>
#include <cstdio>

namespace qs {

std::string format_g(double value) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", value);
    return buf;
}

std::string format_json_number(double value) {
    if (!std::isfinite(value)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    return buf;
}

}  // namespace qs
