// ggml's legacy (q4_0, q4_1, q5_0, q5_1, q8_0), iq4 (iq4_nl, iq4_xs), ternary (tq1_0, tq2_0) and MXFP4 block
// codecs (ggml_types.hpp): blocks worked out by hand, hashes of a seeded tensor's blocks and values as ggml's
// own reference (libggml-base: ggml_quantize_chunk, then the type's to_float) gives them, and properties on
// random tensors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quantscope/fnv1a.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/ggml_types.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

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

std::vector<std::uint8_t> bytes(std::initializer_list<int> b) {
    std::vector<std::uint8_t> v;
    for (int x : b) v.push_back(static_cast<std::uint8_t>(x));
    return v;
}

// A small deterministic generator (splitmix64): the same tensor on every platform, and in the harness that
// produced the reference hashes below from ggml's own library.
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

constexpr int kGoldenRows = 8, kGoldenCols = 512;

// Eight rows of 512, one kind each: bell-shaped; with a 16x outlier every 37th; blocks of 32 cycling zero,
// 0.75, -1.5, bell; bell * 1e-30; bell * 1e4; ties (halves in -8..8); ternary halves; 5 + uniform. Then an
// importance vector of weights in [0.05, 4.05).
void golden_tensor(std::vector<float>& x, std::vector<float>& w) {
    SplitMix g{2026};
    x.assign(kGoldenRows * kGoldenCols, 0.0f);
    for (int r = 0; r < kGoldenRows; ++r)
        for (int c = 0; c < kGoldenCols; ++c) {
            float& v = x[static_cast<std::size_t>(r * kGoldenCols + c)];
            const int block = c / 32;
            switch (r) {
                case 0: v = g.bell(); break;
                case 1: v = g.bell() * (c % 37 == 0 ? 16.0f : 1.0f); break;
                case 2: v = block % 4 == 0 ? 0.0f : block % 4 == 1 ? 0.75f : block % 4 == 2 ? -1.5f : g.bell(); break;
                case 3: v = g.bell() * 1e-30f; break;
                case 4: v = g.bell() * 1e4f; break;
                case 5: v = static_cast<float>(static_cast<int>(g.uniform() * 33) - 16) * 0.5f; break;
                case 6: v = static_cast<float>(static_cast<int>(g.uniform() * 3) - 1) * 0.5f; break;
                default: v = 5.0f + g.uniform(); break;
            }
        }
    w.resize(kGoldenCols);
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
    {"q4_0", false, 0xd73ac5282353b333ull, 0xc1b4c2bfe8dd00c9ull},
    {"q4_0", true, 0x689165d3b118279bull, 0x2e24762d260c3ab8ull},
    {"q4_1", false, 0xf733a9249c3ddaacull, 0x8dc72a0bbc23125full},
    {"q4_1", true, 0xc9596468c0221001ull, 0x46144b60e7e234afull},
    {"q5_0", false, 0xf9e6ebc6eb69f111ull, 0xea1417e378a1ac2cull},
    {"q5_0", true, 0x7bf2711198de73b8ull, 0xabd9809cd416012cull},
    {"q5_1", false, 0xffcec7511a5a88cfull, 0x02332e12cdc715c8ull},
    {"q5_1", true, 0x37f32e00049773c7ull, 0x3cd8de3c14459fbcull},
    {"q8_0", false, 0x3a7c1553f04e7343ull, 0xfd1f1e7ebad32247ull},
    {"q8_0", true, 0x3a7c1553f04e7343ull, 0xfd1f1e7ebad32247ull},
    {"iq4_nl", false, 0x4476ea3980196b72ull, 0xdd28f7fa93720eb2ull},
    {"iq4_nl", true, 0x120ed87e5e5ed9c3ull, 0xfc7fb149624da962ull},
    {"iq4_xs", false, 0xb9a41c02e58b8c8full, 0xb51be628d76e7f5aull},
    {"iq4_xs", true, 0x06e8bc7ea6dd81f0ull, 0x6829b30a21e43279ull},
    {"tq1_0", false, 0x20a9c535ba192220ull, 0x98025b8440e23059ull},
    {"tq1_0", true, 0x20a9c535ba192220ull, 0x98025b8440e23059ull},
    {"tq2_0", false, 0x0a45c5008f536d7cull, 0x98025b8440e23059ull},
    {"tq2_0", true, 0x0a45c5008f536d7cull, 0x98025b8440e23059ull},
};

