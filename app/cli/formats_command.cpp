// `quantscope formats INPUT [--json]`: FORMATS.md "What the command line and JSON add".
#include <cstdio>

#include "cli/commands.hpp"
#include "cli/reports.hpp"
#include "cli/options.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {

const char* const kFormatsHelp =
    "usage: quantscope formats INPUT [--tensor NAME] [--json]\n"
    "       quantscope formats --preset NAME | --random normal|uniform --shape RxC ... [--json]\n"
    "\n"
    "Quantizes one tensor with every number format (fp16, bf16, fp8, fp6, fp4, nf4 per tensor in their\n"
    "default symmetric mode; mxfp8/6/4, nvfp4, q8_0, q4_0, q4_1 with their own blocks) and with int8 and\n"
    "int4 (asymmetric: per tensor, per channel on axis 0, groups of 32 and 128), and prints what each\n"
    "costs and loses: bits per weight (elements plus stored scales and zero points), bytes, MSE, SQNR\n"
    "and the largest error, sorted by bits per weight. A format whose block (or group) does not divide\n"
    "the last axis gets no row; one whose r' overflows float32 (values near its limits) gets quantize's\n"
    "error line instead of the numbers.\n"
    "\n"
    "  --json   one object {\"formats\": [rows]}, each row {format, granularity, group_size,\n"
    "           bits_per_weight, bytes, mse, sqnr_db, max_abs_error} (group_size null where none; a row\n"
    "           that overflows: the three metrics null and its \"error\")\n";

std::string formats_json(const std::vector<FormatRow>& rows) {
    std::string out = "{\"formats\": [";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const FormatRow& r = rows[i];
        JsonObject row;
        row.string("format", r.format).string("granularity", r.granularity);
        if (r.group_size)
            row.integer("group_size", *r.group_size);
        else
            row.raw("group_size", "null");
        row.number("bits_per_weight", r.bits_per_weight).integer("bytes", r.bytes);
        if (r.error.empty())
            row.number("mse", r.metrics.mse).number("sqnr_db", r.metrics.sqnr_db).number("max_abs_error", r.metrics.max_abs_error);
        else  // as a sweep row that failed: its error instead of the metrics
            row.raw("mse", "null").raw("sqnr_db", "null").raw("max_abs_error", "null").string("error", r.error);
        out += (i ? ",\n  " : "\n  ") + row.str();
    }
    return out + "\n]}";
}

int run_formats(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kFormatsHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, join(tensor_source_options(), {{"--json", false}}));
    const Input input = load_input(parsed, false, false);
    const std::vector<FormatRow> rows = format_table(input.values());
    if (parsed.has("--json")) {
        std::printf("%s\n", formats_json(rows).c_str());
        return 0;
    }
    std::printf("%-12s %-12s %9s %12s %12s %9s %12s\n", "format", "granularity", "bits/w", "bytes", "mse", "sqnr_db",
                "max_error");
    for (const FormatRow& r : rows) {
        const std::string gran = r.granularity + (r.group_size ? " " + std::to_string(*r.group_size) : "");
        if (!r.error.empty()) {
            std::printf("%-12s %-12s %9.4f %12lld  %s\n", r.format.c_str(), gran.c_str(), r.bits_per_weight,
                        static_cast<long long>(r.bytes), printable(r.error, 200).c_str());
            continue;
        }
        std::printf("%-12s %-12s %9.4f %12lld %12.4g %9s %12.4g\n", r.format.c_str(), gran.c_str(), r.bits_per_weight,
                    static_cast<long long>(r.bytes), r.metrics.mse,
                    r.metrics.sqnr_db ? format_g(*r.metrics.sqnr_db).c_str() : "-", r.metrics.max_abs_error);
    }
    return 0;
}

}  // namespace qs::cli
