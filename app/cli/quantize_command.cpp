// `quantscope quantize INPUT [options]`: SPEC "Command line".
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "quantscope/json_writer.hpp"
#include "cli/options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {
namespace {

struct OutputRequest {
    const char* option;
    std::string path;
};

// Every output is checked before any work is done, so a bad path fails before anything is written.
void check_output_path(const std::string& option, const std::string& path) {
    namespace fs = std::filesystem;
    const std::string ext = lower_extension(path);
    if (ext != ".npy" && ext != ".csv")
        throw Error(option + ": '" + path + "' must end in .npy or .csv");
    const fs::path dir = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) throw Error(option + ": directory '" + dir.string() + "' does not exist");
    if (fs::is_directory(path, ec)) throw Error(option + ": '" + path + "' is a directory");
}

// Output files written under temporary names in their target's directory (same file system, so the final
// rename is atomic) and renamed over their targets together by commit(); removed if commit() is not reached.
class StagedOutputs {
public:
    StagedOutputs() = default;
    StagedOutputs(const StagedOutputs&) = delete;
    StagedOutputs& operator=(const StagedOutputs&) = delete;
    ~StagedOutputs() {
        for (const auto& [staging, target] : files_) ::unlink(staging.c_str());
    }

    // The staging path for `target`: a hidden name in the same directory with the same extension, longer
    // than the target's, so a name the file system refuses fails here, before anything is renamed.
    std::string stage(const std::string& target) {
        namespace fs = std::filesystem;
        const fs::path t(target);
        const std::string name = "." + t.stem().string() + ".staged-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(files_.size()) + t.extension().string();
        const std::string staging = (t.has_parent_path() ? t.parent_path() / name : fs::path(name)).string();
        files_.emplace_back(staging, target);
        return staging;
    }

    void commit() {
        for (auto& [staging, target] : files_) {
            if (::rename(staging.c_str(), target.c_str()) != 0)
                throw Error("cannot write '" + target + "': " + std::strerror(errno));
            staging.clear();  // nothing left to remove
        }
        files_.clear();
    }

private:
    std::vector<std::pair<std::string, std::string>> files_;  // (staging, target)
};

NpyDtype code_dtype(const IntType& type) {
    if (type.bits <= 8) return type.is_signed ? NpyDtype::I1 : NpyDtype::U1;
    return type.is_signed ? NpyDtype::I2 : NpyDtype::U2;
}

}  // namespace

const char* const kQuantizeHelp =
    "usage: quantscope quantize INPUT [options]\n"
    "       quantscope quantize FILE.safetensors --tensor NAME [options]\n"
    "       quantscope quantize --preset NAME [options]\n"
    "       quantscope quantize --random normal|uniform --shape RxC[xD] [--seed N]\n"
    "                           [--mean M --std S | --low A --high B] [--outliers K] [options]\n"
    "\n"
    "Quantizes a float32 tensor (INPUT: .npy <f2/<f4/<f8, .csv, or .safetensors F32/F16/BF16 with\n"
    "--tensor NAME; rank > 3 is viewed as 3-D) and prints one JSON object with the parameters and the\n"
    "error metrics.\n"
    "\n"
    "options:\n"
    "  --dtype T                int2..int16 or uint2..uint16 (default int8)\n"
    "  --mode M                 asymmetric (default) or symmetric\n"
    "  --scale S --zero-point Z manual scale and zero point (per tensor)\n"
    "  --granularity G          tensor (default), channel or group\n"
    "  --axis A                 channel axis (default 0)\n"
    "  --group-size G           group size along the last axis\n"
    "  --rounding R             half-even (default) or half-away\n"
    "  --calibrate C            how the range is chosen: minmax (default, the lessons'),\n"
    "                           percentile:P (clip the tails, P in (50, 100]) or mse (least error)\n"
    "  --recompute-scale        when the zero point is clamped, recompute the scale so the whole\n"
    "                           range stays representable (the lessons keep it)\n"
    "  --out-quantized Q.npy    write the codes (int8/uint8 for <= 8 bits, else int16/uint16)\n"
    "  --out-dequantized D.npy  write r' = s (q - z) as float32\n"
    "  --out-error E.npy        write |r - r'| as float32\n"
    "presets: lesson, lesson-manual, randn-4x4, outliers-4x128x256\n";

