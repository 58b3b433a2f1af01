// ggml's k-quant codecs (q2_K, q3_K, q4_K, q5_K, q6_K; ggml_types.hpp): a q4_K super-block worked out by
// hand, hashes of a seeded tensor's blocks and values as ggml's own reference (libggml-base:
// ggml_quantize_chunk, then the type's to_float) gives them, and properties on random tensors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quantscope/fnv1a.hpp"
#include "quantscope/ggml_types.hpp"

using namespace qs;

namespace {

constexpr int kSuper = 256;

const GgmlTypeInfo& type_named(const char* name) {
    const GgmlTypeInfo* t = ggml_type_named(name);
    REQUIRE(t != nullptr);
    return *t;
}

// Quantizes whole rows of `cols` values as ggml_quantize_chunk does (the importance vector, when given, is
// one weight per column).
std::vector<std::uint8_t> quantize_rows(const GgmlTypeInfo& t, const std::vector<float>& x, std::int64_t cols,
                                        const std::vector<float>* importance = nullptr) {
    const std::int64_t rows = static_cast<std::int64_t>(x.size()) / cols;
    const std::int64_t row_bytes = ggml_row_bytes(t, cols);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(rows * row_bytes));
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * cols;
        GgmlImportance imp{importance ? importance->data() : nullptr, ggml_row_sum_squares(row, cols), cols};
        ggml_quantize_blocks(t, row, cols / t.block_size, importance ? &imp : nullptr, out.data() + r * row_bytes);
    }
    return out;
}

std::vector<float> dequantize(const GgmlTypeInfo& t, const std::vector<std::uint8_t>& blocks) {
    std::vector<float> y(blocks.size() / static_cast<std::size_t>(t.type_size) * static_cast<std::size_t>(t.block_size));
    ggml_dequantize(t, blocks.data(), static_cast<std::int64_t>(y.size()), y.data());
    return y;
}

