// `quantscope layer`: SPEC "Layer" — y = x W^T + b with W (and optionally x) quantized, against float64.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <type_traits>

#include "cli/commands.hpp"
#include "cli/format_output.hpp"
#include "cli/options.hpp"
#include "cli/reports.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_inputs.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {
namespace {

// The object `quantize` prints (SPEC "Layer"), for one operand of the layer: the same writer, so that a
// format's fields (format_kind, block_size, global_scale, bits_per_weight, bytes) are there too.
// `granularity`, when given, names the activations' scales ("token": one per row of x) instead of the config.
std::string operand_json(const OperandQuantization& q, const char* granularity, bool all) {
    const QuantConfig& config = q.config;  // int<N> or a FORMATS.md format, as quantize holds it
    const Quantization as_quantize{q.params, q.metrics, {}, q.format_params};
    JsonObject json;
    json.raw("shape", shape_to_json(q.shape));
    if (granularity && !q.format) {
        std::string scales, zero_points;
        params_json(q.params, all, scales, zero_points);
        json.string("dtype", config.dtype.name())
            .integer("q_min", config.dtype.q_min())
            .integer("q_max", config.dtype.q_max())
            .string("mode", to_string(config.mode))
            .string("granularity", granularity)
            .string("calibration", calibration_label(config))
            .raw("scale", scales)
            .raw("zero_point", zero_points);
    } else {
        describe_quantization(json, config, as_quantize, all);
    }
    describe_metrics(json, q.metrics);
    std::int64_t n = 1;
    for (const std::int64_t d : q.shape) n *= d;
    describe_cost(json, config, as_quantize, n);
    return json.str();
}

// W's bits per weight: the quantized columns at their format's cost, the outlier columns at 32.
double layer_bits_per_weight(const LayerResult& r) {
    const std::int64_t total = r.out * r.in, kept = r.weights.shape[0] * r.weights.shape[1];
    double bits = static_cast<double>(total - kept) * 32.0;
    if (kept > 0)
        bits += quantization_cost(r.weights.config, kept, r.weights.params.block_count).bits_per_weight * static_cast<double>(kept);
    return bits / static_cast<double>(total);
}

std::string output_json(const LayerResult& r) {
    JsonObject json;
    json.number("mse", r.output.mse)
        .number("rmse", r.output.rmse)
        .number("mae", r.output.mae)
        .number("max_abs_error", r.output.max_abs_error)
        .number("sqnr_db", r.output.sqnr_db)
        .integer("outlier_columns", static_cast<std::int64_t>(r.outlier_columns.size()))
        .number("bits_per_weight", layer_bits_per_weight(r));
    return json.str();
}

Tensor load_named(const std::string& option, const std::string& path, const std::string& tensor_name) {
    try {
        return load_tensor(path, tensor_name);
    } catch (const Error& e) {
        throw Error(option + ": " + e.what());
    }
}

// Every option that shapes the computation, into `config`.
void layer_config(const ParsedArgs& args, LayerConfig& config) {
    for (const char* option : {"--recipe", "--overflow"})
        if (args.has(option)) throw Error(std::string(option) + " does not apply to layer");
    apply_quantize_options(args, config.weights);  // int<N> or a FORMATS.md format, as for quantize
    const std::string activations = args.has("--activations") ? *args.get("--activations") : "none";
    std::string word = activations;  // none, like a type name, in any case
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    config.quantize_activations = word != "none";
    if (config.quantize_activations) config.act_dtype = IntType::parse(activations);
    for (const char* option : {"--act-mode", "--act-granularity", "--outlier-threshold", "--smooth-alpha"})
        if (!config.quantize_activations && args.has(option))
            throw Error(std::string(option) + " needs --activations int8|int4|... (the default, none, keeps x in float)");
    if (const std::string* m = args.get("--act-mode")) {
        config.act_mode = parse_mode(*m);
        if (config.act_mode != Mode::Symmetric && config.act_mode != Mode::Asymmetric)
            throw Error("--act-mode is symmetric or asymmetric");
    }
    if (const std::string* g = args.get("--act-granularity")) config.act_granularity = parse_act_granularity(*g);
    if (const std::string* t = args.get("--outlier-threshold"))
        config.outlier_threshold = parse_double("--outlier-threshold", *t);
    if (const std::string* a = args.get("--smooth-alpha")) config.smooth_alpha = parse_double("--smooth-alpha", *a);
}

}  // namespace

