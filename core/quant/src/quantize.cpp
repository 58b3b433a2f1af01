#include "quantscope/quantize.hpp"

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>

#include "quantscope/error.hpp"
#include "quantize_kernel_avx2.hpp"

namespace qs {
namespace {

// Elements per work item: small enough that the temporaries stay in L1/L2, large enough to amortise
// the per-item bookkeeping.
constexpr std::int64_t kChunk = 4096;
// Blocks whose contiguous runs are at least this long use one (s, z) per run; shorter runs (e.g. channels
// of the last axis, tiny groups) expand s and z per element.
constexpr std::int64_t kMinRun = 64;
// Above this many levels the "fully seen interval" bookkeeping costs more than it saves.
constexpr std::int64_t kMaxTrackedLevels = 4096;

using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
using MapF = Eigen::Map<ArrayF>;
using ConstMapF = Eigen::Map<const ArrayF>;

// Per-thread accumulators of the metrics, merged at the end of the pass.
struct Partial {
    double sum_sq_err = 0, sum_abs_err = 0, sum_sq_r = 0;
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

float round_value(float v, Rounding rounding) {
    return rounding == Rounding::HalfEven ? std::nearbyint(v) : std::round(v);
}

// Two's-complement wrap into [q_min, q_max]: what a cast without a clamp does (the teaching pitfall).
// r / s overflows to +-Inf when s is tiny: Inf has no residue (fmod gives NaN, and NaN cast to int32 is
// undefined and indexed the level table out of bounds), so it saturates to q_max / q_min instead.
float wrap_value(float v, std::int32_t q_min, std::int64_t levels) {
    if (std::isinf(v)) return static_cast<float>(v > 0 ? q_min + levels - 1 : q_min);
    double m = std::fmod(static_cast<double>(v) - q_min, static_cast<double>(levels));
    if (m < 0) m += static_cast<double>(levels);
    return static_cast<float>(m + q_min);
}

// Where the chunk's codes go besides the output: a cache-resident copy for the distinct-level count.
struct ChunkOut {
    std::int32_t* codes;
    float* deq;
    float* err;
    std::int32_t* codes_scratch;
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
void quantize_chunk_eigen(const float* r_ptr, std::int64_t n, const S& s, const Z& z, const QuantConfig& config,
                          float* scratch, const ChunkOut& out, Partial& acc) {
    const float q_min = static_cast<float>(config.dtype.q_min());
    const float q_max = static_cast<float>(config.dtype.q_max());
    ConstMapF r(r_ptr, n);
    MapF v(scratch, n);
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
    std::copy(out.codes_scratch, out.codes_scratch + n, out.codes);
    MapF d(out.deq, n);
    d = s * (v - z);
    MapF e(out.err, n);
    e = (r - d).abs();
    acc.sum_sq_err += e.template cast<double>().square().sum();
    acc.sum_abs_err += e.template cast<double>().sum();
    acc.sum_sq_r += r.template cast<double>().square().sum();
    acc.max_err = std::max(acc.max_err, e.maxCoeff());
    mark_levels(out.codes_scratch, n, v.minCoeff(), v.maxCoeff(), config.dtype.q_min(), acc);
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
void quantize_chunk(const float* r, std::int64_t n, float s, float z, const float* s_arr, const float* z_arr,
                    const QuantConfig& config, bool stream, float* scratch, const ChunkOut& out, Partial& acc) {
#ifdef QS_HAVE_AVX2_KERNEL
    if (config.overflow == Overflow::Clamp && !g_portable_only.load(std::memory_order_relaxed)) {
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
            out.codes_scratch[k] = out.codes[k] = q;
            out.deq[k] = d;
            out.err[k] = e;
            sums.clipped += clipped;
            sums.sum_sq_err += static_cast<double>(e) * e;
            sums.sum_abs_err += e;
            sums.sum_sq_r += static_cast<double>(r[k]) * r[k];
            sums.max_err = std::max(sums.max_err, e);
            sums.code_min = std::min(sums.code_min, static_cast<float>(q));
            sums.code_max = std::max(sums.code_max, static_cast<float>(q));
        }
        acc.sum_sq_err += sums.sum_sq_err;
        acc.sum_abs_err += sums.sum_abs_err;
        acc.sum_sq_r += sums.sum_sq_r;
        acc.max_err = std::max(acc.max_err, sums.max_err);
        acc.clipped += sums.clipped;
        mark_levels(out.codes_scratch, n, sums.code_min, sums.code_max, config.dtype.q_min(), acc);
        return;
    }
#endif
    (void)stream;
    if (s_arr)
        quantize_chunk_eigen(r, n, ConstMapF(s_arr, n), ConstMapF(z_arr, n), config, scratch, out, acc);
    else
        quantize_chunk_eigen(r, n, s, z, config, scratch, out, acc);
}

}  // namespace

void use_portable_kernel(bool on) { g_portable_only = on; }

std::int32_t quantize_value(float r, float scale, std::int32_t zero_point, const QuantConfig& config, bool* clipped) {
    const float v = round_value(r / scale + static_cast<float>(zero_point), config.rounding);
    const float q_min = static_cast<float>(config.dtype.q_min()), q_max = static_cast<float>(config.dtype.q_max());
    const bool out = v < q_min || v > q_max;
    if (clipped) *clipped = out;
    if (!out) return static_cast<std::int32_t>(v);
    if (config.overflow == Overflow::Wrap)
        return static_cast<std::int32_t>(wrap_value(v, config.dtype.q_min(), config.dtype.levels()));
    return static_cast<std::int32_t>(v < q_min ? q_min : q_max);
}

void quantize_into(const Tensor& tensor, const QuantParams& params, const QuantConfig& config, QuantResult& out) {
    const std::int64_t n = tensor.numel();
    if (n == 0) throw Error("cannot quantize an empty tensor");
    if (static_cast<std::int64_t>(params.scale.size()) != params.block_count ||
        static_cast<std::int64_t>(params.zero_point.size()) != params.block_count || params.block_stride < 1 ||
        params.block_count < 1 || n % (params.block_stride * params.block_count) != 0)
        throw Error("quantization parameters do not match the tensor's shape");
    const auto un = static_cast<std::size_t>(n);
    if (out.codes.size() != un) out.codes.resize(un);
    if (out.dequantized.size() != un) out.dequantized.resize(un);
    if (out.error.size() != un) out.error.resize(un);

    std::vector<float> scale_f(params.scale.size()), zero_f(params.zero_point.size());
    for (std::size_t b = 0; b < scale_f.size(); ++b) {
        scale_f[b] = static_cast<float>(params.scale[b]);
        zero_f[b] = static_cast<float>(params.zero_point[b]);
    }

    const bool per_run = params.block_stride >= kMinRun;
    // per_run: items are chunks inside one run of block_stride elements (one s, z each);
    // otherwise items are plain chunks of the flat array, with s and z expanded per element.
    const std::int64_t chunks_per_run = per_run ? (params.block_stride + kChunk - 1) / kChunk : 0;
    const std::int64_t items = per_run ? (n / params.block_stride) * chunks_per_run : (n + kChunk - 1) / kChunk;
    const float* r = tensor.values.data();
    const std::int64_t levels = config.dtype.levels();

    // Outputs larger than the caches bypass them (streaming stores need 16-byte aligned rows, which
    // std::vector's allocator gives); small ones stay cached for whoever reads them next.
    const bool stream = n * static_cast<std::int64_t>(sizeof(float)) >= (std::int64_t{8} << 20) &&
                        reinterpret_cast<std::uintptr_t>(out.codes.data()) % 16 == 0 &&
                        reinterpret_cast<std::uintptr_t>(out.dequantized.data()) % 16 == 0 &&
                        reinterpret_cast<std::uintptr_t>(out.error.data()) % 16 == 0 &&
                        // every chunk starts 16-byte aligned: one run, or runs of a multiple of 4 floats
                        (!per_run || params.block_stride == n || params.block_stride % 4 == 0);
    const int threads = n >= 2 * kChunk ? omp_get_max_threads() : 1;
    std::vector<Partial> partials(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
    {
        Partial& acc = partials[static_cast<std::size_t>(omp_get_thread_num())];
        acc.seen.assign(static_cast<std::size_t>(levels), 0);
        alignas(64) float scratch[kChunk];
        alignas(64) float s_buf[kChunk];
        alignas(64) float z_buf[kChunk];
        alignas(64) std::int32_t codes_scratch[kChunk];
#pragma omp for schedule(static) nowait
        for (std::int64_t i = 0; i < items; ++i) {
            if (per_run) {
                const std::int64_t run = i / chunks_per_run, c = i % chunks_per_run;
                const std::int64_t begin = run * params.block_stride + c * kChunk;
                const std::int64_t len = std::min(kChunk, params.block_stride - c * kChunk);
                const auto b = static_cast<std::size_t>(run % params.block_count);
                quantize_chunk(r + begin, len, scale_f[b], zero_f[b], nullptr, nullptr, config, stream, scratch,
                               {out.codes.data() + begin, out.dequantized.data() + begin, out.error.data() + begin,
                                codes_scratch},
                               acc);
            } else {
                const std::int64_t begin = i * kChunk;
                const std::int64_t len = std::min(kChunk, n - begin);
                std::int64_t block = params.block_of(begin);
                std::int64_t left_in_run = params.block_stride - begin % params.block_stride;
                for (std::int64_t k = 0; k < len; ++k) {
                    s_buf[k] = scale_f[static_cast<std::size_t>(block)];
                    z_buf[k] = zero_f[static_cast<std::size_t>(block)];
                    if (--left_in_run == 0) {
                        left_in_run = params.block_stride;
                        if (++block == params.block_count) block = 0;
                    }
                }
                quantize_chunk(r + begin, len, 0, 0, s_buf, z_buf, config, stream, scratch,
                               {out.codes.data() + begin, out.dequantized.data() + begin, out.error.data() + begin,
                                codes_scratch},
                               acc);
            }
        }
#ifdef QS_HAVE_AVX2_KERNEL
        if (stream) _mm_sfence();  // streaming stores become visible before the results are read
#endif
    }

    Partial total;
    total.seen.assign(static_cast<std::size_t>(levels), 0);
    for (const Partial& p : partials) {
        total.sum_sq_err += p.sum_sq_err;
        total.sum_abs_err += p.sum_abs_err;
        total.sum_sq_r += p.sum_sq_r;
        total.max_err = std::max(total.max_err, p.max_err);
        total.clipped += p.clipped;
        for (std::size_t k = 0; k < p.seen.size(); ++k) total.seen[k] |= p.seen[k];
    }
    Metrics& m = out.metrics;
    m.count = n;
    m.mse = total.sum_sq_err / static_cast<double>(n);
    m.rmse = std::sqrt(m.mse);
    m.mae = total.sum_abs_err / static_cast<double>(n);
    m.max_abs_error = total.max_err;
    m.l2_error = std::sqrt(total.sum_sq_err);
    if (total.sum_sq_r > 0 && total.sum_sq_err > 0)
        m.sqnr_db = 10.0 * std::log10(total.sum_sq_r / total.sum_sq_err);
    else
        m.sqnr_db.reset();
    m.clipped = total.clipped;
    m.levels_used = std::count(total.seen.begin(), total.seen.end(), std::uint8_t{1});
    m.levels_total = levels;
}

QuantResult quantize(const Tensor& tensor, const QuantConfig& config, QuantParams* params_out) {
    check_tensor(tensor);
    check_config(config, tensor.shape);
    QuantParams params = compute_params(tensor, config);
    QuantResult result;
    quantize_into(tensor, params, config, result);
    if (params_out) *params_out = std::move(params);
    return result;
}

ElementTrace trace_element(const Tensor& tensor, const QuantParams& params, const QuantConfig& config,
                           std::int64_t flat_index) {
    if (flat_index < 0 || flat_index >= tensor.numel()) throw Error("element index out of range");
    ElementTrace t;
    t.flat_index = flat_index;
    t.block = params.block_of(flat_index);
    t.r = tensor.values[static_cast<std::size_t>(flat_index)];
    t.scale = static_cast<float>(params.scale[static_cast<std::size_t>(t.block)]);
    t.zero_point = params.zero_point[static_cast<std::size_t>(t.block)];
    t.scaled = t.r / t.scale + static_cast<float>(t.zero_point);
    t.rounded = round_value(t.scaled, config.rounding);
    t.code = quantize_value(t.r, t.scale, t.zero_point, config, &t.clipped);
    t.dequantized = t.scale * (static_cast<float>(t.code) - static_cast<float>(t.zero_point));
    t.error = std::abs(t.r - t.dequantized);
    return t;
}

// Deliberately scalar: the baseline that shows what vectorisation and threads buy.
__attribute__((optimize("no-tree-vectorize"))) void naive_pipeline(const Tensor& tensor, const IntType& dtype,
                                                                   QuantResult& out) {
    const std::size_t n = tensor.values.size();
    out.codes.resize(n);
    out.dequantized.resize(n);
    out.error.resize(n);
    float r_min = tensor.values[0], r_max = tensor.values[0];
    for (float v : tensor.values) {
        r_min = std::min(r_min, v);
        r_max = std::max(r_max, v);
    }
    double s = 1;
    std::int32_t z = 0;
    asymmetric_params(r_min, r_max, dtype, s, z);
    const float sf = static_cast<float>(s), zf = static_cast<float>(z);
    double sum_sq = 0, sum_abs = 0, sum_r2 = 0;
    float max_err = 0;
    std::int64_t clipped = 0;
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(dtype.levels()), 0);
    for (std::size_t i = 0; i < n; ++i) {
        const float r = tensor.values[i];
        float q = std::nearbyint(r / sf + zf);
        if (q < dtype.q_min() || q > dtype.q_max()) ++clipped;
        q = std::min(std::max(q, static_cast<float>(dtype.q_min())), static_cast<float>(dtype.q_max()));
        out.codes[i] = static_cast<std::int32_t>(q);
        out.dequantized[i] = sf * (q - zf);
        const float e = std::abs(r - out.dequantized[i]);
        out.error[i] = e;
        sum_sq += static_cast<double>(e) * e;
        sum_abs += e;
        sum_r2 += static_cast<double>(r) * r;
        max_err = std::max(max_err, e);
        seen[static_cast<std::size_t>(out.codes[i] - dtype.q_min())] = 1;
    }
    Metrics& m = out.metrics;
    m.count = static_cast<std::int64_t>(n);
    m.mse = sum_sq / static_cast<double>(n);
    m.rmse = std::sqrt(m.mse);
    m.mae = sum_abs / static_cast<double>(n);
    m.max_abs_error = max_err;
    m.l2_error = std::sqrt(sum_sq);
    m.sqnr_db.reset();
    if (sum_r2 > 0 && sum_sq > 0) m.sqnr_db = 10.0 * std::log10(sum_r2 / sum_sq);
    m.clipped = clipped;
    m.levels_used = std::count(seen.begin(), seen.end(), std::uint8_t{1});
    m.levels_total = dtype.levels();
}

}  // namespace qs
