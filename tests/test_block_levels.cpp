// What the window's block histogram and summaries read for a block: the levels its codes stand for (every
// sub-block's grid at its own scale for a k-quant) and the pair it stores under the format's names.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "quantscope/blocks.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

using namespace qs;

namespace {

Tensor rows_of(std::int64_t rows, std::int64_t cols, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Tensor t;
    t.shape = {rows, cols};
    t.values.resize(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = normal(rng) * (i % 61 == 3 ? 12.0f : 1.0f) + 0.3f;
    return t;
}

QuantConfig config_of(const std::string& dtype) {
    QuantConfig c;
    parse_dtype(dtype, c);
    return with_format(c, c.format);
}

}  // namespace

TEST_CASE("block levels: every dequantized value of a block is one of its levels for every ggml type") {
    const Tensor t = rows_of(3, 512, 11);
    std::vector<float> w(512);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(1 + k % 5);
    int types = 0;
    for (const FormatKind kind : format_kinds())
    for (const FormatId id : formats_of_kind(kind)) {
        const FormatTraits& row = format_traits(id);
        if (row.ggml == nullptr) continue;
        ++types;
        for (const bool weighted : {false, true}) {
            CAPTURE(std::string(row.name));
            CAPTURE(weighted);
            QuantConfig c = config_of(row.name);
            if (weighted) c.importance = std::make_shared<const std::vector<float>>(w);
            const QuantParams params = compute_params(t, c);
            const QuantResult q = quantize(t, c);
            const std::int64_t n = row.ggml->block_size;
            for (const std::int64_t block : {std::int64_t{0}, params.block_count / 2, params.block_count - 1}) {
                const std::vector<double> levels = block_levels(view_of(t), params, c, block);
                REQUIRE(std::is_sorted(levels.begin(), levels.end()));
                REQUIRE(std::adjacent_find(levels.begin(), levels.end()) == levels.end());
                for (std::int64_t i = block * n; i < (block + 1) * n; ++i) {
                    const double v = q.dequantized[static_cast<std::size_t>(i)];
                    CHECK(std::binary_search(levels.begin(), levels.end(), v));
                }
            }
        }
    }
    CHECK(types >= 14);
}

TEST_CASE("block levels: a k-quant's levels are its sub-blocks' grids so more than one comb") {
    const Tensor t = rows_of(1, 256, 3);
    const QuantConfig c = config_of("q4_k");
    const QuantParams params = compute_params(t, c);
    // 8 sub-blocks of 16 levels each, at different scales and mins: far more than one grid's 16.
    CHECK(block_levels(view_of(t), params, c, 0).size() > 64);
    CHECK(block_levels(view_of(t), params, config_of("int8"), 0).empty());
}

TEST_CASE("stored pair: int8 has s and z and q4_k has d and dmin from its bytes but q8_0 has d alone") {
    const Tensor t = rows_of(2, 256, 7);
    CHECK(stored_pair_names(config_of("int8")).scale == "s");
    CHECK(stored_pair_names(config_of("int8")).offset == "z");
    const QuantConfig k = config_of("q4_k");
    CHECK(stored_pair_names(k).scale == "d");
    CHECK(stored_pair_names(k).offset == "dmin");
    CHECK(stored_pair_names(config_of("q8_0")).offset.empty());
    CHECK(stored_pair_names(config_of("q4_1")).offset == "m");

    const QuantParams params = compute_params(t, k);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(2 * format_traits(k.format).ggml->type_size));
    ggml_quantize_blocks(*format_traits(k.format).ggml, t.values.data(), 2, nullptr, bytes.data());
    for (int b = 0; b < 2; ++b) {
        GgmlBlockFields f;
        ggml_block_fields(*format_traits(k.format).ggml, bytes.data() + b * format_traits(k.format).ggml->type_size, f);
        const StoredPair pair = stored_pair(view_of(t), params, k, b);
        CHECK(pair.scale == f.d);
        REQUIRE(pair.offset.has_value());
        CHECK(*pair.offset == f.dmin);
        CHECK(f.dmin != 0.0f);  // the rows are shifted by 0.3: a min is stored
    }
    const QuantConfig i8 = config_of("int8");
    const QuantParams pi = compute_params(t, i8);
    const StoredPair p8 = stored_pair(view_of(t), pi, i8, 0);
    CHECK(p8.scale == pi.scale_of(0));
    CHECK(*p8.offset == pi.zero_point_of(0));
    CHECK_FALSE(stored_pair(view_of(t), compute_params(t, config_of("q8_0")), config_of("q8_0"), 0).offset.has_value());
}
