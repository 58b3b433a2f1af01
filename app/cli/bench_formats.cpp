#include "cli/bench_formats.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "cli/bench_timing.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/quantize.hpp"

namespace qs::cli {
namespace {

// quantize_checked with the three outputs into whole arrays: the window's recompute, per format.
double pipeline_ms(const Tensor& tensor, const QuantConfig& config, int repeats) {
    const auto n = static_cast<std::size_t>(tensor.numel());
    std::vector<std::int32_t> codes(n);
    std::vector<float> deq(n), err(n);
    const OutputSelection all{true, true, true};
    const ResultSink sink = [&](std::int64_t first, std::int64_t count, const QuantOutputs& b) {
        if (b.codes) std::copy(b.codes, b.codes + count, codes.begin() + first);
        if (b.dequantized) std::copy(b.dequantized, b.dequantized + count, deq.begin() + first);
        if (b.error) std::copy(b.error, b.error + count, err.begin() + first);
    };
    quantize_checked(view_of(tensor), config, all, sink);  // warm-up
    return median_ms(repeats, [&] { quantize_checked(view_of(tensor), config, all, sink); });
}

}  // namespace

void add_format_rows(JsonObject& json, const Tensor& tensor, int repeats) {
    QuantConfig int8;
    const double int8_ms = pipeline_ms(tensor, int8, repeats);
    json.number("formats_int8_ms", int8_ms);
    for (const char* name : {"fp8-e4m3", "bf16", "fp4-e2m1", "nf4", "mxfp4", "nvfp4", "q4_0"}) {
        QuantConfig c;
        parse_dtype(name, c);
        c.mode = Mode::Symmetric;
        std::string key = name;
        std::replace(key.begin(), key.end(), '-', '_');
        try {
            check_config(c, tensor.shape);
        } catch (const std::exception&) {
            json.raw("format_" + key + "_ms", "null");  // a block that does not divide the bench shape
            continue;
        }
        const double ms = pipeline_ms(tensor, c, repeats);
        json.number("format_" + key + "_ms", ms).number("format_" + key + "_ratio_to_int8", ms / int8_ms);
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<FormatRow> rows = format_table(view_of(tensor));
    json.integer("formats_rows", static_cast<std::int64_t>(rows.size()))
        .number("formats_command_ms",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace qs::cli