const char* const kQuantizedTypes[] = {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0"};

// r' of value k of a block as its fields say: the type's to_float formula from the decoded fields.
float value_from_fields(const std::string& type, const GgmlBlockFields& f, int k) {
    static constexpr int kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    const int code = f.codes[k];
    if (type == "q4_0") return static_cast<float>(code - 8) * f.d;
    if (type == "q5_0") return static_cast<float>(code - 16) * f.d;
    if (type == "q4_1" || type == "q5_1") return static_cast<float>(code) * f.d + f.dmin;
    if (type == "iq4_nl") return f.d * static_cast<float>(kIq4Grid[code]);
    if (type == "iq4_xs") return f.sub_scale_used[k / 32] * static_cast<float>(kIq4Grid[code]);
    return static_cast<float>(code) * f.d;  // q8_0, tq1_0, tq2_0
}

// The codes FORMATS.md allows a type's quantizer to write.
void code_range(const std::string& type, int& lo, int& hi) {
    lo = 0, hi = 15;
    if (type == "q8_0") lo = -127, hi = 127;
    if (type == "q5_0" || type == "q5_1") hi = 31;
    if (type == "tq1_0" || type == "tq2_0") lo = -1, hi = 1;
}

// Random rows of one kind (0..6): normal-ish, Laplace-ish with 1% outliers x100, blocks of 32 zero /
// constant / one-hot / mixed, 1e-30, 1e4, 1e-38 (near subnormal), halves (ties).
std::vector<float> random_rows(SplitMix& g, int kind, std::int64_t n) {
    std::vector<float> x(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        float& v = x[static_cast<std::size_t>(i)];
        const float u = g.uniform();
        switch (kind) {
            case 0: v = g.bell(); break;
            case 1: v = (u < 0.5f ? -1.0f : 1.0f) * -std::log(1.0f - g.uniform()) * (g.uniform() < 0.01f ? 100.0f : 1.0f); break;
            case 2: {
                const std::int64_t block = i / 32;
                const int shape = static_cast<int>(block % 5);
                v = shape == 0 ? 0.0f : shape == 1 ? 2.5f : shape == 2 ? -0.125f : shape == 3 ? (i % 32 == 7 ? -3.0f : 0.0f) : g.bell() * 1e3f;
                break;
            }
            case 3: v = g.bell() * 1e-30f; break;
            case 4: v = g.bell() * 1e4f; break;
            case 5: v = g.bell() * 1e-38f; break;
            default: v = static_cast<float>(static_cast<int>(u * 65) - 32) * 0.5f; break;
        }
    }
    return x;
}

}  // namespace

