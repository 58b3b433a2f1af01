// The methods every 4-bit model is made with, on the layer's weight-only path (SPEC "Methods"): GPTQ's
// column-by-column error compensation, AWQ's activation-aware channel scaling, QuaRot-style Hadamard rotation,
// and rotation then GPTQ. All arithmetic is float64 on the float32 inputs; each method ends with a quantized
// W (codes and (s, z), laid out as quantize lays them out) and the layer's output metrics, printed beside plain
// round-to-nearest's with the same quantizer.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/layer.hpp"

namespace qs {

enum class LayerMethod { Rtn, Gptq, Awq, Rotate, RotateGptq };
const char* to_string(LayerMethod method);               // "rtn", "gptq", "awq", "rotate", "rotate+gptq"
LayerMethod parse_layer_method(const std::string& text);  // one of those, else qs::Error

enum class RotationKind { Hadamard, RandomHadamard };
const char* to_string(RotationKind kind);                 // "hadamard", "random-hadamard"
RotationKind parse_rotation_kind(const std::string& text);

constexpr int kMaxAwqGrid = 1000;
// GPTQ's damping is a fraction of mean(diag H): past 1e6 the damped H is a multiple of I to 6 digits (GPTQ is
// RTN), and up to it damp * mean(diag H) stays finite for any float32 x (1e308 overflowed to a "singular" H).
constexpr double kMaxGptqDamp = 1e6;

struct MethodConfig {
    LayerMethod method = LayerMethod::Rtn;
    double damp = 0.01;          // GPTQ: H += damp * mean(diag H) * I; 0 < damp <= kMaxGptqDamp
    std::int64_t block = 128;    // GPTQ: columns updated at once (>= 1)
    bool act_order = false;      // GPTQ: columns by decreasing diag H (stable)
    int grid = 20;               // AWQ: ratios r = 0, 1/G, ..., (G-1)/G; 1 <= G <= kMaxAwqGrid
    // AWQ at this ratio instead of the search's winner (the window's point picked on the loss curve), 0 <= r <= 1:
    // W_r as the search makes it for that r (for r = i / G, its W_r to the bit), `losses` holding that r's loss
    // alone. Not a SPEC option of the command line.
    std::optional<double> awq_ratio;
    RotationKind rotation = RotationKind::Hadamard;
    std::uint64_t seed = 0;      // random-hadamard's signs
};

// Cancellation and progress for the window's task runner: `cancelled` is polled between blocks of columns
// (GPTQ), ratios (AWQ) and the rotations of W and of x; when it returns true run_method throws MethodCancelled.
// `progress` gets a fraction in [0, 1], never decreasing.
struct MethodControl {
    std::function<bool()> cancelled;
    std::function<void(double fraction)> progress;
};
class MethodCancelled : public Error {
public:
    MethodCancelled() : Error("cancelled") {}
};

struct GptqDetails {
    double damp = 0;
    std::int64_t block = 0;
    bool act_order = false;
    std::int64_t dead_columns = 0;    // input channels no token uses (H[k, k] = 0): W[:, k] set to 0
    std::vector<std::int64_t> order;  // the processing order (index order without act-order)
    double hessian_ms = 0, inverse_ms = 0, loop_ms = 0;  // wall time of H = 2 x^T x, of U, of the columns (bench)
};
struct AwqDetails {
    double ratio = 0;                 // the winning r (MethodConfig::awq_ratio when given)
    std::vector<double> losses;       // loss(r) for r = 0, 1/G, ..., (G-1)/G (with awq_ratio: its loss alone)
    std::vector<double> scales;       // m_k of the winner (or of awq_ratio), one per input channel
    std::vector<double> mean_abs_x;   // a_k = mean_t |x[t, k]|
};
// AWQ's scales at ratio r (SPEC): m_k = max(a_k^r, 1e-4), then m /= sqrt(max m * min m); the search's own
// (so AwqDetails::scales is awq_scales(mean_abs_x, ratio) to the bit), for any ratio of its curve.
std::vector<double> awq_scales(const std::vector<double>& mean_abs_x, double ratio);
struct RotateDetails {
    RotationKind kind = RotationKind::Hadamard;
    double max_over_std_before = 0, max_over_std_after = 0;  // max |W| / std(W), of W and of W H
    double kurtosis_before = 0, kurtosis_after = 0;          // E[(w - mean)^4] / std^4 (3 for a normal)
};

struct MethodResult {
    LayerMethod method = LayerMethod::Rtn;
    // The method's layer: y, reference, output metrics; `weights` is the final W's quantization as quantize
    // reports it, its metrics against the W the method started from (for rotate: W H; for AWQ: the effective
    // r'(W diag(m)) diag(1/m) against W).
    LayerResult layer;
    Metrics rtn_output;                 // plain round-to-nearest with the same quantizer and x
    std::vector<std::int32_t> codes;    // the final codes, [out, in] (AWQ: of W diag(m); rotate: of W H)
    std::vector<float> dequantized;     // the weight the layer used, float32 (AWQ: W_r; rotate: r'(W H))
    std::optional<GptqDetails> gptq;
    std::optional<AwqDetails> awq;
    std::optional<RotateDetails> rotate;
};

// Throws qs::Error with one line for what a method cannot run on: activations other than none or a float or
// block format (naming both), a calibration other than min/max, a layer check_layer refuses, rotation with
// `in` not a power of two ("rotation needs in = 2^k"), damp outside (0, kMaxGptqDamp], block < 1, grid out of range,
// an awq_ratio outside [0, 1].
void check_method(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                  const MethodConfig& method);
// The whole method. Also throws qs::Error for a Hessian that is singular even after damping.
MethodResult run_method(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                        const MethodConfig& method, const MethodControl& control = {});

// The normalized Walsh-Hadamard transform of each row of a [rows, n] row-major matrix in place (n a power of
// two), by the fast transform (n log n per row), then with `signs` (length n, +-1) each column j times
// signs[j]: row -> row H diag(signs). Orthogonal: rows of W H diag(s) times (H diag(s))^T give W back.
void hadamard_rows(double* rows, std::int64_t row_count, std::int64_t n, const std::vector<double>* signs = nullptr);
// The inverse: row -> row diag(signs) H (H is its own inverse).
void inverse_hadamard_rows(double* rows, std::int64_t row_count, std::int64_t n, const std::vector<double>* signs = nullptr);
// random-hadamard's signs from the seed (length n, each +1 or -1).
std::vector<double> rotation_signs(std::int64_t n, std::uint64_t seed);

}  // namespace qs
