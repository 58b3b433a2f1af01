// Internal: the block layouts of ggml's k-quants (ggml-common.h's block_q2_K ... block_q6_K), 256 values a
// super-block, and the bit packing that the quantizers (ggml_k_quantize.cpp) and the decoders
// (ggml_k_decode.cpp) share. Layouts, little-endian (offsets in bytes):
//   q2_K  scales[16] @0 (4-bit scale low, 4-bit min high), qs[64] @16, d @80, dmin @82          (84)
//   q3_K  hmask[32] @0, qs[64] @32, scales[12] @96 (6-bit, stored plus 32), d @108              (110)
//   q4_K  d @0, dmin @2, scales[12] @4 (eight 6-bit scales and mins), qs[128] @16                (144)
//   q5_K  d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48                                   (176)
//   q6_K  ql[128] @0, qh[64] @128, scales[16] @192 (int8), d @208                                 (210)
// Value v of a super-block: q2_K/q3_K's two low bits are bits 2 (v % 128 / 32) of qs[32 (v / 128) + v % 32],
// q3_K's third bit is bit v / 32 of hmask[v % 32]; q4_K/q5_K's low nibble is qs[32 (v / 64) + v % 32]'s low
// (v % 64 < 32) or high nibble, q5_K's fifth bit bit v / 32 of qh[v % 32]; q6_K's low nibble is in
// ql[64 (v / 128) + v % 32 + 32 (v / 32 % 2)] (high nibble for v % 128 >= 64), its two high bits are bits
// 2 (v % 128 / 32) of qh[32 (v / 128) + v % 32].
#pragma once

#include <cstdint>
#include <cstring>

namespace qs::detail::ggml_k {

constexpr int kQK = 256;  // values in a super-block

inline std::uint8_t* bytes(void* p) { return static_cast<std::uint8_t*>(p); }
inline const std::uint8_t* bytes(const void* p) { return static_cast<const std::uint8_t*>(p); }

// ---- the packing the quantizers and the decoders share ------------------------------------------------------

// q2_K / q3_K: the low two bits of 256 codes into qs[64].
inline void pack_2bit(const std::uint8_t* L, std::uint8_t* qs) {
    for (int j = 0; j < kQK; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = static_cast<std::uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) |
                                                      (L[j + l + 96] << 6));
}
// The 256 two-bit values of qs[64] in value order: value 128 h + 32 q + l is bits 2 q of qs[32 h + l].
inline void unpack_2bit_all(const std::uint8_t* qs, std::int32_t* out) {
    for (int h = 0; h < 2; ++h)
        for (int q = 0; q < 4; ++q)
            for (int l = 0; l < 32; ++l) out[128 * h + 32 * q + l] = (qs[32 * h + l] >> (2 * q)) & 3;
}

// q4_K / q5_K: eight 6-bit scales and mins in 12 bytes (ggml writes whatever ls and lm hold; the reference
// paths clamp them to 63 first).
inline void pack_scale_min_k4(const std::uint8_t* ls, const std::uint8_t* lm, std::uint8_t* s) {
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            s[j] = ls[j];
            s[j + 4] = lm[j];
        } else {
            s[j + 4] = static_cast<std::uint8_t>((ls[j] & 0xf) | ((lm[j] & 0xf) << 4));
            s[j - 4] = static_cast<std::uint8_t>(s[j - 4] | ((ls[j] >> 4) << 6));
            s[j] = static_cast<std::uint8_t>(s[j] | ((lm[j] >> 4) << 6));
        }
    }
}
// ggml's get_scale_min_k4: sub-block j's 6-bit scale and min.
inline void scale_min_k4(int j, const std::uint8_t* s, int& sc, int& m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

// q3_K: sixteen 6-bit scales (stored plus 32) in 12 bytes.
inline void pack_q3_scales(const int* l, std::uint8_t* s) {
    std::memset(s, 0, 12);
    for (int j = 0; j < 16; ++j) {
        if (j < 8) s[j] = static_cast<std::uint8_t>(l[j] & 0xf);
        else s[j - 8] = static_cast<std::uint8_t>(s[j - 8] | ((l[j] & 0xf) << 4));
        s[j % 4 + 8] = static_cast<std::uint8_t>(s[j % 4 + 8] | ((l[j] >> 4) << (2 * (j / 4))));
    }
}
// Sub-block j's scale as stored minus 32 (-32..31).
inline int q3_scale(const std::uint8_t* s, int j) {
    const int low = j < 8 ? s[j] & 0xf : s[j - 8] >> 4;
    return (low | (((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
}

}  // namespace qs::detail::ggml_k
