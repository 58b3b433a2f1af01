// The methods' steps on float64 matrices, private to the layer room (layer_methods.cpp puts them together).
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Dense>

#include "method_quantizer.hpp"
#include "quantscope/layer_methods.hpp"

namespace qs::detail {

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;  // column-major: W's columns are contiguous

// A quantized W: codes [out, in] row-major, r' as float64 (column-major), one pair per block, how many clipped.
struct QuantizedW {
    std::vector<std::int32_t> codes;
    MatD dequantized;
    std::vector<double> scales;
    std::vector<std::int32_t> zero_points;
    std::int64_t clipped = 0;
};

void poll(const MethodControl& control, double fraction);  // throws MethodCancelled when asked

// Round-to-nearest of W with the quantizer (pairs from W's blocks), in float64.
QuantizedW rtn_quantize(const MatD& w, const WeightQuantizer& quantizer);

// GPTQ's preparation, shared by the blocked loop and the window's step-through (gptq_stepper): H = 2 x^T x from
// X [tokens, in], dead columns (H[k, k] = 0) set to 1 on H's diagonal and zeroed in W, damping by
// damp * mean(diag H), the processing order (act-order: decreasing diag H, stable), and U, the upper Cholesky
// factor of H^-1 taken in processing order (H^-1 = U^T U). Throws qs::Error for a Hessian singular after damping.
struct GptqPrepared {
    MatD w;                               // W with dead columns zeroed, columns in processing order
    std::vector<std::int64_t> order;      // order[p]: W's column processed p-th
    std::vector<std::int64_t> position;   // position[j]: when column j is processed
    MatD u;                               // in x in, upper triangular, processing order
    std::int64_t dead_columns = 0;
    double hessian_ms = 0, inverse_ms = 0;  // wall time of the two steps
};
GptqPrepared prepare_gptq(MatD w, const MatD& x, double damp, bool act_order, const MethodControl& control = {});

// GPTQ (SPEC "Methods"): H = 2 x^T x from X [tokens, in], dead columns, damping, act-order, U = upper Cholesky
// factor of H^-1 in processing order; then the columns in blocks of `block`, each column's error pushed into the
// columns not yet processed. `w` is taken by value (it is updated as the loop goes).
QuantizedW gptq_quantize(MatD w, const MatD& x, const MethodConfig& method, const WeightQuantizer& quantizer,
                         const MethodControl& control, GptqDetails& details);

// AWQ's scale search: the winning ratio's r'(W diag(m)) codes and pairs, with `dequantized` the effective
// weight r'(W diag(m)) diag(1/m).
QuantizedW awq_quantize(const MatD& w, const MatD& x, const MethodConfig& method, const WeightQuantizer& quantizer,
                        const MethodControl& control, AwqDetails& details);

}  // namespace qs::detail