// --inputs X (or `given`), or --random-inputs normal|relu|ramp --tokens T [--seed N] [--outlier-channels K
// --outlier-scale F].
Tensor layer_inputs(const ParsedArgs& args, const Tensor& w, Tensor given) {
    const bool file = args.has("--inputs") || !given.values.empty(), random = args.has("--random-inputs");
    if (file == random) throw Error("give the inputs: --inputs X.npy or --random-inputs normal|relu|ramp --tokens T");
    if (!random)
        for (const char* option : {"--tokens", "--outlier-channels", "--outlier-scale"})
            if (args.has(option)) throw Error(std::string(option) + " needs --random-inputs normal|relu|ramp");
    if (!given.values.empty()) return given;
    if (file) return load_named("--inputs", *args.get("--inputs"), "");
    LayerInputSpec spec;
    spec.distribution = parse_input_distribution(*args.get("--random-inputs"));
    if (!args.has("--tokens")) throw Error("--random-inputs needs --tokens T");
    spec.tokens = parse_int("--tokens", *args.get("--tokens"));
    if (spec.tokens < 1) throw Error("--tokens must be >= 1");
    if (const std::string* s = args.get("--seed")) {
        const std::int64_t seed = parse_int("--seed", *s);
        if (seed < 0) throw Error("--seed must be >= 0");
        spec.seed = static_cast<std::uint64_t>(seed);
    }
    if (args.has("--outlier-channels") != args.has("--outlier-scale"))
        throw Error("--outlier-channels K and --outlier-scale F go together");
    if (const std::string* k = args.get("--outlier-channels")) spec.outlier_channels = parse_int("--outlier-channels", *k);
    if (const std::string* f = args.get("--outlier-scale")) spec.outlier_scale = parse_double("--outlier-scale", *f);
    if (w.rank() != 2) throw Error("the weights must be 2-D [out, in]; got shape [" + shape_to_string(w.shape) + "]");
    check_layer_size(spec.tokens, w.cols(), w.rows());  // before the inputs take any memory
    return generate_layer_inputs(spec, w.cols());
}

namespace {

// --method and its options (SPEC "Methods"); an option of another method is refused by name.
MethodConfig method_config(const ParsedArgs& args) {
    MethodConfig m;
    if (const std::string* v = args.get("--method")) m.method = parse_layer_method(*v);
    const bool gptq = m.method == LayerMethod::Gptq || m.method == LayerMethod::RotateGptq;
    const bool rotate = m.method == LayerMethod::Rotate || m.method == LayerMethod::RotateGptq;
    for (const char* option : {"--damp", "--block", "--act-order"})
        if (args.has(option) && !gptq) throw Error(std::string(option) + " needs --method gptq or rotate+gptq");
    if (args.has("--grid") && m.method != LayerMethod::Awq) throw Error("--grid needs --method awq");
    if (args.has("--rotation") && !rotate) throw Error("--rotation needs --method rotate or rotate+gptq");
    if (const std::string* v = args.get("--damp")) m.damp = parse_double("--damp", *v);
    if (const std::string* v = args.get("--block")) m.block = parse_int("--block", *v);
    m.act_order = args.has("--act-order");
    if (const std::string* v = args.get("--grid")) {
        const std::int64_t grid = parse_int("--grid", *v);
        if (grid < 1 || grid > kMaxAwqGrid) throw Error("--grid must be from 1 to " + std::to_string(kMaxAwqGrid));
        m.grid = static_cast<int>(grid);
    }
    if (const std::string* v = args.get("--rotation")) m.rotation = parse_rotation_kind(*v);
    // --seed seeds --random-inputs normal|relu, the --outlier-channels any of them picks, and random-hadamard's
    // signs: anywhere else it would be silently ignored.
    const std::string* inputs = args.get("--random-inputs");
    if (args.has("--seed") && m.rotation != RotationKind::RandomHadamard &&
        !(inputs && (*inputs != "ramp" || args.has("--outlier-channels"))))
        throw Error("--seed is unused here: it seeds --random-inputs normal|relu, --outlier-channels and "
                    "--rotation random-hadamard");
    if (m.rotation == RotationKind::RandomHadamard)
        if (const std::string* v = args.get("--seed")) {
            const std::int64_t seed = parse_int("--seed", *v);
            if (seed < 0) throw Error("--seed must be >= 0");
            m.seed = static_cast<std::uint64_t>(seed);
        }
    return m;
}

std::string summary_json(const std::vector<double>& v) {
    if (v.empty()) return "null";
    JsonObject json;
    json.number("min", *std::min_element(v.begin(), v.end())).number("max", *std::max_element(v.begin(), v.end()));
    return json.str();
}

std::string method_json(const MethodResult& r) {
    JsonObject json;
    json.string("name", to_string(r.method));
    if (r.gptq) {
        json.number("damp", r.gptq->damp)
            .integer("block", r.gptq->block)
            .raw("act_order", r.gptq->act_order ? "true" : "false")
            .integer("dead_columns", r.gptq->dead_columns);
    }
    if (r.awq) json.number("ratio", r.awq->ratio).raw("losses", JsonObject::array(r.awq->losses)).raw("scales", summary_json(r.awq->scales));
    if (r.rotate) {
        JsonObject before, after;
        before.number("max_over_std", r.rotate->max_over_std_before).number("kurtosis", r.rotate->kurtosis_before);
        after.number("max_over_std", r.rotate->max_over_std_after).number("kurtosis", r.rotate->kurtosis_after);
        json.string("rotation", to_string(r.rotate->kind)).raw("weights_before", before.str()).raw("weights_after", after.str());
    }
    return json.str();
}

std::string metrics_json(const Metrics& m) {
    JsonObject json;
    json.number("mse", m.mse).number("rmse", m.rmse).number("mae", m.mae).number("max_abs_error", m.max_abs_error).number("sqnr_db", m.sqnr_db);
    return json.str();
}

}  // namespace

