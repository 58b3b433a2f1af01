// The one line `quantize` refuses with when r' = s (q - z) overflows float32 (its own header: the window
// shows the same line beside its infinite numbers).
#pragma once

#include <string>

#include "quantscope/config.hpp"
#include "quantscope/error.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// What quantize_checked throws when r' overflows float32: the values are valid, this one quantization of them
// is not, so a table of many (formats, sweep) gives that row this error and goes on.
class Float32Overflow : public Error {
public:
    using Error::Error;
};

// quantize_checked's line for a pass whose max_abs_error came out infinite ("float32 overflow at index
// [i, j]: r = ... gives r' = ..."), naming the first such element (a sequential pass to find it).
std::string float32_overflow_message(const TensorView& view, const QuantParams& params, const QuantConfig& config);

}  // namespace qs
