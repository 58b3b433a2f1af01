// ggml's k-quant quantizers, bit-exact with ggml-quants.c: the reference quantize_row_q*_K_ref and the
// importance-weighted quantize_row_q*_K_impl that ggml_quantize_chunk calls with an imatrix. Each runs its
// sub-blocks' scale (and min) searches, quantizes those to the stored scales, requantizes the codes with
// them and packs the block (ggml_k_layout.hpp).
//
// Where ggml's fp16 of d or dmin would overflow to infinity (|d| > 65504), ggml_fp16 stores +-65504
// (FORMATS.md's one divergence), and what follows in the block (requantized codes) is computed from that.
#include <algorithm>
#include <type_traits>

#include "ggml_codecs.hpp"
#include "ggml_k_layout.hpp"
#include "ggml_k_search.hpp"
#include "ggml_k_lanes_avx512.hpp"
#include "ggml_k_search_avx512.hpp"
#include "quantscope/element_type.hpp"

namespace qs::detail {
namespace {

using namespace ggml_k;

// One of the k-quants' min-and-scale searches (make_qkx2_quants with its rmin, rdelta, nstep and use_mad, or
// make_qkx3_quants) over sub-blocks of n values, fitted with the given weights or the reference quantizers'
// own (QkxWeights).
struct QkxSearch {
    int n, nmax;
    QkxWeights weights;
    bool qkx3;  // make_qkx3_quants (rmin -0.9, rdelta 0.05, 36 steps): the importance-weighted quantizers'
    float rmin = -0.9f, rdelta = 0.05f;
    int nstep = 36;
    bool use_mad = false;
};

// The weights a search fits sub-block x (n values) with: the given ones, or computed as the reference
// quantizers compute them (q2_K |x|; q4_K and q5_K sqrt(Σ x^2 / 32) + |x|, the sum in index order).
const float* fit_weights(const QkxSearch& s, const float* x, const float* given, float* own) {
    if (s.weights == QkxWeights::Given) return given;
    float sum_x2 = 0;
    for (int l = 0; l < s.n; ++l) sum_x2 += x[l] * x[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < s.n; ++l) own[l] = s.weights == QkxWeights::AbsX ? std::fabs(x[l]) : av_x + std::fabs(x[l]);
    return own;
}

// The scalar search of one sub-block: its scale, -min into *the_min, its codes into L.
float qkx_search_one(const QkxSearch& s, const float* x, const float* given_weights, std::uint8_t* L, float* the_min) {
    float own[32];
    const float* w = fit_weights(s, x, given_weights, own);
    return s.qkx3 ? ggml_make_qkx3_quants(s.n, s.nmax, x, w, L, the_min, -0.9f, 0.05f, 36)
                  : ggml_make_qkx2_quants_scalar(s.n, s.nmax, x, w, L, the_min, s.rmin, s.rdelta, s.nstep, s.use_mad);
}

// The scales and mins of `count` sub-blocks (sub-block j at x + n j, its given weights at weights + n j), not
// their codes: the callers requantize every sub-block whose stored scale is not 0 and ask qkx_search_one for
// the codes of the rest (the same bits as the lanes would give). One sub-block to a lane where AVX-512 is
// built, up to 32 to a call (two groups of sixteen; one group where sixteen are left), the same bits as the
// scalar search, which runs otherwise.
template <QkxWeights Weights, int N>
void qkx_search_scales(const QkxSearch& s, int count, const float* x, const float* weights, float* scales, float* mins) {
#ifdef QS_HAVE_GGML_K_AVX512
    const float rmin = s.qkx3 ? -0.9f : s.rmin, rdelta = s.qkx3 ? 0.05f : s.rdelta;
    const int nstep = s.qkx3 ? 36 : s.nstep;
    for (int j = 0; j < count; j += 32) {
        const int left = std::min(32, count - j);
        const float* w = weights ? weights + N * j : nullptr;
        if (left > 16)
            ggml_make_qkx_quants_lanes_avx512<2, N, Weights>(left, s.nmax, x + N * j, w, nullptr, scales + j, mins + j,
                                                             rmin, rdelta, nstep, s.use_mad);
        else
            ggml_make_qkx_quants_lanes_avx512<1, N, Weights>(left, s.nmax, x + N * j, w, nullptr, scales + j, mins + j,
                                                             rmin, rdelta, nstep, s.use_mad);
    }
#else
    std::uint8_t L[32];
    for (int j = 0; j < count; ++j)
        scales[j] = qkx_search_one(s, x + s.n * j, weights ? weights + s.n * j : nullptr, L, &mins[j]);
#endif
}
void qkx_search_scales(const QkxSearch& s, int count, const float* x, const float* weights, float* scales, float* mins) {
    const auto run = [&](auto weights_kind) {
        constexpr QkxWeights W = decltype(weights_kind)::value;
        if (s.n == 16) qkx_search_scales<W, 16>(s, count, x, weights, scales, mins);  // q2_K's sub-blocks
        else qkx_search_scales<W, 32>(s, count, x, weights, scales, mins);
    };
    switch (s.weights) {
        case QkxWeights::Given: return run(std::integral_constant<QkxWeights, QkxWeights::Given>{});
        case QkxWeights::AbsX: return run(std::integral_constant<QkxWeights, QkxWeights::AbsX>{});
        case QkxWeights::RmsPlusAbsX: return run(std::integral_constant<QkxWeights, QkxWeights::RmsPlusAbsX>{});
    }
}

// The search's codes of sub-block j of a super-block (its values x, its given weights or null): what
// requantize keeps where a stored scale is 0.
struct SearchCodes {
    const QkxSearch& search;
    const float* x;
    const float* weights;
    void operator()(int j, std::uint8_t* L) const {
        float the_min;
        qkx_search_one(search, x + search.n * j, weights ? weights + search.n * j : nullptr, L, &the_min);
    }
};
// requantize's no-op for searches that gave their codes.
void codes_in_place(int, std::uint8_t*) {}

// make_qx_quants of `count` sub-blocks of n values each (x + n j, weights qw + n j or null for x^2, codes to
// L + n j): sixteen to a call, one to a lane, where AVX-512 is built.
void search_qx_sub_blocks(int count, int n, int nmax, const float* x, const float* qw, std::int8_t* L, float* scales) {
#ifdef QS_HAVE_GGML_K_AVX512
    for (int j = 0; j < count; j += 16)
        ggml_make_qx_quants_lanes_avx512<1>(std::min(16, count - j), n, nmax, x + n * j, qw ? qw + n * j : nullptr,
                                            L + n * j, scales + j);
#else
    for (int j = 0; j < count; ++j) scales[j] = ggml_make_qx_quants(n, nmax, x + n * j, L + n * j, qw ? qw + n * j : nullptr);
#endif
}
// make_q3_quants (nmax 4) of a super-block's sixteen sub-blocks of 16: one to a lane where AVX-512 is built.
void search_q3_sub_blocks(const float* x, std::int8_t* L, float* scales) {
#ifdef QS_HAVE_GGML_K_AVX512
    ggml_make_q3_quants_lanes_avx512(4, x, L, scales);
#else
    for (int j = 0; j < 16; ++j) scales[j] = ggml_make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
#endif
}
float search_qx(int n, int nmax, const float* x, std::int8_t* L, const float* qw) {
#ifdef QS_HAVE_GGML_K_AVX512
    return ggml_make_qx_quants_avx512(n, nmax, x, L, qw);
#else
    return ggml_make_qx_quants(n, nmax, x, L, qw);
#endif
}

// The codes of sub-blocks of `size` values whose used scale d * sc is non-zero, requantized from x with the
// stored scales (ggml's second pass): nearest_int((x + dmin m) / (d sc)) clamped to [lo, hi], plus `bias`.
// Sub-blocks whose d * sc is 0 keep the search's codes: search_codes(j, L + size j) puts them there (a no-op
// after the searches that gave L).
template <int Size, class SearchCodes>
void requantize(const float* x, const float* d_used, const float* m_used, int lo, int hi, int bias, int sub_blocks,
                std::uint8_t* L, SearchCodes&& search_codes) {
    for (int j = 0; j < sub_blocks; ++j) {
        const float d = d_used[j];
        if (d == 0) {
            search_codes(j, L + Size * j);
            continue;
        }
#ifdef QS_HAVE_GGML_K_AVX512
        for (int i = 0; i < Size; i += 16) {  // the same division and nearest_int, 16 values at once
            __m512 v = _mm512_loadu_ps(x + Size * j + i);
            if (m_used) v = _mm512_add_ps(v, _mm512_set1_ps(m_used[j]));
            const __m512i l = nearest_int_avx512(_mm512_div_ps(v, _mm512_set1_ps(d)));
            const __m512i clamped = _mm512_max_epi32(_mm512_set1_epi32(lo), _mm512_min_epi32(_mm512_set1_epi32(hi), l));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(L + Size * j + i),
                             _mm512_cvtepi32_epi8(_mm512_add_epi32(clamped, _mm512_set1_epi32(bias))));
        }
#else
        for (int i = 0; i < Size; ++i) {
            const float v = m_used ? x[Size * j + i] + m_used[j] : x[Size * j + i];
            int l = ggml_nearest_int(v / d);
            l = l < lo ? lo : (l > hi ? hi : l);
            L[Size * j + i] = static_cast<std::uint8_t>(l + bias);
        }
#endif
    }
}

// The weights of ggml's _impl quantizers: qw sqrt(sigma2 + x^2).
void importance_weights(const float* x, const float* qw, float sigma2, int n, float* weight) {
    for (int l = 0; l < n; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[l] * x[l]);
}

// The super-block's Σ x^2 in index order (the _impl quantizers' sigma2 is per super-block, not per row).
float block_sum_squares(const float* x) {
    float sum = 0;
    for (int l = 0; l < kQK; ++l) sum += x[l] * x[l];
    return sum;
}

float sum_in_order(const float* w, int n) {
    float sum = 0;
    for (int l = 0; l < n; ++l) sum += w[l];
    return sum;
}

// ---- q2_K ---------------------------------------------------------------------------------------------------

// From the 4-bit scale/min pairs, d and dmin: the codes, then the block.
void q2_k_finish(const float* x, const std::uint8_t* scale_bytes, std::uint16_t d_bits, std::uint16_t dmin_bits,
                 const SearchCodes& search_codes, std::uint8_t* L, std::uint8_t* y) {
    std::memcpy(y, scale_bytes, 16);
    store_le16(y + 80, d_bits);
    store_le16(y + 82, dmin_bits);
    const float d = half_to_float(d_bits), dmin = half_to_float(dmin_bits);
    float d_used[16], m_used[16];
    for (int j = 0; j < 16; ++j) {
        d_used[j] = d * static_cast<float>(scale_bytes[j] & 0xf);
        m_used[j] = dmin * static_cast<float>(scale_bytes[j] >> 4);
    }
    requantize<16>(x, d_used, m_used, 0, 3, 0, 16, L, search_codes);
    pack_2bit(L, y + 16);
}

// Two super-blocks at a time (count 1 or 2, blocks of 84 bytes at y): their 32 sub-blocks fill the search's
// two groups of sixteen lanes. make_qkx2_quants weighted by |x|, by absolute error.
void q2_k_ref(const float* x, int count, std::uint8_t* y) {
    static constexpr QkxSearch kSearch{16, 3, QkxWeights::AbsX, false, -0.5f, 0.1f, 15, true};
    std::uint8_t L[kQK];
    float scales[32], mins[32];
    qkx_search_scales(kSearch, 16 * count, x, nullptr, scales, mins);
    for (int b = 0; b < count; ++b) {
        const float* sc = scales + 16 * b;
        const float* mn = mins + 16 * b;
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 16; ++j) {
            if (sc[j] > max_scale) max_scale = sc[j];
            if (mn[j] > max_min) max_min = mn[j];
        }
        std::uint8_t s[16] = {};
        std::uint16_t d_bits = 0, dmin_bits = 0;
        if (max_scale > 0) {
            const float iscale = 15.0f / max_scale;
            for (int j = 0; j < 16; ++j) s[j] = static_cast<std::uint8_t>(ggml_nearest_int(iscale * sc[j]));
            d_bits = ggml_fp16(max_scale / 15.0f);
        }
        if (max_min > 0) {
            const float iscale = 15.0f / max_min;
            for (int j = 0; j < 16; ++j) s[j] = static_cast<std::uint8_t>(s[j] | (ggml_nearest_int(iscale * mn[j]) << 4));
            dmin_bits = ggml_fp16(max_min / 15.0f);
        }
        q2_k_finish(x + kQK * b, s, d_bits, dmin_bits, {kSearch, x + kQK * b, nullptr}, L, y + 84 * b);
    }
}

