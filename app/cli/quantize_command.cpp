// `quantscope quantize INPUT [options]`: SPEC "Command line".
#include <algorithm>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <vector>

#include "cli/commands.hpp"
#include "cli/format_output.hpp"
#include "quantscope/json_writer.hpp"
#include "cli/options.hpp"
#include "cli/reports.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/importance_file.hpp"
#include "quantscope/text.hpp"
#include "quantscope/format.hpp"
#include "quantscope/ggml_blocks.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/pitfalls.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {
namespace {

struct OutputRequest {
    const char* option;
    AtomicFileWriter* file;
};

// Opened (as a temporary beside the target) before any work is done, so that a path that cannot be written
// fails first, named by its option.
AtomicFileWriter& open_output(OutputFiles& files, const std::string& option, const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext != ".npy" && ext != ".csv") throw Error(option + ": " + quoted_text(path) + " must end in .npy or .csv");
    try {
        return files.add(path);
    } catch (const Error& e) {
        throw Error(option + ": " + e.what());
    }
}

// The --dtype paragraph names the table's formats (element formats, then those with their own blocks),
// each line of the option's column at most this wide.
constexpr std::size_t kHelpIndent = 27, kHelpWidth = 67;

std::string wrapped_words(const std::string& text) {
    std::string out, line;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        const std::string word = text.substr(at, end - at);
        if (!line.empty() && line.size() + 1 + word.size() > kHelpWidth) {
            out += std::string(kHelpIndent, ' ') + line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
        at = end + 1;
    }
    return out + std::string(kHelpIndent, ' ') + line + "\n";
}

std::string dtype_help() {
    std::string element, block;
    for (FormatId id : all_formats()) {
        std::string& list = format_traits(id).own_blocks() ? block : element;
        list += (list.empty() ? "" : ", ") + std::string(format_name(id));
    }
    return wrapped_words("(any case): " + element + "; block formats " + block +
                         " (their own block scale: no --mode, --scale, --granularity or --calibrate)");
}

const char* const kQuantizeHelpHead =
    "usage: quantscope quantize INPUT [options]\n"
    "       quantscope quantize FILE.safetensors|FILE.gguf|*.safetensors.index.json --tensor NAME [options]\n"
    "       quantscope quantize --preset NAME [options]\n"
    "       quantscope quantize --random normal|uniform --shape RxC[xD] [--seed N]\n"
    "                           [--mean M --std S | --low A --high B]\n"
    "                           [--outliers K [--outlier-scale F]] [--pin-range] [options]\n"
    "\n"
    "Quantizes a float32 tensor (INPUT: .npy <f2/<f4/<f8, .csv, or with --tensor NAME a .safetensors\n"
    "F32/F16/BF16 tensor, a .gguf tensor (its stored values, dequantized for a ggml type) or a sharded\n"
    "checkpoint's tensor through its index; rank > 3 is viewed as 3-D) and prints one JSON object with\n"
    "the parameters and the error metrics.\n"
    "\n"
    "options:\n"
    "  --dtype T                int2..int16 or uint2..uint16 (default int8), or a number format\n";

