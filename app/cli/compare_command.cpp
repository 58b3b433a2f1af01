// `quantscope compare A B [--json | --csv]`: two checkpoints tensor by tensor (issue 23 item 6).
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "quantscope/compare.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {
namespace {

JsonObject row_json(const CompareRow& row) {
    JsonObject json;
    const bool ok = row.error.empty();
    const auto text_or_null = [&](const char* key, const std::string& text) {
        if (text.empty())
            json.raw(key, "null");
        else
            json.string(key, text);
    };
    json.string("name", row.name).raw("shape", shape_to_json(row.shape));
    text_or_null("dtype_a", row.dtype_a);
    text_or_null("dtype_b", row.dtype_b);
    json.integer("elements", row.elements);
    json.number("bits_per_weight_a", row.dtype_a.empty() ? std::nullopt : std::optional<double>(row.bits_per_weight_a));
    json.number("bits_per_weight_b", row.dtype_b.empty() ? std::nullopt : std::optional<double>(row.bits_per_weight_b));
    const auto number = [&](const char* key, std::optional<double> value) { json.number(key, ok ? value : std::nullopt); };
    number("mse", row.mse);
    number("relative_rmse", row.relative_rmse);
    number("sqnr_db", row.sqnr_db);
    number("max_abs_error", row.max_abs_error);
    text_or_null("error", row.error);
    return json;
}

JsonObject total_json(const CompareTotal& total) {
    JsonObject t;
    t.integer("tensors", total.tensors)
        .integer("error_rows", total.error_rows)
        .integer("elements", total.elements)
        .integer("bytes_a", static_cast<std::int64_t>(total.bytes_a))
        .integer("bytes_b", static_cast<std::int64_t>(total.bytes_b))
        .number("bits_per_weight_a", total.elements ? std::optional<double>(total.bits_per_weight_a) : std::nullopt)
        .number("bits_per_weight_b", total.elements ? std::optional<double>(total.bits_per_weight_b) : std::nullopt)
        .number("mse", total.elements ? std::optional<double>(total.mse) : std::nullopt)
        .number("relative_rmse", total.relative_rmse)
        .number("sqnr_db", total.sqnr_db)
        .number("max_abs_error", total.elements ? std::optional<double>(total.max_abs_error) : std::nullopt)
        .number("seconds", total.seconds);
    return t;
}

std::string fixed(std::optional<double> value, int decimals) {
    if (!value) return "-";
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, *value);
    return text;
}

// The text table: one line per tensor, the name last so that long names do not push the numbers apart.
void print_text_header() {
    std::printf("%-8s %-8s %7s %7s %10s %10s %12s  %s\n", "A", "B", "bpw A", "bpw B", "rel. RMSE", "SQNR dB",
                "max |error|", "tensor");
}

void print_text_row(const CompareRow& row) {
    const bool ok = row.error.empty();
    // A scalar's shape is empty: "scalar", as inspect lists it (the name stood alone with a trailing space).
    const std::string name = printable(row.name) + " " + (row.shape.empty() ? "scalar" : shape_to_string(row.shape));
    std::printf("%-8s %-8s %7s %7s %10s %10s %12s  %s%s\n", row.dtype_a.empty() ? "-" : row.dtype_a.c_str(),
                row.dtype_b.empty() ? "-" : row.dtype_b.c_str(),
                fixed(row.dtype_a.empty() ? std::nullopt : std::optional<double>(row.bits_per_weight_a), 3).c_str(),
                fixed(row.dtype_b.empty() ? std::nullopt : std::optional<double>(row.bits_per_weight_b), 3).c_str(),
                ok ? fixed(row.relative_rmse, 5).c_str() : "-", ok ? fixed(row.sqnr_db, 2).c_str() : "-",
                ok ? format_g(row.max_abs_error).c_str() : "-", name.c_str(),
                ok ? "" : ("  (" + printable(row.error) + ")").c_str());
}