void q2_k_weighted(const float* x, const float* qw, int count, std::uint8_t* y) {
    static constexpr QkxSearch kSearch{16, 3, QkxWeights::Given, true};
    std::uint8_t L[kQK];
    float scales[32], mins[32], sw[32], weight[2 * kQK];
    for (int b = 0; b < count; ++b) {  // sigma2 is the super-block's
        const float sigma2 = block_sum_squares(x + kQK * b) / static_cast<float>(kQK);
        importance_weights(x + kQK * b, qw + kQK * b, sigma2, kQK, weight + kQK * b);
    }
    for (int j = 0; j < 16 * count; ++j) sw[j] = sum_in_order(weight + 16 * j, 16);
    qkx_search_scales(kSearch, 16 * count, x, weight, scales, mins);
    for (int b = 0; b < count; ++b) {
        std::uint8_t Ls[16], Lm[16], s[16];
        const float dm = ggml_make_qp_quants(16, 15, scales + 16 * b, Ls, sw + 16 * b);
        const float mm = ggml_make_qp_quants(16, 15, mins + 16 * b, Lm, sw + 16 * b);
        for (int j = 0; j < 16; ++j) s[j] = static_cast<std::uint8_t>(Ls[j] | (Lm[j] << 4));
        q2_k_finish(x + kQK * b, s, ggml_fp16(dm), ggml_fp16(mm), {kSearch, x + kQK * b, weight + kQK * b}, L, y + 84 * b);
    }
}

