// `quantscope bench`: the speed of the full per-tensor pipeline against a memcpy of the same input
// (the bandwidth floor) and against the lessons' plain scalar loop. Medians over repeated runs.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

#include "cli/bench_file.hpp"
#include "cli/bench_formats.hpp"
#include "cli/bench_layer.hpp"
#include "cli/bench_timing.hpp"
#include "cli/commands.hpp"
#include "quantscope/json_writer.hpp"
#include "cli/options.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {
const char* const kBenchHelp =
    "usage: quantscope bench [--shape 4096x4096] [--dtype int8] [--repeats 15]\n"
    "                        [--layer-only | --methods-only | --formats-only | --pipeline-only]\n"
    "                        [--layer-shape 512x4096x4096] [--large-shape 128256x4096]\n"
    "                        [--make-large FILE.safetensors]\n"
    "\n"
    "Times the per-tensor asymmetric pipeline (min/max, s and z, quantize, dequantize, error tensor,\n"
    "metrics) on a seeded normal tensor and prints one JSON object: elements, pipeline_ms, memcpy_ms,\n"
    "ratio_to_memcpy (target: at most 2.2), params_ms (min/max, s and z alone: one read of the tensor)\n"
    "and params_ratio_to_memcpy (target: at most 1.2), naive_ms, calibrate_percentile_ms,\n"
    "calibrate_mse_ms (per tensor), calibrate_mse_group32_ms (groups of 32 along the last axis; null when 32 does not divide it) and\n"
    "mse_group32_ratio (the two MSE calibrations' ratio: the target is at most 3), and landscape_64x64_ms\n"
    "(a 64 x 64 (scale, zero point) MSE map of 1M elements); medians, in milliseconds.\n"
    "Then whole processes on the same tensor saved as a .npy in a temporary folder (at most 7 rounds, each\n"
    "after a warm-up): cp_file_ms (cp of the file), quantize_file_ms (quantize FILE, metrics only) and\n"
    "quantize_file_outputs_ms (with --out-quantized, --out-dequantized and --out-error), their ratios to cp\n"
    "taken round by round (targets: at most 4 and 8), and quantize_file_peak_mib, the peak resident memory\n"
    "of the metrics-only run (target: quantize_file_peak_target_mib, 1.3 x file_mib + 50).\n"
    "Then `sweep` of a sharded checkpoint it writes there (two shards, each a BF16 tensor of the shape, an\n"
    "F32 one of half its rows and a vector; int4, groups of 128) against cp of its shards: cp_checkpoint_ms,\n"
    "sweep_ms, sweep_gb_per_s (the checkpoint's bytes over the whole process's time), sweep_ratio_to_cp\n"
    "and sweep_peak_mib.\n"
    "Then a [512 x 4096] . [4096 x 4096]^T linear layer (`quantscope layer`, no reference): layer_w8a8_ms (int8\n"
    "per-token activations, int8 per-channel W, the exact integer path; target 1500), layer_w8a16_ms (W-only)\n"
    "against layer_eigen_gemm_ms, Eigen's float32 product of the same shapes (target ratio 1.5), and\n"
    "layer_reference_ms (the float64 reference). --layer-only prints the layer rows alone; --layer-shape\n"
    "TOKENSxINxOUT times another layer (the targets are for the default).\n"
    "--methods-only: instead, SPEC's methods once each on a [2048 x 4096] . [4096 x 4096]^T layer (or\n"
    "--layer-shape), int4 per group of 128: method_gptq_ms (target 15000) with its _hessian_ms, _inverse_ms\n"
    "and _loop_ms, method_awq_ms (G = 20) and its ratio to method_rtn_eval_ms (one round-to-nearest\n"
    "evaluation of the layer; target 20), method_rotate_ms and method_rotate_gptq_ms.\n"
    "Then the number formats (FORMATS.md): formats_int8_ms (int8 per tensor, the three outputs into arrays)\n"
    "and, the same way, format_<name>_ms with its ratio to int8 for fp8_e4m3, bf16, fp4_e2m1, nf4 (targets:\n"
    "2), mxfp4, nvfp4, q4_0 (targets: 3), and llama.cpp's q5_0, q5_1, q2_k ... q6_k, iq4_nl, iq4_xs, tq1_0,\n"
    "tq2_0 (targets: 3; at most 3 repeats) and iq4_xs_importance (with an importance vector; target 5);\n"
    "formats_command_ms: `quantscope formats` on the tensor (target 2000 on 4096 x 4096). --formats-only\n"
    "prints these rows alone.\n"
    "Then, under a display (xvfb-run), the window on a BF16 tensor of --large-shape (default 128256x4096,\n"
    "an 8B model's embedding, 1 GB) written there: `quantscope gui FILE --bench-frames 20` as a child,\n"
    "window_open_ms (process start to the first figure), window_recompute_ms (median slider step),\n"
    "window_read_pass_ms (a plain read pass of the same bytes; the ratio's target is at most 1.5),\n"
    "window_peak_mib (target window_peak_target_mib, 1.5 x the tensor's bytes + 300 MB); without a\n"
    "display \"window\": null.\n"
    "--pipeline-only: the pipeline's rows alone (elements, threads, repeats, pipeline_ms, memcpy_ms): the\n"
    "yardstick that `python3 -m quantscope.bench` times the Python module against.\n"
    "\n"
    "quantscope bench --make-large FILE.safetensors [--large-shape 128256x4096]\n"
    "  only writes that tensor (seeded, ~0.02 std, an outlier every 1000 rows) and exits.\n";

