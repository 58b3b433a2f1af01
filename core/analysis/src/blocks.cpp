#include "quantscope/blocks.hpp"

#include <cmath>

#include <algorithm>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_config.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_rows.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/stored_blocks.hpp"

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

StoredPairNames stored_pair_names(const QuantConfig& config) {
    if (is_int_format(config.format)) return {"s", "z"};
    const FormatTraits& row = format_traits(config.format);
    return {row.scale_label, row.has_offset ? row.offset_label : ""};
}

void ggml_block_at(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t start,
                   std::uint8_t* bytes) {
    const GgmlTypeInfo& type = *format_traits(config.format).ggml;
    const std::int64_t n = type.block_size;
    if (params.stored) {
        const StoredBlocks& stored = *params.stored;
        if (stored.type != &type || start < 0 || start % n != 0 || start >= stored.numel())
            throw Error("stored blocks do not match the tensor's elements");
        std::copy_n(stored.block(start / n), type.type_size, bytes);
        return;
    }
    const std::int64_t row_length = view.shape.empty() ? view.numel() : view.shape.back();
    std::vector<float> block(static_cast<std::size_t>(n)), row_scratch;
    view.guarded([&] {
        const float* r = floats_at(view, start, n, block.data());
        std::copy(r, r + n, block.begin());
        ChunkPlace place;
        place.first = start % row_length;  // the block's column: row_sum below is its row's
        place.row_length = row_length;
        float row_sum = 0;
        if (config.importance && type.takes_importance) {
            row_scratch.resize(static_cast<std::size_t>(row_length));
            row_sum = ggml_row_sum_squares(floats_at(view, start - place.first, row_length, row_scratch.data()), row_length);
            place.importance = config.importance->data();
            place.row_sum_squares = &row_sum;
        }
        ggml_quantize_at(type, block.data(), n, place, bytes);
    });
}

StoredPair stored_pair(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t block) {
    StoredPair pair;
    if (is_int_format(config.format)) {
        std::int32_t z = 0;
        params.pair(block, pair.scale, z);
        pair.offset = z;
        return pair;
    }
    const FormatTraits& row = format_traits(config.format);
    if (row.ggml == nullptr) {
        pair.scale = params.scale_of(block);
        return pair;
    }
    std::uint8_t bytes[256];  // one block of any ggml type (at most 210 bytes)
    ggml_block_at(view, params, config, block * row.ggml->block_size, bytes);
    GgmlBlockFields fields;
    ggml_block_fields(*row.ggml, bytes, fields);
    pair.scale = fields.d;
    if (fields.has_dmin) pair.offset = fields.dmin;
    return pair;
}

std::vector<double> block_levels(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                                 std::int64_t block) {
    if (is_int_format(config.format)) return {};
    const FormatTraits& row = format_traits(config.format);
    if (row.ggml == nullptr) return scaled_grid(config.format, static_cast<float>(params.scale_of(block)));
    std::uint8_t bytes[256];  // one block of any ggml type (at most 210 bytes)
    ggml_block_at(view, params, config, block * row.ggml->block_size, bytes);
    GgmlBlockFields f;
    ggml_block_fields(*row.ggml, bytes, f);
    const std::vector<float> grid = row.grid(row);
    std::vector<double> levels;
    // to_float's r' = grid * scale + offset in float32, per sub-block (q4_1/q5_1: + m; k-quants: - dmin*m).
    const int parts = std::max(f.sub_blocks, 1);
    for (int j = 0; j < parts; ++j) {
        const float scale = f.sub_blocks > 0 ? f.sub_scale_used[j] : f.d;
        const float offset = f.sub_blocks > 0 ? -f.sub_min_used[j] : f.has_dmin ? f.dmin : 0.0f;
        for (const float g : grid) levels.push_back(static_cast<double>(g * scale + offset));
    }
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    return levels;
}

}  // namespace qs
