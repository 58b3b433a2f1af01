// Number formatting for messages and JSON.
#pragma once

#include <string>

namespace qs {

// Shortest-ish human form for messages ("%g"): 1e-50, 3.5, nan.
std::string format_g(double value);
// An option's value in a message: "%g" when that reads back as the same double, else the fewest digits (up to
// 17) that do, so the value is recognisably the one given ("got 1000001", not "got 1e+06", which reads as an
// allowed 1e6; "1.0000001", not "1").
std::string format_exact(double value);
// Round-trip form for JSON ("%.17g"); non-finite values become "null".
std::string format_json_number(double value);

}  // namespace qs
