// ggml's ternary types and MXFP4, bit-exact with ggml-quants.c: tq1_0 and tq2_0 (ternary;
// quantize_row_tq*_ref, no importance) and MXFP4 (decode only). Layouts (ggml-common.h), little-endian:
//   tq1_0   qs[48] qh[4] d(2)                              256 values, base-3 digits, 5 (qs) or 4 (qh) a byte
//   tq2_0   qs[64] d(2)                                    256 values, 2 bits each
//   mxfp4   e(1) qs[16]                                    32 values; E8M0 exponent, E2M1 codes; value j in
//                                                          the low nibble of byte j (j < 16), else the high
//                                                          nibble of byte j - 16
#include "format_kernels.hpp"
#include "ggml_codecs.hpp"
#include "ggml_scale_search.hpp"

namespace qs::detail {
namespace {

std::uint8_t* bytes(void* p) { return static_cast<std::uint8_t*>(p); }
const std::uint8_t* bytes(const void* p) { return static_cast<const std::uint8_t*>(p); }

// ggml's kvalues_mxfp4: E2M1's values doubled, indexed by the 4-bit code (sign in bit 3).
constexpr std::int8_t kMxfp4Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// ---- tq1_0 and tq2_0: d = the block's largest magnitude, codes lroundf(x / d) in {-1, 0, 1} ------------------

// d and 1 / d (0 when d = 0) of a ternary block of 256.
float ternary_inverse_scale(const float* x, std::uint8_t* d_out) {
    const float d = block_amax(x, 256);
    store_le16(d_out, ggml_fp16(d));
    return d != 0 ? 1.0f / d : 0.0f;
}

// The trits of a block's 256 values, 0, 1, 2 for -1, 0, 1 (ggml's lroundf(x id) + 1; only their low bits are
// used).
void ternary_digits(const float* x, float id, std::int32_t* digits) {
    ggml_round_codes(x, id, 256, digits);
    for (int j = 0; j < 256; ++j) digits[j] += 1;
}

// tq1_0 packs n digits (most significant first) into a byte by ggml's fixed point: q * 256 / 243 rounded up,
// so that the digit k comes back as the top byte of (byte * 3^k mod 256) * 3.
std::uint8_t ternary_byte(int base3) {
    const auto q = static_cast<std::uint8_t>(base3);
    return static_cast<std::uint8_t>((static_cast<unsigned>(q) * 256 + 242) / 243);
}

void tq1_0_block(const float* x, std::uint8_t* y) {
    std::int32_t digit[256];
    ternary_digits(x, ternary_inverse_scale(x, y + 52), digit);
    // qs[0..31]: five values 32 apart each; qs[32..47]: five values 16 apart each (from x + 160); qh[0..3]:
    // four values 4 apart each (from x + 240), shifted up a digit.
    for (int m = 0; m < 32; ++m) {
        int q = 0;
        for (int n = 0; n < 5; ++n) q = static_cast<std::uint8_t>(q * 3 + digit[m + 32 * n]);
        y[m] = ternary_byte(q);
    }
    for (int m = 0; m < 16; ++m) {
        int q = 0;
        for (int n = 0; n < 5; ++n) q = static_cast<std::uint8_t>(q * 3 + digit[160 + m + 16 * n]);
        y[32 + m] = ternary_byte(q);
    }
    for (int j = 0; j < 4; ++j) {
        int q = 0;
        for (int m = 0; m < 4; ++m) q = static_cast<std::uint8_t>(q * 3 + digit[240 + j + 4 * m]);
        y[48 + j] = ternary_byte(static_cast<std::uint8_t>(q * 3));
    }
}

void tq2_0_block(const float* x, std::uint8_t* y) {
    std::int32_t digit[256];
    ternary_digits(x, ternary_inverse_scale(x, y + 64), digit);
    for (int half = 0; half < 2; ++half) {
        const std::int32_t* dh = digit + 128 * half;
        for (int m = 0; m < 32; ++m) {
            int q = 0;
            for (int n = 0; n < 4; ++n) q += (dh[m + 32 * n] & 3) << (2 * n);
            y[32 * half + m] = static_cast<std::uint8_t>(q);
        }
    }
}

void tq1_0_quantize(const float* x, std::int64_t blocks, const GgmlImportance*, void* out) {
    for (std::int64_t b = 0; b < blocks; ++b) tq1_0_block(x + 256 * b, bytes(out) + 54 * b);
}

void tq2_0_quantize(const float* x, std::int64_t blocks, const GgmlImportance*, void* out) {
    for (std::int64_t b = 0; b < blocks; ++b) tq2_0_block(x + 256 * b, bytes(out) + 66 * b);
}

// The code (-1, 0, 1) of digit k of a tq1_0 byte: (byte * 3^k mod 256) * 3 / 256, minus 1.
int tq1_code(std::uint8_t byte, int k) {
    constexpr std::uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const auto q = static_cast<std::uint8_t>(byte * kPow3[k]);
    return ((q * 3) >> 8) - 1;
}

// tq1_0's 256 codes in value order.
void tq1_0_codes(const std::uint8_t* x, std::int32_t* codes) {
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 32; ++m) codes[32 * n + m] = tq1_code(x[m], n);
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 16; ++m) codes[160 + 16 * n + m] = tq1_code(x[32 + m], n);
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j) codes[240 + 4 * n + j] = tq1_code(x[48 + j], n);
}