TEST_CASE("ggml q5_0 by hand: d from the first value of largest magnitude and the fifth bits in qh") {
    // The first value of largest magnitude is x[0] = -8 (|8| at x[1] comes later): d = -8 / -16 = 0.5, id = 2,
    // fp16(0.5) = 0x3800. code = min(31, trunc(x id + 16.5)):
    //   x[0] -8 -> 0.5 -> 0      x[1] 8 -> 32.5 -> 32 -> 31 (clamped)   x[2] 0 -> 16.5 -> 16
    //   x[3] 1.25 -> 19.0 -> 19  x[4] -0.3 -> 15.9 -> 15                x[5] 3.75 -> 24.0 -> 24
    //   x[16] 5 -> 26.5 -> 26    x[17] -5 -> 6.5 -> 6                   every other 0 -> 16
    // qh bit j = bit 4 of code j: 1 except for codes 0 (j 0), 15 (j 4) and 6 (j 17): 0xfffdffee.
    // qs[j] = (code j & 15) | (code j+16 & 15) << 4: qs[0] = 0 | 10 << 4 = 0xa0, qs[1] = 15 | 6 << 4 = 0x6f,
    // qs[3] = 3, qs[4] = 0x0f, qs[5] = 8, the rest 0. r' = (code - 16) * 0.5.
    std::vector<float> x(32, 0.0f);
    x[0] = -8, x[1] = 8, x[3] = 1.25f, x[4] = -0.3f, x[5] = 3.75f, x[16] = 5, x[17] = -5;
    const GgmlTypeInfo& t = type_named("Q5_0");
    const std::vector<std::uint8_t> block = quantize_rows(t, x, 32);
    CHECK(block == bytes({0x00, 0x38, 0xee, 0xff, 0xfd, 0xff, 0xa0, 0x6f, 0x00, 0x03, 0x0f, 0x08, 0, 0, 0, 0, 0, 0,
                          0, 0, 0, 0}));
    const GgmlBlockFields f = fields_of(t, block.data());
    CHECK(f.d == 0.5f);
    CHECK(f.d_bits == 0x3800);
    CHECK_FALSE(f.has_dmin);
    const std::vector<std::int32_t> codes(f.codes, f.codes + 32);
    CHECK(std::vector<std::int32_t>(codes.begin(), codes.begin() + 6) == std::vector<std::int32_t>{0, 31, 16, 19, 15, 24});
    CHECK(codes[16] == 26);
    CHECK(codes[17] == 6);
    const std::vector<float> y = dequantize(t, block);
    CHECK(std::vector<float>(y.begin(), y.begin() + 6) == std::vector<float>{-8, 7.5f, 0, 1.5f, -0.5f, 4});
    CHECK(y[16] == 5.0f);
    CHECK(y[17] == -5.0f);
}

TEST_CASE("ggml iq4_nl by hand: a block on the grid is found exactly and a zero becomes the grid's 1") {
    // Nonzero values -127, 13, -10, 1 (x[0..3]) and 25, 113 (x[16], x[17]): all on the grid at scale 1.
    // The weights are x^2 (no importance). First fit: d = -max / -127 with max = -127 (the first of largest
    // magnitude): d = -1, so id = -1 maps x to -x, off the grid (127 -> 113, -13 -> -10, ...): a poor fit.
    // Then id = (t - 127) / max = (127 - t) / 127 for t = -7..7: every value keeps its grid index (-127 ->
    // index 0 as long as it is below the midpoint -115.5; 113 stays above 101; 13 between 7 and 19; ...), so
    // each try gives q = x and sumqx = sumq2 (the same float32 terms (w q) q), d = 1 exactly; later equal
    // tries are not better. fp16(1) = 0x3c00; indices at id = 1: -127 -> 0, 13 -> 9, -10 -> 7, 1 -> 8,
    // 25 -> 10, 113 -> 15, and 0 -> 8 (0 - -10 = 10 is not below 1 - 0 = 1): the grid has no 0, so a zero
    // comes back as d * 1 = 1. qs[j] = index j | index j+16 << 4: a0 f9 87 88, then 0x88.
    std::vector<float> x(32, 0.0f);
    x[0] = -127, x[1] = 13, x[2] = -10, x[3] = 1, x[16] = 25, x[17] = 113;
    const GgmlTypeInfo& t = type_named("IQ4_NL");
    const std::vector<std::uint8_t> block = quantize_rows(t, x, 32);
    std::vector<std::uint8_t> want = bytes({0x00, 0x3c, 0xa0, 0xf9, 0x87});
    want.resize(18, 0x88);
    CHECK(block == want);
    const GgmlBlockFields f = fields_of(t, block.data());
    CHECK(f.d == 1.0f);
    CHECK(f.codes[0] == 0);
    CHECK(f.codes[1] == 9);
    CHECK(f.codes[17] == 15);
    CHECK(f.codes[31] == 8);
    const std::vector<float> y = dequantize(t, block);
    CHECK(std::vector<float>(y.begin(), y.begin() + 5) == std::vector<float>{-127, 13, -10, 1, 1});
    CHECK(y[16] == 25.0f);
    CHECK(y[17] == 113.0f);
}

