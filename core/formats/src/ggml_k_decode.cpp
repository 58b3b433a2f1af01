// ggml's k-quant blocks read back, bit-exact with ggml-quants.c: each type's to_float (dequantize_row_q*_K)
// and the fields of one block as stored (the Bits view, --out-quantized), and the k-quants' codec row of
// quantizer (ggml_k_quantize.cpp), decoder and fields. Layouts: ggml_k_layout.hpp.
#include "ggml_codecs.hpp"
#include "ggml_k_layout.hpp"
#include "ggml_k_search_avx512.hpp"  // QS_HAVE_GGML_K_AVX512 and the intrinsics where AVX-512 is built
#include "quantscope/element_type.hpp"

namespace qs::detail {
namespace {

using namespace ggml_k;

// Each type's codes of one block as FORMATS.md lists them (into codes[256]), and sub-block j's stored scale
// (and min).
void q2_k_codes(const std::uint8_t* x, std::int32_t* codes) { unpack_2bit_all(x + 16, codes); }
int q2_k_scale(const std::uint8_t* x, int j) { return x[j] & 0xf; }
int q2_k_min(const std::uint8_t* x, int j) { return x[j] >> 4; }

void q3_k_codes(const std::uint8_t* x, std::int32_t* codes) {
    unpack_2bit_all(x + 32, codes);
    for (int h = 0; h < 8; ++h)  // value 32 h + l's third bit: bit h of hmask[l]; clear means minus 4
        for (int l = 0; l < 32; ++l) codes[32 * h + l] -= ((x[l] >> h) & 1) ? 0 : 4;
}
int q3_k_scale(const std::uint8_t* x, int j) { return q3_scale(x + 96, j); }

// GCC 12 reports its own _mm512_undefined_epi32 inside _mm512_cvtepu8_epi32 as used uninitialized once inlined
// here; the value is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
template <bool Q5>
void q45_k_codes(const std::uint8_t* x, std::int32_t* codes) {
    const std::uint8_t* qs = x + (Q5 ? 48 : 16);
#ifdef QS_HAVE_GGML_K_AVX512
    // 32 bytes of qs a time: their low nibbles are 32 codes, their high nibbles the next 32 (q5_K: bits 2 g
    // and 2 g + 1 of qh on top).
    const __m256i nibble = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(0x01);
    const __m256i qh = Q5 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16)) : _mm256_setzero_si256();
    for (int g = 0; g < 4; ++g) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * g));
        for (int h = 0; h < 2; ++h) {
            __m256i c = _mm256_and_si256(h ? _mm256_srli_epi16(q, 4) : q, nibble);
            if (Q5) {
                const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g + h)), one);
                c = _mm256_or_si256(c, _mm256_slli_epi16(bit, 4));
            }
            std::int32_t* out = codes + 64 * g + 32 * h;
            _mm512_storeu_si512(out, _mm512_cvtepu8_epi32(_mm256_castsi256_si128(c)));
            _mm512_storeu_si512(out + 16, _mm512_cvtepu8_epi32(_mm256_extracti128_si256(c, 1)));
        }
    }
    return;
#endif
    for (int g = 0; g < 4; ++g)  // values 64 g + l (low nibbles) and 64 g + 32 + l (high) share qs[32 g + l]
        for (int l = 0; l < 32; ++l) {
            const std::uint8_t byte = qs[32 * g + l];
            codes[64 * g + l] = byte & 0xf;
            codes[64 * g + 32 + l] = byte >> 4;
            if (Q5) {
                codes[64 * g + l] |= ((x[16 + l] >> (2 * g)) & 1) << 4;
                codes[64 * g + 32 + l] |= ((x[16 + l] >> (2 * g + 1)) & 1) << 4;
            }
        }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
int q45_k_scale(const std::uint8_t* x, int j) {
    int sc, m;
    scale_min_k4(j, x + 4, sc, m);
    return sc;
}
int q45_k_min(const std::uint8_t* x, int j) {
    int sc, m;
    scale_min_k4(j, x + 4, sc, m);
    return m;
}

