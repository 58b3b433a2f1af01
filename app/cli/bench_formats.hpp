// The number-format rows of `quantscope bench` (issue 12 "Speed"): one format per family through the whole
// pipeline (scales, quantize, dequantize, error, metrics) on the bench tensor, against int8 per tensor
// measured the same way; and `quantscope formats` (every format) once.
#pragma once

#include "quantscope/json_writer.hpp"
#include "quantscope/tensor.hpp"

namespace qs::cli {

void add_format_rows(JsonObject& json, const Tensor& tensor, int repeats);

}  // namespace qs::cli