namespace {

// Calibration: the whole compute_params with each calibrator (per tensor).
struct CalibrationFigures {
    double percentile_ms = 0, mse_ms = 0;
    double mse_groups_ms = -1;  // MSE in groups of 32 along the last axis; -1: 32 does not divide it
};

CalibrationFigures measure_calibration(const Tensor& tensor, const QuantConfig& config, int repeats) {
    CalibrationFigures figures;
    QuantParams params;
    QuantConfig percentile = config, mse = config;
    percentile.calibration = Calibration::Percentile;
    percentile.percentile = 99.9;
    mse.calibration = Calibration::Mse;
    figures.percentile_ms = median_ms(repeats, [&] { params = compute_params(tensor, percentile); });
    figures.mse_ms = median_ms(repeats, [&] { params = compute_params(tensor, mse); });
    // Many small blocks must not cost more than one big one (issue 8, item 6): groups of 32 against per tensor.
    QuantConfig mse_groups = mse;
    mse_groups.granularity = Granularity::Group;
    mse_groups.group_size = 32;
    if (tensor.shape.back() % mse_groups.group_size == 0)
        figures.mse_groups_ms = median_ms(repeats, [&] { params = compute_params(tensor, mse_groups); });
    return figures;
}

// The pipeline (compute_params + quantize_into the three outputs, warmed up) and a memcpy of the input.
struct PipelineFigures {
    double pipeline_ms = 0, memcpy_ms = 0;
};

PipelineFigures measure_pipeline(const Tensor& tensor, const QuantConfig& config, int repeats) {
    QuantResult result;
    QuantParams params = compute_params(tensor, config);
    quantize_into(tensor, params, config, result);  // warm-up: allocates and faults in the outputs
    PipelineFigures figures;
    figures.pipeline_ms = median_ms(repeats, [&] {
        params = compute_params(tensor, config);
        quantize_into(tensor, params, config, result);
    });
    std::vector<float> copy(tensor.values.size());
    std::memcpy(copy.data(), tensor.values.data(), copy.size() * sizeof(float));
    figures.memcpy_ms = median_ms(repeats, [&] {
        std::memcpy(copy.data(), tensor.values.data(), copy.size() * sizeof(float));
    });
    return figures;
}

// The error landscape of issue 5: 64 x 64 (scale, zero point) pairs, exact, over the first 1M elements.
struct LandscapeFigures {
    std::int64_t elements = 0;
    double ms = 0;
};

LandscapeFigures measure_landscape(const Tensor& tensor, const QuantConfig& config, int repeats) {
    Tensor million;
    million.values.assign(tensor.values.begin(), tensor.values.begin() + std::min<std::int64_t>(tensor.numel(), 1 << 20));
    million.shape = {million.numel()};
    const QuantParams center = compute_params(million, config);
    std::vector<double> scales, landscape;
    std::vector<std::int32_t> zero_points;
    for (int i = 0; i < 64; ++i) {
        scales.push_back(center.scale[0] * std::pow(4.0, (i - 31.5) / 32.0));
        zero_points.push_back(std::clamp(center.zero_point[0] - 32 + i, config.dtype.q_min(), config.dtype.q_max()));
    }
    return {million.numel(),
            median_ms(repeats, [&] { mse_landscape(million, config, scales, zero_points, 1, landscape); })};
}

}  // namespace