const char* const kLayerHelp =
    "usage: quantscope layer --weights W.npy (--inputs X.npy | --random-inputs normal|relu|ramp --tokens T\n"
    "                        [--seed N] [--outlier-channels K --outlier-scale F]) [--bias B.npy] [options]\n"
    "\n"
    "A linear layer y = x W^T + b (torch.nn.Linear: W is [out, in], x is [tokens, in] or one token [in],\n"
    "b is [out]) with W quantized, and x too with --activations, against the float64 reference. Prints one\n"
    "JSON object: \"weights\" (the object `quantize` prints, for W as quantized: smoothed, kept columns),\n"
    "\"inputs\" (the same for x, or null) and \"output\" (mse, rmse, mae, max_abs_error, sqnr_db of y against\n"
    "the reference, outlier_columns, bits_per_weight).\n"
    "\n"
    "weights: the options of `quantize` (--dtype int8|int4|...|fp8-e4m3|nf4|q4_0|..., --mode, --scale\n"
    "  --zero-point, --granularity, --axis, --group-size, --rounding, --calibrate, --recompute-scale);\n"
    "  --tensor NAME picks W from a .safetensors file\n"
    "inputs:\n"
    "  --inputs X               a .npy or .csv file, 1-D or 2-D\n"
    "  --random-inputs D        normal: x ~ N(0, 1) from --seed (default 0); relu: max(0, x), the\n"
    "                           positive inputs after an activation function; ramp: x[t, k] = k + 1\n"
    "                           (the course's x = [1, 2, 3] for in = 3)\n"
    "  --tokens T               rows of x\n"
    "  --outlier-channels K     K distinct input channels chosen from the seed ...\n"
    "  --outlier-scale F        ... multiplied by F in every token (LLM activations' outlier features)\n"
    "activations:\n"
    "  --activations A          none (default: W-only, \"W8A16\", float32 product on dequantized W) or\n"
    "                           int8|int4|... (\"W8A8\": integer products summed exactly where scales factor)\n"
    "  --act-mode M             symmetric (default) or asymmetric (min/max ranges)\n"
    "  --act-granularity G      tensor (default) or token (one scale per row of x)\n"
    "  --outlier-threshold T    LLM.int8(): input columns with some |x| >= T stay float32 (x and W)\n"
    "  --smooth-alpha A         SmoothQuant, 0 <= A <= 1: m_k = max|x_k|^A / max|W_k|^(1-A), x_k / m_k and\n"
    "                           W_k * m_k before quantizing\n"
    "methods (W only: --activations none, int<N> weights per tensor, channel or group; float64):\n"
    "  --method M               rtn (default: the plain path), gptq, awq, rotate or rotate+gptq; adds\n"
    "                           \"method\" (its details) and \"rtn_output\" (round-to-nearest's output metrics)\n"
    "  --damp D                 gptq: H += D * mean(diag H) * I, 0 < D <= 1e6 (default 0.01)\n"
    "  --block B                gptq: columns updated at once (default 128)\n"
    "  --act-order              gptq: columns by decreasing diag H\n"
    "  --grid G                 awq: ratios r = 0, 1/G, ... (default 20)\n"
    "  --rotation R             rotate: hadamard (default) or random-hadamard (signs from --seed)\n"
    "  --seed N                 of the methods, only --rotation random-hadamard takes it (its signs)\n"
    "outputs:\n"
    "  --out-quantized Q.npy    W's codes (with --method: the method's; rotate: of W H)\n"
    "  --out-dequantized D.npy  the weight the layer used, float32 (rotate: r'(W H))\n"
    "  --out-output Y.npy       y as float32 (.npy or .csv)\n"
    "  --out-reference R.npy    the reference as float32\n"
    "  --all-params             list every scale and zero point (else more than 4096 are summarised)\n";

std::vector<OptionSpec> layer_report_options() {
    return join(quantize_options(), {{"--tokens", true},           {"--seed", true},           {"--random-inputs", true},
                                     {"--outlier-channels", true}, {"--outlier-scale", true}, {"--activations", true},
                                     {"--act-mode", true},         {"--act-granularity", true}, {"--outlier-threshold", true},
                                     {"--smooth-alpha", true},     {"--all-params", false},   {"--method", true},
                                     {"--damp", true},             {"--block", true},         {"--act-order", false},
                                     {"--grid", true},             {"--rotation", true}});
}