// ---- q3_K ---------------------------------------------------------------------------------------------------

// From the packed scales and d: the codes (plus 4), their high bits into hmask, their low bits into qs.
void q3_k_finish(const float* x, std::uint16_t d_bits, std::uint8_t* L, std::uint8_t* y) {
    store_le16(y + 108, d_bits);
    const float d = half_to_float(d_bits);
    float d_used[16];
    for (int j = 0; j < 16; ++j) d_used[j] = d * static_cast<float>(q3_scale(y + 96, j));
    requantize<16>(x, d_used, nullptr, -4, 3, 4, 16, L, codes_in_place);
    std::uint8_t* hmask = y;
    std::memset(hmask, 0, 32);
    for (int h = 0; h < 8; ++h)  // L <= 7: bit 2 is the high bit, without a branch; value 32 h + l's in hmask[l]
        for (int l = 0; l < 32; ++l) {
            std::uint8_t& code = L[32 * h + l];
            hmask[l] = static_cast<std::uint8_t>(hmask[l] | (((code >> 2) & 1) << h));
            code = static_cast<std::uint8_t>(code & 3);
        }
    pack_2bit(L, y + 32);
}

void q3_k_ref(const float* x, std::uint8_t* y) {
    std::int8_t L[kQK];
    float scales[16];
    float max_scale = 0, amax = 0;
    search_q3_sub_blocks(x, L, scales);
    for (int j = 0; j < 16; ++j) {
        const float a = std::fabs(scales[j]);
        if (a > amax) amax = a, max_scale = scales[j];
    }
    int l[16] = {};
    std::uint16_t d_bits = 0;
    if (max_scale != 0) {
        const float iscale = -32.0f / max_scale;
        for (int j = 0; j < 16; ++j) {
            const int q = static_cast<std::int8_t>(ggml_nearest_int(iscale * scales[j]));  // ggml's int8_t l
            l[j] = (q < -32 ? -32 : (q > 31 ? 31 : q)) + 32;
        }
        d_bits = ggml_fp16(1 / iscale);
    }
    pack_q3_scales(l, y + 96);
    q3_k_finish(x, d_bits, reinterpret_cast<std::uint8_t*>(L), y);
}

