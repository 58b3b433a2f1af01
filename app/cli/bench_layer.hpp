// The layer rows of `quantscope bench`: a [512 x 4096] . [4096 x 4096]^T layer (issue 13's size; --layer-shape) through
// the W8A8 integer path and W-only (W8A16), against Eigen's float32 product of the same shapes (the yardstick).
#pragma once

#include <cstdint>
#include <string>

#include "quantscope/json_writer.hpp"

namespace qs::cli {

struct LayerFigures {
    std::int64_t tokens = 0, in = 0, out = 0;
    double gemm_ms = 0;        // Eigen's float32 x W^T alone
    double w8a8_ms = 0;        // run_layer, int8 per-token activations and int8 per-channel W, no reference
    double w8a16_ms = 0;       // run_layer, W-only int8 per channel, no reference
    double reference_ms = 0;   // the float64 reference
};
// The layer's size: x [tokens, in], W [out, in]. The default is issue 13's; tests pass a small one.
struct LayerShape {
    std::int64_t tokens = 512, in = 4096, out = 4096;
};
// "TOKENSxINxOUT"; throws qs::Error (one line) for anything else or a layer `quantscope layer` would refuse.
LayerShape parse_layer_shape(const std::string& text);
LayerFigures measure_layer_rows(int repeats, const LayerShape& shape);
void add_layer_rows(JsonObject& json, const LayerFigures& figures);

// `bench --methods-only`: SPEC "Methods" on a [2048 x 4096] . [4096 x 4096]^T layer (issue 24's size; --layer-shape
// for another), int4 per group of 128, once each (they take seconds): GPTQ with its Hessian, inverse and column
// loop timed apart, AWQ (G = 20) against one round-to-nearest evaluation of the layer, rotate, rotate+gptq.
struct MethodFigures {
    std::int64_t tokens = 0, in = 0, out = 0;
    double rtn_eval_ms = 0;  // run_layer W-only with the same quantizer, no reference
    double gptq_ms = 0, gptq_hessian_ms = 0, gptq_inverse_ms = 0, gptq_loop_ms = 0;
    double awq_ms = 0, rotate_ms = 0, rotate_gptq_ms = 0;
};
MethodFigures measure_method_rows(const LayerShape& shape);
void add_method_rows(JsonObject& json, const MethodFigures& figures);

}  // namespace qs::cli
