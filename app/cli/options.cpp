#include "cli/options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "quantscope/checkpoint.hpp"
#include "quantscope/error.hpp"
#include "quantscope/pitfalls.hpp"
#include "quantscope/text.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {

const std::string* ParsedArgs::get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
}

std::string message_line(const char* kind, const std::string& message) {
    return std::string("quantscope: ") + kind + ": " + printable(message, kMaxMessageChars) + "\n";
}

void print_message_line(const char* kind, const std::string& message) {
    std::fputs(message_line(kind, message).c_str(), stderr);
}

bool print_help_if_asked(const std::vector<std::string>& args, const char* help) {
    for (const auto& a : args)
        if (a == "--help" || a == "-h") {
            std::fputs(help, stdout);
            return true;
        }
    return false;
}

ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs) {
    ParsedArgs parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg.size() < 2 || arg.compare(0, 2, "--") != 0 || arg == "--") {
            if (arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9') && arg[1] != '.')
                throw Error("unknown option " + quoted_text(arg));
            parsed.positionals.push_back(arg);
            continue;
        }
        std::string name = arg, value;
        bool inline_value = false;
        if (auto eq = arg.find('='); eq != std::string::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            inline_value = true;
        }
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs)
            if (s.name == name) spec = &s;
        if (!spec) throw Error("unknown option " + quoted_text(name) + " (see --help)");
        if (parsed.has(name)) throw Error("option " + name + " given twice");
        if (spec->takes_value && !inline_value) {
            // "--dtype --out-q x": the next token is an option, not a value.
            if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
                throw Error("option " + name + " needs a value");
            value = args[++i];
        } else if (!spec->takes_value && inline_value) {
            throw Error("option " + name + " takes no value");
        }
        parsed.values[name] = value;
    }
    return parsed;
}

std::vector<OptionSpec> tensor_source_options() {
    return {{"--preset", true}, {"--random", true}, {"--shape", true}, {"--seed", true},  {"--mean", true},
            {"--std", true},    {"--low", true},    {"--high", true},  {"--outliers", true}, {"--outlier-scale", true},
            {"--pin-range", false}, {"--tensor", true}};
}

std::vector<OptionSpec> quantize_options() {
    return {{"--dtype", true},       {"--mode", true},      {"--scale", true},          {"--zero-point", true},
            {"--granularity", true}, {"--axis", true},      {"--group-size", true},     {"--rounding", true},
            {"--calibrate", true},   {"--recompute-scale", false}, {"--overflow", true},   {"--recipe", true}};
}

std::vector<OptionSpec> join(std::vector<OptionSpec> a, const std::vector<OptionSpec>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

double parse_double(const std::string& option, const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
        throw Error(option + ": " + quoted_text(text) + " is not a number");
    if (errno == ERANGE && std::isinf(value)) throw Error(option + ": " + quoted_text(text) + " is out of range");
    // A literal too small for a double (1e-400) reads as 0: refused as given, not taken (and printed) as 0.
    if (errno == ERANGE && value == 0) throw Error(option + ": " + quoted_text(text) + " is out of range (nearer 0 than a double holds)");
    return value;
}

std::int64_t parse_int(const std::string& option, const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const long long value = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || std::isspace(static_cast<unsigned char>(text[0])))
        throw Error(option + ": " + quoted_text(text) + " is not an integer");
    if (errno == ERANGE) throw Error(option + ": " + quoted_text(text) + " is out of range");
    return value;
}