void q3_k_weighted(const float* x, const float* qw, std::uint8_t* y) {
    std::int8_t L[kQK];
    float scales[16], sw[16], weight[kQK];
    const float sigma2 = 2 * block_sum_squares(x) / static_cast<float>(kQK);
    importance_weights(x, qw, sigma2, kQK, weight);
    for (int j = 0; j < 16; ++j) sw[j] = sum_in_order(weight + 16 * j, 16);
    search_qx_sub_blocks(16, 16, 4, x, weight, L, scales);
    std::int8_t Ls[16];
    const float d_block = search_qx(16, 32, scales, Ls, sw);
    int l[16];
    for (int j = 0; j < 16; ++j) l[j] = Ls[j];
    pack_q3_scales(l, y + 96);
    q3_k_finish(x, ggml_fp16(d_block), reinterpret_cast<std::uint8_t*>(L), y);
}

// ---- q4_K and q5_K --------------------------------------------------------------------------------------------

// Q5 selects q5_K (codes 0..31, qh) over q4_K (0..15). d, dmin, scales at y, y + 2, y + 4.
template <bool Q5>
void q45_k_finish(const float* x, std::uint16_t d_bits, std::uint16_t dmin_bits, const SearchCodes& search_codes,
                  std::uint8_t* L, std::uint8_t* y) {
    store_le16(y, d_bits);
    store_le16(y + 2, dmin_bits);
    const float d = half_to_float(d_bits), dmin = half_to_float(dmin_bits);
    float d_used[8], m_used[8];
    for (int j = 0; j < 8; ++j) {
        int sc, m;
        scale_min_k4(j, y + 4, sc, m);
        d_used[j] = d * static_cast<float>(sc);
        m_used[j] = dmin * static_cast<float>(m);
    }
    requantize<32>(x, d_used, m_used, 0, Q5 ? 31 : 15, 0, 8, L, search_codes);
    std::uint8_t* qs = y + (Q5 ? 48 : 16);
    if (Q5) std::memset(y + 16, 0, 32);
    for (int n = 0; n < kQK; n += 64) {
        for (int j = 0; j < 32; ++j) {
            const int l1 = L[n + j], l2 = L[n + j + 32];
            if (Q5) y[16 + j] = static_cast<std::uint8_t>(y[16 + j] | ((l1 >> 4) << (n / 32)) | ((l2 >> 4) << (n / 32 + 1)));
            qs[n / 2 + j] = static_cast<std::uint8_t>((l1 & 0xf) | ((l2 & 0xf) << 4));
        }
    }
}

