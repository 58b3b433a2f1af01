// The fused pass of the float, codebook and block formats: the same shape as int<N>'s (quantize, dequantize,
// error, metrics in one pass, results into arrays or streamed to a sink in bounded batches), one element
// function per format chosen once per chunk.
#include <algorithm>
#include <cmath>
#include <memory>

#include "block_pairs.hpp"
#include "deliver.hpp"
#include "format_kernels.hpp"
#include "format_scales.hpp"
#include "format_simd.hpp"
#include "parallel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/overflow_message.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"

namespace qs {
namespace {

// Elements per work item (a multiple of every block size, so a block never straddles two items).
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kBatch = std::int64_t{1} << 20;

struct ChunkSums {
    double sum_sq_err = 0, sum_abs_err = 0, sum_sq_r = 0, sum_r = 0;
};

// Per-thread accumulators whose merge does not depend on order.
struct Partial {
    float max_err = 0;
    std::int64_t clipped = 0;
    std::vector<std::uint8_t> seen;  // seen[code & mask]
};

struct ChunkOut {
    std::int32_t* codes;
    float* deq;
    float* err;
};

// One thread's scratch for a chunk (per-element scales and the outputs not wanted).
struct Scratch {
    std::vector<float> scale, deq, err;
    std::vector<std::int32_t> codes;
    Scratch() : scale(kChunk), deq(kChunk), err(kChunk), codes(kChunk) {}
};

// Each element's scale: its block's in the params (MX / NVFP4: the scale each block's recipe gave), or for
// block format params without scales (format_params_from_amax), each block's recipe on its values.
void fill_scales(const float* r, std::int64_t begin, std::int64_t len, const FormatParams& p, float* out) {
    if (p.on_demand()) {  // runs of at most 8: each block's s from its values in the chunk (or read again)
        for (std::int64_t k = 0; k < len;) {
            const std::int64_t block = (begin + k) / p.block_stride, b0 = block * p.block_stride - begin;
            const std::int64_t run = std::min(b0 + p.block_stride, len) - k;
            const float s = b0 >= 0 && b0 + p.block_stride <= len
                                ? detail::symmetric_format_scale(detail::values_amax(r + b0, p.block_stride), p.format)
                                : detail::on_demand_scale_unguarded(p, block);  // straddles the chunk (guard held)
            std::fill(out + k, out + k + run, s);
            k += run;
        }
        return;
    }
    if (p.scale.empty()) {  // the row's block recipe over the chunk's blocks, at the params' g
        const FormatTraits& row = format_traits(p.format);
        const int size = row.block_size;
        const std::int64_t blocks = len / size;
        float scale[kChunk];
        std::uint16_t stored[kChunk];
        row.kernels.block_scales(row, r, blocks, scale, stored, nullptr, detail::chunk_place(p, begin));
        if (row.has_global_scale()) row.kernels.scales_from_amax(p.global_scale, blocks, scale, stored);
        for (std::int64_t b = 0; b < blocks; ++b) std::fill(out + b * size, out + (b + 1) * size, scale[b]);
        return;
    }
    std::int64_t block = p.block_of(begin);
    std::int64_t left_in_run = p.block_stride - begin % p.block_stride;
    for (std::int64_t k = 0; k < len;) {
        const std::int64_t run = std::min(left_in_run, len - k);
        std::fill(out + k, out + k + run, p.scale[static_cast<std::size_t>(block)]);
        k += run;
        left_in_run = p.block_stride;
        if (++block == p.block_count) block = 0;
    }
}

// seen[code & mask] = 1 for n codes. Codes of at most 6 bits are gathered as the bits of one 64-bit set first
// (the same set), four at a time where AVX2 is built: a byte store per code waits on the ones before it.
void mark_seen(const std::int32_t* codes, std::int64_t n, std::uint32_t mask, std::uint8_t* seen) {
    if (mask >= 64) {
        for (std::int64_t i = 0; i < n; ++i) seen[static_cast<std::uint32_t>(codes[i]) & mask] = 1;
        return;
    }
    std::uint64_t set = 0;
    std::int64_t i = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    const __m256i low = _mm256_set1_epi64x(mask), one = _mm256_set1_epi64x(1);
    __m256i a = _mm256_setzero_si256(), b = a;
    for (; i + 8 <= n; i += 8) {
        const __m256i c0 = _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i)));
        const __m256i c1 = _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(codes + i + 4)));
        a = _mm256_or_si256(a, _mm256_sllv_epi64(one, _mm256_and_si256(c0, low)));
        b = _mm256_or_si256(b, _mm256_sllv_epi64(one, _mm256_and_si256(c1, low)));
    }
    alignas(32) std::uint64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_or_si256(a, b));
    set = lanes[0] | lanes[1] | lanes[2] | lanes[3];
