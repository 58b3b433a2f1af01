#include "quantscope/layer.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "big_buffer.hpp"
#include "layer_kernel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"

namespace qs {
namespace {

using RowMatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMapF = Eigen::Map<const RowMatF>;
using ConstMapD = Eigen::Map<const RowMatD>;


// The columns `cols` of a row-major [rows, n] matrix as a [rows, cols.size()] tensor, each column k divided
// (x) or multiplied (W) by m[k] when `m` is not empty (SmoothQuant), rounded to float32.
Tensor take_columns(const float* values, std::int64_t rows, std::int64_t n, const std::vector<std::int64_t>& cols,
                    const std::vector<double>& m, bool divide, const char* what) {
    Tensor t;
    const auto kept = static_cast<std::int64_t>(cols.size());
    t.shape = {rows, kept};
    t.values.resize(static_cast<std::size_t>(rows * kept));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < kept; ++j) {
            const std::int64_t k = cols[static_cast<std::size_t>(j)];
            double v = values[r * n + k];
            if (!m.empty()) v = divide ? v / m[static_cast<std::size_t>(k)] : v * m[static_cast<std::size_t>(k)];
            const auto f = static_cast<float>(v);
            if (!std::isfinite(f))
                throw Error(std::string("smoothing makes ") + what + "[" + std::to_string(r) + ", " + std::to_string(k) +
                            "] overflow float32 (m_k = " + format_g(m[static_cast<std::size_t>(k)]) + ")");
            t.values[static_cast<std::size_t>(r * kept + j)] = f;
        }
    return t;
}

QuantConfig activation_config(const LayerConfig& config) {
    QuantConfig a;
    a.dtype = config.act_dtype;
    a.mode = config.act_mode;
    a.granularity = config.act_granularity == ActGranularity::Token ? Granularity::Channel : Granularity::Tensor;
    a.axis = 0;
    return a;
}

// One operand quantized with only the outputs a path reads: fresh output arrays cost page faults that, for
// a 4096 x 4096 W, take as long as the quantization itself.
struct Quantized {
    QuantParams params;
    FormatParams format_params;
    Metrics metrics;
    detail::BigBuffer<std::int32_t> codes;
    detail::BigBuffer<float> dequantized;
};

Quantized quantize_operand(const Tensor& t, const QuantConfig& config, bool codes, bool dequantized) {
    Quantized q;
    q.params = compute_params(t, config);
    // The layer's kernels index every block's pair, and `t` may be a temporary (the smoothed W or x).
    q.params.store_pairs();
    if (codes) q.codes = detail::BigBuffer<std::int32_t>(static_cast<std::size_t>(t.numel()));
    if (dequantized) q.dequantized = detail::BigBuffer<float>(static_cast<std::size_t>(t.numel()));
    q.metrics = quantize_view(view_of(t), q.params, config,
                              QuantOutputs{codes ? q.codes.data() : nullptr,
                                           dequantized ? q.dequantized.data() : nullptr, nullptr});
    return q;
}

// W in a FORMATS.md format: its r' only (the dequantized path).
Quantized quantize_format_operand(const Tensor& t, const FormatConfig& config) {
    Quantized q;
    q.format_params = compute_format_params(view_of(t), config);
    q.format_params.store_scales();  // the kernels index every block's s, and `t` may be a temporary
    q.params.block_stride = q.format_params.block_stride;  // the layout, as quantize_checked reports it
    q.params.block_count = q.format_params.block_count;
    q.params.scale.assign(q.format_params.scale.begin(), q.format_params.scale.end());
    q.params.zero_point.assign(q.params.scale.size(), 0);
    q.dequantized = detail::BigBuffer<float>(static_cast<std::size_t>(t.numel()));
    q.metrics = quantize_format_view(view_of(t), q.format_params, config, QuantOutputs{nullptr, q.dequantized.data(), nullptr});
    q.format_params.ggml_blocks.reset();  // read by that pass only: the result keeps the scales
    return q;
}

// W's quantization as the result reports it.
bool is_format(const QuantConfig& c) { return !is_int_format(c.format); }

std::optional<FormatConfig> weight_format(const LayerConfig& config) {
    if (!is_format(config.weights)) return std::nullopt;
    return format_config(config.weights);
}

// W quantized with the config's int<N> or FORMATS.md format, with the outputs the path reads.
Quantized quantize_weights(const Tensor& w, const LayerConfig& config, bool codes, bool dequantized) {
    if (is_format(config.weights)) return quantize_format_operand(w, format_config(config.weights));
    return quantize_operand(w, config.weights, codes, dequantized);
}

OperandQuantization weights_report(const Shape& shape, const LayerConfig& config, Quantized& q) {
    OperandQuantization r;
    r.shape = shape;
    r.config = config.weights;
    r.params = std::move(q.params);
    r.format = weight_format(config);
    r.format_params = std::move(q.format_params);
    r.metrics = q.metrics;
    return r;
}

// The scale a code was computed with: float32(s), as the quantize pass uses it, in double.
double used_scale(const QuantParams& p, std::int64_t flat) {
    return static_cast<double>(static_cast<float>(p.scale[static_cast<std::size_t>(p.block_of(flat))]));
}

// Columns per group of W's scales along `in` when they factor out of the dot product (per tensor, per
// output channel, per group), or 0 when they do not (per input channel) or W's codes are not int<N>.
std::int64_t factoring_group(const LayerConfig& config, std::int64_t in) {
    const QuantConfig& w = config.weights;
    if (is_format(w)) return 0;
    if (w.granularity == Granularity::Group) return w.group_size;
    if (w.granularity == Granularity::Channel && w.axis != 0) return 0;
    return in;
}

// The kept columns' product through the integer kernel: y[t, o] = s_x(t) sum_g s_w(o, g) S(t, o, g).
void integer_layer(const Quantized& qx, const QuantParams& px, const Quantized& qw, const QuantParams& pw,
                   std::int64_t tokens, std::int64_t outs, std::int64_t kept, std::int64_t group, std::vector<double>& y) {
    const std::int64_t groups = kept / group;
    std::vector<double> sx(static_cast<std::size_t>(tokens)), sw(static_cast<std::size_t>(outs * groups));
    for (std::int64_t t = 0; t < tokens; ++t) sx[static_cast<std::size_t>(t)] = used_scale(px, t * kept);
    for (std::int64_t o = 0; o < outs; ++o)
        for (std::int64_t g = 0; g < groups; ++g)
            sw[static_cast<std::size_t>(o * groups + g)] = used_scale(pw, o * kept + g * group);
    detail::IntOperand x{qx.codes.data(), tokens, [&](std::int64_t r, std::int64_t) {
                             return px.zero_point[static_cast<std::size_t>(px.block_of(r * kept))];
                         }};
    detail::IntOperand w{qw.codes.data(), outs, [&](std::int64_t r, std::int64_t g) {
                             return pw.zero_point[static_cast<std::size_t>(pw.block_of(r * kept + g * group))];
                         }};
    detail::integer_product(x, w, kept, group, sx.data(), sw.data(), y.data());  // y is all zeros before
}

// The kept columns' product on the dequantized values r' in float64 (scales that do not factor).
void dequantized_layer(const Quantized& qx, const Quantized& qw, std::int64_t tokens, std::int64_t outs,
                       std::int64_t kept, std::vector<double>& y) {
    const RowMatD xd = ConstMapF(qx.dequantized.data(), tokens, kept).cast<double>();
    const RowMatD wd = ConstMapF(qw.dequantized.data(), outs, kept).cast<double>();
    Eigen::Map<RowMatD> out(y.data(), tokens, outs);
    out.noalias() += xd * wd.transpose();
}

// y += x[:, cols] W[:, cols]^T in float64: the outlier columns LLM.int8() keeps in float.
void float_columns(const Tensor& x, const Tensor& w, const std::vector<std::int64_t>& cols, std::vector<double>& y) {
    if (cols.empty()) return;
    const Tensor xo = take_columns(x.values.data(), x.rows(), x.cols(), cols, {}, true, "x");
    const Tensor wo = take_columns(w.values.data(), w.rows(), w.cols(), cols, {}, false, "W");
    const RowMatD xd = ConstMapF(xo.values.data(), x.rows(), xo.cols()).cast<double>();
    const RowMatD wd = ConstMapF(wo.values.data(), w.rows(), wo.cols()).cast<double>();
    Eigen::Map<RowMatD> out(y.data(), x.rows(), w.rows());
    out.noalias() += xd * wd.transpose();
}

OperandQuantization empty_operand(std::int64_t rows, const QuantConfig& config) {
    OperandQuantization q;
    q.shape = {rows, 0};
    q.config = config;
    q.params.scale.clear();
    q.params.zero_point.clear();
    return q;
}

// W-only ("W8A16"): y = x dequant(W)^T + b with Eigen's float32 product.
void weights_only(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config, LayerResult& r) {
    Quantized qw = quantize_weights(w, config, false, true);
    r.weights = weights_report(w.shape, config, qw);
    RowMatF y = ConstMapF(x.values.data(), r.tokens, r.in) * ConstMapF(qw.dequantized.data(), r.out, r.in).transpose();
    if (bias) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias->values.data(), r.out);
    r.y.assign(y.data(), y.data() + y.size());
    r.path = LayerPath::Float;
    if (config.keep_used_factors) {
        r.x_used = x.values;
        r.w_used.assign(qw.dequantized.data(), qw.dequantized.data() + qw.dequantized.size());
    }
}

