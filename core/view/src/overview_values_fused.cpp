// The values' overview as one fused AVX2 pass (see overview_fused.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "element_loads_avx2.hpp"
#include "overview_fused.hpp"
#include "parallel.hpp"

namespace qs::detail {

#ifndef QS_HAVE_AVX2_KERNEL
bool fused_values_overview(const TensorView&, const OverviewGrid&, ValueOverview&) { return false; }
#else
namespace {

constexpr std::int64_t kUnit = std::int64_t{1} << 18;  // elements of whole bands a thread takes at a time
constexpr std::int64_t kMaxColumns = std::int64_t{1} << 20;
constexpr std::int64_t kChunk = 4096;  // elements whose extremes are compared with the running ones at once

struct Part {
    float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
    std::int64_t argmin = 0, argmax = 0;
    bool finite = true;
};

// One thread's position in the grid and the per-column sums (double) of the band being filled.
class ValueFolder {
public:
    ValueFolder(const OverviewGrid& g, double* cells) : g_(g), cells_(cells), sums_(static_cast<std::size_t>(g.cols), 0.0) {}
    void start(std::int64_t flat) { at_.start(g_, flat); }
    void add8(__m256 r) {
        if (at_.col + 8 > g_.cols) {
            alignas(32) float v[8];
            _mm256_store_ps(v, r);
            for (float x : v) add1(x);
            return;
        }
        double* s = sums_.data() + at_.col;
        _mm256_storeu_pd(s, _mm256_add_pd(_mm256_loadu_pd(s), _mm256_cvtps_pd(_mm256_castps256_ps128(r))));
        _mm256_storeu_pd(s + 4, _mm256_add_pd(_mm256_loadu_pd(s + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(r, 1))));
        if ((at_.col += 8) == g_.cols) next_row();
    }
    void add1(float r) {
        sums_[static_cast<std::size_t>(at_.col)] += r;
        if (++at_.col == g_.cols) next_row();
    }
    void flush() {
        if (!dirty_ && at_.col == 0) return;
        for (std::int64_t oc = 0; oc < g_.out_cols(); ++oc) {
            const std::int64_t c0 = oc * g_.fx, c1 = std::min(g_.cols, c0 + g_.fx);
            double r = 0.0;
            for (std::int64_t c = c0; c < c1; ++c) r += sums_[static_cast<std::size_t>(c)];
            cells_[at_.base + oc] += r;
        }
        std::fill(sums_.begin(), sums_.end(), 0.0);
        dirty_ = false;
    }

private:
    void next_row() {
        dirty_ = true;
        if (at_.next_row(g_)) {
            flush();
            at_.base = at_.band_base(g_);
        }
    }
    const OverviewGrid& g_;
    double* cells_;
    std::vector<double> sums_;
    GridCursor at_;
    bool dirty_ = false;
};

// Elements [first, end) (whole bands): extremes with their first index, finiteness, block sums, and each
// 16-bit pattern's count when `bits` is given.
template <class Ld>
void run_span(const TensorView& view, std::int64_t first, std::int64_t end, ValueFolder& folder, Part& p,
              std::uint32_t* bits) {
    const std::size_t size = element_size(view.type);
    folder.start(first);
    for (std::int64_t at = first; at < end; at += kChunk) {
        const std::int64_t len = std::min(kChunk, end - at), n8 = len - len % 8;
        const Ld ld{view.data + static_cast<std::size_t>(at) * size};
        __m256 lo = _mm256_set1_ps(std::numeric_limits<float>::infinity()), hi = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
        __m256 bad = _mm256_setzero_ps();  // r - r is 0 for a finite r, NaN otherwise: NaN bits survive the ors
        for (std::int64_t k = 0; k < n8; k += 8) {
            ld.prefetch(k);
            const __m256 r = ld.at(k);
            lo = _mm256_min_ps(r, lo);  // on a tie the earlier value stays (a -0 before a +0)
            hi = _mm256_max_ps(r, hi);
            bad = _mm256_or_ps(bad, _mm256_sub_ps(r, r));
            folder.add8(r);
        }
        float clo = hmin(lo), chi = hmax(hi);
        bool finite = _mm256_movemask_ps(_mm256_cmp_ps(bad, bad, _CMP_UNORD_Q)) == 0;
        for (std::int64_t k = n8; k < len; ++k) {
            const float r = ld.one(k);
            clo = std::min(clo, r);
            chi = std::max(chi, r);
            finite = finite && std::isfinite(r);
            folder.add1(r);
        }
        if (bits) {
            const std::uint8_t* raw = view.data + static_cast<std::size_t>(at) * 2;
            for (std::int64_t k = 0; k < len; ++k) ++bits[load_le16(raw + 2 * k)];
        }
        if (!finite) {
            p.finite = false;
            continue;  // the caller names the first bad element
        }
        // Chunks come in flat order within a thread: a strictly new extreme is its first occurrence.
        const auto first_of = [&](float v) {
            std::int64_t k = 0;
            while (k < len && ld.one(k) != v) ++k;
            return at + k;
        };
        if (clo < p.lo) p.lo = clo, p.argmin = first_of(clo);
        if (chi > p.hi) p.hi = chi, p.argmax = first_of(chi);
    }
    folder.flush();
}

}  // namespace

bool fused_values_overview(const TensorView& view, const OverviewGrid& grid, ValueOverview& out) {
    const std::int64_t n = view.numel();
    if (n == 0 || grid.cols > kMaxColumns || grid.slices * grid.rows * grid.cols != n) return false;
#ifndef __F16C__
    if (view.type == ElementType::F16) return false;
#endif
    if (view.type == ElementType::F64) return false;
    const bool sixteen = view.type == ElementType::BF16 || view.type == ElementType::F16;
    // Units of whole bands, so no two threads add into one block.
    std::vector<std::int64_t> cuts{0};
    const std::int64_t bands = grid.slices * grid.out_rows();
    for (std::int64_t band = 0; band < bands; ++band) {
        const std::int64_t slice = band / grid.out_rows(), r1 = std::min(grid.rows, (band % grid.out_rows() + 1) * grid.fy);
        const std::int64_t end = (slice * grid.rows + r1) * grid.cols;
        if (end - cuts.back() >= kUnit || band + 1 == bands) cuts.push_back(end);
    }
    const auto units = static_cast<std::int64_t>(cuts.size()) - 1;
    const int threads = static_cast<int>(std::min<std::int64_t>(pass_threads(n), units));
    std::vector<Part> parts(static_cast<std::size_t>(threads));
    std::vector<double> sums(static_cast<std::size_t>(grid.cells()), 0.0);
    std::vector<std::int64_t> bit_counts(sixteen ? std::size_t{1} << 16 : 0, 0);
    std::mutex bits_mutex;
    NextIndex next(0, units);
    parallel_guarded(view, threads, [&](int thread, int) {
        ValueFolder folder(grid, sums.data());
        Part& p = parts[static_cast<std::size_t>(thread)];
        std::vector<std::uint32_t> bits(bit_counts.size(), 0);  // n < 2^32: no count overflows
        for (std::int64_t u = 0; next.take(u);) {
            const std::int64_t a = cuts[static_cast<std::size_t>(u)], b = cuts[static_cast<std::size_t>(u) + 1];
            std::uint32_t* b16 = bits.empty() ? nullptr : bits.data();
            if (view.type == ElementType::BF16) run_span<LoadBf16>(view, a, b, folder, p, b16);
#ifdef __F16C__
            else if (view.type == ElementType::F16) run_span<LoadF16>(view, a, b, folder, p, b16);
#endif
            else run_span<LoadF32>(view, a, b, folder, p, b16);
        }
        const std::lock_guard<std::mutex> lock(bits_mutex);
        for (std::size_t i = 0; i < bits.size(); ++i) bit_counts[i] += bits[i];
    });
    out = ValueOverview{};
    out.grid = grid;
    bool first = true;
    for (const Part& p : parts) {
        if (!p.finite) throw_nonfinite(view, first_nonfinite(view));
        if (p.lo == std::numeric_limits<float>::infinity()) continue;  // a thread that got no unit
        if (first || p.lo < out.lo || (p.lo == out.lo && p.argmin < out.argmin)) out.lo = p.lo, out.argmin = p.argmin;
        if (first || p.hi > out.hi || (p.hi == out.hi && p.argmax < out.argmax)) out.hi = p.hi, out.argmax = p.argmax;
        first = false;
    }
    out.mean.resize(sums.size());
    for (std::int64_t s = 0; s < grid.slices; ++s)
        for (std::int64_t orow = 0; orow < grid.out_rows(); ++orow) {
            const std::int64_t h = std::min(grid.rows, (orow + 1) * grid.fy) - orow * grid.fy;
            for (std::int64_t oc = 0; oc < grid.out_cols(); ++oc) {
                const std::int64_t w = std::min(grid.cols, (oc + 1) * grid.fx) - oc * grid.fx;
                const auto i = static_cast<std::size_t>(s * grid.cells_per_slice() + orow * grid.out_cols() + oc);
                out.mean[i] = static_cast<float>(sums[i] / static_cast<double>(h * w));
            }
        }
    out.bit_counts = std::move(bit_counts);
    return true;
}
#endif

}  // namespace qs::detail
