#include "quantscope/blocks.hpp"

#include <cmath>

#include <algorithm>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_config.hpp"
#include "quantscope/quantize.hpp"

namespace qs {
namespace {

// Block b's elements are the runs of `stride` starting at (b + k count) stride, k = 0, 1, ...
template <typename T>
std::vector<T> gather_block(const T* values, std::int64_t n, const QuantParams& params, std::int64_t block) {
    const std::int64_t stride = params.block_stride, count = params.block_count;
    if (stride < 1 || count < 1 || block < 0 || block >= count) throw Error("block index out of range");
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(n / count + stride));
    for (std::int64_t start = block * stride; start < n; start += stride * count)
        out.insert(out.end(), values + start, values + std::min(n, start + stride));
    return out;
}

}  // namespace

std::vector<float> block_elements(const float* values, std::int64_t n, const QuantParams& params, std::int64_t block) {
    return gather_block(values, n, params, block);
}

std::vector<std::int32_t> block_elements(const std::int32_t* codes, std::int64_t n, const QuantParams& params,
                                         std::int64_t block) {
    return gather_block(codes, n, params, block);
}

std::int64_t count_clipped(const std::vector<float>& values, double scale, std::int32_t zero_point,
                           const QuantConfig& config) {
    const float s = static_cast<float>(scale);
    std::int64_t clipped = 0;
    if (!is_int_format(config.format)) {
        // A format saturates where |r / s| passes its largest value (nf4: 1); ggml's clamp is not modelled
        // here (a q4_0 block clamps at most its own extreme value: its row's largest is 0).
        const double largest = format_traits(config.format).largest;
        if (largest == 0 || !clips_counted(format_config(config))) return 0;
        for (float r : values) clipped += (s != 0 && std::fabs(r / s) > largest) ? 1 : 0;
        return clipped;
    }
    for (float r : values) {
        bool out = false;
        quantize_value(r, s, zero_point, config, &out);
        clipped += out ? 1 : 0;
    }
    return clipped;
}

}  // namespace qs