// The used factors of the kept columns: dequantized values taken back to x's and W's units.
void record_used(const Quantized& qx, const Quantized& qw, const std::vector<std::int64_t>& kept,
                 const std::vector<double>& m, LayerResult& r) {
    const auto nk = static_cast<std::int64_t>(kept.size());
    for (std::int64_t j = 0; j < nk; ++j) {
        const std::int64_t k = kept[static_cast<std::size_t>(j)];
        const double mk = m.empty() ? 1.0 : m[static_cast<std::size_t>(k)];
        for (std::int64_t t = 0; t < r.tokens; ++t)
            r.x_used[static_cast<std::size_t>(t * r.in + k)] =
                static_cast<float>(qx.dequantized[static_cast<std::size_t>(t * nk + j)] * mk);
        for (std::int64_t o = 0; o < r.out; ++o)
            r.w_used[static_cast<std::size_t>(o * r.in + k)] =
                static_cast<float>(qw.dequantized[static_cast<std::size_t>(o * nk + j)] / mk);
    }
}

// Activations quantized too ("W8A8"), with the outlier split and smoothing.
void with_activations(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config, LayerResult& r) {
    if (config.outlier_threshold) r.outlier_columns = outlier_columns(x, *config.outlier_threshold);
    std::vector<std::int64_t> kept;
    for (std::int64_t k = 0, next = 0; k < r.in; ++k) {
        const bool outlier = next < static_cast<std::int64_t>(r.outlier_columns.size()) &&
                             r.outlier_columns[static_cast<std::size_t>(next)] == k;
        if (outlier) ++next; else kept.push_back(k);
    }
    if (config.smooth_alpha) r.smooth_factors = smooth_factors(x, w, *config.smooth_alpha);
    const auto nk = static_cast<std::int64_t>(kept.size());
    const QuantConfig act = activation_config(config);
    const std::int64_t group = factoring_group(config, nk);
    if (!is_format(config.weights) && config.weights.granularity == Granularity::Group && nk % config.weights.group_size != 0)
        throw Error("the outlier split keeps " + std::to_string(nk) + " input channels, not a multiple of --group-size " +
                    std::to_string(config.weights.group_size));
    if (format_traits(config.weights.format).own_blocks() &&
        nk % format_info(config.weights.format).block_size != 0)  // the same for a block format's block
        throw Error("the outlier split keeps " + std::to_string(nk) + " input channels, not a multiple of " +
                    format_info(config.weights.format).name + "'s block of " +
                    std::to_string(format_info(config.weights.format).block_size));
    std::vector<double> y(static_cast<std::size_t>(r.tokens * r.out), 0.0);
    if (config.keep_used_factors) r.x_used = x.values, r.w_used = w.values;
    r.weights = empty_operand(r.out, config.weights);
    r.weights.format = weight_format(config);
    r.inputs = empty_operand(r.tokens, act);
    r.path = group > 0 ? LayerPath::Integer : LayerPath::Dequantized;
    if (nk > 0) {
        // Copies only where columns go or are scaled (x 1-D is viewed as one token, [1, in]).
        const bool whole = nk == r.in && r.smooth_factors.empty();
        Tensor x_copy, w_copy;
        if (!whole || x.rank() == 1) x_copy = take_columns(x.values.data(), r.tokens, r.in, kept, r.smooth_factors, true, "x");
        if (!whole) w_copy = take_columns(w.values.data(), r.out, r.in, kept, r.smooth_factors, false, "W");
        const Tensor& xk = x_copy.values.empty() ? x : x_copy;
        const Tensor& wk = w_copy.values.empty() ? w : w_copy;
        const bool deq = group == 0 || config.keep_used_factors;
        Quantized qw = quantize_weights(wk, config, group > 0, deq);
        Quantized qx = quantize_operand(xk, act, group > 0, deq);
        if (group > 0)
            integer_layer(qx, qx.params, qw, qw.params, r.tokens, r.out, nk, group, y);
        else
            dequantized_layer(qx, qw, r.tokens, r.out, nk, y);
        if (config.keep_used_factors) record_used(qx, qw, kept, r.smooth_factors, r);
        r.weights = weights_report(wk.shape, config, qw);
        r.inputs = OperandQuantization{xk.shape, act, std::move(qx.params), std::nullopt, {}, qx.metrics};
    }
    float_columns(x, w, r.outlier_columns, y);
    r.y.resize(y.size());
    for (std::int64_t t = 0; t < r.tokens; ++t)
        for (std::int64_t o = 0; o < r.out; ++o) {
            const auto i = static_cast<std::size_t>(t * r.out + o);
            r.y[i] = static_cast<float>(y[i] + (bias ? double{bias->values[static_cast<std::size_t>(o)]} : 0.0));
        }
}

