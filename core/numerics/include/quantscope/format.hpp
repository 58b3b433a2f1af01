// Number formatting for messages and JSON.
#pragma once

#include <string>

namespace qs {

// Shortest-ish human form for messages ("%g"): 1e-50, 3.5, nan.
std::string format_g(double value);
// Round-trip form for JSON ("%.17g"); non-finite values become "null".
std::string format_json_number(double value);

}  // namespace qs