// tq2_0's 256 codes in value order (a stored 3 is a code of 2, which to_float reads as such).
void tq2_0_codes(const std::uint8_t* x, std::int32_t* codes) {
    for (int half = 0; half < 2; ++half)
        for (int l = 0; l < 4; ++l)
            for (int m = 0; m < 32; ++m) codes[128 * half + 32 * l + m] = ((x[32 * half + m] >> (2 * l)) & 3) - 1;
}

template <int BlockBytes, int DOffset, void (*Codes)(const std::uint8_t*, std::int32_t*)>
void ternary_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += 256) {
        const std::uint8_t* x = bytes(in) + BlockBytes * b;
        const float d = half_to_float(load_le16(x + DOffset));
        std::int32_t codes[256];
        Codes(x, codes);
        for (int j = 0; j < 256; ++j) y[j] = static_cast<float>(codes[j]) * d;
    }
}

template <int DOffset, void (*Codes)(const std::uint8_t*, std::int32_t*)>
void ternary_fields(const void* block, GgmlBlockFields& out) {
    const std::uint8_t* x = bytes(block);
    out.d_bits = load_le16(x + DOffset);
    out.d = half_to_float(out.d_bits);
    Codes(x, out.codes);
}

// ---- MXFP4 (decode only) ---------------------------------------------------------------------------------------

// to_float multiplies the doubled E2M1 value by half the E8M0 scale, 2^(e - 128) (a float32 subnormal for
// e < 2), which is the E2M1 value times 2^(e - 127) exactly.
float e8m0_half(std::uint8_t e) {
    return float_from_bits(e < 2 ? 0x00200000u << e : static_cast<std::uint32_t>(e - 1) << 23);
}

void mxfp4_dequantize(const void* in, std::int64_t blocks, float* y) {
    for (std::int64_t b = 0; b < blocks; ++b, y += 32) {
        const std::uint8_t* x = bytes(in) + 17 * b;
        const float d = e8m0_half(x[0]);
        for (int j = 0; j < 16; ++j) {
            y[j] = static_cast<float>(kMxfp4Doubled[x[1 + j] & 0x0f]) * d;
            y[j + 16] = static_cast<float>(kMxfp4Doubled[x[1 + j] >> 4]) * d;
        }
    }
}

// d is the E8M0 scale 2^(e - 127) as ggml_e8m0_to_fp32 gives it (e = 255 gives +Inf, ggml's reading, not
// OCP's NaN), d_bits its byte; the codes are the E2M1 bit patterns (sign in bit 3), as the mxfp4 row's.
void mxfp4_fields(const void* block, GgmlBlockFields& out) {
    const std::uint8_t* x = bytes(block);
    out.d_bits = x[0];
    out.d = float_from_bits(x[0] == 0 ? 0x00400000u : static_cast<std::uint32_t>(x[0]) << 23);
    for (int j = 0; j < 16; ++j) out.codes[j] = x[1 + j] & 0x0f, out.codes[j + 16] = x[1 + j] >> 4;
}

}  // namespace

GgmlCodec ggml_ternary_mxfp4_codec(GgmlType type) {
    GgmlCodec c;
    switch (type) {
        case GgmlType::TQ1_0:
            c = {tq1_0_quantize, ternary_dequantize<54, 52, tq1_0_codes>, ternary_fields<52, tq1_0_codes>};
            c.d_at = 52;
            break;
        case GgmlType::TQ2_0:
            c = {tq2_0_quantize, ternary_dequantize<66, 64, tq2_0_codes>, ternary_fields<64, tq2_0_codes>};
            c.d_at = 64;
            break;
        case GgmlType::MXFP4: c = {nullptr, mxfp4_dequantize, mxfp4_fields}; break;
        default: break;
    }
    return c;
}

}  // namespace qs::detail