std::string shape_text(const Tensor& t) { return "[" + shape_to_string(t.shape) + "]"; }

// An output stored as float32 that left its range (values near FLT_MAX in x or W, or a big outlier scale): the
// metrics would be NaN (Inf - Inf), printed null, and the file would hold Inf. Refused, naming the cell.
void check_output_finite(const std::vector<float>& y, std::int64_t out, const char* what) {
    for (std::size_t i = 0; i < y.size(); ++i)
        if (!std::isfinite(y[i]))
            throw Error(std::string(what) + " y[" + std::to_string(static_cast<std::int64_t>(i) / out) + ", " +
                        std::to_string(static_cast<std::int64_t>(i) % out) + "] is beyond float32's range");
}

}  // namespace

const char* to_string(ActGranularity granularity) {
    return granularity == ActGranularity::Token ? "token" : "tensor";
}

ActGranularity parse_act_granularity(const std::string& text) {
    if (text == "tensor") return ActGranularity::Tensor;
    if (text == "token") return ActGranularity::Token;
    throw Error("unknown activation granularity " + quoted_text(text) + ": expected tensor or token");
}

const char* to_string(LayerPath path) {
    switch (path) {
        case LayerPath::Float: return "float";
        case LayerPath::Integer: return "integer";
        case LayerPath::Dequantized: return "dequantized";
    }
    return "float";
}