GgmlBlockFields fields_of(const GgmlTypeInfo& t, const std::uint8_t* block) {
    GgmlBlockFields f;
    ggml_block_fields(t, block, f);
    return f;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// splitmix64: the same tensor on every platform, and in the harness that produced the hashes below from
// ggml's own library.
struct SplitMix {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    float uniform() { return static_cast<float>(next() >> 40) * 0x1p-24f; }  // [0, 1), exact
    float bell() { return uniform() + uniform() + uniform() + uniform() - 2.0f; }
};

constexpr int kRows = 8, kCols = 512;

// Eight rows of 512 (two super-blocks each), one kind a row: bell-shaped; with a 16x outlier every 37th;
// pieces of 16 cycling zero, 0.75, -1.5, bell, one-hot 3; bell * 1e-30; bell * 1e4; ties (halves in
// -8..8); an all-zero super-block then 5 + uniform; Laplace-like with a 1% chance of x100. Then an
// importance vector of weights in [0.05, 4.05).
void golden_tensor(std::vector<float>& x, std::vector<float>& w) {
    SplitMix g{2027};
    x.assign(kRows * kCols, 0.0f);
    for (int r = 0; r < kRows; ++r)
        for (int c = 0; c < kCols; ++c) {
            float& v = x[static_cast<std::size_t>(r * kCols + c)];
            const int piece = c / 16 % 5;
            switch (r) {
                case 0: v = g.bell(); break;
                case 1: v = g.bell() * (c % 37 == 0 ? 16.0f : 1.0f); break;
                case 2: v = piece == 0 ? 0.0f : piece == 1 ? 0.75f : piece == 2 ? -1.5f : piece == 3 ? g.bell() : (c % 16 == 5 ? 3.0f : 0.0f); break;
                case 3: v = g.bell() * 1e-30f; break;
                case 4: v = g.bell() * 1e4f; break;
                case 5: v = static_cast<float>(static_cast<int>(g.uniform() * 33) - 16) * 0.5f; break;
                case 6: v = c < 256 ? 0.0f : 5.0f + g.uniform(); break;
                default: {
                    const float u = g.uniform();
                    v = (u < 0.5f ? -1.0f : 1.0f) * -std::log(1.0f - g.uniform()) * (g.uniform() < 0.01f ? 100.0f : 1.0f);
                    break;
                }
            }
        }
    w.resize(kCols);
    for (float& v : w) v = 0.05f + 4.0f * g.uniform();
}

struct Golden {
    const char* type;
    bool importance;
    std::uint64_t blocks_hash;  // FNV-1a of ggml_quantize_chunk's bytes
    std::uint64_t values_hash;  // FNV-1a of the float32 bits to_float gives for them
};

// From libggml-base (ggml 0.21.0, built with -ffp-contract=off) on golden_tensor: ggml_quantize_chunk(type,
// x, y, 0, 8, 512, importance or NULL), then the type's to_float.
constexpr Golden kGolden[] = {
    {"q2_K", false, 0xda39835c2e854a95ull, 0xcaad9c154d0f70f0ull},
    {"q2_K", true, 0x2c0359fe17aa4482ull, 0x855fc5a175079d2cull},
    {"q3_K", false, 0xe939b8f6a088b6bcull, 0x64eaa0b082747c54ull},
    {"q3_K", true, 0xc25bc8699465f935ull, 0x85a61f69befb031cull},
    {"q4_K", false, 0x28df3f810ed38250ull, 0x7a6e76d19003458dull},
    {"q4_K", true, 0x408f742701a2e525ull, 0xe057f7f4b7d7b39full},
    {"q5_K", false, 0x3847dc07639a7d85ull, 0xb69a4f2ba0b518ffull},
    {"q5_K", true, 0xf68e2b2102ff2f79ull, 0xd8be2437e50f1d8aull},
    {"q6_K", false, 0xf1f4c8e18df0dc60ull, 0x883957763fcb40e3ull},
    {"q6_K", true, 0xd70dcffbb9ba6b2aull, 0x02c4fbf6c634717dull},
};

const char* const kTypes[] = {"q2_K", "q3_K", "q4_K", "q5_K", "q6_K"};

// The codes FORMATS.md lists for each type, and the range of its stored sub-block scales (and mins).
struct Ranges {
    int code_lo, code_hi, scale_lo, scale_hi, min_hi;
};
Ranges ranges_of(const std::string& type) {
    if (type == "q2_K") return {0, 3, 0, 15, 15};
    if (type == "q3_K") return {-4, 3, -32, 31, 0};
    if (type == "q4_K") return {0, 15, 0, 63, 63};
    if (type == "q5_K") return {0, 31, 0, 63, 63};
    return {-32, 31, -128, 127, 0};  // q6_K
}

// Random rows of one kind (0..6): bell-shaped; Laplace-like with 1% outliers x100; sub-blocks of 16 cycling
// zero / constant / one-hot / bell x1e3; 1e-30; 1e4; halves (ties); 5 + uniform (all positive).
std::vector<float> random_rows(SplitMix& g, int kind, std::int64_t n) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        float& v = x[static_cast<std::size_t>(i)];
        const float u = g.uniform();
        switch (kind) {
            case 0: v = g.bell(); break;
            case 1: v = (u < 0.5f ? -1.0f : 1.0f) * -std::log(1.0f - g.uniform()) * (g.uniform() < 0.01f ? 100.0f : 1.0f); break;
            case 2: {
                const int shape = static_cast<int>(i / 16 % 5);
                v = shape == 0 ? 0.0f : shape == 1 ? 2.5f : shape == 2 ? -0.125f : shape == 3 ? (i % 16 == 7 ? -3.0f : 0.0f) : g.bell() * 1e3f;
                break;
            }
            case 3: v = g.bell() * 1e-30f; break;
            case 4: v = g.bell() * 1e4f; break;
            case 5: v = static_cast<float>(static_cast<int>(u * 65) - 32) * 0.5f; break;
            default: v = 5.0f + u; break;
        }
    }
    return x;
}

}  // namespace

