// Quantize, dequantize, error tensor and metrics in one fused pass (SPEC "Quantize and dequantize",
// "Metrics"). Built for a GUI that recomputes every frame: the result buffers are reused when the size
// does not change, and nothing else is allocated per call.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

struct Metrics {
    std::int64_t count = 0;           // elements
    double mse = 0;                   // mean (r - r')^2, accumulated in double
    double rmse = 0;
    double mae = 0;                   // mean |r - r'|
    double max_abs_error = 0;
    double l2_error = 0;              // ||r - r'||_2 (the lesson's torch.norm)
    std::optional<double> sqnr_db;    // 10 log10(sum r^2 / sum (r - r')^2); empty when either sum is 0
    std::int64_t clipped = 0;         // rounded value outside [q_min, q_max] before the clamp (or wrap)
    std::int64_t levels_used = 0;     // distinct codes
    std::int64_t levels_total = 0;    // q_max - q_min + 1
};

struct QuantResult {
    std::vector<std::int32_t> codes;  // q, same layout as the input
    std::vector<float> dequantized;   // r' = s (q - z), float32
    std::vector<float> error;         // e = |r - r'|
    Metrics metrics;
};

// q = clamp(round(r / s + z), q_min, q_max) with r / s + z a float32 true division, r' = s (q - z) in
// float32 (s and z as float32, as the lessons' torch code computes them), e = |r - r'|, and the metrics,
// for every element, in one pass over the input using all cores. `out` buffers are resized only when the
// element count changes.
void quantize_into(const Tensor& tensor, const QuantParams& params, const QuantConfig& config, QuantResult& out);

// check_tensor + check_config + compute_params + quantize_into.
QuantResult quantize(const Tensor& tensor, const QuantConfig& config, QuantParams* params_out = nullptr);

// The pipeline for one element, for the GUI's tooltip: every intermediate value of the formula.
struct ElementTrace {
    std::int64_t flat_index = 0;
    std::int64_t block = 0;
    float r = 0;                  // original value
    float scale = 0;              // s as used (float32)
    std::int32_t zero_point = 0;
    float scaled = 0;             // r / s + z
    float rounded = 0;            // round(r / s + z)
    std::int32_t code = 0;        // after clamp (or wrap)
    bool clipped = false;         // rounded was outside [q_min, q_max]
    float dequantized = 0;        // s (q - z)
    float error = 0;              // |r - r'|
};
ElementTrace trace_element(const Tensor& tensor, const QuantParams& params, const QuantConfig& config,
                           std::int64_t flat_index);

// The single-element formula the fused pass vectorises; also the reference the tests compare against.
std::int32_t quantize_value(float r, float scale, std::int32_t zero_point, const QuantConfig& config,
                            bool* clipped = nullptr);

// The lessons' plain scalar loop (per-tensor asymmetric, one element at a time, no vectorisation or
// threads): the baseline `quantscope bench` reports as naive_ms.
void naive_pipeline(const Tensor& tensor, const IntType& dtype, QuantResult& out);

// For tests: run the portable (Eigen) pass even where the AVX2 kernel exists, so both are checked on
// every machine. Process-wide; off by default.
void use_portable_kernel(bool on);

}  // namespace qs
