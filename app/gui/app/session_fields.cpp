#include "gui/app/session_fields.hpp"

#include <exception>

#include "cli/options.hpp"

namespace qs::gui {

std::string BoolText(bool b) { return b ? "1" : "0"; }

bool ParseBool(const std::string& text, bool& out) {
    if (text == "1" || text == "true") out = true;
    else if (text == "0" || text == "false") out = false;
    else return false;
    return true;
}

bool ParseInt(const std::string& text, std::int64_t& out) {
    try {
        out = cli::parse_int("", text);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace qs::gui