LayerRequest layer_request(const ParsedArgs& args) {
    LayerRequest request;
    layer_config(args, request.config);
    request.method = method_config(args);
    request.with_method = args.has("--method");
    request.all_params = args.has("--all-params");
    return request;
}

MethodResult compute_layer(const LayerRequest& request, const Tensor& x, const Tensor& w, const Tensor* bias,
                           bool keep_codes, MethodControl* control) {
    // Without --method the plain path, whose JSON stays as it was; --method rtn is that path with the method's
    // fields beside it.
    if (keep_codes && !request.with_method && (request.config.outlier_threshold || request.config.smooth_alpha))
        throw Error("--out-quantized and --out-dequantized write W as quantize quantizes it: not with "
                    "--outlier-threshold or --smooth-alpha, whose W differs (or give --method)");
    MethodResult m;
    if (request.with_method || keep_codes)
        m = run_method(x, w, bias, request.config, request.method, control ? *control : MethodControl{});
    else
        m.layer = qs::run_layer(x, w, bias, request.config);
    return m;
}

std::string layer_json(const LayerRequest& request, const MethodResult& m) {
    const LayerResult& r = m.layer;
    const bool all = request.all_params;
    JsonObject json;
    json.raw("weights", operand_json(r.weights, nullptr, all))
        .raw("inputs", r.inputs ? operand_json(*r.inputs, to_string(request.config.act_granularity), all) : "null")
        .raw("output", output_json(r));
    if (request.with_method) json.raw("method", method_json(m)).raw("rtn_output", metrics_json(m.rtn_output));
    return json.str();
}

int run_layer(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kLayerHelp)) return 0;
    const ParsedArgs parsed =
        parse_args(args, join(layer_report_options(), {{"--weights", true},      {"--tensor", true},
                                                       {"--bias", true},         {"--inputs", true},
                                                       {"--out-output", true},   {"--out-reference", true},
                                                       {"--out-quantized", true}, {"--out-dequantized", true}}));
    if (!parsed.positionals.empty()) throw Error("unexpected argument " + quoted_text(parsed.positionals[0]));
    if (!parsed.has("--weights")) throw Error("layer needs --weights W (a 2-D [out, in] .npy, .csv or .safetensors)");

    // Outputs first: a path that cannot be written fails before any work.
    OutputFiles files;
    std::vector<FileRole> inputs{{"--weights", *parsed.get("--weights")}}, outputs;
    for (const char* option : {"--bias", "--inputs"})
        if (const std::string* p = parsed.get(option)) inputs.push_back({option, *p});
    AtomicFileWriter* y_file = nullptr;
    AtomicFileWriter* ref_file = nullptr;
    AtomicFileWriter* codes_file = nullptr;
    AtomicFileWriter* deq_file = nullptr;
    for (const char* option : {"--out-output", "--out-reference", "--out-quantized", "--out-dequantized"}) {
        const std::string* path = parsed.get(option);
        if (!path) continue;
        const std::string ext = lower_extension(*path);
        if (ext != ".npy" && ext != ".csv") throw Error(std::string(option) + ": " + quoted_text(*path) + " must end in .npy or .csv");
        AtomicFileWriter& writer = files.add(*path);
        const std::string name = option;
        (name == "--out-output" ? y_file : name == "--out-reference" ? ref_file : name == "--out-quantized" ? codes_file : deq_file) = &writer;
        outputs.push_back({option, *path});
    }
    check_distinct_files(inputs, outputs);

    const LayerRequest request = layer_request(parsed);
    const std::string* tensor_name = parsed.get("--tensor");
    const Tensor w = load_named("--weights", *parsed.get("--weights"), tensor_name ? *tensor_name : "");
    const Tensor x = layer_inputs(parsed, w);
    Tensor bias;
    if (const std::string* b = parsed.get("--bias")) bias = load_named("--bias", *b, "");
    const MethodResult m = compute_layer(request, x, w, parsed.has("--bias") ? &bias : nullptr, codes_file || deq_file);
    const LayerResult& r = m.layer;
    const std::string text = layer_json(request, m);
    if (codes_file) save_codes(*codes_file, w.shape, m.codes.data(), code_npy_dtype(request.config.weights));
    if (deq_file) save_floats(*deq_file, w.shape, m.dequantized.data());
    if (y_file) save_floats(*y_file, r.output_shape, r.y.data());
    if (ref_file) save_floats(*ref_file, r.output_shape, r.reference.data());
    files.commit();
    std::printf("%s\n", text.c_str());
    return 0;
}

}  // namespace qs::cli