#endif
    for (; i < n; ++i) set |= std::uint64_t{1} << (static_cast<std::uint32_t>(codes[i]) & mask);
    for (std::uint32_t k = 0; k <= mask; ++k)
        if ((set >> k) & 1) seen[k] = 1;
}

// The error, its sums (in eight fixed lanes: vectorised, and the same order wherever the arrays lie), the
// largest error and the codes seen.
[[gnu::noinline]] ChunkSums finish_chunk(const float* r, std::int64_t len, const std::int32_t* codes, const float* deq, float* err,
                       std::uint32_t mask, Partial& acc) {
    double sq[8] = {}, ab[8] = {}, rr[8] = {}, rs[8] = {};
    float max_err = acc.max_err;
    std::int64_t k = 0;
#ifdef QS_HAVE_FORMAT_AVX2
    k = len - len % 8;
    detail::error_sums_avx2(r, deq, k, err, max_err, sq, ab, rr, rs);
#endif
    for (std::int64_t i = k; i < len; ++i) {
        err[i] = std::fabs(r[i] - deq[i]);
        max_err = std::max(max_err, err[i]);
    }
    for (; k + 8 <= len; k += 8)
        for (int j = 0; j < 8; ++j) {
            const double e = err[k + j], x = r[k + j];
            sq[j] += e * e, ab[j] += e, rr[j] += x * x, rs[j] += x;
        }
    for (int j = 0; k < len; ++k, ++j) {
        const double e = err[k], x = r[k];
        sq[j] += e * e, ab[j] += e, rr[j] += x * x, rs[j] += x;
    }
    ChunkSums sums;
    for (int j = 0; j < 8; ++j)
        sums.sum_sq_err += sq[j], sums.sum_abs_err += ab[j], sums.sum_sq_r += rr[j], sums.sum_r += rs[j];
    acc.max_err = max_err;
    mark_seen(codes, len, mask, acc.seen.data());
    return sums;
}

// One chunk through the row's own loop (picked once per chunk): each element at its block's scale, or (a
// row whose blocks take their scale from their values) each block by its recipe.
ChunkSums run_chunk(const float* r, std::int64_t begin, std::int64_t len, const FormatParams& p, const FormatTraits& row,
                    std::uint32_t mask, const ChunkOut& out, Partial& acc, Scratch& ws) {
    std::int32_t* codes = out.codes ? out.codes : ws.codes.data();
    float* deq = out.deq ? out.deq : ws.deq.data();
    float* err = out.err ? out.err : ws.err.data();
    if (!row.scale_from_values) fill_scales(r, begin, len, p, ws.scale.data());
    acc.clipped += row.kernels.chunk(row, r, ws.scale.data(), len, codes, deq, detail::chunk_place(p, begin));
    return finish_chunk(r, len, codes, deq, err, mask, acc);
}

