#include "quantscope/quantize.hpp"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <climits>
#include <limits>
#include <cmath>
#include <memory>

#include "bit_patterns.hpp"
#include "block_pairs.hpp"
#include "deliver.hpp"
#include "element_formula.hpp"
#include "parallel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/stored_blocks.hpp"
#include "quantscope/overflow_message.hpp"
#include "quantize_kernel_avx2.hpp"
#include "quantize_plan.hpp"

namespace qs {
namespace {

using detail::kChunk;
using detail::kMinRun;
using detail::kTile;
using detail::OrderedSums;
using detail::Plan;
using detail::Sums;
using detail::wrap_value;

// Above this many levels the "fully seen interval" bookkeeping costs more than it saves.
constexpr std::int64_t kMaxTrackedLevels = 4096;
// Results handed to a ResultSink come in batches of about this many elements (bounded buffers).
constexpr std::int64_t kBatch = std::int64_t{1} << 20;
// Results written into whole arrays need no buffers: larger batches, fewer thread starts; bounded only
// to keep the per-item sums small.
constexpr std::int64_t kWholeBatch = std::int64_t{1} << 24;

using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
using MapF = Eigen::Map<ArrayF>;
using ConstMapF = Eigen::Map<const ArrayF>;

// Per-thread accumulators whose merge does not depend on order: max, count, the set of codes seen.
struct Partial {
    float max_err = 0;
    std::int64_t clipped = 0;
    // Distinct codes: seen[q - q_min] = 1. [full_lo, full_hi] is an interval known to be entirely seen, so a
    // chunk whose codes all fall inside it cannot add a level and skips the scatter.
    std::vector<std::uint8_t> seen;
    std::int64_t full_lo = 1, full_hi = 0;