int run_bench(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kBenchHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {{"--shape", true}, {"--dtype", true}, {"--repeats", true},
                                                {"--layer-only", false}, {"--formats-only", false},
                                                {"--methods-only", false}, {"--pipeline-only", false},
                                                {"--make-large", true}, {"--large-shape", true},
                                                {"--layer-shape", true}});
    if (!parsed.positionals.empty()) throw Error("unexpected argument " + quoted_text(parsed.positionals[0]));
    if (parsed.has("--layer-only") + parsed.has("--formats-only") + parsed.has("--methods-only") +
            parsed.has("--pipeline-only") > 1)  // each prints its rows alone
        throw Error("--layer-only, --formats-only, --methods-only and --pipeline-only do not go together: give one");
    const Shape large = parse_shape(parsed.get("--large-shape") ? *parsed.get("--large-shape") : "128256x4096",
                                    kMaxViewElements);
    if (const std::string* path = parsed.get("--make-large")) {
        // What it writes is a .safetensors file: another name is a slip (a device, the wrong argument).
        if (lower_extension(*path) != ".safetensors")
            throw Error("--make-large: " + quoted_text(*path) + " is not a .safetensors file name");
        write_large_tensor(*path, large, 1);
        return 0;
    }
    const LayerShape layer = parsed.get("--layer-shape") ? parse_layer_shape(*parsed.get("--layer-shape")) : LayerShape{};
    RandomSpec spec;
    spec.shape = parse_shape(parsed.get("--shape") ? *parsed.get("--shape") : "4096x4096");
    QuantConfig config;
    if (auto v = parsed.get("--dtype")) config.dtype = IntType::parse(*v);
    int repeats = 15;
    if (auto v = parsed.get("--repeats")) {
        const std::int64_t r = parse_int("--repeats", *v);
        if (r < 1 || r > 1000) throw Error("--repeats must be between 1 and 1000");
        repeats = static_cast<int>(r);
    }

    if (parsed.has("--methods-only")) {
        JsonObject json;
        json.integer("threads", omp_get_max_threads());
        const LayerShape shape = parsed.get("--layer-shape") ? layer : LayerShape{2048, 4096, 4096};
        add_method_rows(json, measure_method_rows(shape));
        std::printf("%s\n", json.str().c_str());
        return 0;
    }
    if (parsed.has("--layer-only")) {
        JsonObject json;
        json.integer("threads", omp_get_max_threads()).integer("repeats", std::min(repeats, 7));
        add_layer_rows(json, measure_layer_rows(std::min(repeats, 7), layer));
        std::printf("%s\n", json.str().c_str());
        return 0;
    }
    if (parsed.has("--pipeline-only")) {  // the yardstick of the Python module's bench (python3 -m quantscope.bench)
        const Tensor tensor = generate_random(spec);
        const PipelineFigures pipeline = measure_pipeline(tensor, config, repeats);
        JsonObject json;
        json.integer("elements", tensor.numel()).integer("threads", omp_get_max_threads()).integer("repeats", repeats);
        json.number("pipeline_ms", pipeline.pipeline_ms).number("memcpy_ms", pipeline.memcpy_ms);
        std::printf("%s\n", json.str().c_str());
        return 0;
    }
    if (parsed.has("--formats-only")) {
        const Tensor tensor = generate_random(spec);
        JsonObject json;
        json.integer("elements", tensor.numel()).integer("threads", omp_get_max_threads()).integer("repeats", repeats);
        add_format_rows(json, tensor, repeats);
        std::printf("%s\n", json.str().c_str());
        return 0;
    }
    // First, while this process is small (the children's peak memory counts from its size).
    const FileFigures file_figures = measure_file_rows(spec, std::min(repeats, 7));
    const SweepFigures sweep_figures = measure_sweep_rows(spec.shape, std::min(repeats, 7));
    const WindowFigures window_figures = measure_window_rows(large, 20);
    const Tensor tensor = generate_random(spec);
    const PipelineFigures pipeline = measure_pipeline(tensor, config, repeats);
    const double pipeline_ms = pipeline.pipeline_ms, memcpy_ms = pipeline.memcpy_ms;
    QuantParams params;
    const double params_ms = median_ms(repeats, [&] { params = compute_params(tensor, config); });

    QuantResult naive;
    naive_pipeline(tensor, config.dtype, naive);
    const double naive_ms = median_ms(std::min(repeats, 5), [&] { naive_pipeline(tensor, config.dtype, naive); });

    const CalibrationFigures calibration = measure_calibration(tensor, config, std::min(repeats, 5));
    const LandscapeFigures landscape = measure_landscape(tensor, config, std::min(repeats, 5));

    JsonObject json;
    json.integer("elements", tensor.numel())
        .raw("shape", shape_to_json(tensor.shape))
        .string("dtype", config.dtype.name())
        .integer("threads", omp_get_max_threads())
        .integer("repeats", repeats)
        .number("pipeline_ms", pipeline_ms)
        .number("memcpy_ms", memcpy_ms)
        .number("ratio_to_memcpy", pipeline_ms / memcpy_ms)
        .number("params_ms", params_ms)
        .number("params_ratio_to_memcpy", params_ms / memcpy_ms)
        .number("naive_ms", naive_ms)
        .number("speedup_vs_naive", naive_ms / pipeline_ms)
        .number("calibrate_percentile_ms", calibration.percentile_ms)
        .number("calibrate_mse_ms", calibration.mse_ms)
        .number("calibrate_mse_group32_ms", calibration.mse_groups_ms >= 0 ? std::optional<double>(calibration.mse_groups_ms)
                                                                            : std::nullopt)
        .number("mse_group32_ratio", calibration.mse_groups_ms >= 0
                                         ? std::optional<double>(calibration.mse_groups_ms / calibration.mse_ms)
                                         : std::nullopt)
        .integer("landscape_elements", landscape.elements)
        .number("landscape_64x64_ms", landscape.ms);
    add_file_rows(json, file_figures);
    add_sweep_rows(json, sweep_figures);
    add_layer_rows(json, measure_layer_rows(std::min(repeats, 7), layer));
    add_format_rows(json, tensor, std::min(repeats, 7));
    add_window_rows(json, window_figures);
    std::printf("%s\n", json.str().c_str());
    return 0;
}

}  // namespace qs::cli
