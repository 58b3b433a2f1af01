// A linear layer y = x W^T + b under quantization (SPEC "Layer"): weights only ("W8A16"), or weights and
// activations ("W8A8"), with LLM.int8()'s outlier column split and SmoothQuant's per-channel migration.
// The weights go through the core's quantize API with any QuantConfig it accepts; where the scales factor
// out of the dot product the layer is computed as int8 hardware does, integer products summed exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

// Activation scales: one per tensor, or one per token (row of x).
enum class ActGranularity { Tensor, Token };
const char* to_string(ActGranularity granularity);         // "tensor", "token"
ActGranularity parse_act_granularity(const std::string& text);  // tensor|token

// The largest layer accepted: tokens x in x out multiply-adds (about a minute on two cores for the integer
// path), so that no input makes the program run for hours. Each tensor is bounded by kMaxElements too.
constexpr std::int64_t kMaxLayerMacs = std::int64_t{1} << 38;

struct LayerConfig {
    QuantConfig weights;                   // W's quantization: int<N>, or any FORMATS.md format (config.format)
    bool quantize_activations = false;     // false: W-only, y = x dequant(W)^T + b in float32
    IntType act_dtype{};                   // int8
    Mode act_mode = Mode::Symmetric;       // Symmetric or Asymmetric (min/max ranges)
    ActGranularity act_granularity = ActGranularity::Tensor;
    std::optional<double> outlier_threshold;  // LLM.int8(): columns with any |x| >= T stay float32
    std::optional<double> smooth_alpha;       // SmoothQuant: 0 <= alpha <= 1
    bool compute_reference = true;            // false: y only (the bench's timing of the quantized layer)
    bool keep_used_factors = false;           // fill LayerResult::x_used and w_used (the window's hover)
};

// What a user sets for the activations, in the window's layer lab or a lesson's step: the one place where
// those settings become a LayerConfig, so that the window and `lesson check` run the same layer.
struct ActivationSettings {
    int bits = 0;                                          // 0: x stays float ("W8A16")
    ActGranularity granularity = ActGranularity::Tensor;
    Mode mode = Mode::Symmetric;
    std::optional<double> outlier_threshold, smooth_alpha;  // set: LLM.int8()'s split, SmoothQuant
};
// W quantized as `weights`, x as `activations` (signed int<bits>). With float activations (bits 0) the
// threshold, alpha, mode and granularity are dropped: they only shape x's quantization, and a user who
// switches the activations off expects the layer to run W-only, not to be refused (the command line, where
// each option is typed, refuses them instead: SPEC "Layer").
LayerConfig make_layer_config(const QuantConfig& weights, const ActivationSettings& activations);

// How the quantized product was computed (for tests, the bench and the window's caption).
enum class LayerPath {
    Float,       // W-only: float32 GEMM on dequantized W
    Integer,     // scales factor (W per tensor / output channel / group along in): exact integer sums
    Dequantized  // scales do not factor (W per input channel, FORMATS.md formats): float64 on r' values
};
const char* to_string(LayerPath path);  // "float", "integer", "dequantized"

// One operand's quantization as quantize() reports it, with the shape that was quantized.
struct OperandQuantization {
    Shape shape;
    QuantConfig config;
    QuantParams params;                        // int<N>
    std::optional<FormatConfig> format;        // set for a FORMATS.md format: its config and parameters
    FormatParams format_params;
    Metrics metrics;
};

struct LayerResult {
    Shape output_shape;                       // [tokens, out], or [out] for a 1-D x
    std::int64_t tokens = 0, in = 0, out = 0;
    std::vector<float> y;                     // the quantized layer's output, float32
    std::vector<float> reference;             // float64 x W^T + b on the float32 inputs, stored float32
    Metrics output;                           // y against reference: mse, rmse, mae, max_abs_error, sqnr_db
    OperandQuantization weights;              // W (smoothed, kept columns) as quantized
    std::optional<OperandQuantization> inputs;  // x (smoothed, kept columns); empty when not quantized
    std::vector<std::int64_t> outlier_columns;  // input channels kept in float32, ascending
    std::vector<double> smooth_factors;       // m_k per input channel (empty without smoothing)
    LayerPath path = LayerPath::Float;
    // With keep_used_factors: each factor as it entered the product, in x's and W's own units: [tokens, in] and [out, in]. A kept
    // column is its dequantized value (divided / multiplied back by m_k when smoothed, so that
    // x_used[t, k] * w_used[o, k] approximates x[t, k] * W[o, k]); an outlier column is the float32 value.
    std::vector<float> x_used, w_used;
};

// Throws qs::Error when tokens x in x out is more than kMaxLayerMacs, or x or y more than kMaxElements:
// what the command line checks before it generates inputs.
void check_layer_size(std::int64_t tokens, std::int64_t in, std::int64_t out);

// Throws qs::Error with one line for a bad layer: W not 2-D, x not 1-D or 2-D, x's last dimension not W's
// in, a bias that is not 1-D of length out, a value that is not finite, more than kMaxLayerMacs or an output
// above kMaxElements, a threshold or alpha without activations, a threshold that is NaN or <= 0, an alpha
// outside [0, 1], or a weight/activation configuration the core refuses.
void check_layer(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config);
// check_layer without reading the values: shapes, sizes and options, for a caller that checked each tensor's
// values once (check_tensor) and checks many configurations of them (a lesson's steps).
void check_layer_setup(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config);

// The whole layer. `reference` (float32 values of length tokens x out), when given, is used instead of
// computing it again (the window's alpha sweep). Uses every core.
LayerResult run_layer(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                      const std::vector<float>* reference = nullptr);

// float64 x W^T + b on the float32 values, stored as float32 ([tokens, out] flat; 1-D x is one token).
std::vector<float> layer_reference(const Tensor& x, const Tensor& w, const Tensor* bias);

// The input channels k with some |x[t, k]| >= threshold, ascending.
std::vector<std::int64_t> outlier_columns(const Tensor& x, double threshold);

// SmoothQuant's m_k = max_t |x[t, k]|^alpha / max_o |W[o, k]|^(1 - alpha), 1 where either max is 0.
std::vector<double> smooth_factors(const Tensor& x, const Tensor& w, double alpha);

// The output metrics of `got` against `want` (equal lengths): mse, rmse, mae, max_abs_error, l2_error,
// sqnr_db (empty when either energy is 0), in double.
Metrics output_metrics(const std::vector<float>& got, const std::vector<float>& want);

// Output cell (t, o)'s error split by input channel: e_k = x_used[t, k] w_used[o, k] - x[t, k] W[o, k]
// (float64), the `count` channels of largest |e_k| first.
struct ChannelContribution {
    std::int64_t channel = 0;
    double error = 0;    // e_k
    double exact = 0;    // x[t, k] W[o, k]
};
std::vector<ChannelContribution> channel_contributions(const LayerResult& result, const Tensor& x, const Tensor& w,
                                                       std::int64_t token, std::int64_t out, std::size_t count);

// The output MSE for each alpha (SmoothQuant), everything else as in `config`; the reference once.
// `cancelled` (if given) is polled between alphas: when it returns true the curve so far is returned.
std::vector<double> smooth_alpha_curve(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                                       const std::vector<double>& alphas, const std::function<bool()>& cancelled = {});

// For tests and the bench: the integer path's plain int64 loop instead of the blocked SIMD kernel, so that
// both are checked on every machine. Process-wide; off by default.
void use_plain_integer_kernel(bool on);

}  // namespace qs
