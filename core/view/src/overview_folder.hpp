// Internal to the fused overview pass (overview_fused.cpp): where each element's results go as they are
// computed, one thread's row of per-column accumulators of the band of blocks being filled.
#pragma once

#include "quantize_kernel_avx2.hpp"

#ifdef QS_HAVE_AVX2_KERNEL
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <vector>

#include "overview_fused.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/quantize.hpp"

namespace qs::detail {

// Rows an int32 column sum takes before it is flushed into the blocks: codes are below 2^16 in magnitude.
constexpr std::int64_t kRowsPerFlush = std::int64_t{1} << 14;

struct Cells {
    double* code_sums;
    float* err_max;
    double* deq_sums;  // null: one (s, z) for the tensor, r' follows from the codes
};

// Storage on 64-byte lines, so that the AVX-512 kernel's per-column loads and stores (64 bytes each, from a
// row's start) do not straddle two lines.
template <typename T>
struct LineAllocator {
    using value_type = T;
    LineAllocator() = default;
    template <typename U>
    LineAllocator(const LineAllocator<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
    friend bool operator==(const LineAllocator&, const LineAllocator&) { return true; }
    friend bool operator!=(const LineAllocator&, const LineAllocator&) { return false; }
};

// One thread's running position in the grid and the band of blocks it fills: per-column sums (codes in
// int32, r' in double) and maxima (|r - r'|) of the band's rows so far, folded into the blocks when the band
// ends; and the code counts in four interleaved tables, so runs of one code do not wait on each other.
class Folder {
public:
    Folder(const OverviewGrid& g, std::int32_t q_min, std::int64_t levels, const Cells& cells)
        : g_(g), cells_(cells), q_min_(q_min), levels_(static_cast<std::size_t>(levels)),
          code_(static_cast<std::size_t>(g.cols), 0), err_(static_cast<std::size_t>(g.cols), 0.0f),
          deq_(cells.deq_sums ? static_cast<std::size_t>(g.cols) : 0, 0.0), tables_(4 * levels_, 0) {}

    // Starts at flat index `flat`, the first element of a band.
    void start(std::int64_t flat) { at_.start(g_, flat); }

    // The current row's columns from the position on, for the kernel's inner loop (which calls nothing, so
    // that its sums stay in registers); advance() then moves past what it added.
    std::int64_t room() const { return g_.cols - at_.col; }
    std::int32_t* codes_here() { return code_.data() + at_.col; }
    float* errors_here() { return err_.data() + at_.col; }
    double* dequantized_here() { return deq_.empty() ? nullptr : deq_.data() + at_.col; }  // null: not kept
    std::uint32_t* tables() { return tables_.data(); }
    std::size_t levels() const { return levels_; }
    void advance(std::int64_t n) {
        if ((at_.col += n) == g_.cols) next_row();
    }

    // At the start of a row: how many whole rows can be added (at codes_here(), errors_here()) before the folder
    // must flush (the band's or the slice's end, or an int32 column sum's limit); advance_rows then moves past them.
    std::int64_t rows_before_flush() const {
        return std::min({g_.fy - at_.row % g_.fy, g_.rows - at_.row, kRowsPerFlush - rows_});
    }
    void advance_rows(std::int64_t rows) {
        for (std::int64_t i = 0; i < rows; ++i) next_row();
    }

    template <bool kDeq, bool kCount>
    void add1(std::int32_t q, float e, float d) {
        const auto c = static_cast<std::size_t>(at_.col);
        code_[c] += q;
        err_[c] = std::max(err_[c], e);
        if constexpr (kDeq) deq_[c] += d;
        if constexpr (kCount) ++tables_[static_cast<std::size_t>(q - q_min_)];
        if (++at_.col == g_.cols) next_row();
    }

