// Strict command-line parsing shared by every command (quantize, bench, gui, render): unknown options,
// missing values, repeated options and trailing garbage in numbers are errors (qs::Error).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/config.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {

struct OptionSpec {
    std::string name;      // "--dtype"
    bool takes_value;      // "--dtype int8" vs a flag such as "--lesson-look"
};

struct ParsedArgs {
    std::vector<std::string> positionals;
    std::map<std::string, std::string> values;  // flags map to ""

    bool has(const std::string& name) const { return values.count(name) != 0; }
    const std::string* get(const std::string& name) const;
};

// SPEC's one line on stderr: "quantscope: <kind>: " and the message, printable and bounded whatever the message
// holds (a std::exception's text, a NUL, line breaks, megabytes). kind is "error" or "warning".
std::string message_line(const char* kind, const std::string& message);
void print_message_line(const char* kind, const std::string& message);  // message_line to stderr

// `--help` or `-h` anywhere in `args`: prints `help` to stdout and returns true (the command then exits 0).
bool print_help_if_asked(const std::vector<std::string>& args, const char* help);

// Accepts "--name value" and "--name=value". Throws qs::Error for an option not in `specs`, a missing
// value, or an option given twice.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs);

// --preset --random --shape --seed --mean --std --low --high --outliers --outlier-scale --pin-range --tensor
std::vector<OptionSpec> tensor_source_options();
// --dtype --mode --scale --zero-point --granularity --axis --group-size --rounding --calibrate
// --recompute-scale --overflow --recipe
std::vector<OptionSpec> quantize_options();
// Concatenates option lists.
std::vector<OptionSpec> join(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b);

// Whole-string number parsing: "1.5x", "", "nan" (for integers) are errors naming the option.
double parse_double(const std::string& option, const std::string& text);
std::int64_t parse_int(const std::string& option, const std::string& text);

// The tensor a command works on and the settings that come with it.
struct Input {
    Tensor tensor;        // passed check_tensor; empty when `file` holds the values
    // load_input(..., file_as_view = true) of a file: its values, read in their stored type when first used
    // (their finiteness is checked then, by compute_params).
    std::shared_ptr<TensorFile> file;
    QuantConfig config;   // preset defaults (if any) overridden by the quantize options; passed check_config
    std::string label;    // "lesson", "data.npy", "model.safetensors : layer.0.weight", "random normal 4x4 seed 0"
    std::string note;     // how the tensor was viewed, e.g. "2x3x4x5 viewed as 6x4x5"; usually empty
    // Where the tensor came from: a file (absolute path), a preset, a random spec, or a session's own source
    // (its file paths made absolute; Inline for values stored in the session).
    TensorSource source;
    // A SESSION.json input: the GUI's saved view settings.
    bool from_session = false;
    std::string session;  // its path: what the view's relative paths (a lesson file) are relative to
    std::vector<std::pair<std::string, std::string>> view;

    // The values, wherever they are (a view of `tensor` or of `file`), and their shape.
    TensorView values() const;
    const Shape& shape() const;
};

// Exactly one source: one positional INPUT file (with --tensor NAME for .safetensors; a .json file is a
// saved session: its tensor and settings), --preset NAME, or --random normal|uniform --shape ...
// (the --random sub-options are errors without --random). Applies quantize options over the preset's
// config. `allow_no_source`: when nothing is given, return the `lesson` preset instead of an error.
// `file_as_view`: an INPUT file is opened as a TensorFile (read once it is used, in its stored type) instead
// of being loaded into `tensor`.
Input load_input(const ParsedArgs& args, bool allow_no_source, bool file_as_view = false);

// The files load_input read, for check_distinct_files: "the input" (INPUT as given) and, for a session
// whose tensor is a file, "the session's tensor".
std::vector<FileRole> input_files(const ParsedArgs& args, const Input& input);

// Applies the quantize options in `args` to `config` (--scale/--zero-point together select manual mode).
// --recipe needs the tensor: apply_recipe does it.
void apply_quantize_options(const ParsedArgs& args, QuantConfig& config);

// --recipe NAME (after apply_quantize_options): the recipe's whole quantization for these values; only
// --rounding and --overflow may adjust it, any option it fixes (--dtype, --scale, ...) is an error.
void apply_recipe(const ParsedArgs& args, const TensorView& values, QuantConfig& config);

}  // namespace qs::cli