LayerConfig make_layer_config(const QuantConfig& weights, const ActivationSettings& activations) {
    LayerConfig c;
    c.weights = weights;
    c.quantize_activations = activations.bits > 0;
    if (c.quantize_activations) {
        c.act_dtype.bits = activations.bits;
        c.act_dtype.is_signed = true;
        c.act_mode = activations.mode;
        c.act_granularity = activations.granularity;
        c.outlier_threshold = activations.outlier_threshold;
        c.smooth_alpha = activations.smooth_alpha;
    }
    return c;
}

void check_layer_size(std::int64_t tokens, std::int64_t in, std::int64_t out) {
    const double macs = static_cast<double>(tokens) * static_cast<double>(in) * static_cast<double>(out);
    const auto elements = [](std::int64_t a, std::int64_t b) { return static_cast<double>(a) * static_cast<double>(b); };
    if (macs > static_cast<double>(kMaxLayerMacs) || elements(tokens, out) > static_cast<double>(kMaxElements) ||
        elements(tokens, in) > static_cast<double>(kMaxElements))
        throw Error("the layer is too large: " + std::to_string(tokens) + " tokens x " + std::to_string(in) + " in x " +
                    std::to_string(out) + " out (at most 2^38 multiply-adds and 2^28 elements in x and in y)");
}