// `count_clipped`: clips_counted of the config (an element format's symmetric scale cuts nothing).
Metrics merged(const std::vector<Partial>& partials, const ChunkSums& total, std::int64_t n, FormatId format,
               bool count_clipped) {
    std::vector<std::uint8_t> seen(partials[0].seen.size(), 0);
    Metrics m;
    for (const Partial& p : partials) {
        m.max_abs_error = std::max(m.max_abs_error, static_cast<double>(p.max_err));
        if (count_clipped) m.clipped += p.clipped;
        for (std::size_t k = 0; k < seen.size(); ++k) seen[k] |= p.seen[k];
    }
    m.count = n;
    m.mse = total.sum_sq_err / static_cast<double>(n);
    m.rmse = std::sqrt(m.mse);
    m.mae = total.sum_abs_err / static_cast<double>(n);
    m.l2_error = std::sqrt(total.sum_sq_err);
    if (total.sum_sq_r > 0 && total.sum_sq_err > 0) m.sqnr_db = 10.0 * std::log10(total.sum_sq_r / total.sum_sq_err);
    m.levels_used = std::count(seen.begin(), seen.end(), std::uint8_t{1});
    m.levels_total = format_levels(format);
    m.sum = total.sum_r;
    m.signal_energy = total.sum_sq_r;
    m.error_energy = total.sum_sq_err;
    return m;
}

// The pass over `view`, elements [origin, origin + numel) of the tensor `p` was computed over (-1: the whole).
Metrics run_pass(const TensorView& view, std::int64_t origin, const FormatParams& given, bool count_clipped,
                 const QuantOutputs* whole, const OutputSelection& wanted, const ResultSink* sink) {
    const std::int64_t n = view.numel();
    if (n == 0) throw Error("cannot quantize an empty tensor");
    FormatParams with_sums;  // weighted params made without the rows' sums (format_params_from_amax): here
    if (given.weighted() && !given.row_sum_squares) {
        if (origin >= 0) throw Error("importance-weighted params need the rows' sums of squares of their tensor");
        with_sums = given;
        with_sums.row_sum_squares = detail::row_sums_of_squares(view, given.row_length);
    }
    const FormatParams& p = with_sums.row_sum_squares ? with_sums : given;
    if (p.weighted() && std::max<std::int64_t>(origin, 0) + n >
                            static_cast<std::int64_t>(p.row_sum_squares->size()) * p.row_length)
        throw Error("format parameters do not match the tensor's shape");
    const FormatTraits& row = format_traits(p.format);
    const bool block_format = row.own_blocks();
    const bool whole_tensor = origin < 0;  // the params' own tensor: its size a whole number of periods
    origin = std::max<std::int64_t>(origin, 0);
    const bool scales_in_pass = (block_format && p.scale.empty()) || p.on_demand();
    if ((static_cast<std::int64_t>(p.scale.size()) != p.block_count && !scales_in_pass) || p.block_stride < 1 || p.block_count < 1 ||
        (whole_tensor && n % (p.block_stride * p.block_count) != 0) || origin < 0 ||
        (block_format && (origin % p.block_stride != 0 || n % p.block_stride != 0)) ||
        (p.ggml_blocks && origin + n > p.block_stride * p.block_count))  // kept blocks end with their tensor
        throw Error("format parameters do not match the tensor's shape");
    const int bits = row.element_bits;
    const std::uint32_t mask = (std::uint32_t{1} << bits) - 1;
    const int threads = detail::pass_threads(n);
    std::vector<Partial> partials(static_cast<std::size_t>(threads));
    for (Partial& part : partials) part.seen.assign(std::size_t{1} << bits, 0);

    const std::int64_t batch = whole ? n : std::min(n, kBatch);
    std::unique_ptr<std::int32_t[]> codes_buf(!whole && wanted.codes ? new std::int32_t[batch] : nullptr);
    std::unique_ptr<float[]> deq_buf(!whole && wanted.dequantized ? new float[batch] : nullptr);
    std::unique_ptr<float[]> err_buf(!whole && wanted.error ? new float[batch] : nullptr);
    const std::int64_t chunks = (n + kChunk - 1) / kChunk;
    std::vector<ChunkSums> chunk_sums(static_cast<std::size_t>(chunks));

    for (std::int64_t first = 0; first < n; first += batch) {
        const std::int64_t end = std::min(n, first + batch), offset = whole ? 0 : first;
        std::int32_t* const codes = whole ? whole->codes : codes_buf.get();
        float* const deq = whole ? whole->dequantized : deq_buf.get();
        float* const err = whole ? whole->error : err_buf.get();
        detail::NextIndex next(first / kChunk, (end + kChunk - 1) / kChunk);
        detail::parallel_guarded(view, threads, [&](int thread, int) {
            Partial& acc = partials[static_cast<std::size_t>(thread)];
            std::vector<float> scratch(static_cast<std::size_t>(kChunk));
            Scratch ws;
            for (std::int64_t c = 0; next.take(c);) {
                const std::int64_t begin = c * kChunk, len = std::min(kChunk, n - begin), at = begin - offset;
                const ChunkOut out{codes ? codes + at : nullptr, deq ? deq + at : nullptr, err ? err + at : nullptr};
                chunk_sums[static_cast<std::size_t>(c)] =
                    run_chunk(floats_at(view, begin, len, scratch.data()), origin + begin, len, p, row, mask, out, acc, ws);
            }
        });
        if (sink) detail::deliver(*sink, first, end - first, {codes_buf.get(), deq_buf.get(), err_buf.get()}, threads);
    }
    ChunkSums total;  // in chunk order: the same bits on any thread count
    for (const ChunkSums& s : chunk_sums) {
        total.sum_sq_err += s.sum_sq_err;
        total.sum_abs_err += s.sum_abs_err;
        total.sum_sq_r += s.sum_sq_r;
        total.sum_r += s.sum_r;
    }
    return merged(partials, total, n, p.format, count_clipped);
}

}  // namespace

