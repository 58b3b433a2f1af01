// int<N> / uint<N> (SPEC): one row parameterised by QuantConfig::dtype. Its codes are q_min..q_max of the
// dtype, a float32 s per block and a float32 z unless symmetric; its pass and calibrators are quantize.cpp's
// and params.cpp's (the row answers the questions the table asks of every format).
#include "format_rows.hpp"
#include "quantscope/config.hpp"
#include "quantscope/error.hpp"

namespace qs::detail {
namespace {

CodeSpace int_codes(const FormatTraits&, const QuantConfig& config) {
    return {config.dtype.bits, config.dtype.q_min(), config.dtype.q_max(), config.dtype.is_signed};
}

void int_check(const FormatTraits&, const FormatConfig&, const Shape&) {
    throw Error("int<N> is not quantized through a number format");
}

double int_scale_bits(const FormatTraits&, const QuantConfig& config, std::int64_t, std::int64_t blocks) {
    // A float32 s per block, and a float32 z where one is stored (symmetric mode stores none).
    return (config.mode == Mode::Symmetric ? 32.0 : 64.0) * static_cast<double>(blocks);
}

std::vector<float> no_grid(const FormatTraits&) { return {}; }

}  // namespace

FormatTraits int_format_row() {
    FormatTraits row;
    row.name = "int";
    row.kind = FormatKind::Int;
    row.offset_label = "zero point z";
    row.grid = no_grid;
    row.code_space = int_codes;
    row.check = int_check;
    row.stored_scale_bits = int_scale_bits;
    return row;
}

}  // namespace qs::detail
