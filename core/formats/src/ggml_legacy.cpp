// ggml's legacy block types, 32 values a block (ggml-common.h's block_q4_0 ... block_q8_0), bit-exact with
// ggml-quants.c: the reference quantizers quantize_row_q*_ref, the importance-weighted quantize_row_q*_impl
// (q4_0 and q5_0 search a symmetric scale with make_qx_quants, q4_1 and q5_1 a scale and min with
// make_qkx3_quants; q8_0 has none), and dequantize_row_q*. Layouts, little-endian:
//   q4_0  d(2) qs[16]              q4_1  d(2) m(2) qs[16]
//   q5_0  d(2) qh[4] qs[16]        q5_1  d(2) m(2) qh[4] qs[16]
//   q8_0  d(2) qs[32] (int8)
// Value j of a block is in the low nibble of qs[j] for j < 16, the high nibble of qs[j - 16] otherwise; the
// fifth bit of q5's value j is bit j of the 32-bit qh. Codes as --out-quantized lists them: q8_0 the int8,
// the others the stored unsigned value (q4 0..15, q5 0..31), which to_float offsets by 8 or 16 for the _0
// types.
#include "format_kernels.hpp"
#include "ggml_codecs.hpp"
#include "ggml_scale_search.hpp"

namespace qs::detail {
namespace {

constexpr int kQK = 32;

std::uint8_t* bytes(void* p) { return static_cast<std::uint8_t*>(p); }
const std::uint8_t* bytes(const void* p) { return static_cast<const std::uint8_t*>(p); }

// The block's first value of largest magnitude, with its sign (q4_0 and q5_0's `max`).
float first_signed_amax(const float* x) {
#ifdef QS_HAVE_FORMAT_AVX2
    const float amax = abs_max_avx2(x, kQK);
    return amax > 0 ? x[first_with_magnitude_avx2(x, kQK, amax)] : 0.0f;
#else
    float amax = 0, max = 0;
    for (int j = 0; j < kQK; ++j)
        if (amax < std::fabs(x[j])) amax = std::fabs(x[j]), max = x[j];
    return max;
#endif
}

// Packs 32 codes (each < 32) into qs[16] (low 4 bits) and, where `qh` is given, the fifth bits into it.
void pack_codes(const std::uint8_t* codes, std::uint8_t* qs, std::uint8_t* qh) {
    std::uint32_t high = 0;
    for (int j = 0; j < kQK / 2; ++j) {
        qs[j] = static_cast<std::uint8_t>((codes[j] & 0x0f) | ((codes[j + 16] & 0x0f) << 4));
        high |= static_cast<std::uint32_t>((codes[j] >> 4) & 1) << j;
        high |= static_cast<std::uint32_t>((codes[j + 16] >> 4) & 1) << (j + 16);
    }
    if (qh) {
        for (int b = 0; b < 4; ++b) qh[b] = static_cast<std::uint8_t>(high >> (8 * b));
    }
}

// The 32 stored codes of a q4/q5 block: nibbles of qs plus, where `qh` is given, the fifth bits.
void unpack_codes(const std::uint8_t* qs, const std::uint8_t* qh, std::int32_t* codes) {
    const std::uint32_t high = qh ? load_le32(qh) : 0;
    for (int j = 0; j < kQK / 2; ++j) {
        codes[j] = (qs[j] & 0x0f) | static_cast<std::int32_t>(((high >> j) & 1) << 4);
        codes[j + 16] = (qs[j] >> 4) | static_cast<std::int32_t>(((high >> (j + 16)) & 1) << 4);
    }
}

// ---- the reference quantizers (no importance) ---------------------------------------------------------------

void q8_0_ref(const float* x, std::uint8_t* y) {
    const float d = block_amax(x, kQK) / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_le16(y, ggml_fp16(d));
    std::int32_t codes[kQK];
    ggml_round_codes(x, id, kQK, codes);
    for (int j = 0; j < kQK; ++j) y[2 + j] = static_cast<std::uint8_t>(codes[j]);  // the int8 cast: the low byte
}

// q4_0 (nmax 8) and q5_0 (nmax 16): d = max / -nmax, code = min(2 nmax - 1, (int8)(x id + nmax + 0.5)).
template <int Nmax>
void qx_0_ref(const float* x, std::uint8_t* d_out, std::uint8_t* qs, std::uint8_t* qh) {
    const float d = first_signed_amax(x) / -static_cast<float>(Nmax);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_le16(d_out, ggml_fp16(d));
    std::uint8_t codes[kQK];
    for (int j = 0; j < kQK; ++j) {
        const int q = x86_truncate_to_int8(x[j] * id + (static_cast<float>(Nmax) + 0.5f));
        codes[j] = static_cast<std::uint8_t>(q < 2 * Nmax - 1 ? q : 2 * Nmax - 1);
    }
    if (Nmax == 8) {  // q4_0 stores the code bytes whole: (uint8)code | code << 4 (each fits a nibble)
        for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<std::uint8_t>(codes[j] | (codes[j + 16] << 4));
    } else {
        pack_codes(codes, qs, qh);
    }
}

// q4_1 (nmax 15) and q5_1 (nmax 31): d = (max - min) / nmax, m = min, code = (x - min) id + 0.5 truncated
// (q4_1 clamps it to 15; q5_1's cast is to uint8 with no clamp).
template <int Nmax>
void qx_1_ref(const float* x, std::uint8_t* dm, std::uint8_t* qs, std::uint8_t* qh) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    min_max_in_order(x, kQK, lo, hi);
    const float d = (hi - lo) / static_cast<float>(Nmax);
    const float id = d != 0 ? 1.0f / d : 0.0f;
    store_le16(dm, ggml_fp16(d));
    store_le16(dm + 2, ggml_fp16(lo));
    std::uint8_t codes[kQK];
    for (int j = 0; j < kQK; ++j) {
        const float v = (x[j] - lo) * id + 0.5f;
        if (Nmax == 15) {
            const int q = x86_truncate_to_int8(v);
            codes[j] = static_cast<std::uint8_t>(q < 15 ? q : 15);
        } else {
            codes[j] = static_cast<std::uint8_t>(x86_truncate_to_int32(v));
        }
    }
    if (Nmax == 15) {
        for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<std::uint8_t>(codes[j] | (codes[j + 16] << 4));
    } else {
        pack_codes(codes, qs, qh);
    }
}

// ---- the importance-weighted quantizers ---------------------------------------------------------------------

// The weights ggml's _impl quantizers fit with: qw[j] * sqrt(sigma2 + x[j]^2), sigma2 = the row's Σ x^2 / its
// length.
void importance_weights(const float* x, const float* qw, float sigma2, float* weight) {
    for (int j = 0; j < kQK; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + x[j] * x[j]);
}

float row_sigma2(const GgmlImportance& imp) {
    return imp.row_sum_squares / static_cast<float>(imp.row_length);
}

template <int Nmax>
void qx_0_weighted(const float* x, const float* qw, float sigma2, std::uint8_t* d_out, std::uint8_t* qs,
                   std::uint8_t* qh) {
    float weight[kQK];
    importance_weights(x, qw, sigma2, weight);
    std::int8_t L[kQK];
    const float d = ggml_make_qx_quants(kQK, Nmax, x, L, weight);
    store_le16(d_out, ggml_fp16(d));
    std::uint8_t codes[kQK];
    for (int j = 0; j < kQK; ++j) codes[j] = static_cast<std::uint8_t>(L[j]);
    pack_codes(codes, qs, qh);
}

template <int Nmax>
void qx_1_weighted(const float* x, const float* qw, float sigma2, std::uint8_t* dm, std::uint8_t* qs,
                   std::uint8_t* qh) {
    float weight[kQK];
    importance_weights(x, qw, sigma2, weight);
    std::uint8_t L[kQK];
    float min;
    const float d = ggml_make_qkx3_quants(kQK, Nmax, x, weight, L, &min, -0.9f, 0.05f, 36);
    store_le16(dm, ggml_fp16(d));
    store_le16(dm + 2, ggml_fp16(-min));
    pack_codes(L, qs, qh);
}

// ---- each type's codec ----------------------------------------------------------------------------------------

void q8_0_quantize(const float* x, std::int64_t blocks, const GgmlImportance*, void* out) {
    for (std::int64_t b = 0; b < blocks; ++b) q8_0_ref(x + kQK * b, bytes(out) + 34 * b);
}

void q4_0_quantize(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    const float sigma2 = imp ? row_sigma2(*imp) : 0.0f;
    for (std::int64_t b = 0; b < blocks; ++b) {
        std::uint8_t* y = bytes(out) + 18 * b;
        if (imp) qx_0_weighted<8>(x + kQK * b, imp->weights + kQK * b, sigma2, y, y + 2, nullptr);
        else qx_0_ref<8>(x + kQK * b, y, y + 2, nullptr);
    }
}

void q5_0_quantize(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    const float sigma2 = imp ? row_sigma2(*imp) : 0.0f;
    for (std::int64_t b = 0; b < blocks; ++b) {
        std::uint8_t* y = bytes(out) + 22 * b;
        if (imp) qx_0_weighted<16>(x + kQK * b, imp->weights + kQK * b, sigma2, y, y + 6, y + 2);
        else qx_0_ref<16>(x + kQK * b, y, y + 6, y + 2);
    }
}

void q4_1_quantize(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    const float sigma2 = imp ? row_sigma2(*imp) : 0.0f;
    for (std::int64_t b = 0; b < blocks; ++b) {
        std::uint8_t* y = bytes(out) + 20 * b;
        if (imp) qx_1_weighted<15>(x + kQK * b, imp->weights + kQK * b, sigma2, y, y + 4, nullptr);
        else qx_1_ref<15>(x + kQK * b, y, y + 4, nullptr);
    }
}

void q5_1_quantize(const float* x, std::int64_t blocks, const GgmlImportance* imp, void* out) {
    const float sigma2 = imp ? row_sigma2(*imp) : 0.0f;
    for (std::int64_t b = 0; b < blocks; ++b) {
        std::uint8_t* y = bytes(out) + 24 * b;
        if (imp) qx_1_weighted<31>(x + kQK * b, imp->weights + kQK * b, sigma2, y, y + 8, y + 4);
        else qx_1_ref<31>(x + kQK * b, y, y + 8, y + 4);
    }
}

// to_float: q8_0 q d; the _0 types (code - offset) d; the _1 types code d + m (int code converted to float,
// one float32 product, one sum).
void q8_0_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + 34 * b;
        const float d = half_to_float(load_le16(x));
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(static_cast<std::int8_t>(x[2 + j])) * d;
    }
}

