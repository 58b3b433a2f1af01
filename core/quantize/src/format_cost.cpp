// What a quantized tensor costs (FORMATS.md "bits_per_weight", "bytes") and how a code's bits read.
#include "quantscope/format_quantize.hpp"

#include <algorithm>
#include <map>
#include <mutex>

namespace qs {
namespace {

FormatCost cost_of(double total_bits, std::int64_t n) {
    FormatCost c;
    c.bits_per_weight = total_bits / static_cast<double>(n);
    c.bytes = static_cast<std::int64_t>((total_bits + 7) / 8);  // exact: total_bits is an integer below 2^53
    return c;
}

std::string binary(std::uint32_t value, int bits) {
    std::string text;
    for (int b = bits - 1; b >= 0; --b) text += ((value >> b) & 1u) != 0 ? '1' : '0';
    return text;
}

}  // namespace

FormatCost format_cost(const FormatConfig& config, std::int64_t n, std::int64_t blocks) {
    QuantConfig q = format_layout_config(config);
    q.format = config.format;
    q.mode = config.scaling == ElementScaling::Cast ? Mode::Cast : q.mode;  // cast stores no scale
    return quantization_cost(q, n, blocks);
}

FormatCost int_cost(const QuantConfig& config, std::int64_t n, std::int64_t blocks) {
    QuantConfig q = config;
    q.format = FormatId{};  // int<N>'s row: FormatId 0
    return quantization_cost(q, n, blocks);
}

// The codes' bits and the stored scales', as the config's row counts them.
FormatCost quantization_cost(const QuantConfig& config, std::int64_t n, std::int64_t blocks) {
    const FormatTraits& row = format_traits(config.format);
    const double codes = static_cast<double>(n) * row.code_space(row, config).bits;
    return cost_of(codes + row.stored_scale_bits(row, config, n, blocks), n);
}

void code_range(const QuantConfig& config, std::int32_t& lo, std::int32_t& hi) {
    const FormatTraits& row = format_traits(config.format);
    const CodeSpace codes = row.code_space(row, config);
    lo = codes.lo;
    hi = codes.hi;
}

std::vector<double> scaled_grid(FormatId format, double s) {
    static std::mutex lock;
    static std::map<FormatId, std::vector<float>> grids;  // fp16's has 63488 values: computed once
    std::vector<float> grid;
    {
        const std::lock_guard<std::mutex> hold(lock);
        auto it = grids.find(format);
        if (it == grids.end()) it = grids.emplace(format, format_grid(format)).first;
        grid = it->second;
    }
    const auto sf = static_cast<float>(s);
    std::vector<double> out;
    out.reserve(grid.size());
    for (float g : grid) out.push_back(static_cast<double>(sf * g));  // r' = s * grid[code] in float32
    std::sort(out.begin(), out.end());
    return out;
}

std::string code_bits_text(FormatId format, std::int32_t code) {
    const FormatTraits& info = format_traits(format);
    const auto u = static_cast<std::uint32_t>(code);
    if (info.has_float_element()) {
        const int e = info.element.exponent_bits, m = info.element.mantissa_bits;
        return binary(u >> (e + m), 1) + " " + binary(u >> m, e) + " " + binary(u, m);
    }
    return binary(u, info.element_bits);  // nf4 index, ggml code (Q8_0: two's complement)
}

}  // namespace qs