int run_quantize(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kQuantizeHelp)) return 0;
    const auto specs = join(join(tensor_source_options(), quantize_options()),
                            {{"--out-quantized", true}, {"--out-dequantized", true}, {"--out-error", true}});
    const ParsedArgs parsed = parse_args(args, specs);

    std::vector<OutputRequest> outputs;
    std::set<std::string> seen_paths;
    for (const char* option : {"--out-quantized", "--out-dequantized", "--out-error"}) {
        if (const std::string* path = parsed.get(option)) {
            check_output_path(option, *path);
            if (!seen_paths.insert(std::filesystem::absolute(*path).lexically_normal().string()).second)
                throw Error(std::string(option) + ": '" + *path + "' is already another output");
            outputs.push_back({option, *path});
        }
    }

    const Input input = load_input(parsed, false);
    for (const auto& out : outputs)
        if (input.tensor.rank() == 3 && lower_extension(out.path) == ".csv")
            throw Error(std::string(out.option) + ": a rank-3 tensor cannot be written as CSV (use .npy)");
    QuantParams params;
    const QuantResult result = quantize(input.tensor, input.config, &params);
    // r' and e are float32: for values near float32's limits s (q - z) can round past FLT_MAX (e.g. the
    // asymmetric s of [-FLT_MAX, FLT_MAX] times q - z = -128). SPEC's metrics are numbers, never null: refuse.
    for (std::size_t i = 0; !std::isfinite(result.metrics.max_abs_error) && i < result.error.size(); ++i)
        if (!std::isfinite(result.error[i]))
            throw Error("float32 overflow at index " + index_to_string(input.tensor.shape, static_cast<std::int64_t>(i)) +
                        ": r = " + format_g(input.tensor.values[i]) + " gives r' = s (q - z) = " +
                        format_g(result.dequantized[i]) + ", |r - r'| = " + format_g(result.error[i]) +
                        " (the values are too close to float32's limits)");

    // All or nothing: every output is first written (atomically) under a staging name next to its target;
    // only when all of them exist are they renamed over the targets. A failure on the 2nd or 3rd output
    // then leaves the 1st target untouched too.
    StagedOutputs staged;
    for (const auto& out : outputs) {
        const std::string option = out.option;
        const std::string path = staged.stage(out.path);
        if (option == "--out-quantized")
            save_codes(path, input.tensor.shape, result.codes.data(), code_dtype(input.config.dtype));
        else if (option == "--out-dequantized")
            save_floats(path, input.tensor.shape, result.dequantized.data());
        else
            save_floats(path, input.tensor.shape, result.error.data());
    }
    staged.commit();

    const Metrics& m = result.metrics;
    JsonObject json;
    json.raw("shape", shape_to_json(input.tensor.shape))
        .string("dtype", input.config.dtype.name())
        .integer("q_min", input.config.dtype.q_min())
        .integer("q_max", input.config.dtype.q_max())
        .string("mode", to_string(input.config.mode))
        .string("granularity", to_string(input.config.granularity))
        .string("calibration", calibration_label(input.config))
        .raw("scale", JsonObject::array(params.scale))
        .raw("zero_point", JsonObject::array(params.zero_point))
        .number("mse", m.mse)
        .number("rmse", m.rmse)
        .number("mae", m.mae)
        .number("max_abs_error", m.max_abs_error)
        .number("l2_error", m.l2_error)
        .number("sqnr_db", m.sqnr_db)
        .integer("clipped", m.clipped)
        .integer("levels_used", m.levels_used);
    std::printf("%s\n", json.str().c_str());
    return 0;
}

}  // namespace qs::cli