// Up to four super-blocks at a time (count, blocks of kBytes at y): their 32 sub-blocks fill the search's two
// groups of sixteen lanes. make_qkx2_quants weighted by sqrt(Σ x^2 / 32) + |x|, nmax 15 (q4_K: rmin -1, 20
// steps) or 31 (q5_K: rmin -0.5, 15 steps).
template <bool Q5>
void q45_k_ref(const float* x, int count, std::uint8_t* y) {
    constexpr int kBytes = Q5 ? 176 : 144;
    static constexpr QkxSearch kSearch = Q5 ? QkxSearch{32, 31, QkxWeights::RmsPlusAbsX, false, -0.5f, 0.1f, 15}
                                            : QkxSearch{32, 15, QkxWeights::RmsPlusAbsX, false, -1.0f, 0.1f, 20};
    std::uint8_t L[kQK];
    float scales[32], mins[32];
    qkx_search_scales(kSearch, 8 * count, x, nullptr, scales, mins);
    for (int b = 0; b < count; ++b) {
        const float* sc = scales + 8 * b;
        const float* mn = mins + 8 * b;
        float max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; ++j) {
            if (sc[j] > max_scale) max_scale = sc[j];
            if (mn[j] > max_min) max_min = mn[j];
        }
        const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
        const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
        std::uint8_t ls[8], lm[8];
        for (int j = 0; j < 8; ++j) {  // ggml's uint8_t, then MIN(63, .)
            const auto s = static_cast<std::uint8_t>(ggml_nearest_int(inv_scale * sc[j]));
            const auto m = static_cast<std::uint8_t>(ggml_nearest_int(inv_min * mn[j]));
            ls[j] = s < 63 ? s : 63;
            lm[j] = m < 63 ? m : 63;
        }
        std::uint8_t* block = y + kBytes * b;
        pack_scale_min_k4(ls, lm, block + 4);
        q45_k_finish<Q5>(x + kQK * b, ggml_fp16(max_scale / 63.0f), ggml_fp16(max_min / 63.0f),
                         {kSearch, x + kQK * b, nullptr}, L, block);
    }
}