const char* const kQuantizeHelpTail =
    "  --mode M                 asymmetric (default for int) or symmetric (default for a format);\n"
    "                           cast: a float format's plain downcast (s = 1)\n"
    "  --scale S --zero-point Z manual scale and zero point (per tensor); a format takes --scale S alone\n"
    "  --granularity G          tensor (default), channel or group\n"
    "  --axis A                 channel axis (default 0)\n"
    "  --group-size G           group size along the last axis\n"
    "  --rounding R             half-even (default) or half-away\n"
    "  --calibrate C            how the range is chosen: minmax (default, the lessons'),\n"
    "                           percentile:P (clip the tails, P in (50, 100]) or mse (least error)\n"
    "  --recompute-scale        when the zero point is clamped, recompute the scale so the whole\n"
    "                           range stays representable (the lessons keep it)\n"
    "  --overflow O             clamp (default, SPEC) or wrap: the naive cast without the clamp, a\n"
    "                           value past the range wraps around (WRONG: shown to teach the pitfall)\n"
    "  --recipe naive-max255    one lesson's cast of r / r.abs().max() * 255 to int8, as\n"
    "                           int8, s = max|r| / 255, z = 0, wrap (255 becomes -1); codes are\n"
    "                           round(r / max|r| * 255) and r' = q / 255 * max|r| in torch's float32 order\n"
    "  --out-quantized Q.npy    write the codes (int8/uint8 for <= 8 bits, else int16/uint16; a float\n"
    "                           format's bit patterns, nf4's index, ggml's integer codes)\n"
    "  --out-packed P.bin       the codes packed end to end (first code in the lowest bits) and then\n"
    "                           the stored scales: the quantized tensor's `bytes`; a ggml type (q8_0 ...\n"
    "                           tq2_0) writes ggml's blocks, as a GGUF file holds them (README \"Packed codes\")\n"
    "  --out-dequantized D.npy  write r' = s (q - z) as float32\n"
    "  --out-error E.npy        write |r - r'| as float32\n"
    "  --all-params             list every block's scale and zero point in the JSON; without it, more\n"
    "                           than 4096 blocks are summarised as {\"count\", \"min\", \"max\"}; a ggml\n"
    "                           k-quant or iq4_xs adds its sub-blocks' stored sub_scales (and sub_mins)\n"
    "  --importance W.npy       float32, one weight per column of the last axis: the ggml types with an\n"
    "                           importance-weighted quantizer use it (as llama.cpp's imatrix); the JSON\n"
    "                           adds importance_weighted_mse\n"
    "  --imatrix FILE.gguf --imatrix-tensor NAME\n"
    "                           the same from llama.cpp's importance matrix (llama-imatrix's GGUF): NAME's\n"
    "                           in_sum2 / counts as float32 (a tensor of merged experts is not supported)\n"
    "random tensors:\n"
    "  --outliers K             K elements (positions and signs from the seed) set to the distribution's\n"
    "                           centre +- F x its std (uniform: (low + high) / 2 and (high - low) / sqrt(12))\n"
    "  --outlier-scale F        F for --outliers (default 10)\n"
    "  --pin-range              seed 001's recipe: [0], [1], [2] (flat) become max + 1, min - 1 and 0, which\n"
    "                           pins the range rather than adding outliers\n"
    "presets: lesson, lesson-manual, lesson-randn-4x4, randn-4x4, outliers-4x128x256, layer-64x128\n";

}  // namespace

std::vector<OptionSpec> quantize_report_options() { return join(quantize_options(), {{"--all-params", false}}); }

std::string quantize_json(const ParsedArgs& args, const TensorView& values, const QuantConfig& config,
                          const Quantization& result, const double* importance_weighted_mse) {
    const bool all_params = args.has("--all-params");
    JsonObject json;
    json.raw("shape", shape_to_json(values.shape));
    describe_quantization(json, config, result, all_params);
    if (all_params) describe_sub_blocks(json, values, config, result.format_params);
    describe_metrics(json, result.metrics);
    if (importance_weighted_mse) json.number("importance_weighted_mse", *importance_weighted_mse);
    describe_cost(json, config, result, result.metrics.count);
    if (const std::string* recipe = args.get("--recipe")) json.string("recipe", *recipe);
    if (config.overflow == Overflow::Wrap)
        json.string("overflow", to_string(config.overflow)).string("warning", wrap_warning(values, result.params, config));
    return json.str();
}

const std::string& quantize_help() {
    static const std::string help = kQuantizeHelpHead + dtype_help() + kQuantizeHelpTail;
    return help;
}

