// One window of the overview's cells at full resolution (quantize_window): each element's original, code,
// r' and error, bit for bit those of quantize.
#include <algorithm>
#include <vector>

#include "overview_pieces.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/stored_blocks.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/quantize.hpp"

namespace qs {
namespace {

// A number format's window: each row's cells (widened to whole blocks, whose values a block format's scale
// comes from: ggml's float32 d is in no params) quantized as a slice of the whole tensor by the format's
// pass, so the cells are `quantize`'s bits. The params' scales are the whole tensor's (as used: exact).
void format_window(const TensorView& view, const QuantParams& params, const QuantConfig& config, const OverviewGrid& g,
                   std::int64_t slice, const CellWindow& window, WindowResults& out) {
    // Stored blocks are decoded, not quantized: no format params to make.
    const FormatParams fp = params.stored ? FormatParams{} : format_params_for(view, params, config);  // weighted as the whole pass is
    const FormatConfig format = format_config(config);
    const std::int64_t align = format_traits(config.format).own_blocks() ? params.block_stride : 1;
    std::vector<std::int32_t> codes;
    std::vector<float> deq, err;
    for (std::int64_t r = 0; r < window.rows; ++r) {
        const std::int64_t first = (slice * g.rows + window.row0 + r) * g.cols + window.col0;
        const std::int64_t a = first / align * align, b = (first + window.cols + align - 1) / align * align;
        codes.resize(static_cast<std::size_t>(b - a));
        deq.resize(codes.size());
        err.resize(codes.size());
        TensorView sub = view;
        sub.shape = {b - a};
        sub.data = view.data + static_cast<std::size_t>(a) * element_size(view.type);
        const QuantOutputs whole_blocks{codes.data(), deq.data(), err.data()};
        if (params.stored) quantize_stored_slice(sub, a, *params.stored, whole_blocks);
        else quantize_format_slice(sub, a, fp, format, whole_blocks);
        const auto from = static_cast<std::size_t>(first - a), to = static_cast<std::size_t>(r * window.cols);
        std::copy_n(codes.begin() + from, window.cols, out.codes.begin() + to);
        std::copy_n(deq.begin() + from, window.cols, out.dequantized.begin() + to);
        std::copy_n(err.begin() + from, window.cols, out.error.begin() + to);
    }
    view.guarded([&] {
        for (std::int64_t r = 0; r < window.rows; ++r) {
            const std::int64_t first = (slice * g.rows + window.row0 + r) * g.cols + window.col0;
            float* row = out.original.data() + r * window.cols;
            const float* v = floats_at(view, first, window.cols, row);
            if (v != row) std::copy_n(v, window.cols, row);
        }
    });
}

}  // namespace

void quantize_window(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                     std::int64_t slice, const CellWindow& window, WindowResults& out) {
    const OverviewGrid g = detail::slices_of(view.shape);
    if (slice < 0 || slice >= g.slices || window.row0 < 0 || window.col0 < 0 || window.rows < 1 || window.cols < 1 ||
        window.row0 + window.rows > g.rows || window.col0 + window.cols > g.cols)
        throw Error("the window is outside the tensor");
    const auto n = static_cast<std::size_t>(window.rows * window.cols);
    out.slice = slice;
    out.window = window;
    out.original.resize(n);
    out.dequantized.resize(n);
    out.error.resize(n);
    out.codes.resize(n);
    if (!is_int_format(config.format)) return format_window(view, params, config, g, slice, window, out);
    view.guarded([&] {
        std::vector<float> scratch(static_cast<std::size_t>(window.cols));
        for (std::int64_t r = 0; r < window.rows; ++r) {
            const std::int64_t first = (slice * g.rows + window.row0 + r) * g.cols + window.col0;
            const float* v = floats_at(view, first, window.cols, scratch.data());
            for (std::int64_t c = 0; c < window.cols; ++c) {
                // The scalar formula the fused kernel vectorises (the tests hold them to the same bits).
                const ElementTrace t = trace_value(v[c], params, config, first + c);
                const auto i = static_cast<std::size_t>(r * window.cols + c);
                out.original[i] = t.r;
                out.codes[i] = t.code;
                out.dequantized[i] = t.dequantized;
                out.error[i] = t.error;
            }
        }
    });
}

}  // namespace qs
