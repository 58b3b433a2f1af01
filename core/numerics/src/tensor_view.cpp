#include "quantscope/tensor_view.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "quantscope/error.hpp"

namespace qs {

std::int64_t TensorView::numel() const {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return shape.empty() ? 0 : n;
}

void TensorView::guarded(const std::function<void()>& work) const {
    if (guard != nullptr)
        guard->run(work);
    else
        work();
}

TensorView view_of(const Tensor& tensor) {
    TensorView view;
    view.shape = tensor.shape;
    view.type = ElementType::F32;
    view.data = reinterpret_cast<const std::uint8_t*>(tensor.values.data());
    return view;
}

const float* floats_at(const TensorView& view, std::int64_t first, std::int64_t count, float* scratch) {
    const std::uint8_t* src = view.data + static_cast<std::size_t>(first) * element_size(view.type);
    if (view.type == ElementType::F32 && host_is_little_endian() &&
        reinterpret_cast<std::uintptr_t>(src) % alignof(float) == 0)
        return reinterpret_cast<const float*>(src);
    decode_elements(view.type, src, static_cast<std::size_t>(count), scratch);
    return scratch;
}

void throw_nonfinite(const TensorView& view, std::int64_t index) {
    const std::string prefix = view.name.empty() ? std::string() : printable(view.name) + ": ";
    const std::uint8_t* src = view.data + static_cast<std::size_t>(index) * element_size(view.type);
    float value = 0;
    std::string message;
    view.guarded([&] {
        decode_elements(view.type, src, 1, &value);
        if (view.type == ElementType::F64 && std::isfinite(load_le_double(src))) {
            // The double was finite: it overflowed float32, which is not what "Inf" would suggest.
            char text[40];
            std::snprintf(text, sizeof text, "%.17g", load_le_double(src));
            message = prefix + "value " + text + " at index " + index_to_string(view.shape, index) +
                      " is outside the float32 range";
        }
    });
    if (message.empty()) message = prefix + nonfinite_message(value, view.shape, index);
    throw Error(message);
}

std::int64_t first_nonfinite(const TensorView& view) {
    constexpr std::int64_t kChunk = 4096;
    const std::int64_t n = view.numel();
    std::int64_t found = -1;
    view.guarded([&] {
        float scratch[kChunk];
        for (std::int64_t begin = 0; begin < n && found < 0; begin += kChunk) {
            const std::int64_t len = std::min(kChunk, n - begin);
            const float* values = floats_at(view, begin, len, scratch);
            for (std::int64_t k = 0; k < len; ++k)
                if (!std::isfinite(values[k])) {
                    found = begin + k;
                    break;
                }
        }
    });
    return found;
}

Tensor materialize(const TensorView& view) {
    try {
        checked_numel(view.shape);  // a view may be larger than any float32 copy the program makes
    } catch (const Error& error) {
        throw Error((view.name.empty() ? std::string() : printable(view.name) + ": ") + error.what());
    }
    Tensor tensor;
    tensor.shape = view.shape;
    tensor.values.resize(static_cast<std::size_t>(view.numel()));
    view.guarded([&] { decode_elements(view.type, view.data, tensor.values.size(), tensor.values.data()); });
    for (std::size_t i = 0; i < tensor.values.size(); ++i)
        if (!std::isfinite(tensor.values[i])) throw_nonfinite(view, static_cast<std::int64_t>(i));
    return tensor;
}

}  // namespace qs