void check_layer(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config) {
    check_layer_setup(x, w, bias, config);
    for (const auto& [t, name] : {std::pair<const Tensor*, const char*>{&w, "weights"}, {&x, "inputs"}, {bias, "bias"}}) {
        if (!t) continue;
        try {
            check_tensor(*t);
        } catch (const Error& e) {
            throw Error(std::string(name) + ": " + e.what());
        }
    }
}

void check_layer_setup(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config) {
    if (w.rank() != 2) throw Error("the weights must be 2-D [out, in]; got shape " + shape_text(w));
    if (x.rank() != 1 && x.rank() != 2) throw Error("the inputs must be 1-D [in] or 2-D [tokens, in]; got shape " + shape_text(x));
    if (x.cols() != w.cols())
        throw Error("the inputs have " + std::to_string(x.cols()) + " channels (last dimension) but the weights [out, in] have in = " +
                    std::to_string(w.cols()));
    if (bias && (bias->rank() != 1 || bias->cols() != w.rows()))
        throw Error("the bias must be 1-D of length out = " + std::to_string(w.rows()) + "; got shape " + shape_text(*bias));
    check_layer_size(x.rows(), w.cols(), w.rows());  // from the shapes alone, before any value is read
    if (!config.quantize_activations && (config.outlier_threshold || config.smooth_alpha))
        throw Error("the outlier threshold and smoothing need quantized activations (--activations int8, ...)");
    if (config.outlier_threshold && !(*config.outlier_threshold > 0 && std::isfinite(*config.outlier_threshold)))
        throw Error("the outlier threshold must be a finite number > 0; got " + format_exact(*config.outlier_threshold));
    if (config.smooth_alpha && !(*config.smooth_alpha >= 0 && *config.smooth_alpha <= 1))
        throw Error("the smoothing alpha must be in [0, 1]; got " + format_exact(*config.smooth_alpha));
    check_config(config.weights, w.shape);  // int<N> or a FORMATS.md format
    if (config.quantize_activations) {
        if (config.act_mode != Mode::Symmetric && config.act_mode != Mode::Asymmetric)
            throw Error("activations are quantized symmetric or asymmetric (min/max ranges)");
        try {
            check_config(activation_config(config), Shape{x.rows(), x.cols()});
        } catch (const Error& e) {
            throw Error(std::string("activations: ") + e.what());
        }
    }
}

LayerResult run_layer(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                      const std::vector<float>* reference) {
    check_layer(x, w, bias, config);
    LayerResult r;
    r.tokens = x.rows();
    r.in = w.cols();
    r.out = w.rows();
    r.output_shape = x.rank() == 1 ? Shape{r.out} : Shape{r.tokens, r.out};
    if (reference) {
        if (static_cast<std::int64_t>(reference->size()) != r.tokens * r.out)
            throw Error("the reference output does not match the layer's shape");
        r.reference = *reference;
    } else if (config.compute_reference) {
        r.reference = layer_reference(x, w, bias);
    }
    check_output_finite(r.reference, r.out, "the layer's reference output");
    if (config.quantize_activations)
        with_activations(x, w, bias, config, r);
    else
        weights_only(x, w, bias, config, r);
    check_output_finite(r.y, r.out, "the quantized layer's output");
    if (!r.reference.empty()) r.output = output_metrics(r.y, r.reference);
    return r;
}