void q6_k_codes(const std::uint8_t* x, std::int32_t* codes) {
    for (int h = 0; h < 2; ++h)
        for (int q = 0; q < 4; ++q)
            for (int l = 0; l < 32; ++l) {
                const std::uint8_t low = x[64 * h + l + 32 * (q % 2)];
                const int nibble = q < 2 ? low & 0xf : low >> 4;
                codes[128 * h + 32 * q + l] = (nibble | (((x[128 + 32 * h + l] >> (2 * q)) & 3) << 4)) - 32;
            }
}
int q6_k_scale(const std::uint8_t* x, int j) { return static_cast<std::int8_t>(x[192 + j]); }

// A type's block geometry and readers: its bytes, where d (and dmin, -1 for none) sit, its sub-blocks.
struct KBlock {
    int bytes, d_at, dmin_at, sub_blocks;
    void (*codes)(const std::uint8_t*, std::int32_t*);
    int (*scale)(const std::uint8_t*, int);
    int (*min)(const std::uint8_t*, int);  // null where no min is stored
};
constexpr KBlock kQ2K{84, 80, 82, 16, q2_k_codes, q2_k_scale, q2_k_min};
constexpr KBlock kQ3K{110, 108, -1, 16, q3_k_codes, q3_k_scale, nullptr};
constexpr KBlock kQ4K{144, 0, 2, 8, q45_k_codes<false>, q45_k_scale, q45_k_min};
constexpr KBlock kQ5K{176, 0, 2, 8, q45_k_codes<true>, q45_k_scale, q45_k_min};
constexpr KBlock kQ6K{210, 208, -1, 16, q6_k_codes, q6_k_scale, nullptr};

// The stored fields of one block (d and dmin, each sub-block's integer scale and min, each value's code as
// FORMATS.md lists them) plus what to_float uses: the decoded d and dmin, each sub-block's d * sc and dmin * m.
template <const KBlock& K>
void fields_k(const void* block, GgmlBlockFields& f) {
    const std::uint8_t* x = bytes(block);
    f.d_bits = load_le16(x + K.d_at);
    f.has_dmin = K.dmin_at >= 0;
    f.dmin_bits = f.has_dmin ? load_le16(x + K.dmin_at) : 0;
    f.sub_blocks = K.sub_blocks;
    f.sub_size = kQK / K.sub_blocks;
    K.codes(x, f.codes);
    f.d = half_to_float(f.d_bits);
    f.dmin = f.has_dmin ? half_to_float(f.dmin_bits) : 0.0f;
    for (int j = 0; j < f.sub_blocks; ++j) {
        f.sub_scale[j] = K.scale(x, j);
        f.sub_scale_used[j] = f.d * static_cast<float>(f.sub_scale[j]);
        f.sub_min[j] = f.has_dmin ? K.min(x, j) : 0;
        f.sub_min_used[j] = f.has_dmin ? f.dmin * static_cast<float>(f.sub_min[j]) : 0.0f;
    }
}

// Each value's code and each sub-block's used scale d * sc of `blocks` blocks (GgmlCodec::codes).
template <const KBlock& K>
void codes_k(const void* in, std::int64_t blocks, std::int32_t* codes, float* sub_scale_used) {
    for (std::int64_t b = 0; b < blocks; ++b, codes += kQK, sub_scale_used += K.sub_blocks) {
        const std::uint8_t* x = bytes(in) + K.bytes * b;
        K.codes(x, codes);
        const float d = half_to_float(load_le16(x + K.d_at));
        for (int j = 0; j < K.sub_blocks; ++j) sub_scale_used[j] = d * static_cast<float>(K.scale(x, j));
    }
}

// to_float, each type as ggml's dequantize_row_*: used scale * code - used min (q3_K, q6_K: used scale *
// code), the used scale and min the float32 products d * sc and dmin * m. The codes are unpacked here
// directly (the tests rebuild these values from the fields).
#ifdef QS_HAVE_GGML_K_AVX512
// 32 codes (bytes 0..63) as float32, the first sixteen times dl0 minus ml0, the others times dl1 minus ml1:
// to_float's float32 product then difference, sixteen lanes at a time (no FMA: the same two roundings as the
// scalar loop).
inline void scaled_codes_avx512(__m256i codes, float dl0, float ml0, float dl1, float ml1, float* y) {
    const __m512 lo = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_castsi256_si128(codes)));
    const __m512 hi = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm256_extracti128_si256(codes, 1)));
    _mm512_storeu_ps(y, _mm512_sub_ps(_mm512_mul_ps(lo, _mm512_set1_ps(dl0)), _mm512_set1_ps(ml0)));
    _mm512_storeu_ps(y + 16, _mm512_sub_ps(_mm512_mul_ps(hi, _mm512_set1_ps(dl1)), _mm512_set1_ps(ml1)));
}
#endif