void print_text_total(const CompareTotal& total) {
    const bool any = total.elements > 0;
    std::printf("%-8s %-8s %7s %7s %10s %10s %12s  %lld tensors compared (%lld not), %lld elements, %.2f s\n", "total",
                "", fixed(any ? std::optional<double>(total.bits_per_weight_a) : std::nullopt, 3).c_str(),
                fixed(any ? std::optional<double>(total.bits_per_weight_b) : std::nullopt, 3).c_str(),
                fixed(total.relative_rmse, 5).c_str(), fixed(total.sqnr_db, 2).c_str(),
                any ? format_g(total.max_abs_error).c_str() : "-", static_cast<long long>(total.tensors),
                static_cast<long long>(total.error_rows), static_cast<long long>(total.elements), total.seconds);
}

// "compare: 41% (3.2 of 7.8 GB)" rewritten in place on a terminal.
void show_progress(std::uint64_t done, std::uint64_t total) {
    const double percent = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
    std::fprintf(stderr, "\rcompare: %3.0f%% (%.2f of %.2f GB)", percent, static_cast<double>(done) / 1e9,
                 static_cast<double>(total) / 1e9);
    std::fflush(stderr);
}

}  // namespace

const char* const kCompareHelp =
    "usage: quantscope compare A B [--json | --csv]\n"
    "\n"
    "Compares two checkpoints tensor by tensor: A and B each a .gguf or .safetensors file or a sharded\n"
    "checkpoint's *.safetensors.index.json (an F16 GGUF against its Q4_K_M: what llama-quantize did to the\n"
    "model). Tensors are matched by name and must have the same shape; each one's stored values are read as\n"
    "its type's to_float gives them (F32, F16, BF16, F64 and the ggml types QuantScope decodes). One row per\n"
    "tensor of A in file order, then those only B has: both stored types, bits per weight, mse, relative_rmse\n"
    "(rmse / rms of A), sqnr_db, max_abs_error, and an error where a tensor cannot be compared; then a total\n"
    "weighted by elements. Memory follows a tile of each tensor, never a whole one.\n"
    "\n"
    "options:\n"
    "  --json   one object {\"tensors\": [rows], \"total\": {...}}\n"
    "  --csv    a header line and one line per row, no total\n"
    "  (default: a table for reading)\n"
    "Progress goes to stderr when it is a terminal.\n";

int run_compare(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kCompareHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {{"--json", false}, {"--csv", false}});
    if (parsed.positionals.size() != 2) throw Error("compare needs two checkpoints, A and B");
    if (parsed.has("--json") && parsed.has("--csv")) throw Error("give --json or --csv, not both");
    // Both headers (and indexes) are checked before the first row.
    const Checkpoint a = open_checkpoint(parsed.positionals[0]);
    const Checkpoint b = open_checkpoint(parsed.positionals[1]);
    const bool json = parsed.has("--json"), csv = parsed.has("--csv");
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    bool first = true;
    if (csv) std::printf("%s\n", compare_csv_header().c_str());
    if (!json && !csv) print_text_header();
    const auto on_row = [&](const CompareRow& row) {
        if (terminal) std::fputs("\r\033[K", stderr);
        if (csv)
            std::printf("%s\n", compare_csv_line(row).c_str());
        else if (json)
            std::printf("%s%s", first ? "{\"tensors\": [\n" : ",\n", row_json(row).str().c_str());
        else
            print_text_row(row);
        first = false;
        std::fflush(stdout);
    };
    const CompareTotal total =
        compare_checkpoints(a, b, on_row, terminal ? CompareProgress(show_progress) : nullptr);
    if (terminal) std::fputs("\r\033[K", stderr);
    if (json) std::printf("%s], \"total\": %s}\n", first ? "{\"tensors\": [" : "\n", total_json(total).str().c_str());
    if (!json && !csv) print_text_total(total);
    return 0;
}

}  // namespace qs::cli