// The q4_K reference (quantize_row_q4_K_ref) on a super-block of exact ramps, worked on paper. Sub-block j
// (32 values) is x[32 j + i] = -M_j + step_j * (i / 2), i = 0..31: each of 16 levels twice.
//   j:      0    1     2     3    4    5     6      7
//   step_j: 1    0.5   0.25  1    0.5  0.25  0.125  1
//   M_j:    1    0     0.5   0    1    0.25  0.5    0.5
// The search (make_qkx2_quants, nmax 15): min = -M_j, max = -M_j + 15 step_j, so iscale = 15 / (max - min)
// = 1 / step_j is exact (a power of two), every code is l = i / 2, and scale * l + min - x is exactly 0: the
// first fit has error 0, none of the 21 candidates beats it. Each sub-block's scale is step_j, its min M_j.
// Super-block scales: max scale 1, max min 1, so d = dmin = fp16(1 / 63). 1/63 = 2^-6 * 1.015873..., whose
// 10-bit mantissa is 1040.25 / 1024, rounded to 1040: d = dmin = 65/4096 = 0.015869140625, bits 0x2410.
// 6-bit scales: nearest_int(63 * step_j) = 63, 32 (31.5, a tie, to even), 16 (15.75), 63, 32, 16, 8 (7.875),
// 63; 6-bit mins nearest_int(63 * M_j) = 63, 0, 32, 0, 63, 16, 32, 32.
// Packed (get_scale_min_k4's layout): bytes 0..3 the scales of 0..3 and bytes 4..7 the mins of 0..3, whose
// top two bits carry the high bits of sub-blocks 4..7's scale (bytes 0..3) and min (bytes 4..7); bytes 8..11
// the low nibbles, scale low, min high: 0xbf 0x60 0x10 0xff 0xff 0x40 0xa0 0x80 0xf0 0x00 0x08 0x0f.
// Requantized with what is stored: sub-block 0 uses d * 63 = 4095/4096 for both scale and min, and
// (x + 4095/4096) / (4095/4096) = (4096 l - 1) / 4095 still rounds to l; so for every sub-block: the codes
// stay i / 2, qs[32 c + i] = 0x11 * (i / 2). Dequantized: value 31 (sub-block 0, code 15) is
// 15 * 4095/4096 - 4095/4096 = 13.99658203125, not 14; value 64 (sub-block 2, code 0) is -dmin * 32 =
// -0.5078125; value 95 (code 15) is 15 * 0.25390625 - 0.5078125 = 3.30078125.
TEST_CASE("ggml q4_K by hand: a super-block of exact ramps gives d dmin and the 6-bit scales and mins on paper") {
    const float step[8] = {1, 0.5f, 0.25f, 1, 0.5f, 0.25f, 0.125f, 1};
    const float M[8] = {1, 0, 0.5f, 0, 1, 0.25f, 0.5f, 0.5f};
    std::vector<float> x(kSuper);
    for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 32; ++i) x[static_cast<std::size_t>(32 * j + i)] = -M[j] + step[j] * static_cast<float>(i / 2);
    const GgmlTypeInfo& t = type_named("q4_k");
    const std::vector<std::uint8_t> block = quantize_rows(t, x, kSuper);
    REQUIRE(block.size() == 144u);
    const std::uint8_t head[16] = {0x10, 0x24, 0x10, 0x24, 0xbf, 0x60, 0x10, 0xff,
                                   0xff, 0x40, 0xa0, 0x80, 0xf0, 0x00, 0x08, 0x0f};
    for (int i = 0; i < 16; ++i) {
        INFO("byte " << i);
        CHECK(block[static_cast<std::size_t>(i)] == head[i]);
    }
    for (int c = 0; c < 4; ++c)
        for (int i = 0; i < 32; ++i) {
            INFO("qs[" << 32 * c + i << "]");
            CHECK(block[static_cast<std::size_t>(16 + 32 * c + i)] == 0x11 * (i / 2));
        }
    const GgmlBlockFields f = fields_of(t, block.data());
    CHECK(f.d == 0.015869140625f);
    CHECK(f.dmin == 0.015869140625f);
    CHECK(f.d_bits == 0x2410);
    const int scales[8] = {63, 32, 16, 63, 32, 16, 8, 63}, mins[8] = {63, 0, 32, 0, 63, 16, 32, 32};
    for (int j = 0; j < 8; ++j) {
        CHECK(f.sub_scale[j] == scales[j]);
        CHECK(f.sub_min[j] == mins[j]);
    }
    CHECK(f.sub_scale_used[0] == 4095.0f / 4096.0f);
    CHECK(f.sub_min_used[2] == 0.5078125f);
    CHECK(f.codes[0] == 0);
    CHECK(f.codes[31] == 15);
    CHECK(f.codes[200] == 4);
    const std::vector<float> y = dequantize(t, block);
    CHECK(y[31] == 13.99658203125f);
    CHECK(y[64] == -0.5078125f);
    CHECK(y[95] == 3.30078125f);
}

TEST_CASE("ggml k-quants equal ggml's reference on a seeded tensor: block bytes and dequantized values") {
    std::vector<float> x, w;
    golden_tensor(x, w);
    for (const Golden& g : kGolden) {
        INFO(std::string(g.type) << std::string(g.importance ? " with importance" : ""));
        const GgmlTypeInfo& t = type_named(g.type);
        const std::vector<std::uint8_t> blocks = quantize_rows(t, x, kCols, g.importance ? &w : nullptr);
        const std::vector<float> y = dequantize(t, blocks);
        Fnv1a hb, hy;
        hb.add_bytes(blocks.data(), blocks.size());
        hy.add_bytes(y.data(), y.size() * sizeof(float));
        CHECK(hb.value() == g.blocks_hash);
        CHECK(hy.value() == g.values_hash);
    }
}

