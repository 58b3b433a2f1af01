// The one error type of the core: every bad input or option throws it with a one-line, user-facing
// message that says what is wrong and where. The command line prints it after "quantscope: error: ",
// the GUI shows it in the window.
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "quantscope/text.hpp"

namespace qs {

class Error : public std::runtime_error {
public:
    // The message is kept as printable(message, kMaxMessageChars): whatever text it quotes, it is one
    // printable line of bounded length, and an embedded NUL shows as \x00 instead of ending it. Quote
    // untrusted parts with quoted_text()/printable() too, so that their cap keeps the rest of the message.
    explicit Error(const std::string& message) : std::runtime_error(printable(message, kMaxMessageChars)) {}
};

// The line to show for any exception: "out of memory" for std::bad_alloc (whose what() names the type), else
// what(). The command line and the window say the same.
inline std::string error_text(const std::exception& e) {
    return dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory" : e.what();
}

}  // namespace qs
