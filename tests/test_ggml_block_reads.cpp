// The batched reads of ggml blocks a pass uses (ggml_types.hpp): ggml_block_codes and ggml_block_scales give
// every block's codes, scale groups' used scales, d, d's bits and dmin exactly as ggml_block_fields does, for
// every type QuantScope quantizes, on blocks quantized from values of many kinds, with and without importance.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quantscope/ggml_types.hpp"

using namespace qs;

namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// 2048 values, one kind per 256: a bell, zeros, a constant, tiny (1e-30), huge (1e30), sub-blocks of 16
// whose magnitudes differ by 1e6 (some stored scales round to 0), all positive, ties.
std::vector<float> mixed_values() {
    std::vector<float> x(2048);
    std::uint64_t s = 7;
    const auto uniform = [&] {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<float>(s >> 40) * 0x1p-24f;
    };
    for (std::size_t i = 0; i < x.size(); ++i) {
        const float bell = uniform() + uniform() + uniform() - 1.5f;
        switch (i / 256) {
            case 0: x[i] = bell; break;
            case 1: x[i] = 0.0f; break;
            case 2: x[i] = -0.75f; break;
            case 3: x[i] = bell * 1e-30f; break;
            case 4: x[i] = bell * 1e30f; break;
            case 5: x[i] = i / 16 % 3 == 1 ? bell * 1e-6f : bell; break;
            case 6: x[i] = std::fabs(bell) + 2.0f; break;
            default: x[i] = std::round(bell * 8.0f) / 4.0f; break;
        }
    }
    return x;
}

}  // namespace

TEST_CASE("ggml_block_codes and ggml_block_scales read every block as its fields do") {
    const std::vector<float> x = mixed_values();
    std::vector<float> importance(x.size());
    for (std::size_t k = 0; k < importance.size(); ++k) importance[k] = 0.1f + static_cast<float>(k % 13);
    for (const char* name : {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_nl",
                             "iq4_xs", "tq1_0", "tq2_0"})
        for (const bool weighted : {false, true}) {
            CAPTURE(std::string(name));
            CAPTURE(weighted);
            const GgmlTypeInfo& type = *ggml_type_named(name);
            const std::int64_t blocks = static_cast<std::int64_t>(x.size()) / type.block_size;
            std::vector<std::uint8_t> bytes(static_cast<std::size_t>(blocks * type.type_size));
            const GgmlImportance imp{importance.data(), ggml_row_sum_squares(x.data(), 2048), 2048};
            ggml_quantize_blocks(type, x.data(), blocks, weighted ? &imp : nullptr, bytes.data());

            const int group = ggml_scale_group(type);
            REQUIRE(type.block_size % group == 0);
            std::vector<std::int32_t> codes(x.size());
            std::vector<float> group_scale(x.size() / static_cast<std::size_t>(group));
            std::vector<float> d(static_cast<std::size_t>(blocks)), dmin(static_cast<std::size_t>(blocks));
            std::vector<std::uint16_t> d_bits(static_cast<std::size_t>(blocks));
            ggml_block_codes(type, bytes.data(), blocks, codes.data(), group_scale.data());
            ggml_block_scales(type, bytes.data(), blocks, d.data(), d_bits.data(), dmin.data());
            int differ = 0;
            for (std::int64_t b = 0; b < blocks; ++b) {
                GgmlBlockFields f;
                ggml_block_fields(type, bytes.data() + b * type.type_size, f);
                const auto at = static_cast<std::size_t>(b);
                differ += !same_bits(d[at], f.d) || d_bits[at] != f.d_bits || !same_bits(dmin[at], f.dmin);
                for (int j = 0; j < type.block_size; ++j) {
                    const auto k = static_cast<std::size_t>(b * type.block_size + j);
                    const float used = f.sub_blocks > 0 ? f.sub_scale_used[j / f.sub_size] : f.d;
                    differ += codes[k] != f.codes[j] || !same_bits(group_scale[k / static_cast<std::size_t>(group)], used);
                }
            }
            CHECK(differ == 0);
        }
}
