#include "gui/app/importance_file.hpp"

#include <exception>
#include <filesystem>
#include <utility>

#include "gui/app/app_state.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {

Importance ReadImportanceFile(const std::string& path, const Shape& shape) {
    try {
        if (lower_extension(path) != ".npy") throw Error("must be a .npy file");
        Tensor weights = read_npy(path);
        if (weights.rank() != 1) throw Error("must be one row of weights (rank 1), not " + shape_to_string(weights.shape));
        check_importance(weights.values, shape.empty() ? 0 : shape.back());
        return std::make_shared<const std::vector<float>>(std::move(weights.values));
    } catch (const std::exception& e) {
        throw Error("importance " + quoted_text(path) + ": " + error_text(e));
    }
}

bool OpenImportance(AppState& app, const std::string& path, const bool* weighted) {
    Document& doc = app.doc;
    if (!doc.data) {
        doc.error = "importance " + quoted_text(path) + ": open a tensor first";
        return false;
    }
    Importance weights;
    try {
        weights = ReadImportanceFile(path, doc.data->shape());
    } catch (const std::exception& e) {
        doc.error = error_text(e);
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