void q2_k_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + 84 * b;
        const float d = half_to_float(load_le16(x + 80)), dmin = half_to_float(load_le16(x + 82));
#ifdef QS_HAVE_GGML_K_AVX512
        // 32 values at a time (v = 128 h + 32 q + l): bits 2 q of one 32-byte load of qs, two sub-blocks of 16.
        const __m256i three = _mm256_set1_epi8(0x03);
        for (int h = 0; h < 2; ++h) {
            const __m256i qs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16 + 32 * h));
            for (int q = 0; q < 4; ++q) {
                const int v = 128 * h + 32 * q;
                const __m256i codes = _mm256_and_si256(_mm256_srl_epi16(qs, _mm_cvtsi32_si128(2 * q)), three);
                scaled_codes_avx512(codes, d * static_cast<float>(x[v / 16] & 0xf), dmin * static_cast<float>(x[v / 16] >> 4),
                                    d * static_cast<float>(x[v / 16 + 1] & 0xf),
                                    dmin * static_cast<float>(x[v / 16 + 1] >> 4), y + v);
            }
        }
        continue;
#endif
        for (int v = 0; v < kQK; v += 16) {
            const float dl = d * static_cast<float>(x[v / 16] & 0xf), ml = dmin * static_cast<float>(x[v / 16] >> 4);
            const std::uint8_t* q = x + 16 + 32 * (v / 128) + v % 32;
            const int shift = 2 * (v % 128 / 32);
            for (int l = 0; l < 16; ++l) y[v + l] = dl * static_cast<float>((q[l] >> shift) & 3) - ml;
        }
    }
}

void q3_k_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + 110 * b;
        const float d = half_to_float(load_le16(x + 108));
        for (int v = 0; v < kQK; v += 16) {
            const float dl = d * static_cast<float>(q3_scale(x + 96, v / 16));
            const std::uint8_t* q = x + 32 + 32 * (v / 128) + v % 32;
            const std::uint8_t* hm = x + v % 32;
            const int shift = 2 * (v % 128 / 32), bit = v / 32;
            for (int l = 0; l < 16; ++l)
                y[v + l] = dl * static_cast<float>(((q[l] >> shift) & 3) - ((hm[l] >> bit) & 1 ? 0 : 4));
        }
    }
}

template <bool Q5>
void q45_k_dequantize(const void* in, std::int64_t blocks, float* y) {
    constexpr int kBytes = Q5 ? 176 : 144;
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + kBytes * b;
        const float d = half_to_float(load_le16(x)), dmin = half_to_float(load_le16(x + 2));
        const std::uint8_t* qh = x + 16;
#ifdef QS_HAVE_GGML_K_AVX512
        // compare's hot loop: 32 codes a sub-block from one 32-byte load of nibbles (and of fifth bits).
        const __m256i nibble = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(0x01);
        const __m256i high = Q5 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh)) : _mm256_setzero_si256();
        for (int j = 0; j < 8; j += 2) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + (Q5 ? 48 : 16) + 16 * j));
            for (int h = 0; h < 2; ++h) {
                int sc, m;
                scale_min_k4(j + h, x + 4, sc, m);
                __m256i codes = _mm256_and_si256(h ? _mm256_srli_epi16(q, 4) : q, nibble);
                if (Q5) {
                    const __m128i shift = _mm_cvtsi32_si128(j + h);
                    codes = _mm256_or_si256(codes, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(high, shift), one), 4));
                }
                const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
                scaled_codes_avx512(codes, dl, ml, dl, ml, y + 32 * (j + h));
            }
        }
        continue;