TEST_CASE("ggml k-quants: codes and sub-block scales in range and every value rebuilt from the fields") {
    SplitMix g{17};
    for (const char* name : kTypes) {
        const GgmlTypeInfo& t = type_named(name);
        const Ranges r = ranges_of(name);
        for (int kind = 0; kind < 7; ++kind)
            for (int weighted = 0; weighted < 2; ++weighted) {
                INFO(std::string(name) << " kind " << kind << std::string(weighted ? " with importance" : ""));
                const std::int64_t cols = 768;
                const std::vector<float> x = random_rows(g, kind, 2 * cols);
                std::vector<float> importance(static_cast<std::size_t>(cols));
                for (float& v : importance) v = 0.01f + g.uniform() * 10.0f;
                const std::vector<std::uint8_t> blocks = quantize_rows(t, x, cols, weighted ? &importance : nullptr);
                const std::vector<float> y = dequantize(t, blocks);
                bool codes_in_range = true, scales_in_range = true, used_are_products = true, rebuilt = true;
                for (std::size_t b = 0; b * static_cast<std::size_t>(t.type_size) < blocks.size(); ++b) {
                    const GgmlBlockFields f = fields_of(t, blocks.data() + b * static_cast<std::size_t>(t.type_size));
                    REQUIRE(f.sub_blocks * f.sub_size == kSuper);
                    for (int s = 0; s < f.sub_blocks; ++s) {
                        scales_in_range = scales_in_range && f.sub_scale[s] >= r.scale_lo && f.sub_scale[s] <= r.scale_hi &&
                                          f.sub_min[s] >= 0 && f.sub_min[s] <= r.min_hi;
                        used_are_products = used_are_products && same_bits(f.sub_scale_used[s], f.d * static_cast<float>(f.sub_scale[s])) &&
                                            same_bits(f.sub_min_used[s], f.dmin * static_cast<float>(f.sub_min[s]));
                    }
                    for (int k = 0; k < kSuper; ++k) {
                        codes_in_range = codes_in_range && f.codes[k] >= r.code_lo && f.codes[k] <= r.code_hi;
                        const int s = k / f.sub_size;
                        const float scaled = f.sub_scale_used[s] * static_cast<float>(f.codes[k]);
                        const float got = f.has_dmin ? scaled - f.sub_min_used[s] : scaled;
                        rebuilt = rebuilt && same_bits(got, y[b * kSuper + static_cast<std::size_t>(k)]);
                    }
                }
                CHECK(codes_in_range);
                CHECK(scales_in_range);
                CHECK(used_are_products);
                CHECK(rebuilt);
                for (float v : y) REQUIRE(std::isfinite(v));
            }
    }
}

TEST_CASE("ggml k-quants: an all-zero super-block stores d = dmin = 0 and dequantizes to zeros") {
    for (const char* name : kTypes) {
        INFO(std::string(name));
        const GgmlTypeInfo& t = type_named(name);
        const std::vector<float> x(512, 0.0f), importance(512, 1.0f);
        for (const std::vector<float>* imp : {static_cast<const std::vector<float>*>(nullptr), &importance}) {
            const std::vector<std::uint8_t> blocks = quantize_rows(t, x, 512, imp);
            for (std::size_t b = 0; b * static_cast<std::size_t>(t.type_size) < blocks.size(); ++b) {
                const GgmlBlockFields f = fields_of(t, blocks.data() + b * static_cast<std::size_t>(t.type_size));
                CHECK(f.d_bits == 0);
                CHECK(f.dmin_bits == 0);
            }
            for (float v : dequantize(t, blocks)) REQUIRE(v == 0.0f);
        }
    }
}