template <bool Q5>
void q45_k_weighted(const float* x, const float* qw, int count, std::uint8_t* y) {
    constexpr int kBytes = Q5 ? 176 : 144;
    static constexpr QkxSearch kSearch{32, Q5 ? 31 : 15, QkxWeights::Given, true};
    std::uint8_t L[kQK];
    float scales[32], mins[32], sw[32], weights[4 * kQK];
    for (int b = 0; b < count; ++b) {  // sigma2 is the super-block's
        const float sigma2 = 2 * block_sum_squares(x + kQK * b) / static_cast<float>(kQK);
        importance_weights(x + kQK * b, qw + kQK * b, sigma2, kQK, weights + kQK * b);
    }
    for (int j = 0; j < 8 * count; ++j) sw[j] = sum_in_order(weights + 32 * j, 32);
    qkx_search_scales(kSearch, 8 * count, x, weights, scales, mins);
    for (int b = 0; b < count; ++b) {
        std::uint8_t ls[8], lm[8];
        const float d_block = ggml_make_qp_quants(8, 63, scales + 8 * b, ls, sw + 8 * b);
        const float m_block = ggml_make_qp_quants(8, 63, mins + 8 * b, lm, sw + 8 * b);
        if (Q5) {  // q5_K's _impl clamps to 63; q4_K's stores the uint8_t as it is
            for (int j = 0; j < 8; ++j) {
                ls[j] = ls[j] < 63 ? ls[j] : 63;
                lm[j] = lm[j] < 63 ? lm[j] : 63;
            }
        }
        std::uint8_t* block = y + kBytes * b;
        pack_scale_min_k4(ls, lm, block + 4);
        q45_k_finish<Q5>(x + kQK * b, ggml_fp16(d_block), ggml_fp16(m_block), {kSearch, x + kQK * b, weights + kQK * b},
                         L, block);
    }
}

// ---- q6_K ---------------------------------------------------------------------------------------------------