#endif
        for (int j = 0; j < 8; ++j) {
            int sc, m;
            scale_min_k4(j, x + 4, sc, m);
            const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
            const std::uint8_t* q = x + (Q5 ? 48 : 16) + 32 * (j / 2);
            const int shift = 4 * (j % 2);
            for (int l = 0; l < 32; ++l) {
                const int code = ((q[l] >> shift) & 0xf) | (Q5 ? ((qh[l] >> j) & 1) << 4 : 0);
                y[32 * j + l] = dl * static_cast<float>(code) - ml;
            }
        }
    }
}

void q6_k_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + 210 * b;
        const float d = half_to_float(load_le16(x + 208));
#ifdef QS_HAVE_GGML_K_AVX512
        // 32 values at a time (v = 128 h + 32 q + l): their low nibbles from one 32-byte load of ql, their two
        // high bits from one of qh, the code minus 32 as a signed byte; two sub-block scales of sixteen each.
        const __m256i nibble = _mm256_set1_epi8(0x0f), three = _mm256_set1_epi8(0x03), bias = _mm256_set1_epi8(32);
        for (int h = 0; h < 2; ++h) {
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 128 + 32 * h));
            for (int q = 0; q < 4; ++q) {
                const __m256i ql = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 * h + 32 * (q % 2)));
                const __m256i low = _mm256_and_si256(q < 2 ? ql : _mm256_srli_epi16(ql, 4), nibble);
                const __m256i two = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * q)), three);
                const __m256i codes = _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(two, 4)), bias);
                const int v = 128 * h + 32 * q;
                const __m512 c0 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_castsi256_si128(codes)));
                const __m512 c1 = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm256_extracti128_si256(codes, 1)));
                const float d0 = d * static_cast<float>(static_cast<std::int8_t>(x[192 + v / 16]));
                const float d1 = d * static_cast<float>(static_cast<std::int8_t>(x[192 + v / 16 + 1]));
                _mm512_storeu_ps(y + v, _mm512_mul_ps(c0, _mm512_set1_ps(d0)));
                _mm512_storeu_ps(y + v + 16, _mm512_mul_ps(c1, _mm512_set1_ps(d1)));
            }
        }
        continue;
#endif
        for (int v = 0; v < kQK; v += 16) {
            const float dl = d * static_cast<float>(static_cast<std::int8_t>(x[192 + v / 16]));
            const int h = v / 128, q = v % 128 / 32;
            const std::uint8_t* ql = x + 64 * h + v % 32 + 32 * (q % 2);
            const std::uint8_t* qh = x + 128 + 32 * h + v % 32;
            const int low_shift = q < 2 ? 0 : 4;
            for (int l = 0; l < 16; ++l) {
                const int code = (((ql[l] >> low_shift) & 0xf) | (((qh[l] >> (2 * q)) & 3) << 4)) - 32;
                y[v + l] = dl * static_cast<float>(code);
            }
        }
    }
}

}  // namespace

GgmlCodec ggml_k_codec(GgmlType type) {
    const GgmlQuantizeBlocks quantize = ggml_k_quantizer(type);
    const auto codec = [&](auto dequantize, auto fields, auto codes, const KBlock& k) {
        GgmlCodec c{quantize, dequantize, fields};
        c.codes = codes;
        c.scale_group = kQK / k.sub_blocks;
        c.d_at = k.d_at;
        c.dmin_at = k.dmin_at;
        return c;
    };
    switch (type) {
        case GgmlType::Q2_K: return codec(q2_k_dequantize, fields_k<kQ2K>, codes_k<kQ2K>, kQ2K);
        case GgmlType::Q3_K: return codec(q3_k_dequantize, fields_k<kQ3K>, codes_k<kQ3K>, kQ3K);
        case GgmlType::Q4_K: return codec(q45_k_dequantize<false>, fields_k<kQ4K>, codes_k<kQ4K>, kQ4K);
        case GgmlType::Q5_K: return codec(q45_k_dequantize<true>, fields_k<kQ5K>, codes_k<kQ5K>, kQ5K);
        case GgmlType::Q6_K: return codec(q6_k_dequantize, fields_k<kQ6K>, codes_k<kQ6K>, kQ6K);
        default: return {};
    }
}

}  // namespace qs::detail