// At 1e-30 every scale the search finds is far below fp16's smallest subnormal: d and dmin store 0, so every
// value dequantizes to zero, while the codes (the search's, which the second pass skips when d * sc is 0)
// stay in range.
TEST_CASE("ggml k-quants: 1e-30 magnitudes store d = 0 and dequantize to zeros with codes in range") {
    SplitMix g{23};
    const std::vector<float> x = random_rows(g, 3, 1024);
    std::vector<float> importance(1024);
    for (float& v : importance) v = 0.01f + g.uniform() * 10.0f;
    for (const char* name : kTypes) {
        const GgmlTypeInfo& t = type_named(name);
        const Ranges r = ranges_of(name);
        const std::vector<float>* const choices[] = {nullptr, &importance};
        for (const std::vector<float>* imp : choices) {
            INFO(std::string(name) << std::string(imp ? " with importance" : ""));
            const std::vector<std::uint8_t> blocks = quantize_rows(t, x, 1024, imp);
            for (std::size_t b = 0; b * static_cast<std::size_t>(t.type_size) < blocks.size(); ++b) {
                const GgmlBlockFields f = fields_of(t, blocks.data() + b * static_cast<std::size_t>(t.type_size));
                CHECK(f.d == 0.0f);
                CHECK(f.dmin == 0.0f);
                for (int k = 0; k < kSuper; ++k) REQUIRE((f.codes[k] >= r.code_lo && f.codes[k] <= r.code_hi));
            }
            for (float v : dequantize(t, blocks)) REQUIRE(v == 0.0f);
        }
    }
}

// ggml's k-quant _impl quantizers take sigma2 from the super-block's own sum of squares (the legacy types
// take the row's): a super-block quantizes the same alone as inside a row of louder neighbours.
TEST_CASE("ggml k-quants with importance: each super-block depends on its own values only") {
    SplitMix g{29};
    std::vector<float> row = random_rows(g, 0, 1024);
    for (std::size_t i = 512; i < 1024; ++i) row[i] *= 100.0f;
    std::vector<float> importance(1024);
    for (float& v : importance) v = 0.01f + g.uniform() * 10.0f;
    const std::vector<float> first(row.begin(), row.begin() + kSuper);
    const std::vector<float> first_importance(importance.begin(), importance.begin() + kSuper);
    for (const char* name : kTypes) {
        INFO(std::string(name));
        const GgmlTypeInfo& t = type_named(name);
        const std::vector<std::uint8_t> whole = quantize_rows(t, row, 1024, &importance);
        const std::vector<std::uint8_t> alone = quantize_rows(t, first, kSuper, &first_importance);
        CHECK(std::equal(alone.begin(), alone.end(), whole.begin()));
        CHECK(quantize_rows(t, row, 1024) != whole);  // and the importance is used
    }
}

// The decoders' vector paths (AVX-512 where built: compare's hot loops) against the fields on blocks of random
// bytes, which reach every code, fifth bit, q6_K high pair and 6-bit scale and min that a quantizer may not write;
// d and dmin random finite halves. Every value is the float32 product (minus the min) of its fields, bit for bit.
TEST_CASE("ggml k-quants: blocks of random bytes decode to their fields' values bit for bit") {
    SplitMix g{99};
    for (const char* name : {"q4_K", "q5_K", "q6_K", "q2_K", "q3_K"}) {
        INFO(name);
        const GgmlTypeInfo& t = type_named(name);
        const std::size_t blocks = 37;
        std::vector<std::uint8_t> bytes(blocks * static_cast<std::size_t>(t.type_size));
        for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(g.next() >> 56);
        // The halves (d, and dmin where stored) finite: exponent field below 31.
        const std::string n = name;
        const int d_at = n == "q6_K" ? 208 : n == "q3_K" ? 108 : n == "q2_K" ? 80 : 0;
        for (std::size_t b = 0; b < blocks; ++b) {
            std::uint8_t* x = bytes.data() + b * static_cast<std::size_t>(t.type_size);
            for (const int at : {d_at, d_at + 2}) {
                if (at == d_at + 2 && (n == "q6_K" || n == "q3_K")) continue;
                x[at + 1] = static_cast<std::uint8_t>(x[at + 1] & 0xbf);  // exponent < 31: finite
            }
        }
        const std::vector<float> y = dequantize(t, bytes);
        bool rebuilt = true;
        for (std::size_t b = 0; b < blocks; ++b) {
            const GgmlBlockFields f = fields_of(t, bytes.data() + b * static_cast<std::size_t>(t.type_size));
            for (int k = 0; k < kSuper; ++k) {
                const int s = k / f.sub_size;
                const float scaled = f.sub_scale_used[s] * static_cast<float>(f.codes[k]);
                const float want = f.has_dmin ? scaled - f.sub_min_used[s] : scaled;
                rebuilt = rebuilt && same_bits(want, y[b * kSuper + static_cast<std::size_t>(k)]);
            }
        }
        CHECK(rebuilt);
    }
}
