// The one error type of the core: every bad input or option throws it with a one-line, user-facing
// message that says what is wrong and where. The command line prints it after "quantscope: error: ",
// the GUI shows it in the window.
#pragma once

#include <stdexcept>
#include <string>

namespace qs {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace qs
