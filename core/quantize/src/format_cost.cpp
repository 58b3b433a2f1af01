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
    const FormatInfo& info = format_info(config.format);
    double bits = static_cast<double>(n) * info.element_bits;
    if (info.kind == FormatKind::Block) {
        bits += static_cast<double>(n / info.block_size) * info.scale_bits;
        if (config.format == FormatId::NvFp4) bits += 32;  // g, one float32 per tensor
    } else if (config.scaling != ElementScaling::Cast) {
        bits += 32.0 * static_cast<double>(blocks);  // one float32 s per block
    }
    return cost_of(bits, n);
}

FormatCost int_cost(const QuantConfig& config, std::int64_t n, std::int64_t blocks) {
    // A float32 s per block, and a float32 z where one is stored (symmetric mode stores none).
    const double per_block = config.mode == Mode::Symmetric ? 32.0 : 64.0;
    return cost_of(static_cast<double>(n) * config.dtype.bits + per_block * static_cast<double>(blocks), n);
}

FormatCost quantization_cost(const QuantConfig& config, std::int64_t n, std::int64_t blocks) {
    if (config.format == FormatId::Int) return int_cost(config, n, blocks);
    return format_cost(format_config(config), n, blocks);
}

void code_range(const QuantConfig& config, std::int32_t& lo, std::int32_t& hi) {
    if (config.format == FormatId::Int) {
        lo = config.dtype.q_min();
        hi = config.dtype.q_max();
    } else if (config.format == FormatId::Q8_0) {
        lo = -127;
        hi = 127;
    } else {
        lo = 0;
        hi = (std::int32_t{1} << format_info(config.format).element_bits) - 1;
    }
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
    const FormatInfo& info = format_info(format);
    const auto u = static_cast<std::uint32_t>(code);
    if (info.element.exponent_bits > 0) {
        const int e = info.element.exponent_bits, m = info.element.mantissa_bits;
        return binary(u >> (e + m), 1) + " " + binary(u >> m, e) + " " + binary(u, m);
    }
    return binary(u, info.element_bits);  // nf4 index, ggml code (Q8_0: two's complement)
}

}  // namespace qs
