// SPEC "Methods": the checks, the methods put together, and their result in the layer's terms.
#include "quantscope/layer_methods.hpp"

#include <algorithm>
#include <cmath>

#include "method_steps.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

using detail::MatD;
using detail::QuantizedW;
using detail::WeightQuantizer;
using RowMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// GPTQ keeps in x in float64 matrices (H, its factor, U): 8192 inputs take about 2 GB and a minute here.
constexpr std::int64_t kMaxGptqInputs = 8192;
// Every method keeps a few float64 copies of W (and AWQ re-quantizes it per ratio): W up to 2^26 elements
// (a 4096 x 16384 layer; 512 MB a copy), and AWQ's grid x W's elements up to 2^33.
constexpr std::int64_t kMaxMethodWeights = std::int64_t{1} << 26;
constexpr double kMaxAwqWeightPasses = 8589934592.0;  // 2^33
// AWQ evaluates the layer once per ratio: grid x tokens x in x out multiply-adds at the most.
constexpr double kMaxAwqMacs = 1099511627776.0;  // 2^40

bool uses_gptq(LayerMethod m) { return m == LayerMethod::Gptq || m == LayerMethod::RotateGptq; }
bool rotates(LayerMethod m) { return m == LayerMethod::Rotate || m == LayerMethod::RotateGptq; }

MatD to_double(const Tensor& t, std::int64_t rows, std::int64_t cols) {
    return Eigen::Map<const RowMatF>(t.values.data(), rows, cols).cast<double>();
}

// max |v| / std(v) and E[(v - mean)^4] / std^4 over all of a matrix.
void outlier_stats(const MatD& v, double& max_over_std, double& kurtosis) {
    const double n = static_cast<double>(v.size()), mean = v.mean();
    const double var = (v.array() - mean).square().sum() / n;
    const double m4 = (v.array() - mean).square().square().sum() / n;
    max_over_std = var > 0 ? v.cwiseAbs().maxCoeff() / std::sqrt(var) : 0.0;
    kurtosis = var > 0 ? m4 / (var * var) : 0.0;
}

// The final W's metrics against the W the method quantized (or, for AWQ, against W).
Metrics weight_metrics(const MatD& target, const QuantizedW& q, const QuantConfig& config) {
    Metrics m;
    m.count = target.size();
    const MatD e = target - q.dequantized;
    m.error_energy = e.squaredNorm();
    m.signal_energy = target.squaredNorm();
    m.sum = target.sum();
    m.mse = m.error_energy / static_cast<double>(std::max<std::int64_t>(m.count, 1));
    m.rmse = std::sqrt(m.mse);
    m.mae = e.cwiseAbs().sum() / static_cast<double>(std::max<std::int64_t>(m.count, 1));
    m.max_abs_error = m.count ? e.cwiseAbs().maxCoeff() : 0.0;
    m.l2_error = std::sqrt(m.error_energy);
    if (m.error_energy > 0 && m.signal_energy > 0) m.sqnr_db = 10.0 * std::log10(m.signal_energy / m.error_energy);
    m.clipped = q.clipped;
    m.levels_total = static_cast<std::int64_t>(config.dtype.q_max()) - config.dtype.q_min() + 1;
    std::vector<char> seen(static_cast<std::size_t>(m.levels_total), 0);  // codes are in [q_min, q_max]
    for (const std::int32_t c : q.codes) seen[static_cast<std::size_t>(c - config.dtype.q_min())] = 1;
    m.levels_used = std::count(seen.begin(), seen.end(), 1);
    return m;
}

// y = x_used r'(W)^T + b in float32, as the W-only path computes it.
std::vector<float> float_output(const RowMatF& x_used, const std::vector<float>& w_used, std::int64_t out,
                                const Tensor* bias) {
    RowMatF y = x_used * Eigen::Map<const RowMatF>(w_used.data(), out, x_used.cols()).transpose();
    if (bias) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias->values.data(), out);
    return std::vector<float>(y.data(), y.data() + y.size());
}

}  // namespace