TEST_CASE("ggml tq2_0 by hand: d = the largest magnitude and lroundf rounds halves away from zero") {
    // amax = 2 (x[0]): d = 2 (fp16 0x4000, stored after the 64 code bytes), id = 0.5. code = lroundf(x / 2):
    // x[0] 2 -> 1, x[1] -2 -> -1, x[2] 1 -> 0.5 -> 1 (half away from zero), x[3] -0.9 -> 0, x[32] -1 -> -0.5
    // -> -1, x[64] 0.999 -> 0, x[96] 1.5 -> 1, the rest 0. Stored as code + 1 in 2 bits: byte m of the
    // first 32 holds values m, m + 32, m + 64, m + 96 in bits 0-1, 2-3, 4-5, 6-7:
    // qs[0] = 2 | 0 << 2 | 1 << 4 | 2 << 6 = 0x92; qs[1] = 0 | 1 << 2 | 1 << 4 | 1 << 6 = 0x54; qs[2] = 0x56;
    // every other byte 0x55 (all codes 0).
    std::vector<float> x(256, 0.0f);
    x[0] = 2, x[1] = -2, x[2] = 1, x[3] = -0.9f, x[32] = -1, x[64] = 0.999f, x[96] = 1.5f;
    const GgmlTypeInfo& t = type_named("tq2_0");
    const std::vector<std::uint8_t> block = quantize_rows(t, x, 256);
    std::vector<std::uint8_t> want(66, 0x55);
    want[0] = 0x92, want[1] = 0x54, want[2] = 0x56, want[64] = 0x00, want[65] = 0x40;
    CHECK(block == want);
    const GgmlBlockFields f = fields_of(t, block.data());
    CHECK(f.d == 2.0f);
    CHECK(std::vector<std::int32_t>(f.codes, f.codes + 4) == std::vector<std::int32_t>{1, -1, 1, 0});
    CHECK(f.codes[32] == -1);
    CHECK(f.codes[64] == 0);
    CHECK(f.codes[96] == 1);
    const std::vector<float> y = dequantize(t, block);
    CHECK(std::vector<float>(y.begin(), y.begin() + 4) == std::vector<float>{2, -2, 2, 0});
    CHECK(y[32] == -2.0f);
    CHECK(y[96] == 2.0f);
    // tq1_0 stores the same codes five to a byte: its values are the same.
    CHECK(dequantize(type_named("tq1_0"), quantize_rows(type_named("tq1_0"), x, 256)) == y);
}

TEST_CASE("ggml mxfp4 decode by hand: E2M1 codes times 2 to the E8M0 byte minus 127") {
    // Block 0: e = 128 (scale 2); codes 0x7 (6), 0x9 (-0.5), 0x2 (1) in value 0, 16, 1. Block 1: e = 0, the
    // smallest scale 2^-127 (a float32 subnormal): code 0x1 (0.5) gives 2^-128.
    std::vector<std::uint8_t> blocks(34, 0);
    blocks[0] = 128, blocks[1] = 0x97, blocks[2] = 0x02;
    blocks[17] = 0, blocks[18] = 0x01;
    const GgmlTypeInfo& t = type_named("MXFP4");
    CHECK_FALSE(t.quantizes);
    const std::vector<float> y = dequantize(t, blocks);
    CHECK(y[0] == 12.0f);
    CHECK(y[16] == -1.0f);
    CHECK(y[1] == 2.0f);
    CHECK(y[2] == 0.0f);
    CHECK(y[32] == std::ldexp(1.0f, -128));
    const GgmlBlockFields f = fields_of(t, blocks.data());
    CHECK(f.d == 2.0f);
    CHECK(f.d_bits == 128);
    CHECK(f.codes[0] == 7);
    CHECK(f.codes[16] == 9);
    CHECK(fields_of(t, blocks.data() + 17).d == std::ldexp(1.0f, -127));
}

