#include "cli/bench_formats.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli/bench_timing.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/format_traits.hpp"
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

// q4_0's row is the old fast kernel: it keeps the full repeats, as before.
bool is_legacy_ggml(const std::string& name) { return name == "q4_0"; }

}  // namespace

void add_format_rows(JsonObject& json, const Tensor& tensor, int repeats) {
    QuantConfig int8;
    const double int8_ms = pipeline_ms(tensor, int8, repeats);
    json.number("formats_int8_ms", int8_ms);
    // One row per format: the pipeline's time and its ratio to int8's (FORMATS.md; issue 23 for the ggml types,
    // whose block searches take 10 to 100 times int8's time: fewer repeats, so a default bench stays short).
    struct Row {
        const char* name;
        bool with_importance;
    };
    const Row timed[] = {{"fp8-e4m3", false}, {"bf16", false},  {"fp4-e2m1", false}, {"nf4", false},
                        {"mxfp4", false},    {"nvfp4", false}, {"q4_0", false},     {"q5_0", false},
                        {"q5_1", false},     {"q2_k", false},  {"q3_k", false},     {"q4_k", false},
                        {"q5_k", false},     {"q6_k", false},  {"iq4_nl", false},   {"iq4_xs", false},
                        {"iq4_xs", true},    {"tq1_0", false}, {"tq2_0", false}};
    for (const Row& r : timed) {
        QuantConfig c;
        parse_dtype(r.name, c);
        c.mode = Mode::Symmetric;
        std::string key = r.name;
        std::replace(key.begin(), key.end(), '-', '_');
        if (r.with_importance) key += "_importance";
        const bool ggml = format_traits(c.format).scale_from_values;
        try {
            check_config(c, tensor.shape);
        } catch (const std::exception&) {
            json.raw("format_" + key + "_ms", "null");  // a block that does not divide the bench shape
            continue;
        }
        if (r.with_importance) {  // llama.cpp's imatrix is a mean of squared activations: positive, uneven
            std::vector<float> weights(static_cast<std::size_t>(tensor.shape.back()));
            for (std::size_t k = 0; k < weights.size(); ++k) weights[k] = 0.5f + static_cast<float>((k * 7919) % 97) / 16.0f;
            c.importance = std::make_shared<const std::vector<float>>(std::move(weights));
        }
        const double ms = pipeline_ms(tensor, c, ggml && !is_legacy_ggml(r.name) ? std::min(repeats, 3) : repeats);
        json.number("format_" + key + "_ms", ms).number("format_" + key + "_ratio_to_int8", ms / int8_ms);
    }
    const auto start = std::chrono::steady_clock::now();
    const std::vector<FormatRow> rows = format_table(view_of(tensor));
    json.integer("formats_rows", static_cast<std::int64_t>(rows.size()))
        .number("formats_command_ms",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace qs::cli
