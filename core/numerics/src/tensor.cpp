#include "quantscope/tensor.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "quantscope/error.hpp"

namespace qs {

std::string shape_to_string(const Shape& shape) {
    std::string text;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) text += 'x';
        text += std::to_string(shape[i]);
    }
    return text;
}

std::string shape_to_json(const Shape& shape) {
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i) text += ", ";
        text += std::to_string(shape[i]);
    }
    return text + "]";
}

std::int64_t checked_numel(const Shape& shape) { return checked_numel(shape, kMaxElements); }

std::int64_t checked_numel(const Shape& shape, std::int64_t limit) {
    if (shape.empty() || shape.size() > 3)
        throw Error("tensor rank " + std::to_string(shape.size()) + " is not supported (rank 1 to 3)");
    std::int64_t n = 1;
    for (std::int64_t d : shape) {
        if (d < 1) throw Error("tensor shape " + shape_to_json(shape) + " is empty (a dimension is " +
                               std::to_string(d) + ")");
        if (d > limit || n > limit / d)
            throw Error("tensor shape " + shape_to_json(shape) + " has more than " + std::to_string(limit) +
                        " elements");
        n *= d;
    }
    return n;
}

Shape parse_shape(const std::string& text) { return parse_shape(text, kMaxElements); }

Shape parse_shape(const std::string& text, std::int64_t limit) {
    Shape shape;
    std::size_t pos = 0;
    while (true) {
        std::size_t end = text.find_first_of("xX", pos);
        std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        bool digits = !part.empty() && part.size() <= 12;
        for (char c : part) digits = digits && c >= '0' && c <= '9';
        if (!digits) throw Error("bad shape " + quoted_text(text) + ": expected dimensions like 4x4 or 4x128x256");
        shape.push_back(std::strtoll(part.c_str(), nullptr, 10));
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    try {
        checked_numel(shape, limit);
    } catch (const Error& e) {
        throw Error("bad shape " + quoted_text(text) + ": " + e.what());
    }
    return shape;
}

Shape fold_to_rank3(const Shape& shape, std::string* note) {
    if (note != nullptr) note->clear();
    if (shape.size() <= 3) return shape;
    // Saturating: an absurd product then fails in checked_numel instead of overflowing here.
    std::int64_t leading = 1;
    for (std::size_t i = 0; i + 2 < shape.size(); ++i) {
        if (__builtin_mul_overflow(leading, shape[i], &leading)) leading = std::numeric_limits<std::int64_t>::max();
    }
    Shape folded{leading, shape[shape.size() - 2], shape[shape.size() - 1]};
    if (note != nullptr) *note = shape_to_string(shape) + " viewed as " + shape_to_string(folded);
    return folded;
}

std::string index_to_string(const Shape& shape, std::int64_t flat) {
    Shape index(shape.size());
    for (std::size_t k = shape.size(); k-- > 0;) {
        index[k] = flat % shape[k];
        flat /= shape[k];
    }
    return shape_to_json(index);
}

void check_tensor(const Tensor& tensor) {
    const std::int64_t n = checked_numel(tensor.shape);
    if (n != tensor.numel())
        throw Error("tensor has " + std::to_string(tensor.numel()) + " values but shape " +
                    shape_to_json(tensor.shape) + " needs " + std::to_string(n));
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = tensor.values[static_cast<std::size_t>(i)];
        if (!std::isfinite(v)) throw Error(nonfinite_message(v, tensor.shape, i));
    }
}

std::string nonfinite_message(float value, const Shape& shape, std::int64_t flat) {
    return std::string(std::isnan(value) ? "NaN" : (value > 0 ? "+Inf" : "-Inf")) + " at index " +
           index_to_string(shape, flat) + ": values must be finite";
}

}  // namespace qs