    // The band's columns into its blocks (also mid-band, before an int32 column sum could overflow).
    void flush() {
        if (rows_ == 0 && at_.col == 0) return;
        for (std::int64_t oc = 0; oc < g_.out_cols(); ++oc) {
            const auto c0 = static_cast<std::size_t>(oc * g_.fx), c1 = static_cast<std::size_t>(std::min(g_.cols, (oc + 1) * g_.fx));
            std::int64_t codes = 0;
            float worst = 0.0f;
            double deq = 0.0;
            for (std::size_t c = c0; c < c1; ++c) {
                codes += code_[c];
                worst = std::max(worst, err_[c]);
                if (!deq_.empty()) deq += deq_[c];
            }
            const auto cell = static_cast<std::size_t>(at_.base + oc);
            cells_.code_sums[cell] += static_cast<double>(codes);
            cells_.err_max[cell] = std::max(cells_.err_max[cell], worst);
            if (!deq_.empty()) cells_.deq_sums[cell] += deq;
        }
        std::fill(code_.begin(), code_.end(), 0);
        std::fill(err_.begin(), err_.end(), 0.0f);
        std::fill(deq_.begin(), deq_.end(), 0.0);
        rows_ = 0;
    }

    // Adds this thread's code counts to `counts` and clears its tables.
    void take_counts(std::vector<std::int64_t>& counts) {
        for (std::size_t i = 0; i < levels_; ++i)
            counts[i] += std::int64_t{tables_[i]} + tables_[levels_ + i] + tables_[2 * levels_ + i] + tables_[3 * levels_ + i];
        std::fill(tables_.begin(), tables_.end(), 0u);
    }

private:
    void next_row() {
        ++rows_;
        if (at_.next_row(g_)) {
            flush();
            at_.base = at_.band_base(g_);
        } else if (rows_ >= kRowsPerFlush) {
            flush();
        }
    }

    const OverviewGrid& g_;
    Cells cells_;
    std::int32_t q_min_;
    std::size_t levels_;
    std::vector<std::int32_t, LineAllocator<std::int32_t>> code_;
    std::vector<float, LineAllocator<float>> err_;
    std::vector<double> deq_;
    std::vector<std::uint32_t> tables_;
    GridCursor at_;
    std::int64_t rows_ = 0;
};

// What a thread finds whose merge does not depend on order.
struct ThreadPart {
    float max_err = 0, worst = -1.0f;
    std::int64_t worst_at = 0, clipped = 0;
    float deq_lo = std::numeric_limits<float>::infinity(), deq_hi = -std::numeric_limits<float>::infinity();
};

// The first element of an item whose |r - r'| is `target` (the scalar formula gives the kernel's bits).
template <class Ld>
std::int64_t first_error_at(const Ld& ld, std::int64_t len, float s, float z, const QuantConfig& config, float target) {
    for (std::int64_t k = 0; k < len; ++k) {
        const float r = ld.one(k);
        const float d = s * (static_cast<float>(quantize_value(r, s, static_cast<std::int32_t>(z), config)) - z);
        if (std::abs(r - d) == target) return k;
    }
    return 0;
}

// Eight results into the per-column sums and maxima at c, m, ds and the count tables t (four interleaved).
template <bool kDeq, bool kCount>
inline void fold8(std::int32_t* c, float* m, double* ds, std::uint32_t* t, std::size_t levels, __m256i q, __m256i q_min,
                  __m256 e, __m256 d) {
    auto* cv = reinterpret_cast<__m256i*>(c);
    _mm256_storeu_si256(cv, _mm256_add_epi32(_mm256_loadu_si256(cv), q));
    _mm256_storeu_ps(m, _mm256_max_ps(_mm256_loadu_ps(m), e));
    if constexpr (kDeq) {
        _mm256_storeu_pd(ds, _mm256_add_pd(_mm256_loadu_pd(ds), _mm256_cvtps_pd(_mm256_castps256_ps128(d))));
        _mm256_storeu_pd(ds + 4, _mm256_add_pd(_mm256_loadu_pd(ds + 4), _mm256_cvtps_pd(_mm256_extractf128_ps(d, 1))));
    }
    if constexpr (kCount) {
        alignas(32) std::int32_t codes[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(codes), _mm256_sub_epi32(q, q_min));
        for (int j = 0; j < 8; ++j) ++t[static_cast<std::size_t>(j & 3) * levels + static_cast<std::size_t>(codes[j])];
    }
}

}  // namespace qs::detail
#endif
