// One block of a per-channel or per-group quantization on its own: its elements, and how many of them the
// block's own (s, z) clips. What a per-block view (the window's histograms) shows instead of the whole tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The elements of block `block` (0 <= block < params.block_count) of an n-element array laid out as
// `params` says, in flat order.
std::vector<float> block_elements(const float* values, std::int64_t n, const QuantParams& params, std::int64_t block);
// The same read from a view in its stored type (decoded to float32, under the view's guard).
std::vector<float> block_elements(const TensorView& view, const QuantParams& params, std::int64_t block);
std::vector<std::int32_t> block_elements(const std::int32_t* codes, std::int64_t n, const QuantParams& params,
                                         std::int64_t block);

// How many of these values round outside [q_min, q_max] at (scale, zero_point): the metric `clipped`
// restricted to them (with a wrap, how many wrap).
std::int64_t count_clipped(const std::vector<float>& values, double scale, std::int32_t zero_point,
                           const QuantConfig& config);

}  // namespace qs
