// One element through the formula on its own: quantize_value, the traces the window's tooltip and error
// messages show, and the search for the first element whose error is not finite. The fused pass over a whole
// tensor is quantize.cpp; both use element_formula.hpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "element_formula.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/stored_blocks.hpp"

namespace qs {

using detail::dequantized_value;
using detail::round_value;
using detail::scaled_value;
using detail::wrap_value;

namespace {
// Elements decoded at a time by the search for a non-finite error.
constexpr std::int64_t kChunk = 4096;
}  // namespace

std::int32_t quantize_value(float r, float scale, std::int32_t zero_point, const QuantConfig& config, bool* clipped) {
    const float v = round_value(scaled_value(r, scale, static_cast<float>(zero_point), config), config.rounding);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    const bool out = v < q_min || v > q_max;
    if (clipped) *clipped = out;
    if (!out) return static_cast<std::int32_t>(v);
    if (config.overflow == Overflow::Wrap)
        return static_cast<std::int32_t>(wrap_value(v, config.dtype.q_min(), config.dtype.levels()));
    return static_cast<std::int32_t>(v < q_min ? q_min : q_max);
}

ElementTrace trace_value(float r, const QuantParams& params, const QuantConfig& config, std::int64_t flat_index) {
    if (!is_int_format(config.format)) return format_value_trace(r, params, config, flat_index);
    ElementTrace t;
    t.flat_index = flat_index;
    t.block = params.block_of(flat_index);
    t.r = r;
    double scale = 1;
    params.pair(t.block, scale, t.zero_point);
    t.scale = static_cast<float>(scale);
    t.scaled = scaled_value(t.r, t.scale, static_cast<float>(t.zero_point), config);
    t.rounded = round_value(t.scaled, config.rounding);
    t.code = quantize_value(t.r, t.scale, t.zero_point, config, &t.clipped);
    t.dequantized = dequantized_value(static_cast<float>(t.code), t.scale, static_cast<float>(t.zero_point), config);
    t.error = std::abs(t.r - t.dequantized);
    return t;
}

std::vector<std::int32_t> block_codes(const float* values, std::int64_t n, const QuantParams& params,
                                      const QuantConfig& config, std::int64_t block) {
    if (params.stored) return stored_block_codes(*params.stored, block);
    if (!is_int_format(config.format)) return format_block_codes(values, n, params, config, block);
    const auto s = static_cast<float>(params.scale_of(block));
    const std::int32_t z = params.zero_point_of(block);
    std::vector<std::int32_t> codes(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) codes[static_cast<std::size_t>(i)] = quantize_value(values[i], s, z, config);
    return codes;
}

ElementTrace trace_element(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                           std::int64_t flat_index) {
    if (flat_index < 0 || flat_index >= view.numel()) throw Error("element index out of range");
    if (params.stored) return trace_stored(view, *params.stored, flat_index);
    if (!is_int_format(config.format)) return format_element_trace(view, params, config, flat_index);
    float r = 0;
    view.guarded([&] { r = *floats_at(view, flat_index, 1, &r); });
    return trace_value(r, params, config, flat_index);
}

ElementTrace trace_element(const Tensor& tensor, const QuantParams& params, const QuantConfig& config,
                           std::int64_t flat_index) {
    return trace_element(view_of(tensor), params, config, flat_index);
}

std::int64_t first_nonfinite_error(const TensorView& view, const QuantParams& params, const QuantConfig& config) {
    const std::int64_t n = view.numel();
    std::int64_t found = -1;
    view.guarded([&] {
        std::vector<float> scratch(kChunk);
        for (std::int64_t begin = 0; begin < n && found < 0; begin += kChunk) {
            const std::int64_t len = std::min(kChunk, n - begin);
            const float* r = floats_at(view, begin, len, scratch.data());
            for (std::int64_t k = 0; k < len && found < 0; ++k)
                if (!std::isfinite(trace_value(r[k], params, config, begin + k).error)) found = begin + k;
        }
    });
    return found;
}

}  // namespace qs