Metrics quantize_format_view(const TensorView& view, const FormatParams& params, const FormatConfig& config,
                             const QuantOutputs& out) {
    return run_pass(view, -1, params, clips_counted(config), &out, {}, nullptr);
}

Metrics quantize_format_view(const TensorView& view, const FormatParams& params, const FormatConfig& config,
                             const OutputSelection& wanted, const ResultSink& sink) {
    return run_pass(view, -1, params, clips_counted(config), nullptr, wanted, &sink);
}

Metrics quantize_format_slice(const TensorView& view, std::int64_t first, const FormatParams& params,
                              const FormatConfig& config, const QuantOutputs& out) {
    if (first < 0) throw Error("format parameters do not match the tensor's shape");
    return run_pass(view, first, params, clips_counted(config), &out, {}, nullptr);
}

FormatQuantization quantize_format(const TensorView& view, const FormatConfig& config, const QuantOutputs& out) {
    FormatQuantization q;
    q.params = compute_format_params(view, config, &q.range);
    q.metrics = quantize_format_view(view, q.params, config, out);
    return q;
}

namespace {

// The format's params as a QuantParams (zero points 0); on demand when the format's scales are.
QuantParams as_quant_params(const TensorView& view, const QuantConfig& config, const FormatParams& p) {
    QuantParams q;
    q.block_stride = p.block_stride;
    q.block_count = p.block_count;
    if (p.on_demand()) {
        detail::on_demand_params(view, config, q);
        return q;
    }
    q.scale.assign(p.scale.begin(), p.scale.end());
    q.zero_point.assign(p.scale.size(), 0);
    return q;
}

// Row `row` of a view whose last axis is row_length, as a view of its own.
TensorView row_of(const TensorView& view, std::int64_t row, std::int64_t row_length) {
    TensorView one = view;
    one.shape = {row_length};
    one.data = view.data + static_cast<std::size_t>(row * row_length) * element_size(view.type);
    return one;
}

// The element's results into its trace (f.r set); `count_clipped` as the pass's.
void take_result(FormatTrace& f, const detail::ElementResult& e, bool count_clipped) {
    f.scaled = e.scaled;
    f.grid_value = e.grid;
    f.code = e.code;
    f.clipped = e.clipped && count_clipped;
    f.dequantized = e.deq;
    f.error = std::fabs(f.r - e.deq);
}

ElementTrace as_element_trace(const FormatTrace& f) {
    ElementTrace t;
    t.flat_index = f.flat_index;
    t.block = f.block;
    t.r = f.r;
    t.scale = f.scale;
    t.scaled = f.scaled;
    t.rounded = f.grid_value;
    t.code = f.code;
    t.clipped = f.clipped;
    t.dequantized = f.dequantized;
    t.error = f.error;
    return t;
}

}  // namespace