const char* to_string(LayerMethod method) {
    switch (method) {
        case LayerMethod::Rtn: return "rtn";
        case LayerMethod::Gptq: return "gptq";
        case LayerMethod::Awq: return "awq";
        case LayerMethod::Rotate: return "rotate";
        case LayerMethod::RotateGptq: return "rotate+gptq";
    }
    return "rtn";
}

LayerMethod parse_layer_method(const std::string& text) {
    for (LayerMethod m : {LayerMethod::Rtn, LayerMethod::Gptq, LayerMethod::Awq, LayerMethod::Rotate, LayerMethod::RotateGptq})
        if (text == to_string(m)) return m;
    throw Error("--method " + quoted_text(text) + " is not rtn, gptq, awq, rotate or rotate+gptq");
}

const char* to_string(RotationKind kind) { return kind == RotationKind::Hadamard ? "hadamard" : "random-hadamard"; }

RotationKind parse_rotation_kind(const std::string& text) {
    if (text == "hadamard") return RotationKind::Hadamard;
    if (text == "random-hadamard") return RotationKind::RandomHadamard;
    throw Error("--rotation " + quoted_text(text) + " is not hadamard or random-hadamard");
}

void check_method(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                  const MethodConfig& method) {
    check_layer(x, w, bias, config);
    if (method.method == LayerMethod::Rtn) return;
    const std::string name = std::string("--method ") + to_string(method.method);
    if (config.quantize_activations)
        throw Error(name + " quantizes W only: it needs --activations none, not " + config.act_dtype.name());
    if (!is_int_format(config.weights.format))
        throw Error(name + " quantizes int<N> weights, not " + format_traits(config.weights.format).name);
    if (config.weights.mode == Mode::Cast) throw Error(name + " needs a scale: --mode cast does not apply");
    if (config.weights.calibration != Calibration::MinMax)
        throw Error(name + " takes the min/max ranges of SPEC; --calibrate percentile or mse does not apply");
    if (config.weights.overflow != Overflow::Clamp) throw Error(name + " clamps its codes: --overflow wrap does not apply");
    if (config.weights.granularity == Granularity::Channel && config.weights.axis != 0)
        throw Error(name + " takes --granularity channel along axis 0 (one (s, z) per output row), not axis " +
                    std::to_string(config.weights.axis));
    const std::int64_t tokens = x.rank() == 1 ? 1 : x.rows(), in = w.cols(), out = w.rows();
    if (tokens < 1) throw Error(name + " needs at least one token of inputs");
    if (in * out > kMaxMethodWeights)
        throw Error(name + ": W has " + std::to_string(in * out) + " elements; the methods keep float64 copies of W and take at most 2^26");
    if (method.method == LayerMethod::Awq &&
        static_cast<double>(method.grid) * static_cast<double>(in) * static_cast<double>(out) > kMaxAwqWeightPasses)
        throw Error("--method awq: --grid " + std::to_string(method.grid) + " quantizations of W's " + std::to_string(in * out) +
                    " elements are more than 2^33");
    if (uses_gptq(method.method)) {
        if (!(method.damp > 0 && method.damp <= kMaxGptqDamp))
            throw Error("--damp must be > 0 and at most " + format_g(kMaxGptqDamp) + " (a fraction of mean diag H); got " +
                        format_exact(method.damp));
        if (method.block < 1) throw Error("--block must be >= 1");
        if (in > kMaxGptqInputs)
            throw Error(name + ": in = " + std::to_string(in) + " input channels; GPTQ's Hessian (in x in, float64) is capped at " +
                        std::to_string(kMaxGptqInputs));
    }
    if (method.method == LayerMethod::Awq) {
        if (method.grid < 1 || method.grid > kMaxAwqGrid)
            throw Error("--grid must be from 1 to " + std::to_string(kMaxAwqGrid));
        if (method.awq_ratio && !(*method.awq_ratio >= 0 && *method.awq_ratio <= 1))
            throw Error("AWQ's ratio r must be in [0, 1]; got " + format_exact(*method.awq_ratio));
        if (static_cast<double>(method.grid) * static_cast<double>(tokens) * static_cast<double>(in) * static_cast<double>(out) > kMaxAwqMacs)
            throw Error("--method awq: --grid " + std::to_string(method.grid) + " layer evaluations of " + std::to_string(tokens) +
                        " x " + std::to_string(in) + " x " + std::to_string(out) + " are more than 2^40 multiply-adds");
    }
    if (rotates(method.method) && (in & (in - 1)) != 0)
        throw Error("rotation needs in = 2^k, got in = " + std::to_string(in));
}

