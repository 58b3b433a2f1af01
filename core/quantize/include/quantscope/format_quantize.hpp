// Quantizing a tensor into a float, codebook or block format (FORMATS.md): the per-block scales, the fused
// pass (codes, dequantized values, error, the same Metrics as int<N>), one element's trace, and the cost
// in bits. The entry point for every caller that is given a format by name (quantize, formats, layer, GUI).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/format_config.hpp"
#include "quantscope/number_format.hpp"
#include "quantscope/format_params.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The scales of every block (one parallel pass over the values; a second for block formats). Checks the
// config and that every value is finite (qs::Error naming the first bad index); `range` (if given) receives
// the smallest and largest value. `keep_blocks`: a ggml codec row keeps the block bytes its search made
// (FormatParams::ggml_blocks) for a pass over the same values; false for a caller that keeps only the scales.
FormatParams compute_format_params(const TensorView& view, const FormatConfig& config, TensorRange* range = nullptr,
                                   bool keep_blocks = true);

// The params of a config that needs no statistics of its blocks, from the tensor's largest magnitude alone:
// an element format per tensor (s as compute_format_params gives it), or a block format, whose params then
// hold no per-block scales (`scale` empty): the pass computes each block's from its values as
// compute_format_params would (NVFP4's g from amax). False, `out` untouched, for any other config. For a
// caller that has the tensor's range already (`quantscope formats`: one check of the values for all rows).
bool format_params_from_amax(const FormatConfig& config, const Shape& shape, float amax, FormatParams& out);

// The fused pass: codes (FORMATS.md "--out-quantized": the element's bit pattern, the NF4 index, the ggml
// integer), r', |r - r'| and the metrics (clipped: saturated elements, or for ggml codes the clamp changed;
// levels_used: distinct codes, levels_total: codes that are numbers). Sums in a fixed order: the same bits
// on any thread count.
Metrics quantize_format_view(const TensorView& view, const FormatParams& params, const FormatConfig& config,
                             const QuantOutputs& out = {});
Metrics quantize_format_view(const TensorView& view, const FormatParams& params, const FormatConfig& config,
                             const OutputSelection& wanted, const ResultSink& sink);
// The same for a slice of a tensor: `view` holds elements [first, first + numel) of the tensor whose
// params these are (computed once over the whole: a per-tensor s or NVFP4's g from a slice alone would
// differ), each element taking its block's scale by its index in the whole. A block format's slice starts on
// a block boundary. The results are those elements' results in the whole tensor's pass, bit for bit.
Metrics quantize_format_slice(const TensorView& view, std::int64_t first, const FormatParams& params,
                              const FormatConfig& config, const QuantOutputs& out = {});

// compute_format_params + quantize_format_view, with the range of the values (what quantize_checked is
// for int<N>). An r' beyond float32 cannot occur (every grid value times its scale stays finite).
struct FormatQuantization {
    FormatParams params;
    Metrics metrics;
    TensorRange range;
};
FormatQuantization quantize_format(const TensorView& view, const FormatConfig& config, const QuantOutputs& out = {});

// What quantize_checked does for a config whose format is not Int: the format's pass, its params also as
// a QuantParams (layout, scales, zero points 0); an r' past float32 (a tensor at float32's limits) is an
// error naming the element.
Quantization quantize_format_checked(const TensorView& view, const QuantConfig& config, const OutputSelection& wanted,
                                     const ResultSink& sink);

// The scales a QuantParams holds for a format (format_quant_params / quantize_checked give them: each s a
// float32 as used, zero points 0) as the FormatParams the pass takes, exactly; on demand when they are.
// NVFP4's g and Q4_1's m are not in a QuantParams and the pass needs neither (MX and NVFP4 read their
// scales, ggml's d and m come from each block's values); the stored bits are not filled.
FormatParams format_params_of(const QuantParams& params, FormatId format);
// format_params_of with the config's importance and the rows' sums of squares of `view` where the format's
// ggml type weighs by it: what a caller quantizing pieces of `view` with quantize_format_slice passes (the
// window's overview), so each piece is weighted as the whole tensor's pass weighs it.
FormatParams format_params_for(const TensorView& view, const QuantParams& params, const QuantConfig& config);

// The int<N> entry points (compute_params, quantize_view, trace_element, trace_value) on a config whose
// format is not Int come here: the format's scales as a QuantParams (zero points 0), the pass with the
// given params (format_params_of: a caller quantizing a slice passes the whole tensor's), one element's
// trace (scaled = the value rounded onto the grid, rounded = grid[code]).
QuantParams format_quant_params(const TensorView& view, const QuantConfig& config, TensorRange* range);
Metrics quantize_format_config(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                               const QuantOutputs* whole, const OutputSelection& wanted, const ResultSink* sink);
ElementTrace format_element_trace(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                                  std::int64_t flat_index);
ElementTrace format_value_trace(float r, const QuantParams& params, const QuantConfig& config, std::int64_t flat_index);
std::vector<std::int32_t> format_block_codes(const float* values, std::int64_t n, const QuantParams& params,
                                             const QuantConfig& config, std::int64_t block);

// One element through the format, every intermediate value (for the window's tooltip and the Bits view).
struct FormatTrace {
    std::int64_t flat_index = 0, block = 0;
    float r = 0;
    float scale = 0;          // as used
    float offset = 0;         // Q4_1's fp16(m)
    float scaled = 0;         // the value rounded onto the grid: r / s (ggml: r / d, Q4_1: (r - min) / d)
    float grid_value = 0;     // grid[code]
    std::int32_t code = 0;
    bool clipped = false;
    float dequantized = 0;
    float error = 0;
    std::uint16_t stored_scale = 0;  // block formats: the stored bits of the block's scale
};
FormatTrace trace_format_element(const TensorView& view, const FormatParams& params, const FormatConfig& config,
                                 std::int64_t flat_index);

// The codes a config writes: [q_min, q_max] for int<N>; [0, 2^bits - 1] for a format (bit patterns,
// indices), [-127, 127] for q8_0.
void code_range(const QuantConfig& config, std::int32_t& lo, std::int32_t& hi);
// The values the codes stand for at scale s (a histogram's grid lines), ascending: s * grid for a format,
// s * (q - z) for int<N> is not listed (use q_min..q_max). Q4_1's offset m is not included.
std::vector<double> scaled_grid(FormatId format, double s);

// ---- cost ---------------------------------------------------------------------------------------------------
// FORMATS.md "bits_per_weight" and "bytes" for n elements in `blocks` blocks: element bits plus stored scales
// (and zero points) per element; bytes rounded up. Element formats: 32 bits per block's s (none in cast
// mode); nvfp4: + 32 for g; int<N>: 32 per s plus 32 per z where one is stored (not symmetric).
struct FormatCost {
    double bits_per_weight = 0;
    std::int64_t bytes = 0;
};
FormatCost format_cost(const FormatConfig& config, std::int64_t n, std::int64_t blocks);
FormatCost int_cost(const QuantConfig& config, std::int64_t n, std::int64_t blocks);
// Either, by config.format (`blocks`: the blocks of the int<N> or element-format layout).
FormatCost quantization_cost(const QuantConfig& config, std::int64_t n, std::int64_t blocks);

// The bit pattern of a code as text, fields separated by spaces: "0 1110 110" for fp8-e4m3's 448,
// "0111" for a 4-bit integer code. For the Bits view and tooltips.
std::string code_bits_text(FormatId format, std::int32_t code);

}  // namespace qs
