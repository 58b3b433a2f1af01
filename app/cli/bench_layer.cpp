#include "cli/bench_layer.hpp"

#include <Eigen/Core>
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "cli/bench_timing.hpp"
#include "quantscope/error.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {

LayerShape parse_layer_shape(const std::string& text) {
    try {
        const Shape dims = parse_shape(text, std::numeric_limits<std::int64_t>::max());
        if (dims.size() != 3) throw Error("expected TOKENSxINxOUT like 512x4096x4096");
        check_layer_size(dims[0], dims[1], dims[2]);  // the product and x / y, as `quantscope layer` checks them
        checked_numel({dims[2], dims[1]});            // and W [out, in]
        return {dims[0], dims[1], dims[2]};
    } catch (const Error& e) {
        throw Error(std::string("--layer-shape: ") + e.what());
    }
}

namespace {

// The bench's layer: x ~ N(0, 1) [tokens, in] (seed 1) and W ~ N(0, 0.02) [out, in] (seed 2).
void bench_operands(const LayerShape& shape, Tensor& x, Tensor& w) {
    RandomSpec spec;
    spec.shape = {shape.tokens, shape.in};
    spec.seed = 1;
    x = generate_random(spec);
    spec.shape = {shape.out, shape.in};
    spec.seed = 2;
    spec.std = 0.02;
    w = generate_random(spec);
}

}  // namespace

LayerFigures measure_layer_rows(int repeats, const LayerShape& shape) {
    LayerFigures f;
    f.tokens = shape.tokens, f.in = shape.in, f.out = shape.out;
    Tensor x, w;
    bench_operands(shape, x, w);

    using RowMatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::Map<const RowMatF> xm(x.values.data(), f.tokens, f.in), wm(w.values.data(), f.out, f.in);
    RowMatF y;
    y.noalias() = xm * wm.transpose();  // warm-up
    f.gemm_ms = median_ms(repeats, [&] { y.noalias() = xm * wm.transpose(); });

    LayerConfig w8a16;
    w8a16.weights.mode = Mode::Symmetric;
    w8a16.weights.granularity = Granularity::Channel;
    w8a16.compute_reference = false;
    LayerConfig w8a8 = w8a16;
    w8a8.quantize_activations = true;
    w8a8.act_granularity = ActGranularity::Token;
    run_layer(x, w, nullptr, w8a8);  // warm-up
    f.w8a8_ms = median_ms(repeats, [&] { run_layer(x, w, nullptr, w8a8); });
    f.w8a16_ms = median_ms(repeats, [&] { run_layer(x, w, nullptr, w8a16); });
    f.reference_ms = median_ms(std::min(repeats, 3), [&] { layer_reference(x, w, nullptr); });
    return f;
}

void add_layer_rows(JsonObject& json, const LayerFigures& f) {
    json.string("layer_shape", "[" + std::to_string(f.tokens) + "x" + std::to_string(f.in) + "].[" + std::to_string(f.out) +
                                   "x" + std::to_string(f.in) + "]^T")
        .number("layer_eigen_gemm_ms", f.gemm_ms)
        .number("layer_w8a8_ms", f.w8a8_ms)
        .number("layer_w8a16_ms", f.w8a16_ms)
        .number("layer_w8a16_ratio_to_gemm", f.w8a16_ms / f.gemm_ms)
        .number("layer_reference_ms", f.reference_ms);
}

MethodFigures measure_method_rows(const LayerShape& shape) {
    MethodFigures f;
    f.tokens = shape.tokens, f.in = shape.in, f.out = shape.out;
    Tensor x, w;
    bench_operands(shape, x, w);
    LayerConfig config;
    config.weights.dtype = IntType::parse("int4");
    config.weights.mode = Mode::Symmetric;
    config.weights.granularity = f.in % 128 == 0 ? Granularity::Group : Granularity::Channel;
    config.weights.group_size = f.in % 128 == 0 ? 128 : 0;
    LayerConfig no_reference = config;
    no_reference.compute_reference = false;
    run_layer(x, w, nullptr, no_reference);  // warm-up
    f.rtn_eval_ms = median_ms(3, [&] { run_layer(x, w, nullptr, no_reference); });
    const auto time_method = [&](LayerMethod method, MethodResult* out) {
        MethodConfig m;
        m.method = method;
        return median_ms(1, [&] {
            MethodResult r = run_method(x, w, nullptr, config, m);
            if (out) *out = std::move(r);
        });
    };
    MethodResult gptq;
    f.gptq_ms = time_method(LayerMethod::Gptq, &gptq);
    f.gptq_hessian_ms = gptq.gptq->hessian_ms;
    f.gptq_inverse_ms = gptq.gptq->inverse_ms;
    f.gptq_loop_ms = gptq.gptq->loop_ms;
    f.awq_ms = time_method(LayerMethod::Awq, nullptr);
    const bool power_of_two = (f.in & (f.in - 1)) == 0;
    f.rotate_ms = power_of_two ? time_method(LayerMethod::Rotate, nullptr) : -1;
    f.rotate_gptq_ms = power_of_two ? time_method(LayerMethod::RotateGptq, nullptr) : -1;
    return f;
}

void add_method_rows(JsonObject& json, const MethodFigures& f) {
    json.string("methods_layer_shape", "[" + std::to_string(f.tokens) + "x" + std::to_string(f.in) + "].[" + std::to_string(f.out) +
                                           "x" + std::to_string(f.in) + "]^T int4 g128")
        .number("method_rtn_eval_ms", f.rtn_eval_ms)
        .number("method_gptq_ms", f.gptq_ms)
        .number("method_gptq_hessian_ms", f.gptq_hessian_ms)
        .number("method_gptq_inverse_ms", f.gptq_inverse_ms)
        .number("method_gptq_loop_ms", f.gptq_loop_ms)
        .number("method_awq_ms", f.awq_ms)
        .number("method_awq_ratio_to_rtn_eval", f.awq_ms / f.rtn_eval_ms)
        .number("method_rotate_ms", f.rotate_ms >= 0 ? std::optional<double>(f.rotate_ms) : std::nullopt)
        .number("method_rotate_gptq_ms", f.rotate_gptq_ms >= 0 ? std::optional<double>(f.rotate_gptq_ms) : std::nullopt);
}

}  // namespace qs::cli
