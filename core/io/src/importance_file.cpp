#include "quantscope/importance_file.hpp"

#include <memory>
#include <utility>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf_imatrix.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs {

Importance read_importance_npy(const std::string& path, std::int64_t columns) {
    try {
        if (lower_extension(path) != ".npy") throw Error("must be a .npy file");
        const MappedFile file(path);
        // The header's shape first: a file of another length (up to GBs of values) is refused before any is read.
        const NpyHeader header = file.read_guarded([&] { return parse_npy_header(file.data(), file.size(), path); });
        if (header.shape.size() != 1)
            throw Error("must be one row of weights (rank 1), not " + (header.shape.empty() ? "a scalar" : shape_to_string(header.shape)));
        check_importance_count(header.shape[0], columns);
        Tensor weights = read_npy(file);
        check_importance(weights.values, columns);
        return std::make_shared<const std::vector<float>>(std::move(weights.values));
    } catch (const Error& e) {
        throw Error(quoted_text(path) + ": " + e.what());
    }
}

Importance read_imatrix_importance(const std::string& path, const std::string& tensor, std::int64_t columns) {
    GgufImportance imatrix = read_gguf_imatrix(path, tensor, columns);
    const std::string where = quoted_text(path) + ": " + quoted_text(tensor);
    if (imatrix.matrices != 1)
        throw Error(where + " holds " + std::to_string(imatrix.matrices) +
                    " matrices (merged experts); QuantScope quantizes with one importance per column");
    try {
        check_importance(imatrix.weights, columns);
    } catch (const Error& e) {
        throw Error(where + ": " + e.what());
    }
    return std::make_shared<const std::vector<float>>(std::move(imatrix.weights));
}

}  // namespace qs