namespace {

// --granularity, --axis, --group-size (int<N> and element formats alike).
void apply_granularity_options(const ParsedArgs& args, QuantConfig& config) {
    if (auto v = args.get("--granularity")) config.granularity = parse_granularity(*v);
    if (auto v = args.get("--axis")) {
        const std::int64_t axis = parse_int("--axis", *v);
        if (config.granularity != Granularity::Channel) throw Error("--axis needs --granularity channel");
        if (axis < 0 || axis > 2)
            throw Error("channel axis " + *v + " is out of range (a tensor has at most 3 axes: 0, 1, 2)");
        config.axis = static_cast<int>(axis);
    }
    if (auto v = args.get("--group-size")) {
        config.group_size = parse_int("--group-size", *v);
        if (config.granularity != Granularity::Group) throw Error("--group-size needs --granularity group");
    }
    if (config.granularity == Granularity::Group && config.group_size == 0 && !args.has("--group-size"))
        throw Error("--granularity group needs --group-size G");
}

// A FORMATS.md format: symmetric by default, --scale S alone is manual, a block format takes none of the
// scale options. `chosen_now` (--dtype names the format): the int<N>-only settings start from their defaults;
// otherwise (a session's format) its own settings stay and only the options given change them. Given
// explicitly, check_config refuses int<N>-only settings naming the format.
void apply_format_options(const ParsedArgs& args, QuantConfig& config, bool chosen_now) {
    const std::string name = format_name(config.format);
    if (chosen_now) {
        const QuantConfig defaults;
        config.mode = Mode::Symmetric;
        config.granularity = Granularity::Tensor;
        config.calibration = defaults.calibration;
        config.rounding = defaults.rounding;
        config.overflow = defaults.overflow;
        config.recompute_scale = false;
        config.manual_zero_point = 0;
    }
    if (format_traits(config.format).own_blocks()) {
        for (const char* option : {"--mode", "--scale", "--zero-point", "--granularity", "--axis", "--group-size",
                                   "--calibrate"})
            if (args.has(option))
                throw Error(name + " has its own block scale (" + std::to_string(format_traits(config.format).block_size) +
                            " elements along the last axis): it takes no " + option);
    }
    if (args.has("--zero-point")) throw Error(name + " has no zero point: --zero-point applies to int<N>");
    if (auto v = args.get("--mode")) {
        if (args.has("--scale")) throw Error("--mode cannot be combined with --scale (it selects manual mode)");
        config.mode = parse_mode(*v);
    }
    if (auto v = args.get("--scale")) {
        config.mode = Mode::Manual;
        config.manual_scale = parse_double("--scale", *v);
    }
    apply_granularity_options(args, config);
    if (auto v = args.get("--rounding")) config.rounding = parse_rounding(*v);
    if (auto v = args.get("--calibrate")) parse_calibration(*v, config);
    if (args.has("--recompute-scale")) config.recompute_scale = true;
    if (auto v = args.get("--overflow")) config.overflow = parse_overflow(*v);
}

}  // namespace

void apply_quantize_options(const ParsedArgs& args, QuantConfig& config) {
    const std::string* dtype = args.get("--dtype");
    if (dtype) parse_dtype(*dtype, config);
    if (!is_int_format(config.format)) return apply_format_options(args, config, dtype != nullptr);
    const bool has_scale = args.has("--scale"), has_zero = args.has("--zero-point");
    if (has_scale != has_zero) throw Error("--scale and --zero-point go together (manual mode)");
    if (auto v = args.get("--mode")) {
        if (has_scale) throw Error("--mode cannot be combined with --scale/--zero-point (they select manual mode)");
        config.mode = parse_mode(*v);
    }
    if (has_scale) {
        config.mode = Mode::Manual;
        config.manual_scale = parse_double("--scale", *args.get("--scale"));
        const std::int64_t z = parse_int("--zero-point", *args.get("--zero-point"));
        if (z < -(std::int64_t{1} << 20) || z > (std::int64_t{1} << 20))  // far outside any type; check_config says why
            throw Error("zero point " + *args.get("--zero-point") + " is outside [" + std::to_string(config.dtype.q_min()) +
                        ", " + std::to_string(config.dtype.q_max()) + "] of " + config.dtype.name());
        config.manual_zero_point = static_cast<std::int32_t>(z);
    }
    apply_granularity_options(args, config);
    if (auto v = args.get("--rounding")) config.rounding = parse_rounding(*v);
    if (auto v = args.get("--calibrate")) parse_calibration(*v, config);
    if (args.has("--recompute-scale")) config.recompute_scale = true;
    if (auto v = args.get("--overflow")) config.overflow = parse_overflow(*v);
}

