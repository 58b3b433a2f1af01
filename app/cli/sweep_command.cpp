// `quantscope sweep PATH [quantize options] [--json | --csv] [--filter REGEX]`: SPEC "Sweep".
#include <unistd.h>

#include <cstdio>
#include <memory>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "cli/reports.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/name_filter.hpp"
#include "quantscope/sweep.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {
namespace {

// The row's fields in SPEC order; an error row has its numbers null and its `error` last.
JsonObject sweep_row(const SweepRow& row) {
    JsonObject json;
    json.string("name", row.name).raw("shape", shape_to_json(row.shape)).string("dtype", row.dtype).integer("elements", row.elements);
    const bool ok = row.error.empty();
    const auto number = [&](const char* key, std::optional<double> value) { json.number(key, ok ? value : std::nullopt); };
    const Metrics& m = row.metrics;
    number("min", row.min);
    number("max", row.max);
    number("mean", row.mean);
    number("std", row.std);
    number("max_over_std", row.max_over_std);
    number("mse", m.mse);
    number("rmse", m.rmse);
    number("mae", m.mae);
    number("max_abs_error", m.max_abs_error);
    number("sqnr_db", m.sqnr_db);
    if (ok)
        json.integer("clipped", m.clipped);
    else
        json.raw("clipped", "null");
    number("bits_per_weight", row.bits_per_weight);
    if (ok)
        json.raw("error", "null");
    else
        json.string("error", row.error);
    if (!row.warning.empty()) json.string("warning", row.warning);  // as quantize's JSON: the numbers are of a wrong cast
    return json;
}

std::string total_json(const SweepTotal& total) {
    JsonObject t;
    t.integer("elements", total.elements)
        .integer("bytes_in", static_cast<std::int64_t>(total.bytes_in))
        .integer("bytes_quantized", static_cast<std::int64_t>(total.bytes_quantized))
        .number("mse", total.mse)
        .number("sqnr_db", total.sqnr_db)
        .number("seconds", total.seconds)
        .number("gb_per_s", total.gb_per_s);
    return t.str();
}

// "sweep: 41% (3.2 of 7.8 GB)" rewritten in place on a terminal.
void show_progress(std::uint64_t done, std::uint64_t total) {
    const double percent = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
    std::fprintf(stderr, "\rsweep: %3.0f%% (%.2f of %.2f GB)", percent, static_cast<double>(done) / 1e9,
                 static_cast<double>(total) / 1e9);
    std::fflush(stderr);
}

}  // namespace

const char* const kSweepHelp =
    "usage: quantscope sweep PATH [quantize options] [--json | --csv] [--filter REGEX]\n"
    "\n"
    "Quantizes every floating tensor (F32, F16, BF16, F64; at least 2 elements) of a checkpoint, PATH a\n"
    ".safetensors file or a sharded checkpoint's *.safetensors.index.json, exactly as\n"
    "`quantize PATH --tensor NAME` would, and prints one row per tensor in file order: name, shape,\n"
    "dtype, elements, min, max, mean, std, max_over_std (max|x| / std), mse, rmse, mae, max_abs_error,\n"
    "sqnr_db, clipped, bits_per_weight (as quantize prints it: the code's bits plus each block's float32\n"
    "scale and, unless symmetric, its float32 zero point) and error (why the options do not apply to that tensor, else null).\n"
    "\n"
    "options:\n"
    "  the quantize options (--dtype, --mode, --granularity, --axis, --group-size, --calibrate, ...;\n"
    "  see quantscope quantize --help)\n"
    "  --json          (default) one object {\"tensors\": [rows], \"total\": {elements, bytes_in,\n"
    "                  bytes_quantized, mse, sqnr_db, seconds, gb_per_s}} over the quantized rows\n"
    "  --csv           a header line and one line per row, no total\n"
    "  --filter REGEX  only the tensors whose name contains a match (ECMAScript syntax, no back-references\n"
    "                  or lookahead; at most 1000 bytes)\n"
    "Progress goes to stderr when it is a terminal.\n";

std::vector<OptionSpec> sweep_report_options() { return join(quantize_options(), {{"--filter", true}}); }

SweepSettings sweep_settings(const ParsedArgs& parsed) {
    SweepSettings settings;
    apply_quantize_options(parsed, settings.config);
    // What does not depend on a tensor is checked now (exit 2); what does (rank, axis, group size) is a row's
    // error. A rank-3 shape whose last dimension is the group size fits every axis and group size.
    Shape any_tensor(3, 1);
    if (settings.config.granularity == Granularity::Group && settings.config.group_size > 0)
        any_tensor.back() = settings.config.group_size;
    if (format_traits(settings.config.format).own_blocks())
        any_tensor.back() = format_traits(settings.config.format).block_size;  // else no block format could sweep
    if (!parsed.has("--recipe")) check_config(settings.config, any_tensor);
    if (parsed.has("--recipe"))
        settings.configure = [parsed](const TensorView& values, const QuantConfig& config) {
            QuantConfig adjusted = config;
            apply_recipe(parsed, values, adjusted);
            return adjusted;
        };
    if (const std::string* pattern = parsed.get("--filter")) {
        // Not std::regex: it backtracks and recurses, so a long name or a nested pattern crashed or hung it.
        std::shared_ptr<const NameFilter> filter;
        try {
            filter = std::make_shared<const NameFilter>(*pattern);
        } catch (const Error& e) {
            throw Error("--filter: " + quoted_text(*pattern) + " is not a valid regular expression (" + e.what() + ")");
        }
        settings.keep = [filter](const std::string& name) { return filter->search(name); };
    }

    return settings;
}

std::string sweep_row_json(const SweepRow& row) { return sweep_row(row).str(); }

std::string sweep_json(const std::vector<std::string>& rows, const SweepTotal& total) {
    std::string out = "{\"tensors\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ",\n" : "\n") + rows[i];
    return out + (rows.empty() ? "" : "\n") + "], \"total\": " + total_json(total) + "}";
}

int run_sweep(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kSweepHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, join(sweep_report_options(), {{"--json", false}, {"--csv", false}}));
    if (parsed.positionals.size() != 1) throw Error("sweep needs exactly one PATH (.safetensors or .index.json)");
    if (parsed.has("--json") && parsed.has("--csv")) throw Error("give --json or --csv, not both");
    const SweepSettings settings = sweep_settings(parsed);
    // Every header and the index are checked before the first row is printed.
    const Checkpoint checkpoint = open_checkpoint(parsed.positionals[0]);
    const bool csv = parsed.has("--csv");
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    bool first = true;
    if (csv) std::printf("%s\n", sweep_csv_header().c_str());
    bool warned = false;  // a CSV has no column for it: the first row's warning once, on stderr
    const auto on_row = [&](const SweepRow& row) {
        if (csv && !row.warning.empty() && !warned) {
            print_message_line("warning", row.warning + " (and so every row: --overflow wrap)");
            warned = true;
        }
        if (csv)
            std::printf("%s\n", sweep_csv_line(row).c_str());
        else
            std::printf("%s%s", first ? "{\"tensors\": [\n" : ",\n", sweep_row(row).str().c_str());
        first = false;
        std::fflush(stdout);
    };
    const SweepTotal total = sweep_checkpoint(checkpoint, settings, on_row, terminal ? SweepProgress(show_progress) : nullptr);
    if (terminal) std::fputs("\r\033[K", stderr);
    if (csv) return 0;
    std::printf("%s], \"total\": %s}\n", first ? "{\"tensors\": [" : "\n", total_json(total).c_str());
    return 0;
}

}  // namespace qs::cli
