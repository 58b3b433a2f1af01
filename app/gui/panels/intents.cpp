#include "gui/panels/intents.hpp"

#include <exception>

namespace qs::gui {

bool Intents::apply_config(const Document& doc, const QuantConfig& next, bool continuous, std::string* message) {
    if (!doc.tensor) return false;
    try {
        check_config(next, doc.tensor->shape);
    } catch (const std::exception& e) {
        if (message) *message = e.what();
        return false;
    }
    if (message) message->clear();
    push(ApplyConfigIntent{next, continuous});
    return true;
}

}  // namespace qs::gui
