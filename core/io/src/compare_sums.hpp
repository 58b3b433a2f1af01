// Internal to compare.cpp: the sums of one tile of values (Σ (a - b)², Σ a², max |a - b|, in double), in an
// order that does not depend on the machine, the thread count or how a tile is cut into chunks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#ifdef __AVX512F__
#include <immintrin.h>
#endif

namespace qs::detail {

// One tile's sums, combined in tile order afterwards so the result does not depend on the thread count.
struct TileSums {
    double error = 0, signal = 0, max_error = 0;
};

// A tile's sums in eight lanes: lane l sums the tile's elements l, l + 8, l + 16, ... in order, and the lanes are
// added in order at the end: the same numbers whether the compiler vectorises the lanes or not, on any machine,
// and however the tile is cut into chunks (each chunk but the tile's last a multiple of eight long).
class LaneSums {
public:
    void add(const float* a, const float* b, std::int64_t count) {
        std::int64_t k = 0;
#if defined(__AVX512F__)
        // Lane l holds elements k + l: the scalar lanes' operations, eight at once (GCC 12 leaves the loop below
        // scalar, and it was two thirds of compare's time).
        __m512d e2 = _mm512_load_pd(error_), s2 = _mm512_load_pd(signal_), mx = _mm512_load_pd(max_error_);
        const __m512d abs_mask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
        for (; k + kLanes <= count; k += kLanes) {
            const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(a + k));
            const __m512d e = _mm512_sub_pd(x, _mm512_cvtps_pd(_mm256_loadu_ps(b + k)));
            e2 = _mm512_add_pd(e2, _mm512_mul_pd(e, e));
            s2 = _mm512_add_pd(s2, _mm512_mul_pd(x, x));
            mx = _mm512_max_pd(mx, _mm512_and_pd(e, abs_mask));
        }
        _mm512_store_pd(error_, e2);
        _mm512_store_pd(signal_, s2);
        _mm512_store_pd(max_error_, mx);
#endif
        for (; k + kLanes <= count; k += kLanes)
            for (int l = 0; l < kLanes; ++l) one(a[k + l], b[k + l], l);
        for (int l = 0; k < count; ++k, ++l) one(a[k], b[k], l);
    }
    TileSums total() const {
        TileSums s;
        for (int l = 0; l < kLanes; ++l) {
            s.error += error_[l];
            s.signal += signal_[l];
            s.max_error = std::max(s.max_error, max_error_[l]);
        }
        return s;
    }

private:
    static constexpr int kLanes = 8;
    void one(float a, float b, int l) {
        const double x = a, e = x - static_cast<double>(b);
        error_[l] += e * e;
        signal_[l] += x * x;
        max_error_[l] = std::max(max_error_[l], std::fabs(e));
    }
    alignas(64) double error_[kLanes] = {}, signal_[kLanes] = {}, max_error_[kLanes] = {};
};

}  // namespace qs::detail