    void extend_full_interval(std::int64_t seed) {
        if (seed < full_lo || seed > full_hi) {
            std::int64_t lo = seed, hi = seed;
            while (lo > 0 && seen[lo - 1]) --lo;
            while (hi + 1 < static_cast<std::int64_t>(seen.size()) && seen[hi + 1]) ++hi;
            if (hi - lo > full_hi - full_lo) full_lo = lo, full_hi = hi;
        } else {
            while (full_lo > 0 && seen[full_lo - 1]) --full_lo;
            while (full_hi + 1 < static_cast<std::int64_t>(seen.size()) && seen[full_hi + 1]) ++full_hi;
        }
    }
};

// Where one chunk's results go: the wanted outputs (null: not wanted) and cache-resident scratch, which
// holds the codes for the distinct-level count and stands in for unwanted outputs where a path needs one.
struct ChunkOut {
    std::int32_t* codes;
    float* deq;
    float* err;
    std::int32_t* codes_scratch;
    float* deq_scratch;
    float* err_scratch;
};

// Records the chunk's codes as seen, unless every code it can contain is already known to be seen.
void mark_levels(const std::int32_t* codes, std::int64_t n, float code_min, float code_max, std::int32_t q_min,
                 Partial& acc) {
    const std::int64_t lo = static_cast<std::int64_t>(code_min) - q_min;
    const std::int64_t hi = static_cast<std::int64_t>(code_max) - q_min;
    if (lo >= acc.full_lo && hi <= acc.full_hi) return;
    for (std::int64_t k = 0; k < n; ++k) acc.seen[static_cast<std::size_t>(codes[k] - q_min)] = 1;
    if (static_cast<std::int64_t>(acc.seen.size()) <= kMaxTrackedLevels) acc.extend_full_interval(codes[n / 2] - q_min);
}

// The portable fused pass (Eigen expressions over the chunk): every build, the wrap-around teaching mode,
// and the reference the AVX2 kernel is tested against. S and Z are float scalars or per-element arrays.
template <class S, class Z>
Sums quantize_chunk_eigen(const float* r_ptr, std::int64_t n, const S& s, const Z& z, const QuantConfig& config,
                          float* scratch, const ChunkOut& out, Partial& acc) {
    const float q_min = static_cast<float>(config.dtype.q_min());
    const float q_max = static_cast<float>(config.dtype.q_max());
    ConstMapF r(r_ptr, n);
    MapF v(scratch, n);
    const float naive_norm = config.active_naive_norm();
    if (naive_norm > 0)
        v = r / naive_norm * 255.0f;  // the lesson's order (QuantConfig::naive_norm), not r / s
    else
        v = r / s + z;  // true float32 division, as torch computes tensor / scale
    if (config.rounding == Rounding::HalfEven)
        v = v.rint();
    else
        v = v.round();
    acc.clipped += ((v < q_min) || (v > q_max)).count();
    if (config.overflow == Overflow::Clamp) {
        v = v.max(q_min).min(q_max);
    } else {
        for (std::int64_t k = 0; k < n; ++k)
            if (scratch[k] < q_min || scratch[k] > q_max)
                scratch[k] = wrap_value(scratch[k], config.dtype.q_min(), config.dtype.levels());
    }
    Eigen::Map<Eigen::Array<std::int32_t, Eigen::Dynamic, 1>>(out.codes_scratch, n) = v.template cast<std::int32_t>();
    if (out.codes) std::copy(out.codes_scratch, out.codes_scratch + n, out.codes);
    MapF d(out.deq ? out.deq : out.deq_scratch, n);
    if (naive_norm > 0)
        d = v / 255.0f * naive_norm;
    else
        d = s * (v - z);
    MapF e(out.err ? out.err : out.err_scratch, n);
    e = (r - d).abs();
    Sums sums;
    sums.sum_sq_err = e.template cast<double>().square().sum();
    sums.sum_abs_err = e.template cast<double>().sum();
    sums.sum_sq_r = r.template cast<double>().square().sum();
    sums.sum_r = r.template cast<double>().sum();
    acc.max_err = std::max(acc.max_err, e.maxCoeff());
    mark_levels(out.codes_scratch, n, v.minCoeff(), v.maxCoeff(), config.dtype.q_min(), acc);
    return sums;
}

#ifdef QS_HAVE_AVX2_KERNEL
template <bool kStream, class S, class Z>
void run_avx2(const float* r, std::int64_t n8, const S& s, const Z& z, const QuantConfig& config, const ChunkOut& out,
              detail::KernelSums& sums) {
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    if (config.rounding == Rounding::HalfEven)
        detail::quantize_chunk_avx2<kStream, true>(r, n8, s, z, q_min, q_max, out.codes_scratch, out.codes, out.deq,
                                                   out.err, sums);
    else
        detail::quantize_chunk_avx2<kStream, false>(r, n8, s, z, q_min, q_max, out.codes_scratch, out.codes, out.deq,
                                                    out.err, sums);
}
#endif

std::atomic<bool> g_portable_only{false};

// One chunk: s_arr/z_arr are per-element parameters, or null for the constant pair (s, z).
Sums quantize_chunk(const float* r, std::int64_t n, float s, float z, const float* s_arr, const float* z_arr,
                    const QuantConfig& config, bool stream, float* scratch, const ChunkOut& out, Partial& acc) {
#ifdef QS_HAVE_AVX2_KERNEL
    if (config.overflow == Overflow::Clamp && config.active_naive_norm() == 0 && !g_portable_only.load(std::memory_order_relaxed)) {
        const std::int64_t n8 = n - n % 8;
        detail::KernelSums sums;
        sums.code_min = static_cast<float>(config.dtype.q_max());
        sums.code_max = static_cast<float>(config.dtype.q_min());
        if (n8 > 0) {
            if (s_arr) {
                const detail::ArrayParam sp{s_arr}, zp{z_arr};
                stream ? run_avx2<true>(r, n8, sp, zp, config, out, sums) : run_avx2<false>(r, n8, sp, zp, config, out, sums);
            } else {
                const detail::ConstantParam sp(s), zp(z);
                stream ? run_avx2<true>(r, n8, sp, zp, config, out, sums) : run_avx2<false>(r, n8, sp, zp, config, out, sums);
            }
        }
        for (std::int64_t k = n8; k < n; ++k) {  // the tail, with the same formula one element at a time
            const float sk = s_arr ? s_arr[k] : s, zk = s_arr ? z_arr[k] : z;
            bool clipped = false;
            const std::int32_t q = quantize_value(r[k], sk, static_cast<std::int32_t>(zk), config, &clipped);
            const float d = sk * (static_cast<float>(q) - zk), e = std::abs(r[k] - d);
            out.codes_scratch[k] = q;
            if (out.codes) out.codes[k] = q;
            if (out.deq) out.deq[k] = d;
            if (out.err) out.err[k] = e;
            sums.clipped += clipped;
            sums.sum_sq_err += static_cast<double>(e) * e;
            sums.sum_abs_err += e;
            sums.sum_sq_r += static_cast<double>(r[k]) * r[k];
            sums.sum_r += r[k];
            sums.max_err = std::max(sums.max_err, e);
            sums.code_min = std::min(sums.code_min, static_cast<float>(q));
            sums.code_max = std::max(sums.code_max, static_cast<float>(q));
        }
        acc.max_err = std::max(acc.max_err, sums.max_err);
        acc.clipped += sums.clipped;
        mark_levels(out.codes_scratch, n, sums.code_min, sums.code_max, config.dtype.q_min(), acc);
        return {sums.sum_sq_err, sums.sum_abs_err, sums.sum_sq_r, sums.sum_r};
    }
#endif
    (void)stream;
    if (s_arr) return quantize_chunk_eigen(r, n, ConstMapF(s_arr, n), ConstMapF(z_arr, n), config, scratch, out, acc);
    return quantize_chunk_eigen(r, n, s, z, config, scratch, out, acc);
}

// One thread's scratch, allocated once per pass (not on the stack: worker threads' stacks may be small).
struct Workspace {
    std::vector<float> scratch, s_buf, z_buf, decoded, deq, err;
    std::vector<std::int32_t> codes;
    Workspace()
        : scratch(kChunk), s_buf(kChunk), z_buf(kChunk), decoded(kChunk), deq(kChunk), err(kChunk), codes(kChunk) {}
};

// The metrics of a whole pass: the per-thread maxima, counts and levels merged, the sums as added in order.
Metrics merged_metrics(const std::vector<Partial>& partials, const Sums& total, std::int64_t n, std::int64_t levels) {
    Partial merged;
    merged.seen.assign(static_cast<std::size_t>(levels), 0);
    for (const Partial& p : partials) {
        merged.max_err = std::max(merged.max_err, p.max_err);
        merged.clipped += p.clipped;
        for (std::size_t k = 0; k < p.seen.size(); ++k) merged.seen[k] |= p.seen[k];
    }
    return detail::metrics_from_sums(total, n, merged.max_err, merged.clipped,
                                     std::count(merged.seen.begin(), merged.seen.end(), std::uint8_t{1}), levels);
}

// An item that crosses blocks (strided blocks: channels along a later axis) gets each element's s and z,
// stored or computed here from the block's few values (params on demand; the caller reads under the guard).
void fill_block_params(const QuantParams& params, std::int64_t begin, std::int64_t len, float* s_out, float* z_out) {
    std::int64_t blk = params.block_of(begin);
    std::int64_t left_in_run = params.block_stride - begin % params.block_stride;
    std::int64_t computed_block = -1;
    double s = 1;
    std::int32_t z = 0;
    for (std::int64_t k = 0; k < len; ++k) {
        if (!params.on_demand()) {
            s = params.scale[static_cast<std::size_t>(blk)];
            z = params.zero_point[static_cast<std::size_t>(blk)];
        } else if (blk != computed_block) {
            detail::compute_pair_unguarded(params, blk, s, z);
            computed_block = blk;
        }
        s_out[k] = static_cast<float>(s);
        z_out[k] = static_cast<float>(z);
        if (--left_in_run == 0) {
            left_in_run = params.block_stride;
            if (++blk == params.block_count) blk = 0;
        }
    }
}

// Every element of the view through the fused kernel. `whole`: results written straight into arrays of n
// (one batch); otherwise results of the `wanted` kinds go to `sink` in bounded batches, in flat order.
Metrics run_pass(const TensorView& view, const QuantParams& params, const QuantConfig& config, const QuantOutputs* whole,
                 const OutputSelection& wanted, const ResultSink* sink) {
    const std::int64_t n = view.numel();
    if (n == 0) throw Error("cannot quantize an empty tensor");
    const auto stored = static_cast<std::int64_t>(params.on_demand() ? 0 : params.block_count);
    if (static_cast<std::int64_t>(params.scale.size()) != stored ||
        static_cast<std::int64_t>(params.zero_point.size()) != stored || params.block_stride < 1 ||
        params.block_count < 1 || n % (params.block_stride * params.block_count) != 0)
        throw Error("quantization parameters do not match the tensor's shape");

    // s and z are cast to float32 where a chunk reads them: a float copy of every block's pair would cost as
    // much as the tensor again with group size 1.
    const auto scale_f = [&](std::size_t b) { return static_cast<float>(params.scale[b]); };
    const auto zero_f = [&](std::size_t b) { return static_cast<float>(params.zero_point[b]); };
    const Plan plan(n, params);
    const std::int64_t levels = config.dtype.levels();

    // Batch buffers of the wanted kinds (uninitialised: every element is written before it is read).
    const std::int64_t tiles_per_batch =
        std::max<std::int64_t>(1, (whole ? kWholeBatch : kBatch) / (plan.items_per_tile * plan.item_max));
    const std::int64_t batch_room = std::min(n, tiles_per_batch * plan.items_per_tile * plan.item_max);
    std::unique_ptr<std::int32_t[]> codes_buf(!whole && wanted.codes ? new std::int32_t[batch_room] : nullptr);
    std::unique_ptr<float[]> deq_buf(!whole && wanted.dequantized ? new float[batch_room] : nullptr);
    std::unique_ptr<float[]> err_buf(!whole && wanted.error ? new float[batch_room] : nullptr);

    // Outputs larger than the caches bypass them (streaming stores need 16-byte aligned rows); small ones,
    // and the batches a sink reads next, stay cached.
    const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    const bool stream = whole != nullptr && n * static_cast<std::int64_t>(sizeof(float)) >= (std::int64_t{8} << 20) &&
                        aligned(whole->codes) && aligned(whole->dequantized) && aligned(whole->error) &&
                        // every chunk starts 16-byte aligned: one run, or runs of a multiple of 4 floats
                        (!plan.per_run || params.block_stride == n || params.block_stride % 4 == 0);

    const int threads = detail::pass_threads(n);
    std::vector<Partial> partials(static_cast<std::size_t>(threads));
    for (Partial& p : partials) p.seen.assign(static_cast<std::size_t>(levels), 0);
    std::vector<Workspace> workspaces(static_cast<std::size_t>(threads));
    const std::int64_t items_per_batch = tiles_per_batch * plan.items_per_tile;
    std::vector<Sums> item_sums(static_cast<std::size_t>(items_per_batch));
    // The old pass split the items over all processors from two chunks on.
    OrderedSums ordered(plan.items, n >= 2 * kChunk ? omp_get_num_procs() : 1);

    for (std::int64_t t0 = 0; t0 < plan.tiles; t0 += tiles_per_batch) {
        const std::int64_t t1 = std::min(plan.tiles, t0 + tiles_per_batch);
        std::int64_t first = 0, end = 0;
        plan.tile_span(t0, t1, first, end);
        // Element i's results go to base[i - offset].
        const std::int64_t offset = whole ? 0 : first;
        const std::int64_t i_first = t0 * plan.items_per_tile, i_last = std::min(plan.items, t1 * plan.items_per_tile);
        std::int32_t* const codes_base = whole ? whole->codes : codes_buf.get();
        float* const deq_base = whole ? whole->dequantized : deq_buf.get();
        float* const err_base = whole ? whole->error : err_buf.get();
        detail::NextIndex next_tile(t0, t1);
        detail::parallel_guarded(view, threads, [&](int thread, int) {
            Partial& acc = partials[static_cast<std::size_t>(thread)];
            Workspace& ws = workspaces[static_cast<std::size_t>(thread)];
            for (std::int64_t t = 0; next_tile.take(t);) {
                const std::int64_t i_end = std::min(plan.items, (t + 1) * plan.items_per_tile);
                for (std::int64_t i = t * plan.items_per_tile; i < i_end; ++i) {
                    std::int64_t begin, len, block;
                    plan.item(i, begin, len, block);
                    const float* r = floats_at(view, begin, len, ws.decoded.data());
                    const std::int64_t at = begin - offset;
                    const ChunkOut out{codes_base ? codes_base + at : nullptr, deq_base ? deq_base + at : nullptr,
                                       err_base ? err_base + at : nullptr, ws.codes.data(), ws.deq.data(),
                                       ws.err.data()};
                    if (block >= 0) {
                        const auto b = static_cast<std::size_t>(block);
                        item_sums[static_cast<std::size_t>(i - i_first)] = quantize_chunk(
                            r, len, scale_f(b), zero_f(b), nullptr, nullptr, config, stream, ws.scratch.data(), out, acc);
                        continue;
                    }
                    fill_block_params(params, begin, len, ws.s_buf.data(), ws.z_buf.data());
                    item_sums[static_cast<std::size_t>(i - i_first)] = quantize_chunk(
                        r, len, 0, 0, ws.s_buf.data(), ws.z_buf.data(), config, stream, ws.scratch.data(), out, acc);
                }
            }
#ifdef QS_HAVE_AVX2_KERNEL
            if (stream) _mm_sfence();  // streaming stores become visible before the results are read
#endif
        });
        for (std::int64_t i = i_first; i < i_last; ++i) ordered.add(i, item_sums[static_cast<std::size_t>(i - i_first)]);
        if (sink) detail::deliver(*sink, first, end - first, {codes_buf.get(), deq_buf.get(), err_buf.get()}, threads);
    }

    return merged_metrics(partials, ordered.total(), n, levels);
}

}  // namespace

void use_portable_kernel(bool on) { g_portable_only = on; }

Metrics quantize_view(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                      const QuantOutputs& out) {
    if (params.stored) return quantize_stored(view, *params.stored, &out, {}, nullptr);
    if (!is_int_format(config.format)) return quantize_format_config(view, params, config, &out, {}, nullptr);
    return run_pass(view, params, config, &out, {}, nullptr);
}

Metrics quantize_view(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                      const OutputSelection& wanted, const ResultSink& sink) {
    if (params.stored) return quantize_stored(view, *params.stored, nullptr, wanted, &sink);
    if (!is_int_format(config.format)) return quantize_format_config(view, params, config, nullptr, wanted, &sink);
    return run_pass(view, params, config, nullptr, wanted, &sink);
}

Quantization quantize_checked(const TensorView& view, const QuantConfig& config, const OutputSelection& wanted,
                              const ResultSink& sink) {
    if (!is_int_format(config.format)) return quantize_format_checked(view, config, wanted, sink);
    Quantization q;
    if (detail::metrics_by_patterns(view, config)) {
        // A bf16/f16 tensor with one (s, z): a counting pass instead of compute_params' passes, the metrics from
        // the bit patterns (the window's sums, to the bit), and an element pass only for wanted outputs.
        q = detail::quantize_by_patterns(view, config);
        if (sink && (wanted.codes || wanted.dequantized || wanted.error)) quantize_view(view, q.params, config, wanted, sink);
    } else {
        q.params = compute_params(view, config, &q.range);
        q.metrics = sink ? quantize_view(view, q.params, config, wanted, sink) : quantize_view(view, q.params, config);
    }
    if (!std::isfinite(q.metrics.max_abs_error)) {
        throw Float32Overflow(float32_overflow_message(view, q.params, config));
    }
    return q;
}

std::string float32_overflow_message(const TensorView& view, const QuantParams& params, const QuantConfig& config) {
    const std::int64_t i = first_nonfinite_error(view, params, config);
    const ElementTrace t = trace_element(view, params, config, std::max<std::int64_t>(i, 0));
    return "float32 overflow at index " + index_to_string(view.shape, t.flat_index) + ": r = " + format_g(t.r) +
           " gives r' = s (q - z) = " + format_g(t.dequantized) + ", |r - r'| = " + format_g(t.error) +
           " (the values are too close to float32's limits)";
}

double comparable_sqnr_db(const Metrics& m) {
    if (m.sqnr_db) return *m.sqnr_db;
    return m.mse == 0.0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

void quantize_into(const Tensor& tensor, const QuantParams& params, const QuantConfig& config, QuantResult& out) {
    const auto un = static_cast<std::size_t>(tensor.numel());
    if (out.codes.size() != un) out.codes.resize(un);
    if (out.dequantized.size() != un) out.dequantized.resize(un);
    if (out.error.size() != un) out.error.resize(un);
    out.metrics = quantize_view(view_of(tensor), params, config,
                                QuantOutputs{out.codes.data(), out.dequantized.data(), out.error.data()});
}

QuantResult quantize(const Tensor& tensor, const QuantConfig& config, QuantParams* params_out) {
    check_tensor(tensor);
    QuantParams params = compute_params(tensor, config);
    QuantResult result;
    quantize_into(tensor, params, config, result);
    if (params_out) *params_out = std::move(params);
    return result;
}

namespace detail {

bool portable_only() { return g_portable_only.load(std::memory_order_relaxed); }

Metrics metrics_from_sums(const Sums& total, std::int64_t n, float max_err, std::int64_t clipped,
                          std::int64_t levels_used, std::int64_t levels_total) {
    Metrics m;
    m.count = n;
    m.mse = total.sum_sq_err / static_cast<double>(n);
    m.rmse = std::sqrt(m.mse);
    m.mae = total.sum_abs_err / static_cast<double>(n);
    m.max_abs_error = max_err;
    m.l2_error = std::sqrt(total.sum_sq_err);
    if (total.sum_sq_r > 0 && total.sum_sq_err > 0) m.sqnr_db = 10.0 * std::log10(total.sum_sq_r / total.sum_sq_err);
    m.clipped = clipped;
    m.levels_used = levels_used;
    m.levels_total = levels_total;
    m.sum = total.sum_r;
    m.signal_energy = total.sum_sq_r;
    m.error_energy = total.sum_sq_err;
    return m;
}

}  // namespace detail

}  // namespace qs