TEST_CASE("ggml codecs equal ggml's reference on a seeded tensor: block bytes and dequantized values") {
    std::vector<float> x, w;
    golden_tensor(x, w);
    for (const Golden& g : kGolden) {
        INFO(std::string(g.type) << std::string(g.importance ? " with importance" : ""));
        const GgmlTypeInfo& t = type_named(g.type);
        const std::vector<std::uint8_t> blocks = quantize_rows(t, x, kGoldenCols, g.importance ? &w : nullptr);
        const std::vector<float> y = dequantize(t, blocks);
        Fnv1a hb, hy;
        hb.add_bytes(blocks.data(), blocks.size());
        hy.add_bytes(y.data(), y.size() * sizeof(float));
        CHECK(hb.value() == g.blocks_hash);
        CHECK(hy.value() == g.values_hash);
    }
}

TEST_CASE("ggml codecs: codes in range and every dequantized value rebuilt from the block's fields") {
    SplitMix g{7};
    for (const char* name : kQuantizedTypes) {
        const GgmlTypeInfo& t = type_named(name);
        int lo, hi;
        code_range(name, lo, hi);
        for (int kind = 0; kind < 7; ++kind)
            for (int weighted = 0; weighted < 2; ++weighted) {
                INFO(std::string(name) << " kind " << kind << std::string(weighted ? " with importance" : ""));
                const std::int64_t cols = 512;
                const std::vector<float> x = random_rows(g, kind, 3 * cols);
                std::vector<float> importance(static_cast<std::size_t>(cols));
                for (float& v : importance) v = 0.01f + g.uniform() * 10.0f;
                const std::vector<std::uint8_t> blocks = quantize_rows(t, x, cols, weighted ? &importance : nullptr);
                const std::vector<float> y = dequantize(t, blocks);
                bool in_range = true, rebuilt = true;
                for (std::size_t b = 0; b * static_cast<std::size_t>(t.type_size) < blocks.size(); ++b) {
                    const GgmlBlockFields f = fields_of(t, blocks.data() + b * static_cast<std::size_t>(t.type_size));
                    for (int k = 0; k < t.block_size; ++k) {
                        in_range = in_range && f.codes[k] >= lo && f.codes[k] <= hi;
                        const float want = y[b * static_cast<std::size_t>(t.block_size) + static_cast<std::size_t>(k)];
                        const float got = value_from_fields(name, f, k);
                        rebuilt = rebuilt && std::memcmp(&got, &want, sizeof got) == 0;
                    }
                    if (f.sub_blocks > 0) {
                        for (int s = 0; s < f.sub_blocks; ++s) {
                            in_range = in_range && f.sub_scale[s] >= -32 && f.sub_scale[s] <= 31;
                            rebuilt = rebuilt && f.sub_scale_used[s] == f.d * static_cast<float>(f.sub_scale[s]);
                        }
                    }
                }
                CHECK(in_range);
                CHECK(rebuilt);
                for (float v : y) REQUIRE(std::isfinite(v));
            }
    }
}

