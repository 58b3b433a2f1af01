#include "layer_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <vector>

#include <cstring>

#include "big_buffer.hpp"
#include "quantscope/layer.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#define QS_LAYER_SIMD 1
#endif

namespace qs {
namespace {

std::atomic<bool> g_plain_only{false};

// W rows per unit of parallel work: 64 rows of 4096 int16 are 512 KiB, which stay in L2 while every token
// passes over them.
constexpr std::int64_t kOutTile = 64;
// Below this many multiply-adds one thread does it all (starting threads costs more).
constexpr std::int64_t kParallelMacs = std::int64_t{1} << 22;

std::int64_t round_up(std::int64_t n, std::int64_t m) { return (n + m - 1) / m * m; }

// The centered codes (q - z) of one operand, made ready for the SIMD kernel: int16, every (row, group)
// padded with zero columns to a multiple of 16 (one vector), and zero rows up to a multiple of
// `row_multiple` (the micro-kernel's block), so the kernel has no edges. Zeros add nothing to a sum.
struct Packed16 {
    detail::BigBuffer<std::int16_t> data;
    std::int64_t rows = 0, row_stride = 0, group_stride = 0;
    std::int64_t max_abs = 0;  // largest |q - z|
};

// False when some |q - z| does not fit 16 bits (then the plain loop runs instead).
bool pack16(const detail::IntOperand& op, std::int64_t cols, std::int64_t group, std::int64_t row_multiple,
            Packed16& p) {
    const std::int64_t groups = cols / group;
    p.group_stride = round_up(group, 16);
    p.row_stride = groups * p.group_stride;
    p.rows = round_up(op.rows, row_multiple);
    p.data = detail::BigBuffer<std::int16_t>(static_cast<std::size_t>(p.rows * p.row_stride));
    const std::size_t row_bytes = static_cast<std::size_t>(p.row_stride) * sizeof(std::int16_t);
    std::memset(p.data.data() + op.rows * p.row_stride, 0, static_cast<std::size_t>(p.rows - op.rows) * row_bytes);
    std::int64_t max_abs = 0;
    bool fits = true;
#pragma omp parallel for reduction(max : max_abs) reduction(&& : fits) if (op.rows * cols >= (1 << 20))
    for (std::int64_t r = 0; r < op.rows; ++r) {
        std::memset(p.data.data() + r * p.row_stride, 0, row_bytes);  // the groups' padding, written by this thread
        for (std::int64_t g = 0; g < groups; ++g) {
            const std::int32_t z = op.zero_point(r, g);
            const std::int32_t* src = op.codes + r * cols + g * group;
            std::int16_t* dst = p.data.data() + r * p.row_stride + g * p.group_stride;
            for (std::int64_t k = 0; k < group; ++k) {
                const std::int64_t v = std::int64_t{src[k]} - z;
                if (v < -32767 || v > 32767) fits = false;
                max_abs = std::max(max_abs, v < 0 ? -v : v);
                dst[k] = static_cast<std::int16_t>(v);
            }
        }
    }
    p.max_abs = max_abs;
    return fits;
}

#ifdef QS_LAYER_SIMD
std::int32_t horizontal_sum(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// dots[i][j] = sum_{k < n} x_i[k] w_j[k] for 4 rows of x (stride xs) and 2 rows of w (stride ws), n a
// multiple of 16: vpmaddwd multiplies 16 pairs of int16 and adds neighbours into 8 int32 lanes. The caller
// keeps n short enough that no lane can overflow (n max|x| max|w| <= INT32_MAX).
void dot_4x2(const std::int16_t* x, std::int64_t xs, const std::int16_t* w, std::int64_t ws, std::int64_t n,
             std::int64_t dots[4][2]) {
    __m256i a00 = _mm256_setzero_si256(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    for (std::int64_t k = 0; k < n; k += 16) {
        const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + k));
        const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + ws + k));
        __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + k));
        a00 = _mm256_add_epi32(a00, _mm256_madd_epi16(xv, w0));
        a01 = _mm256_add_epi32(a01, _mm256_madd_epi16(xv, w1));
        xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + xs + k));
        a10 = _mm256_add_epi32(a10, _mm256_madd_epi16(xv, w0));
        a11 = _mm256_add_epi32(a11, _mm256_madd_epi16(xv, w1));
        xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 2 * xs + k));
        a20 = _mm256_add_epi32(a20, _mm256_madd_epi16(xv, w0));
        a21 = _mm256_add_epi32(a21, _mm256_madd_epi16(xv, w1));
        xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 3 * xs + k));
        a30 = _mm256_add_epi32(a30, _mm256_madd_epi16(xv, w0));
        a31 = _mm256_add_epi32(a31, _mm256_madd_epi16(xv, w1));
    }
    dots[0][0] += horizontal_sum(a00), dots[0][1] += horizontal_sum(a01);
    dots[1][0] += horizontal_sum(a10), dots[1][1] += horizontal_sum(a11);
    dots[2][0] += horizontal_sum(a20), dots[2][1] += horizontal_sum(a21);
    dots[3][0] += horizontal_sum(a30), dots[3][1] += horizontal_sum(a31);
}