int run_quantize(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, quantize_help().c_str())) return 0;
    const auto specs = join(join(tensor_source_options(), quantize_report_options()),
                            {{"--out-quantized", true}, {"--out-dequantized", true}, {"--out-error", true},
                             {"--out-packed", true}, {"--importance", true}, {"--imatrix", true},
                             {"--imatrix-tensor", true}});
    const ParsedArgs parsed = parse_args(args, specs);

    // All or nothing: every output goes to its own temporary file and only when all of them are complete
    // are they renamed over their targets. A failure on the 2nd or 3rd output leaves the 1st untouched too.
    OutputFiles files;
    std::vector<OutputRequest> outputs;
    std::vector<FileRole> output_roles;
    for (const char* option : {"--out-quantized", "--out-dequantized", "--out-error"}) {
        if (const std::string* path = parsed.get(option)) {
            outputs.push_back({option, &open_output(files, option, *path)});
            output_roles.push_back({option, *path});
        }
    }
    AtomicFileWriter* packed_file = nullptr;
    if (const std::string* path = parsed.get("--out-packed")) {
        if (lower_extension(*path) != ".bin") throw Error("--out-packed: " + quoted_text(*path) + " must end in .bin");
        try {
            packed_file = &files.add(*path);
        } catch (const Error& e) {
            throw Error(std::string("--out-packed: ") + e.what());
        }
        output_roles.push_back({"--out-packed", *path});
    }

    // A file input is read once it is used, in its stored type, straight from its mapping: no float32 copy.
    Input input = load_input(parsed, false, true);
    std::vector<FileRole> input_roles = input_files(parsed, input);
    const std::int64_t columns = input.shape().empty() ? 0 : input.shape().back();
    if (const std::string* path = parsed.get("--importance")) {
        try {
            input.config.importance = read_importance_npy(*path, columns);
        } catch (const Error& e) {
            throw Error(std::string("--importance ") + e.what());
        }
        input_roles.push_back({"--importance", *path});
    }
    if (parsed.has("--imatrix") != parsed.has("--imatrix-tensor"))
        throw Error("--imatrix and --imatrix-tensor go together: the file and the weight's name in it");
    if (const std::string* path = parsed.get("--imatrix")) {
        if (parsed.has("--importance")) throw Error("give --importance or --imatrix, not both");
        try {
            input.config.importance = read_imatrix_importance(*path, *parsed.get("--imatrix-tensor"), columns);
        } catch (const Error& e) {
            throw Error(std::string("--imatrix ") + e.what());
        }
        input_roles.push_back({"--imatrix", *path});
    }
    check_distinct_files(input_roles, output_roles);
    for (const auto& out : outputs)
        if (input.shape().size() == 3 && lower_extension(out.file->target()) == ".csv")
            throw Error(std::string(out.option) + ": a rank-3 tensor cannot be written as CSV (use .npy)");

    // The outputs are written as the pass computes them, a batch at a time: no full-size result in memory.
    std::unique_ptr<TensorWriter> codes, dequantized, error;
    for (const auto& out : outputs) {
        const std::string option = out.option;
        if (option == "--out-quantized")
            codes = std::make_unique<TensorWriter>(*out.file, input.shape(), code_npy_dtype(input.config));
        else if (option == "--out-dequantized")
            dequantized = std::make_unique<TensorWriter>(*out.file, input.shape(), NpyDtype::F4);
        else
            error = std::make_unique<TensorWriter>(*out.file, input.shape(), NpyDtype::F4);
    }
    // A ggml type's packed file is its block bytes (ggml_block_bytes, after the pass); the rest pack codes.
    const bool ggml_blocks = format_traits(input.config.format).ggml != nullptr;
    std::unique_ptr<PackedWriter> packed;
    if (packed_file && !ggml_blocks)
        packed = std::make_unique<PackedWriter>(
            [packed_file](const std::uint8_t* bytes, std::size_t size) { packed_file->write(bytes, size); },
            code_bits(input.config));
    std::unique_ptr<ImportanceError> weighted;
    if (input.config.importance) weighted = std::make_unique<ImportanceError>(input.config.importance);
    const OutputSelection wanted{codes != nullptr || packed != nullptr, dequantized != nullptr,
                                 error != nullptr || weighted != nullptr};
    ResultSink sink;
    if (wanted.codes || wanted.dequantized || wanted.error)
        sink = [&](std::int64_t, std::int64_t count, const QuantOutputs& batch) {  // batches come in order
            if (batch.codes && codes) codes->append(batch.codes, count);
            if (batch.codes && packed) packed->append(batch.codes, count);
            if (batch.dequantized) dequantized->append(batch.dequantized, count);
            if (batch.error && error) error->append(batch.error, count);
            if (batch.error && weighted) weighted->add(batch.error, count);
        };
    const Quantization result = quantize_checked(input.values(), input.config, wanted, sink);
    for (const auto* writer : {codes.get(), dequantized.get(), error.get()})
        if (writer) writer->finish();
    if (packed) packed->finish(input.config, result);
    if (packed_file && ggml_blocks)
        ggml_block_bytes(input.values(), input.config, result.format_params,
                         [&](const std::uint8_t* bytes, std::size_t size) { packed_file->write(bytes, size); });

    const double weighted_mse = weighted ? weighted->mean() : 0.0;
    const std::string text = quantize_json(parsed, input.values(), input.config, result, weighted ? &weighted_mse : nullptr);
    // Everything that can fail (the overflow example reads the values again, the JSON allocates) is done
    // before the outputs appear: an exit 2 never leaves them behind, and the JSON is never lost after they do.
    files.commit();
    std::printf("%s\n", text.c_str());
    return 0;
}

}  // namespace qs::cli
