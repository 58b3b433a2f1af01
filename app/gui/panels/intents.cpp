#include "gui/panels/intents.hpp"

#include <exception>
#include "quantscope/error.hpp"

namespace qs::gui {

bool CheckedConfig(const Document& doc, const QuantConfig& requested, QuantConfig& next, std::string* message) {
    if (!doc.data) return false;
    // A control that changes anything but the naive recipe's norm leaves the recipe (a scale slider, the
    // type, unticking the naive cast): its formula applies only as the recipe set it.
    next = requested;
    if (next.naive_norm == doc.config.naive_norm && next != doc.config) next.naive_norm = 0;
    try {
        check_config(next, doc.data->shape());
    } catch (const std::exception& e) {
        if (message) *message = error_text(e);
        return false;
    }
    if (message) message->clear();
    return true;
}

bool Intents::apply_config(const Document& doc, const QuantConfig& requested, bool continuous, std::string* message) {
    QuantConfig next;
    if (!CheckedConfig(doc, requested, next, message)) return false;
    push(ApplyConfigIntent{next, continuous});
    return true;
}

}  // namespace qs::gui