template <int BlockBytes, int QsOffset, int QhOffset, int Offset>
void qx_0_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + BlockBytes * b;
        const float d = half_to_float(load_le16(x));
        std::int32_t codes[kQK];
        unpack_codes(x + QsOffset, QhOffset > 0 ? x + QhOffset : nullptr, codes);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(codes[j] - Offset) * d;
    }
}

template <int BlockBytes, int QsOffset, int QhOffset>
void qx_1_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += kQK) {
        const std::uint8_t* x = bytes(in) + BlockBytes * b;
        const float d = half_to_float(load_le16(x));
        const float m = half_to_float(load_le16(x + 2));
        std::int32_t codes[kQK];
        unpack_codes(x + QsOffset, QhOffset > 0 ? x + QhOffset : nullptr, codes);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(codes[j]) * d + m;
    }
}

void q8_0_fields(const void* block, GgmlBlockFields& out) {
    const std::uint8_t* x = bytes(block);
    out.d_bits = load_le16(x);
    out.d = half_to_float(out.d_bits);
    for (int j = 0; j < kQK; ++j) out.codes[j] = static_cast<std::int8_t>(x[2 + j]);
}

template <int QsOffset, int QhOffset, bool HasMin>
void qx_fields(const void* block, GgmlBlockFields& out) {
    const std::uint8_t* x = bytes(block);
    out.d_bits = load_le16(x);
    out.d = half_to_float(out.d_bits);
    if (HasMin) {
        out.has_dmin = true;
        out.dmin_bits = load_le16(x + 2);
        out.dmin = half_to_float(out.dmin_bits);
    }
    unpack_codes(x + QsOffset, QhOffset > 0 ? x + QhOffset : nullptr, out.codes);
}

}  // namespace

GgmlCodec ggml_legacy_codec(GgmlType type) {
    GgmlCodec c;
    switch (type) {
        case GgmlType::Q8_0: c = {q8_0_quantize, q8_0_dequantize, q8_0_fields}; break;
        case GgmlType::Q4_0: c = {q4_0_quantize, qx_0_dequantize<18, 2, 0, 8>, qx_fields<2, 0, false>}; break;
        case GgmlType::Q4_1: c = {q4_1_quantize, qx_1_dequantize<20, 4, 0>, qx_fields<4, 0, true>}; break;
        case GgmlType::Q5_0: c = {q5_0_quantize, qx_0_dequantize<22, 6, 2, 16>, qx_fields<6, 2, false>}; break;
        case GgmlType::Q5_1: c = {q5_1_quantize, qx_1_dequantize<24, 8, 4>, qx_fields<8, 4, true>}; break;
        default: return c;
    }
    c.d_at = 0;  // every one's d leads its block; the _1 types' m follows it
    if (type == GgmlType::Q4_1 || type == GgmlType::Q5_1) c.dmin_at = 2;
    return c;
}

}  // namespace qs::detail
