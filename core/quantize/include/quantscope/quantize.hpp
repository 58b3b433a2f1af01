// Quantize, dequantize, error tensor and metrics in one fused pass (SPEC "Quantize and dequantize",
// "Metrics"), over a tensor in memory or a view of one in its stored type (e.g. a file's mapping). Only the
// outputs asked for are produced: into caller-owned arrays, or streamed to a sink in bounded batches.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/format_params.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_view.hpp"

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
    double sum = 0;                   // sum r (for the mean)
    double signal_energy = 0;         // sum r^2
    double error_energy = 0;          // sum (r - r')^2
};

// The SQNR to compare and to name: sqnr_db, else +infinity where the error is exactly 0 (nothing lost, an
// all-zero tensor too) and -infinity where the tensor is all zeros with an error (no signal to compare with).
double comparable_sqnr_db(const Metrics& m);

struct QuantResult {
    std::vector<std::int32_t> codes;  // q, same layout as the input
    std::vector<float> dequantized;   // r' = s (q - z), float32
    std::vector<float> error;         // e = |r - r'|
    Metrics metrics;
};

// q = clamp(round(r / s + z), q_min, q_max) with r / s + z a float32 true division, r' = s (q - z) in
// float32 (s and z as float32, as the lessons' torch code computes them), e = |r - r'|, and the metrics,
// for every element, in one pass over the input using all cores. The sums behind the metrics are added in
// a fixed order (tiles of the flat array), so the metrics are the same bits however many threads run and
// however the results are delivered.

// Where each element's results go: arrays of numel() elements; a null pointer is an output not wanted,
// which is then neither stored nor given memory.
struct QuantOutputs {
    std::int32_t* codes = nullptr;
    float* dequantized = nullptr;
    float* error = nullptr;
};
Metrics quantize_view(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                      const QuantOutputs& out = {});

// The same, the results of the wanted kinds handed to `sink` in flat order a bounded batch at a time:
// elements [first, first + count) of one kind per call (the other two pointers null). Calls for different
// kinds may run at the same time on different threads; those of one kind come in order, one at a time.
// Memory stays O(batch), not O(numel).
struct OutputSelection {
    bool codes = false, dequantized = false, error = false;
};
using ResultSink = std::function<void(std::int64_t first, std::int64_t count, const QuantOutputs& batch)>;
Metrics quantize_view(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                      const OutputSelection& wanted, const ResultSink& sink);

// compute_params + quantize_view: what `quantscope quantize` and `sweep` compute for a tensor. An r' that
// overflows float32 (values near its limits) is an error naming the first such element, since SPEC's
// metrics are numbers: raised after the pass, so a caller streaming the results must not keep them.
// A config whose format is not Int goes through the format's pass (format_quantize.hpp): format_params holds
// its scales, and params their layout, the scales as doubles and zero points of 0.
struct Quantization {
    QuantParams params;
    Metrics metrics;
    TensorRange range;  // the smallest and largest value
    FormatParams format_params;
};
Quantization quantize_checked(const TensorView& view, const QuantConfig& config, const OutputSelection& wanted = {},
                              const ResultSink& sink = nullptr);

// quantize_view of a float32 tensor into `out`, whose buffers are resized only when the element count
// changes (the window recomputes every frame).
void quantize_into(const Tensor& tensor, const QuantParams& params, const QuantConfig& config, QuantResult& out);

// check_tensor + compute_params (which checks the config) + quantize_into.
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
ElementTrace trace_element(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                           std::int64_t flat_index);
// The same for a value already read (no access to the values, so no guarded region per element).
ElementTrace trace_value(float r, const QuantParams& params, const QuantConfig& config, std::int64_t flat_index);

// The codes of one block's values (all of them, in the order block_elements gathers them), as the pass
// gives them: for ggml's formats the codes come from the block's float32 d (and min) computed from these
// values, which trace_value cannot see (it has only the stored fp16 d).
std::vector<std::int32_t> block_codes(const float* values, std::int64_t n, const QuantParams& params,
                                      const QuantConfig& config, std::int64_t block);

// The first element whose error |r - r'| is not finite (r' overflowed float32 near its limits), or -1.
// Sequential: for the error message after a pass whose max_abs_error came out infinite.
std::int64_t first_nonfinite_error(const TensorView& view, const QuantParams& params, const QuantConfig& config);

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