QuantParams format_quant_params(const TensorView& view, const QuantConfig& config, TensorRange* range) {
    check_config(config, view.shape);
    return as_quant_params(view, config, compute_format_params(view, format_config(config), range, false));
}

FormatParams format_params_of(const QuantParams& params, FormatId format) {
    FormatParams p;
    p.format = format;
    p.block_stride = params.block_stride;
    p.block_count = params.block_count;
    if (params.on_demand()) {  // too many to store: the pass computes each from its values
        p.recipe = std::make_shared<FormatScaleRecipe>(FormatScaleRecipe{params.recipe->values, params.recipe->owner});
        return p;
    }
    p.scale.assign(params.scale.begin(), params.scale.end());  // each a float32: exact
    return p;
}

FormatParams format_params_for(const TensorView& view, const QuantParams& params, const QuantConfig& config) {
    FormatParams p = format_params_of(params, config.format);
    detail::take_importance(format_config(config), view.shape, p);
    if (p.weighted()) p.row_sum_squares = detail::row_sums_of_squares(view, p.row_length);
    return p;
}

Metrics quantize_format_config(const TensorView& view, const QuantParams& params, const QuantConfig& qc,
                               const QuantOutputs* whole, const OutputSelection& wanted, const ResultSink* sink) {
    const FormatConfig config = format_config(qc);
    check_format_config(config, view.shape);
    FormatParams p = format_params_of(params, qc.format);
    detail::take_importance(config, view.shape, p);  // the pass sums the rows' squares
    return run_pass(view, -1, p, clips_counted(config), whole, wanted, sink);
}

ElementTrace format_element_trace(const TensorView& view, const QuantParams& params, const QuantConfig& qc,
                                  std::int64_t flat_index) {
    const FormatTraits& info = format_traits(qc.format);
    if (!info.scale_from_values) {
        float r = 0;
        view.guarded([&] { r = *floats_at(view, flat_index, 1, &r); });
        return format_value_trace(r, params, qc, flat_index);
    }
    // ggml: the block's own float32 d (and min, sub-block scales) come from its values, and with importance
    // from its row's sum of squares too.
    const std::int64_t start = flat_index / info.block_size * info.block_size;
    FormatParams weights;
    detail::take_importance(format_config(qc), view.shape, weights);
    if (weights.weighted()) {
        const TensorView row = row_of(view, start / weights.row_length, weights.row_length);
        weights.row_sum_squares = detail::row_sums_of_squares(row, weights.row_length);
    }
    ChunkPlace place = detail::chunk_place(weights, start % std::max<std::int64_t>(weights.row_length, 1));
    std::vector<float> scratch(static_cast<std::size_t>(info.block_size));
    detail::BlockScale b;
    detail::ElementResult e;
    float r = 0;
    view.guarded([&] {
        const float* values = floats_at(view, start, info.block_size, scratch.data());
        r = values[flat_index - start];
        e = info.kernels.element_in_block(info, values, static_cast<int>(flat_index - start), place, b);
    });
    FormatTrace f;
    f.flat_index = flat_index;
    f.block = flat_index / info.block_size;
    f.r = r;
    f.scale = b.scale;
    f.offset = b.offset;
    take_result(f, e, true);  // ggml: a block format's clamp counts
    return as_element_trace(f);
}

