// ggml's block bytes of a whole tensor (ggml_blocks.hpp): the rows' own quantizer (ggml_quantize_at) over
// batches of chunks in parallel, written in order.
#include "quantscope/ggml_blocks.hpp"

#include <algorithm>
#include <atomic>

#include "format_scales.hpp"
#include "parallel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_rows.hpp"

namespace qs {
namespace {

constexpr std::int64_t kChunk = 4096;        // values per work item: a multiple of every ggml block
constexpr std::int64_t kBatch = 256 * kChunk;  // values per write

}  // namespace

void ggml_block_bytes(const TensorView& view, const QuantConfig& config,
                      const std::function<void(const std::uint8_t*, std::size_t)>& write) {
    check_config(config, view.shape);
    const FormatTraits& row = format_traits(config.format);
    if (!row.ggml) throw Error(std::string(format_name(config.format)) + " is not a ggml type: it has no block bytes");
    const GgmlTypeInfo& type = *row.ggml;
    FormatParams p;
    p.format = config.format;
    detail::take_importance(format_config(config), view.shape, p);
    if (p.weighted()) p.row_sum_squares = detail::row_sums_of_squares(view, p.row_length);
    const std::int64_t n = view.numel();
    const std::int64_t chunk_bytes = kChunk / type.block_size * type.type_size;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(std::min(n, kBatch) / type.block_size * type.type_size));
    std::atomic<bool> bad{false};
    for (std::int64_t first = 0; first < n; first += kBatch) {
        const std::int64_t end = std::min(n, first + kBatch);
        detail::NextIndex next(first / kChunk, (end + kChunk - 1) / kChunk);
        detail::parallel_guarded(view, detail::pass_threads(end - first), [&](int, int) {
            std::vector<float> scratch(static_cast<std::size_t>(kChunk));
            for (std::int64_t c = 0; next.take(c);) {
                const std::int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
                const float* r = floats_at(view, begin, len, scratch.data());
                float nonfinite = 0;  // r - r is NaN exactly for a NaN or an Inf: no quantizer sees one
                for (std::int64_t k = 0; k < len; ++k) nonfinite += r[k] - r[k];
                if (nonfinite != 0) {
                    bad = true;
                    continue;
                }
                ggml_quantize_at(type, r, len, detail::chunk_place(p, begin),
                                 bytes.data() + (begin - first) / kChunk * chunk_bytes);
            }
        });
        if (bad) throw Error("cannot quantize a value that is not finite");
        write(bytes.data(), static_cast<std::size_t>((end - first) / type.block_size * type.type_size));
    }
}

void ggml_block_bytes(const TensorView& view, const QuantConfig& config, const FormatParams& params,
                      const std::function<void(const std::uint8_t*, std::size_t)>& write) {
    const FormatTraits& row = format_traits(config.format);
    // Blocks kept for another layout or weighting are not these: quantize instead.
    if (!params.ggml_blocks || params.format != config.format || !row.ggml ||
        params.block_count * row.ggml->block_size != view.numel() || params.importance != config.importance)
        return ggml_block_bytes(view, config, write);
    const GgmlTypeInfo& type = *row.ggml;
    const std::int64_t blocks = view.numel() / type.block_size, per_write = kBatch / type.block_size;
    for (std::int64_t b = 0; b < blocks; b += per_write)
        write(params.ggml_blocks.get() + b * type.type_size,
              static_cast<std::size_t>(std::min(per_write, blocks - b) * type.type_size));
}

ImportanceError::ImportanceError(Importance weights) : weights_(std::move(weights)) {
    if (!weights_ || weights_->empty()) throw Error("an importance-weighted error needs importance");
}

void ImportanceError::add(const float* error, std::int64_t count) {
    const float* w = weights_->data();
    const auto columns = static_cast<std::int64_t>(weights_->size());
    for (std::int64_t k = 0; k < count; ++k) {
        const double e = error[k];
        row_weighted_ += w[column_] * e * e;
        row_weight_ += w[column_];
        if (++column_ == columns) {  // check_importance: Σ w > 0
            sum_of_rows_ += row_weighted_ / row_weight_;
            ++rows_;
            column_ = 0, row_weighted_ = 0, row_weight_ = 0;
        }
    }
}

double ImportanceError::mean() const { return rows_ > 0 ? sum_of_rows_ / static_cast<double>(rows_) : 0.0; }

}  // namespace qs
