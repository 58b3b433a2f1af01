#include "quantscope/gguf_imatrix.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

const GgufTensor& f32_tensor(const GgufFile& file, const std::string& name) {
    const GgufTensor* t = file.find(name);
    const std::string where = printable(file.name()) + ": tensor " + quoted_text(name);
    if (t == nullptr) throw Error(where + ": not in the file (not an imatrix of this tensor?)");
    if (t->type_id != static_cast<std::uint32_t>(GgmlType::F32))
        throw Error(where + ": type " + gguf_type_label(*t) + ", an imatrix stores F32");
    return *t;
}

// A stored float32 in a message: the fewest digits that read back as it (-1e-40, not -9.99995e-41).
std::string shown(float value) {
    if (std::isnan(value)) return "NaN";
    char text[32];
    for (int digits = 1; digits <= 9; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, static_cast<double>(value));
        if (std::strtof(text, nullptr) == value) break;
    }
    return text;
}

float value_at(const GgufFile& file, const GgufTensor& t, std::int64_t i) {
    return float_from_bits(load_le32(file.bytes_of(t) + 4 * i));
}

}  // namespace

GgufImportance read_gguf_imatrix(const std::string& path, const std::string& tensor_name, std::int64_t columns) {
    const GgufFile file(path);
    const GgufTensor& sums = f32_tensor(file, tensor_name + ".in_sum2");
    const GgufTensor& counts = f32_tensor(file, tensor_name + ".counts");
    const std::string where = printable(path) + ": tensor " + quoted_text(sums.name);
    const std::int64_t length = sums.row();
    if (length != columns)
        throw Error(where + ": " + std::to_string(length) + " columns, the weight has " + std::to_string(columns));
    if (sums.elements == 0) throw Error(where + ": holds no values (shape " + shape_to_string(sums.shape()) + ")");
    GgufImportance out;
    out.columns = columns;
    out.matrices = columns > 0 ? sums.elements / columns : 0;
    if (counts.elements != out.matrices)
        throw Error(printable(path) + ": tensor " + quoted_text(counts.name) + ": " + std::to_string(counts.elements) +
                    " counts for " + std::to_string(out.matrices) + " matrices");
    out.weights.resize(static_cast<std::size_t>(sums.elements));
    file.file().read_guarded([&] {
        for (std::int64_t m = 0; m < out.matrices; ++m) {
            const float count = value_at(file, counts, m);
            // std::to_string's six decimals printed a count of -1e-40 as -0.000000.
            if (!std::isfinite(count) || count < 0)
                throw Error(printable(path) + ": tensor " + quoted_text(counts.name) + ": count " + std::to_string(m) +
                            " is " + shown(count) + " (must be finite and >= 0)");
            for (std::int64_t c = 0; c < columns; ++c) {
                const std::int64_t at = m * columns + c;
                const float sum = value_at(file, sums, at);
                if (!std::isfinite(sum) || sum < 0)
                    throw Error(where + ": value " + std::to_string(at) + " is " + shown(sum) +
                                " (importance must be finite and >= 0)");
                // A matrix that saw no token weighs every column alike, as llama-quantize does.
                const float w = count > 0 ? sum / count : 1.0f;
                if (!std::isfinite(w))
                    throw Error(where + ": value " + std::to_string(at) + " over count " + std::to_string(m) + " (" +
                                shown(sum) + " / " + shown(count) + ") is beyond float32's range");
                out.weights[static_cast<std::size_t>(m * columns + c)] = w;
            }
        }
        return 0;
    });
    return out;
}

}  // namespace qs