// qw null: make_qx_quants weighted by x^2 (the reference); else by qw itself (ggml's _impl, no sigma2).
void q6_k_block(const float* x, const float* qw, std::uint8_t* y) {
    std::int8_t L[kQK];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    search_qx_sub_blocks(16, 16, 32, x, qw, L, scales);
    for (int j = 0; j < 16; ++j) {
        const float a = std::fabs(scales[j]);
        if (a > max_abs_scale) max_abs_scale = a, max_scale = scales[j];
    }
    if (max_abs_scale < kGgmlGroupMaxEps) {
        std::memset(y, 0, 210);
        return;
    }
    const float iscale = -128.0f / max_scale;
    const std::uint16_t d_bits = ggml_fp16(1 / iscale);
    store_le16(y + 208, d_bits);
    const float d = half_to_float(d_bits);
    float d_used[16];
    for (int j = 0; j < 16; ++j) {
        const int q = ggml_nearest_int(iscale * scales[j]);
        const auto sc = static_cast<std::int8_t>(q < 127 ? q : 127);
        y[192 + j] = static_cast<std::uint8_t>(sc);
        d_used[j] = d * static_cast<float>(sc);
    }
    std::uint8_t* codes = reinterpret_cast<std::uint8_t*>(L);
    requantize<16>(x, d_used, nullptr, -32, 31, 32, 16, codes, codes_in_place);
    std::uint8_t* ql = y;
    std::uint8_t* qh = y + 128;
    for (int j = 0; j < kQK; j += 128) {
        for (int l = 0; l < 32; ++l) {
            const std::uint8_t* c = codes + j + l;
            ql[l] = static_cast<std::uint8_t>((c[0] & 0xf) | ((c[64] & 0xf) << 4));
            ql[l + 32] = static_cast<std::uint8_t>((c[32] & 0xf) | ((c[96] & 0xf) << 4));
            qh[l] = static_cast<std::uint8_t>((c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) | ((c[96] >> 4) << 6));
        }
        ql += 64;
        qh += 32;
    }
}

void q6_k_ref(const float* x, std::uint8_t* y) { q6_k_block(x, nullptr, y); }

// ---- the quantizers of whole blocks ------------------------------------------------------------------------

// `Group` super-blocks to a call of Ref and Weighted (their count the last argument but one).
template <int BlockBytes, int Group, void (*Ref)(const float*, int, std::uint8_t*),
          void (*Weighted)(const float*, const float*, int, std::uint8_t*)>
void quantize_k(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    for (std::int64_t b = 0; b < blocks; b += Group) {
        const int count = static_cast<int>(std::min<std::int64_t>(Group, blocks - b));
        std::uint8_t* y = bytes(out) + BlockBytes * b;
        if (imp) Weighted(x + kQK * b, imp->weights + kQK * b, count, y);
        else Ref(x + kQK * b, count, y);
    }
}
// A quantizer of one super-block as a group of one.
template <void (*Ref)(const float*, std::uint8_t*)>
void one_block(const float* x, int, std::uint8_t* y) {
    Ref(x, y);
}
template <void (*Weighted)(const float*, const float*, std::uint8_t*)>
void one_block(const float* x, const float* qw, int, std::uint8_t* y) {
    Weighted(x, qw, y);
}

}  // namespace

GgmlQuantizeBlocks ggml_k_quantizer(GgmlType type) {
    switch (type) {
        case GgmlType::Q2_K: return quantize_k<84, 2, q2_k_ref, q2_k_weighted>;
        case GgmlType::Q3_K: return quantize_k<110, 1, one_block<q3_k_ref>, one_block<q3_k_weighted>>;
        case GgmlType::Q4_K: return quantize_k<144, 4, q45_k_ref<false>, q45_k_weighted<false>>;
        case GgmlType::Q5_K: return quantize_k<176, 4, q45_k_ref<true>, q45_k_weighted<true>>;
        case GgmlType::Q6_K: return quantize_k<210, 1, one_block<q6_k_ref>, one_block<q6_k_block>>;
        default: return nullptr;
    }
}

}  // namespace qs::detail