std::vector<float> layer_reference(const Tensor& x, const Tensor& w, const Tensor* bias) {
    const RowMatD xd = ConstMapF(x.values.data(), x.rows(), x.cols()).cast<double>();
    const RowMatD wd = ConstMapF(w.values.data(), w.rows(), w.cols()).cast<double>();
    RowMatD y = xd * wd.transpose();
    if (bias) y.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bias->values.data(), w.rows()).cast<double>();
    std::vector<float> out(static_cast<std::size_t>(y.size()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(y.data()[i]);
    return out;
}

std::vector<std::int64_t> outlier_columns(const Tensor& x, double threshold) {
    std::vector<std::int64_t> cols;
    const std::int64_t rows = x.rows(), n = x.cols();
    std::vector<std::uint8_t> hit(static_cast<std::size_t>(n), 0);
    for (std::int64_t t = 0; t < rows; ++t)
        for (std::int64_t k = 0; k < n; ++k)
            if (std::abs(static_cast<double>(x.values[static_cast<std::size_t>(t * n + k)])) >= threshold)
                hit[static_cast<std::size_t>(k)] = 1;
    for (std::int64_t k = 0; k < n; ++k)
        if (hit[static_cast<std::size_t>(k)]) cols.push_back(k);
    return cols;
}

std::vector<double> smooth_factors(const Tensor& x, const Tensor& w, double alpha) {
    const std::int64_t n = x.cols();
    std::vector<double> ax(static_cast<std::size_t>(n), 0.0), aw(static_cast<std::size_t>(n), 0.0), m(ax.size(), 1.0);
    for (std::int64_t t = 0; t < x.rows(); ++t)
        for (std::int64_t k = 0; k < n; ++k)
            ax[static_cast<std::size_t>(k)] =
                std::max(ax[static_cast<std::size_t>(k)], std::abs(double{x.values[static_cast<std::size_t>(t * n + k)]}));
    for (std::int64_t o = 0; o < w.rows(); ++o)
        for (std::int64_t k = 0; k < n; ++k)
            aw[static_cast<std::size_t>(k)] =
                std::max(aw[static_cast<std::size_t>(k)], std::abs(double{w.values[static_cast<std::size_t>(o * n + k)]}));
    for (std::size_t k = 0; k < m.size(); ++k)
        if (ax[k] > 0 && aw[k] > 0) m[k] = std::pow(ax[k], alpha) / std::pow(aw[k], 1.0 - alpha);
    return m;
}

Metrics output_metrics(const std::vector<float>& got, const std::vector<float>& want) {
    Metrics m;
    m.count = static_cast<std::int64_t>(got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double e = static_cast<double>(got[i]) - static_cast<double>(want[i]);
        m.error_energy += e * e;
        m.mae += std::abs(e);
        m.max_abs_error = std::max(m.max_abs_error, std::abs(e));
        m.signal_energy += static_cast<double>(want[i]) * want[i];
        m.sum += want[i];
    }
    if (m.count == 0) return m;
    m.mse = m.error_energy / static_cast<double>(m.count);
    m.rmse = std::sqrt(m.mse);
    m.mae /= static_cast<double>(m.count);
    m.l2_error = std::sqrt(m.error_energy);
    if (m.signal_energy > 0 && m.error_energy > 0) m.sqnr_db = 10.0 * std::log10(m.signal_energy / m.error_energy);
    return m;
}

std::vector<ChannelContribution> channel_contributions(const LayerResult& result, const Tensor& x, const Tensor& w,
                                                       std::int64_t token, std::int64_t out, std::size_t count) {
    std::vector<ChannelContribution> all;
    if (result.x_used.empty() || token < 0 || token >= result.tokens || out < 0 || out >= result.out) return all;
    for (std::int64_t k = 0; k < result.in; ++k) {
        const auto xi = static_cast<std::size_t>(token * result.in + k), wi = static_cast<std::size_t>(out * result.in + k);
        const double exact = double{x.values[xi]} * double{w.values[wi]};
        all.push_back({k, double{result.x_used[xi]} * double{result.w_used[wi]} - exact, exact});
    }
    const auto by_size = [](const ChannelContribution& a, const ChannelContribution& b) {
        return std::abs(a.error) > std::abs(b.error) || (std::abs(a.error) == std::abs(b.error) && a.channel < b.channel);
    };
    count = std::min(count, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count), all.end(), by_size);
    all.resize(count);
    return all;
}

std::vector<double> smooth_alpha_curve(const Tensor& x, const Tensor& w, const Tensor* bias, const LayerConfig& config,
                                       const std::vector<double>& alphas, const std::function<bool()>& cancelled) {
    check_layer(x, w, bias, config);
    const std::vector<float> reference = layer_reference(x, w, bias);
    LayerConfig each = config;
    each.compute_reference = false;
    each.keep_used_factors = false;
    std::vector<double> mse;
    for (double alpha : alphas) {
        if (cancelled && cancelled()) break;
        each.smooth_alpha = alpha;
        mse.push_back(run_layer(x, w, bias, each, &reference).output.mse);
    }
    return mse;
}

}  // namespace qs