MethodResult run_method(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                        const MethodConfig& method, const MethodControl& control) {
    check_method(x, w, bias, config, method);
    MethodResult result;
    result.method = method.method;
    const LayerResult rtn = run_layer(x, w, bias, config);
    result.rtn_output = rtn.output;
    if (method.method == LayerMethod::Rtn) {
        result.layer = rtn;
        const QuantResult q = quantize(w, config.weights);
        result.codes = q.codes;
        result.dequantized = q.dequantized;
        return result;
    }
    const std::int64_t tokens = x.rank() == 1 ? 1 : x.rows(), in = w.cols(), out = w.rows();
    const WeightQuantizer quantizer(config.weights, out, in);
    MatD wd = to_double(w, out, in), xd = to_double(x, tokens, in);
    if (rotates(method.method)) {
        RotateDetails details;
        details.kind = method.rotation;
        const std::vector<double> signs =
            method.rotation == RotationKind::RandomHadamard ? rotation_signs(in, method.seed) : std::vector<double>{};
        const std::vector<double>* s = signs.empty() ? nullptr : &signs;
        outlier_stats(wd, details.max_over_std_before, details.kurtosis_before);
        RowMatD wr = wd, xr = xd;
        const double share = method.method == LayerMethod::Rotate ? 1.0 : 0.0;  // rotate+gptq: GPTQ's is the time
        detail::poll(control, 0);
        hadamard_rows(wr.data(), out, in, s);
        detail::poll(control, 0.5 * share);
        hadamard_rows(xr.data(), tokens, in, s);
        detail::poll(control, share);
        wd = wr;
        xd = xr;
        outlier_stats(wd, details.max_over_std_after, details.kurtosis_after);
        result.rotate = details;
    }
    QuantizedW q;
    if (uses_gptq(method.method)) {
        GptqDetails details;
        q = detail::gptq_quantize(wd, xd, method, quantizer, control, details);
        result.gptq = std::move(details);
    } else if (method.method == LayerMethod::Awq) {
        AwqDetails details;
        q = detail::awq_quantize(wd, xd, method, quantizer, control, details);
        result.awq = std::move(details);
    } else {
        q = detail::rtn_quantize(wd, quantizer);
    }
    if (!q.dequantized.allFinite()) throw Error(std::string(to_string(method.method)) + ": the quantized weights are not finite");

    LayerResult& r = result.layer;
    r.tokens = tokens;
    r.in = in;
    r.out = out;
    r.output_shape = rtn.output_shape;
    r.reference = rtn.reference;
    r.path = LayerPath::Float;
    r.weights.shape = {out, in};
    r.weights.config = config.weights;
    r.weights.metrics = weight_metrics(wd, q, config.weights);
    r.weights.params = quantizer.params(q.scales, q.zero_points);
    const RowMatD deq_rows = q.dequantized;  // [out, in] row-major, as the codes
    result.dequantized.resize(static_cast<std::size_t>(out * in));
    for (std::int64_t i = 0; i < out * in; ++i) result.dequantized[static_cast<std::size_t>(i)] = static_cast<float>(deq_rows.data()[i]);
    result.codes = std::move(q.codes);
    const RowMatF x_used = xd.cast<float>();  // x, or x H for a rotation
    r.y = float_output(x_used, result.dequantized, out, bias);
    for (const float v : r.y)
        if (!std::isfinite(v)) throw Error(std::string(to_string(method.method)) + ": the layer's output is not finite");
    r.output = output_metrics(r.y, r.reference);
    return result;
}

}  // namespace qs