TEST_CASE("ggml codecs: an all-zero block stores d = 0 and dequantizes to zeros") {
    for (const char* name : kQuantizedTypes) {
        INFO(std::string(name));
        const GgmlTypeInfo& t = type_named(name);
        const std::vector<float> x(512, 0.0f), importance(512, 1.0f);
        for (const std::vector<float>* imp : {static_cast<const std::vector<float>*>(nullptr), &importance}) {
            const std::vector<std::uint8_t> blocks = quantize_rows(t, x, 512, imp);
            for (std::size_t b = 0; b * static_cast<std::size_t>(t.type_size) < blocks.size(); ++b) {
                const GgmlBlockFields f = fields_of(t, blocks.data() + b * static_cast<std::size_t>(t.type_size));
                CHECK(f.d == 0.0f);
                CHECK(f.dmin == 0.0f);
            }
            // iq4's grid has no 0: its zero codes stand for 1, times d = 0.
            for (float v : dequantize(t, blocks)) REQUIRE(v == 0.0f);
        }
    }
}

TEST_CASE("ggml codecs: q8_0 and the ternary types ignore importance and the others use it") {
    SplitMix g{11};
    const std::vector<float> x = random_rows(g, 0, 1024);
    std::vector<float> importance(1024);
    for (float& v : importance) v = 0.01f + g.uniform() * 10.0f;
    for (const char* name : kQuantizedTypes) {
        INFO(std::string(name));
        const GgmlTypeInfo& t = type_named(name);
        const bool same = quantize_rows(t, x, 1024) == quantize_rows(t, x, 1024, &importance);
        CHECK(same == !t.takes_importance);
    }
}

TEST_CASE("ggml codecs: the q8_0 q4_0 and q4_1 format rows give the codecs' codes and values") {
    // The rows (format_kernels.hpp) and the codecs follow the same reference quantizers. A block whose stored
    // fp16(d) is 0 is the one exception: the rows write codes 0 there (FORMATS.md), ggml its own (an all-zero
    // q4_0 block: d = -0, id = 0, codes 8; values near 1e-30: codes from 1 / d); the values are 0 either way,
    // so such blocks compare by value only. The sign of a dequantized zero is free (the rows give +0, ggml -0
    // where d < 0): values compare with ==.
    SplitMix g{5};
    for (FormatId id : {FormatId::Q8_0, FormatId::Q4_0, FormatId::Q4_1}) {
        const char* name = id == FormatId::Q8_0 ? "q8_0" : id == FormatId::Q4_0 ? "q4_0" : "q4_1";
        const GgmlTypeInfo& t = type_named(name);
        for (int kind : {0, 1, 2, 4, 6}) {
            INFO(std::string(name) << " kind " << kind);
            const std::vector<float> x = random_rows(g, kind, 4 * 256);
            Tensor tensor{{4, 256}, x};
            FormatConfig c;
            c.format = id;
            std::vector<std::int32_t> codes(x.size());
            std::vector<float> deq(x.size()), err(x.size());
            quantize_format(view_of(tensor), c, {codes.data(), deq.data(), err.data()});
            const std::vector<std::uint8_t> blocks = quantize_rows(t, x, 256);
            std::vector<std::int32_t> codec_codes, row_codes;
            int zero_d_blocks = 0;
            for (std::size_t b = 0; b < x.size() / 32; ++b) {
                const GgmlBlockFields f = fields_of(t, blocks.data() + b * static_cast<std::size_t>(t.type_size));
                if (f.d == 0) {
                    ++zero_d_blocks;
                    continue;
                }
                codec_codes.insert(codec_codes.end(), f.codes, f.codes + 32);
                row_codes.insert(row_codes.end(), codes.begin() + 32 * static_cast<std::ptrdiff_t>(b),
                                 codes.begin() + 32 * static_cast<std::ptrdiff_t>(b + 1));
            }
            // kind 2: 7 of the 32 blocks are all zero; for q4_1 the 13 constant ones have d = 0 too.
            CHECK(zero_d_blocks == (kind != 2 ? 0 : id == FormatId::Q4_1 ? 20 : 7));
            test::check_equal(codec_codes, row_codes);
            test::check_equal(dequantize(t, blocks), deq);
        }
    }
}
