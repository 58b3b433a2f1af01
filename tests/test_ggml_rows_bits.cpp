// The Bits view and the element trace of the ggml codec rows: a k-quant's nesting (fp16 d and dmin, the
// element's sub-block scale and min as stored and as used) and its code, all read back from the block
// the codec writes, with and without importance.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "quantscope/cell_bits.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/params.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_blocks.hpp"
#include "quantscope/quantize.hpp"

using namespace qs;

namespace {

Tensor rows_of(std::int64_t rows, std::int64_t cols, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Tensor t;
    t.shape = {rows, cols};
    t.values.resize(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = normal(rng) * (i % 61 == 3 ? 12.0f : 1.0f);
    return t;
}

QuantConfig config_of(const std::string& dtype) {
    QuantConfig c;
    parse_dtype(dtype, c);
    return with_format(c, c.format);
}

// The block holding `flat` as the codec quantizes it in its row (importance as given).
GgmlBlockFields block_of(const Tensor& t, const GgmlTypeInfo& type, std::int64_t flat, const std::vector<float>* w) {
    const std::int64_t cols = t.shape.back(), row = flat / cols, start = flat / type.block_size * type.block_size;
    const float* r = t.values.data() + row * cols;
    std::vector<unsigned char> bytes(static_cast<std::size_t>(type.type_size));
    GgmlImportance weights{w ? w->data() + (start - row * cols) : nullptr, ggml_row_sum_squares(r, cols), cols};
    ggml_quantize_blocks(type, t.values.data() + start, 1, w ? &weights : nullptr, bytes.data());
    GgmlBlockFields f;
    ggml_block_fields(type, bytes.data(), f);
    return f;
}

const GgmlTypeInfo& kept_type(const QuantConfig& c) { return *format_traits(c.format).ggml; }

}  // namespace

TEST_CASE("ggml rows bits: a k-quant cell shows d dmin and its sub-block's scale and min as stored and used") {
    const Tensor t = rows_of(2, 512, 5);
    std::vector<float> w(512);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(1 + k % 7);
    for (const bool weighted : {false, true}) {
        for (const char* dtype : {"q4_k", "q2_k", "q6_k", "q3_k", "iq4_xs", "q5_1"}) {
            CAPTURE(std::string(dtype));
            CAPTURE(weighted);
            QuantConfig c = config_of(dtype);
            if (weighted) c.importance = std::make_shared<const std::vector<float>>(w);
            const GgmlTypeInfo& type = *format_traits(c.format).ggml;
            const QuantParams params = compute_params(t, c);
            const QuantResult q = quantize(t, c);
            for (const std::int64_t flat : {std::int64_t{0}, std::int64_t{300}, std::int64_t{512 + 77}, std::int64_t{1023}}) {
                const GgmlBlockFields f = block_of(t, type, flat, weighted ? &w : nullptr);
                const CellBits b = cell_bits(view_of(t), params, c, flat, -1.0f);
                const int j = static_cast<int>(flat % type.block_size);
                REQUIRE(b.scales.size() >= 1);
                CHECK(b.scales[0].role == BitRowRole::BlockScale);
                CHECK(b.scales[0].bits_value == f.d_bits);
                CHECK(b.scales[0].value == f.d);
                std::size_t next = 1;
                if (f.has_dmin) {
                    REQUIRE(b.scales.size() > next);
                    CHECK(b.scales[next].role == BitRowRole::Offset);
                    CHECK(b.scales[next++].bits_value == f.dmin_bits);
                }
                if (f.sub_blocks > 0) {
                    const int sub = j / f.sub_size;
                    REQUIRE(b.scales.size() > next);
                    CHECK(b.scales[next].role == BitRowRole::SubScale);
                    CHECK(b.scales[next].sub_block == sub);
                    CHECK(b.scales[next].fields[0].value == f.sub_scale[sub]);
                    CHECK(b.scales[next++].used == f.sub_scale_used[sub]);
                    if (format_traits(c.format).has_offset) {
                        REQUIRE(b.scales.size() > next);
                        CHECK(b.scales[next].role == BitRowRole::SubMin);
                        CHECK(b.scales[next].fields[0].value == f.sub_min[sub]);
                        CHECK(b.scales[next++].used == f.sub_min_used[sub]);
                    }
                }
                CHECK(b.scales.size() == next);
                CHECK(b.code.fields[0].value == f.codes[j]);
                CHECK(b.packed.offset == -1);  // a ggml file is block structs: no end-to-end byte
                // The trace is the pass's element: its code and r'.
                const ElementTrace e = trace_element(t, params, c, flat);
                CHECK(e.code == q.codes[static_cast<std::size_t>(flat)]);
                CHECK(e.code == f.codes[j]);
                CHECK(e.dequantized == q.dequantized[static_cast<std::size_t>(flat)]);
            }
        }
    }
}

// The params pass keeps the blocks its searches made (FormatParams::ggml_blocks) and the pass decodes them;
// params without them (format_params_for, as the window's slices use) make the pass quantize every block
// again. Both give the same codes, r' and metrics, whole and from an offset, for every codec row.
TEST_CASE("ggml rows: the pass that decodes the params' kept blocks equals the pass that quantizes them again") {
    const Tensor t = rows_of(6, 1024, 41);
    std::vector<float> w(1024);
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = 0.25f + static_cast<float>((k * 37) % 19);
    for (const char* name : {"q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_nl", "iq4_xs", "tq1_0", "tq2_0"}) {
        for (bool weighted : {false, true}) {
            INFO(name << (weighted ? " with importance" : ""));
            QuantConfig c = config_of(name);
            if (weighted) c.importance = std::make_shared<const std::vector<float>>(w);
            const FormatConfig fc = format_config(c);
            const FormatParams kept = compute_format_params(view_of(t), fc);
            REQUIRE(static_cast<bool>(kept.ggml_blocks));
            const FormatParams again = format_params_for(view_of(t), format_quant_params(view_of(t), c, nullptr), c);
            REQUIRE_FALSE(static_cast<bool>(again.ggml_blocks));
            const auto n = static_cast<std::size_t>(t.numel());
            std::vector<std::int32_t> codes_a(n), codes_b(n);
            std::vector<float> deq_a(n), deq_b(n), err_a(n), err_b(n);
            const Metrics a = quantize_format_view(view_of(t), kept, fc, QuantOutputs{codes_a.data(), deq_a.data(), err_a.data()});
            const Metrics b = quantize_format_view(view_of(t), again, fc, QuantOutputs{codes_b.data(), deq_b.data(), err_b.data()});
            CHECK(codes_a == codes_b);
            CHECK(std::memcmp(deq_a.data(), deq_b.data(), n * sizeof(float)) == 0);
            CHECK(a.mse == b.mse);
            CHECK(a.clipped == b.clipped);
            // Rows 2..5 alone, at their place in the tensor: the kept blocks from the slice's first.
            const std::int64_t first = 2 * 1024;
            TensorView rest = view_of(t);
            rest.shape = {4, 1024};
            rest.data += static_cast<std::size_t>(first) * sizeof(float);
            std::vector<std::int32_t> codes_s(static_cast<std::size_t>(4 * 1024));
            std::vector<float> deq_s(codes_s.size()), err_s(codes_s.size());
            quantize_format_slice(rest, first, kept, fc, QuantOutputs{codes_s.data(), deq_s.data(), err_s.data()});
            CHECK(std::equal(codes_s.begin(), codes_s.end(), codes_b.begin() + first));
            CHECK(std::memcmp(deq_s.data(), deq_b.data() + first, deq_s.size() * sizeof(float)) == 0);
            // A slice past the params' tensor has no kept blocks to read: refused, not read past their end.
            const Tensor longer = rows_of(8, 1024, 43);
            TensorView past = view_of(longer);
            past.shape = {6, 1024};
            past.data += static_cast<std::size_t>(first) * sizeof(float);
            std::vector<std::int32_t> codes_p(static_cast<std::size_t>(6 * 1024));
            std::vector<float> deq_p(codes_p.size()), err_p(codes_p.size());
            CHECK_THROWS(quantize_format_slice(past, first, kept, fc, QuantOutputs{codes_p.data(), deq_p.data(), err_p.data()}));
            // --out-packed's bytes: the kept blocks written as they are, or quantized again.
            std::string from_kept, quantized;
            ggml_block_bytes(view_of(t), c, kept, [&](const std::uint8_t* b, std::size_t size) {
                from_kept.append(reinterpret_cast<const char*>(b), size);
            });
            ggml_block_bytes(view_of(t), c, [&](const std::uint8_t* b, std::size_t size) {
                quantized.append(reinterpret_cast<const char*>(b), size);
            });
            CHECK(from_kept.size() == static_cast<std::size_t>(t.numel() / kept_type(c).block_size * kept_type(c).type_size));
            CHECK(from_kept == quantized);
        }
    }
}