void apply_recipe(const ParsedArgs& args, const TensorView& values, QuantConfig& config) {
    const std::string* name = args.get("--recipe");
    if (!name) return;
    const Recipe recipe = parse_recipe(*name);
    for (const char* fixed : {"--dtype", "--mode", "--scale", "--zero-point", "--granularity", "--axis", "--group-size",
                              "--calibrate", "--recompute-scale"})
        if (args.has(fixed))
            throw Error(std::string("--recipe ") + to_string(recipe) + " chooses the type, scale and zero point itself: drop " +
                        fixed);
    config = recipe_config(recipe, values, config);
    if (auto v = args.get("--overflow")) config.overflow = parse_overflow(*v);
}

namespace {

// An absolute, normalised path: a source recorded now must still name the same file from another directory.
std::string absolute_path(const std::filesystem::path& p) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(p, ec);
    return (ec ? p : abs).lexically_normal().string();
}

RandomSpec random_spec(const ParsedArgs& args) {
    RandomSpec spec;
    spec.distribution = parse_distribution(*args.get("--random"));
    const std::string* shape = args.get("--shape");
    if (!shape) throw Error("--random needs --shape RxC[xD]");
    spec.shape = parse_shape(*shape);
    if (auto v = args.get("--seed")) {
        const std::int64_t seed = parse_int("--seed", *v);
        if (seed < 0) throw Error("--seed must be >= 0");
        spec.seed = static_cast<std::uint64_t>(seed);
    }
    const bool normal = spec.distribution == Distribution::Normal;
    for (const char* name : {"--mean", "--std"})
        if (!normal && args.has(name)) throw Error(std::string(name) + " applies to --random normal only");
    for (const char* name : {"--low", "--high"})
        if (normal && args.has(name)) throw Error(std::string(name) + " applies to --random uniform only");
    if (auto v = args.get("--mean")) spec.mean = parse_double("--mean", *v);
    if (auto v = args.get("--std")) spec.std = parse_double("--std", *v);
    if (auto v = args.get("--low")) spec.low = parse_double("--low", *v);
    if (auto v = args.get("--high")) spec.high = parse_double("--high", *v);
    if (auto v = args.get("--outliers")) spec.outliers = parse_int("--outliers", *v);
    if (auto v = args.get("--outlier-scale")) {
        if (!args.has("--outliers")) throw Error("--outlier-scale needs --outliers K");
        spec.outlier_scale = parse_double("--outlier-scale", *v);
    }
    if (args.has("--pin-range")) {
        // seed 001's [0,0,0..2] = max + 1, min - 1, 0: a flag, so the count the core would name is not the user's.
        const std::int64_t n = checked_numel(spec.shape);
        if (n < 3)
            throw Error("--pin-range sets the first 3 elements (max + 1, min - 1 and 0), but --shape " +
                        shape_to_string(spec.shape) + " has only " + std::to_string(n));
        spec.pin_range = 3;
    }
    return spec;
}

}  // namespace

TensorView Input::values() const { return file ? file->view() : view_of(tensor); }

const Shape& Input::shape() const { return file ? file->view().shape : tensor.shape; }