// The blocked product over packed operands. `span`: the longest run of columns (a multiple of 16) whose
// int32 partial sums cannot overflow; each run's sum is added into int64.
void product_simd(const Packed16& x, const Packed16& w, std::int64_t tokens, std::int64_t outs, std::int64_t groups,
                  std::int64_t span, const double* sx, const double* sw, double* y) {
    const std::int64_t tiles = (w.rows + kOutTile - 1) / kOutTile;
    const bool parallel = tokens * outs * w.row_stride >= kParallelMacs;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
    for (std::int64_t tile = 0; tile < tiles; ++tile) {
        const std::int64_t o_end = std::min(w.rows, (tile + 1) * kOutTile);
        for (std::int64_t t = 0; t < x.rows; t += 4) {
            for (std::int64_t o = tile * kOutTile; o < o_end; o += 2) {
                double sum[4][2] = {};
                for (std::int64_t g = 0; g < groups; ++g) {
                    std::int64_t acc[4][2] = {};
                    const std::int16_t* xg = x.data.data() + t * x.row_stride + g * x.group_stride;
                    const std::int16_t* wg = w.data.data() + o * w.row_stride + g * w.group_stride;
                    for (std::int64_t k = 0; k < x.group_stride; k += span)
                        dot_4x2(xg + k, x.row_stride, wg + k, w.row_stride, std::min(span, x.group_stride - k), acc);
                    for (int j = 0; j < 2; ++j) {
                        if (o + j >= outs) continue;
                        const double s = sw[(o + j) * groups + g];
                        for (int i = 0; i < 4; ++i) sum[i][j] += s * static_cast<double>(acc[i][j]);
                    }
                }
                for (int i = 0; i < 4 && t + i < tokens; ++i)
                    for (int j = 0; j < 2 && o + j < outs; ++j) y[(t + i) * outs + o + j] = sx[t + i] * sum[i][j];
            }
        }
    }
}
#endif

// Any width of codes: centered values in int32, products summed in int64, one output at a time. The
// reference for the SIMD kernel and the path for 16-bit types (whose q - z needs 17 bits).
void product_plain(const detail::IntOperand& x, const detail::IntOperand& w, std::int64_t cols, std::int64_t group,
                   const double* sx, const double* sw, double* y) {
    const std::int64_t groups = cols / group, tokens = x.rows, outs = w.rows;
    const auto centered = [&](const detail::IntOperand& op) {
        std::vector<std::int32_t> c(static_cast<std::size_t>(op.rows * cols));
        for (std::int64_t r = 0; r < op.rows; ++r)
            for (std::int64_t g = 0; g < groups; ++g) {
                const std::int32_t z = op.zero_point(r, g);
                for (std::int64_t k = g * group; k < (g + 1) * group; ++k)
                    c[static_cast<std::size_t>(r * cols + k)] = op.codes[r * cols + k] - z;
            }
        return c;
    };
    const std::vector<std::int32_t> xc = centered(x), wc = centered(w);
    const std::int64_t tiles = (outs + kOutTile - 1) / kOutTile;
#pragma omp parallel for schedule(dynamic, 1) if (tokens * outs * cols >= kParallelMacs)
    for (std::int64_t tile = 0; tile < tiles; ++tile) {
        for (std::int64_t t = 0; t < tokens; ++t) {
            const std::int32_t* xr = xc.data() + t * cols;
            for (std::int64_t o = tile * kOutTile; o < std::min(outs, (tile + 1) * kOutTile); ++o) {
                const std::int32_t* wr = wc.data() + o * cols;
                double sum = 0;
                for (std::int64_t g = 0; g < groups; ++g) {
                    std::int64_t acc = 0;
                    for (std::int64_t k = g * group; k < (g + 1) * group; ++k) acc += std::int64_t{xr[k]} * wr[k];
                    sum += sw[o * groups + g] * static_cast<double>(acc);
                }
                y[t * outs + o] = sx[t] * sum;
            }
        }
    }
}

}  // namespace

void use_plain_integer_kernel(bool on) { g_plain_only = on; }

namespace detail {

void integer_product(const IntOperand& x, const IntOperand& w, std::int64_t cols, std::int64_t group,
                     const double* sx, const double* sw, double* y) {
#ifdef QS_LAYER_SIMD
    // Groups shorter than 8 would be mostly padding in the 16-wide layout (up to 16x the memory).
    if (!g_plain_only.load(std::memory_order_relaxed) && group >= 8) {
        Packed16 xp, wp;
        if (pack16(x, cols, group, 4, xp) && pack16(w, cols, group, 2, wp)) {
            const std::int64_t bound = std::max<std::int64_t>(1, xp.max_abs * wp.max_abs);
            const std::int64_t span = std::min(xp.group_stride, INT32_MAX / bound / 16 * 16);
            if (span >= 16) {
                product_simd(xp, wp, x.rows, w.rows, cols / group, span, sx, sw, y);
                return;
            }
        }
    }
#endif
    product_plain(x, w, cols, group, sx, sw, y);
}

}  // namespace detail
}  // namespace qs