ElementTrace format_value_trace(float r, const QuantParams& params, const QuantConfig& config, std::int64_t flat_index) {
    // Without the block's other values: exact for element formats, MX and NVFP4 (their scale is all an
    // element needs); ggml's codes come from r / fp16(d) here, not from the float32 d of the pass.
    const FormatTraits& row = format_traits(config.format);
    FormatTrace f;
    f.flat_index = flat_index;
    f.block = params.block_of(flat_index);
    f.r = r;
    f.scale = static_cast<float>(params.scale[static_cast<std::size_t>(f.block)]);
    detail::BlockScale b;
    b.scale = f.scale;
    b.inv = f.scale != 0 ? 1.0f / f.scale : 0.0f;
    take_result(f, row.kernels.element(row, r, b), clips_counted(format_config(config)));
    return as_element_trace(f);
}

std::vector<std::int32_t> format_block_codes(const float* values, std::int64_t n, const QuantParams& params,
                                             const QuantConfig& config, std::int64_t block) {
    std::vector<std::int32_t> codes(static_cast<std::size_t>(n));
    const FormatTraits& info = format_traits(config.format);
    if (info.scale_from_values && n == info.block_size) {  // the block's codes as the pass gives them (no importance)
        ChunkPlace place;
        place.first = block * info.block_size;
        detail::BlockScale b;
        for (std::int64_t i = 0; i < n; ++i)
            codes[static_cast<std::size_t>(i)] =
                info.kernels.element_in_block(info, values, static_cast<int>(i), place, b).code;
        return codes;
    }
    const std::int64_t first = block * params.block_stride;  // an element of the block, for its scale
    for (std::int64_t i = 0; i < n; ++i)
        codes[static_cast<std::size_t>(i)] = format_value_trace(values[i], params, config, first).code;
    return codes;
}

Quantization quantize_format_checked(const TensorView& view, const QuantConfig& qc, const OutputSelection& wanted,
                                     const ResultSink& sink) {
    const FormatConfig config = format_config(qc);
    Quantization q;
    q.format_params = compute_format_params(view, config, &q.range);
    const FormatParams& p = q.format_params;
    q.metrics = sink ? quantize_format_view(view, p, config, wanted, sink) : quantize_format_view(view, p, config);
    if (!std::isfinite(q.metrics.max_abs_error)) {
        for (std::int64_t i = 0; i < view.numel(); ++i) {
            const FormatTrace t = trace_format_element(view, p, config, i);
            if (!std::isfinite(t.error))
                throw Float32Overflow("float32 overflow at index " + index_to_string(view.shape, i) + ": r = " + format_g(t.r) +
                            " gives r' = " + format_g(t.dequantized) + " in " + format_name(config.format) +
                            " (the values are too close to float32's limits)");
        }
    }
    q.params = as_quant_params(view, qc, p);
    return q;
}

FormatTrace trace_format_element(const TensorView& view, const FormatParams& p, const FormatConfig& config,
                                 std::int64_t flat_index) {
    if (flat_index < 0 || flat_index >= view.numel()) throw Error("element index out of range");
    const FormatTraits& info = format_traits(p.format);
    FormatTrace t;
    t.flat_index = flat_index;
    t.block = p.block_of(flat_index);
    t.scale = p.scale_of(t.block);
    if (!p.offset.empty()) t.offset = p.offset[static_cast<std::size_t>(t.block)];
    if (!p.stored.empty()) t.stored_scale = p.stored[static_cast<std::size_t>(t.block)];
    detail::ElementResult e;
    view.guarded([&] {
        if (info.own_blocks()) {
            std::vector<float> scratch(static_cast<std::size_t>(info.block_size));
            const std::int64_t start = t.block * info.block_size;
            const float* r = floats_at(view, start, info.block_size, scratch.data());
            detail::BlockScale b;
            t.r = r[flat_index - start];
            e = info.kernels.element_in_block(info, r, static_cast<int>(flat_index - start),
                                              detail::chunk_place(p, start), b);
            return;
        }
        float r = 0;
        t.r = *floats_at(view, flat_index, 1, &r);
        detail::BlockScale b;
        b.scale = t.scale;
        e = info.kernels.element(info, t.r, b);
    });
    take_result(t, e, clips_counted(config));
    return t;
}

}  // namespace qs