Input load_input(const ParsedArgs& args, bool allow_no_source, bool file_as_view) {
    const int sources = static_cast<int>(!args.positionals.empty()) + static_cast<int>(args.has("--preset")) +
                        static_cast<int>(args.has("--random"));
    if (args.positionals.size() > 1) throw Error("unexpected argument " + quoted_text(args.positionals[1]));
    if (sources > 1) throw Error("give one input: a file, --preset NAME or --random ...");
    if (!args.has("--random"))
        for (const char* name : {"--shape", "--seed", "--mean", "--std", "--low", "--high", "--outliers", "--outlier-scale", "--pin-range"})
            if (args.has(name)) throw Error(std::string(name) + " needs --random normal|uniform");

    if (args.has("--tensor") && args.positionals.empty()) throw Error("--tensor NAME needs a .safetensors INPUT");

    Input input;
    std::string first = args.positionals.empty() ? std::string() : args.positionals[0];
    // A sharded checkpoint's index (as sweep, compare and export take it): the shard its weight_map names for
    // --tensor, opened as that file would be. Any other .json is a session.
    const std::string* index_tensor = args.get("--tensor");
    const bool index_json = lower_extension(first) == ".json" && lower_extension(first.substr(0, first.size() - 5)) == ".index";
    if (index_json) {
        if (!index_tensor) throw Error(printable(first) + ": a sharded checkpoint's index needs --tensor NAME");
        const CheckpointIndex index = read_checkpoint_index(first);
        const auto entry = std::find_if(index.weight_map.begin(), index.weight_map.end(),
                                        [&](const auto& e) { return e.first == *index_tensor; });
        if (entry == index.weight_map.end())
            throw Error(printable(first) + ": the index names no tensor " + quoted_text(*index_tensor));
        first = (std::filesystem::path(first).parent_path() / entry->second).string();
    }
    const bool session = lower_extension(first) == ".json";
    if (session) {
        if (args.has("--tensor")) throw Error("--tensor does not apply to a session file");
        Session s = read_session(first);
        if (file_as_view && s.source.kind == TensorSource::Kind::File) {
            // A session of a file: the file opened as a view, as the file itself would be.
            std::filesystem::path p(s.source.path);
            if (p.is_relative()) p = std::filesystem::path(first).parent_path() / p;
            input.file = std::make_shared<TensorFile>(p.string(), s.source.tensor_name);
            input.note = input.file->note();
            try {
                check_config(s.config, input.file->view().shape);
            } catch (const Error& e) {
                throw Error(printable(first) + ": quantization: " + e.what());
            }
        } else {
            input.tensor = load_session_tensor(s, first, &input.note);
        }
        input.config = s.config;
        input.label = first;
        input.from_session = true;
        input.session = first;
        input.source = s.source;
        if (s.source.kind == TensorSource::Kind::File && std::filesystem::path(s.source.path).is_relative())
            input.source.path = absolute_path(std::filesystem::path(first).parent_path() / s.source.path);
        input.view = std::move(s.view);
    } else if (!args.positionals.empty()) {
        const std::string* name = args.get("--tensor");
        if (file_as_view) {
            input.file = std::make_shared<TensorFile>(first, name ? *name : "");
            input.note = input.file->note();
        } else {
            input.tensor = load_tensor(first, name ? *name : "", &input.note);
        }
        input.label = args.positionals[0] + (name ? " : " + *name : "");
        input.source.kind = TensorSource::Kind::File;
        input.source.path = absolute_path(first);  // an index's shard: a session reopens the file itself
        input.source.tensor_name = name ? *name : "";
    } else if (args.has("--random")) {
        RandomSpec spec = random_spec(args);
        input.tensor = generate_random(spec);
        input.source.kind = TensorSource::Kind::Random;
        input.source.random = spec;
        input.label = "random " + *args.get("--random") + " " + shape_to_string(spec.shape) + " seed " +
                      std::to_string(spec.seed);
    } else if (args.has("--preset") || allow_no_source) {
        Preset preset = make_preset(args.has("--preset") ? *args.get("--preset") : "lesson");
        input.tensor = std::move(preset.tensor);
        input.config = preset.config;
        input.label = preset.name;
        input.source.kind = TensorSource::Kind::Preset;
        input.source.preset = preset.name;
    } else {
        throw Error("no input: give a .npy or .csv file, --preset NAME or --random normal|uniform --shape RxC");
    }
    if (!input.file) check_tensor(input.tensor);
    // A preset's manual pair does not survive a request for a computed mode.
    if (args.has("--mode")) input.config.mode = Mode::Asymmetric;
    apply_quantize_options(args, input.config);
    apply_recipe(args, input.values(), input.config);
    check_config(input.config, input.shape());
    return input;
}

std::vector<FileRole> input_files(const ParsedArgs& args, const Input& input) {
    std::vector<FileRole> files;
    if (!args.positionals.empty()) files.push_back({"the input", args.positionals[0]});
    if (input.from_session && input.source.kind == TensorSource::Kind::File)
        files.push_back({"the session's tensor", input.source.path});
    return files;
}

}  // namespace qs::cli
