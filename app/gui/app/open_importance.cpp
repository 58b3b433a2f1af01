#include "gui/app/open_importance.hpp"

#include <exception>
#include <filesystem>
#include <utility>

#include "gui/app/app_state.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/importance_file.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {

bool OpenImportance(AppState& app, const std::string& path, const bool* weighted) {
    Document& doc = app.doc;
    if (!doc.data) {
        doc.error = "importance " + quoted_text(path) + ": open a tensor first";
        return false;
    }
    Importance weights;
    try {
        weights = read_importance_npy(path, doc.data->shape().empty() ? 0 : doc.data->shape().back());
    } catch (const std::exception& e) {
        doc.error = "importance " + error_text(e);
        return false;
    }
    const GgmlTypeInfo* type = format_traits(doc.config.format).ggml;
    const bool weigh = weighted ? *weighted : type && type->takes_importance;
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(path, ec);
    std::string message;
    if (!doc.apply_importance(std::move(weights), (ec ? std::filesystem::path(path) : abs).lexically_normal().string(),
                              weigh, &message)) {
        doc.error = "importance " + quoted_text(path) + ": " + message;
        return false;
    }
    return true;
}

}  // namespace qs::gui
