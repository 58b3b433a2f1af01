// The float formats (fp16, bf16, fp8, fp6, fp4; FORMATS.md "Element formats"): a float element scaled per
// block (s = max|r| / largest) or cast (s = 1). Also what every element format shares: its scale's cost and
// the checks of --mode and --scale.
#include <cmath>

#include "format_rows.hpp"
#include "format_simd.hpp"
#include "quantscope/config.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_config.hpp"

namespace qs {
namespace detail {

CodeSpace unsigned_code_space(const FormatTraits& row, const QuantConfig&) {
    return {row.element_bits, 0, (std::int32_t{1} << row.element_bits) - 1, false};
}

void check_element_format(const FormatTraits& row, const FormatConfig& config, const Shape& shape) {
    const std::string name = row.name;
    if (config.scaling == ElementScaling::Cast && !row.castable)
        throw Error("--mode cast applies to float formats, not " + name);
    if (config.scaling != ElementScaling::Symmetric && config.granularity != Granularity::Tensor)
        throw Error(name + ": --mode " + to_string(config.scaling) + " is per tensor (no --granularity)");
    if (config.scaling == ElementScaling::Manual) {
        const auto s = static_cast<float>(config.manual_scale);
        if (!(std::isfinite(config.manual_scale) && std::isfinite(s) && s > 0))
            throw Error(name + ": --scale must be a positive finite float32, got " + format_exact(config.manual_scale));
    }
    check_config(format_layout_config(config), shape);
}

double element_scale_bits(const FormatTraits&, const QuantConfig& config, std::int64_t, std::int64_t blocks) {
    return config.mode == Mode::Cast ? 0.0 : 32.0 * static_cast<double>(blocks);  // one float32 s per block
}

std::int64_t float_chunk(const FormatTraits& row, const float* r, const float* scale, std::int64_t n,
                         std::int32_t* codes, float* deq, const ChunkPlace&) {
    const FloatConsts consts(row.element);
    return float_elements(r, scale, n, consts, codes, deq);
}

std::vector<float> element_grid(const FormatTraits& row) { return float_grid(row.element); }

namespace {

ElementResult float_element(const FormatTraits& row, float r, const BlockScale& b) {
    return element_float(r, b.scale, row.element);
}

}  // namespace
}  // namespace detail

FormatTraits float_format_row(const char* name, const FloatSpec& spec, const char* description) {
    FormatTraits row;
    row.name = name;
    row.kind = FormatKind::Float;
    row.element = spec;
    row.element_bits = spec.bits();
    row.largest = spec.largest();
    row.castable = true;
    row.code_encoding = name;
    row.description = description;
    row.grid = detail::element_grid;
    row.code_space = detail::unsigned_code_space;
    row.check = detail::check_element_format;
    row.stored_scale_bits = detail::element_scale_bits;
    row.kernels.chunk = detail::float_chunk;
    row.kernels.element = detail::float_element;
    return row;
}

}  // namespace qs
