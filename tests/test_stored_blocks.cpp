// Stored blocks (issue 23 item 6: a Model-tab row opens A's tensor with B's stored values as its quantization):
// every view of A through params that carry B's blocks shows ggml_dequantize of B's bytes as r', B's block fields
// as the codes and scales, and |A - B| as the error; nothing is quantized again. B's blocks here are made from
// values other than A's, so a pass that quantized A instead would not give them.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "gguf_writer.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/cell_bits.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/compare.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/stored_blocks.hpp"
#include "quantscope/stored_tensor.hpp"
#include "test_helpers.hpp"
#include "test_stored16.hpp"

using namespace qs;
using qs::test::GgufWriter;

namespace {

const GgmlTypeInfo& type_of(GgmlType t) { return *ggml_type_info(static_cast<std::uint32_t>(t)); }

std::vector<float> laplace(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::exponential_distribution<float> e(1.0f);
    std::bernoulli_distribution sign(0.5);
    std::vector<float> v(n);
    for (float& x : v) x = (sign(rng) ? 1.0f : -1.0f) * e(rng) * 0.02f;
    return v;
}

std::string blocks_of(const GgmlTypeInfo& type, const std::vector<float>& values) {
    std::string out(static_cast<std::size_t>(ggml_row_bytes(type, static_cast<std::int64_t>(values.size()))), '\0');
    ggml_quantize_blocks(type, values.data(), static_cast<std::int64_t>(values.size()) / type.block_size, nullptr,
                         out.data());
    return out;
}

// A: f32 "w" 6 x 512 and "bias" 64 x 32. B: "w" as q4_K and "bias" as q8_0, each of A's values moved a little (as
// a model fine-tuned before it was quantized), "f16" a value type, "iq2" a type QuantScope does not decode and
// "wide" of another shape.
struct Files {
    std::vector<float> w = laplace(6 * 512, 1), bias = laplace(64 * 32, 2);
    std::vector<float> w_b = moved(w, 3), bias_b = moved(bias, 4);
    std::string b_w = blocks_of(type_of(GgmlType::Q4_K), w_b), b_bias = blocks_of(type_of(GgmlType::Q8_0), bias_b);
    qs::test::TempDir dir;
    std::string b_path = dir / "b.gguf";
    Files() {
        GgufWriter b;
        b.tensor("w", {512, 6}, 12, b_w)
            .tensor("bias", {32, 64}, 8, b_bias)
            .tensor("f16", {32, 2}, 1, std::string(64 * 2, '\0'))
            .tensor("iq2", {256, 1}, 16, std::string(66, '\0'))
            .tensor("wide", {512, 12}, 12, blocks_of(type_of(GgmlType::Q4_K), laplace(12 * 512, 5)));
        qs::test::write_bytes(b_path, b.build());
    }
    static std::vector<float> moved(std::vector<float> v, std::uint32_t seed) {
        const std::vector<float> d = laplace(v.size(), seed);
        for (std::size_t k = 0; k < v.size(); ++k) v[k] += 0.1f * d[k];
        return v;
    }
};

Tensor tensor_of(const std::vector<float>& values, Shape shape) {
    Tensor t;
    t.shape = std::move(shape);
    t.values = values;
    return t;
}

std::vector<float> decoded(const GgmlTypeInfo& type, const std::string& bytes, std::size_t n) {
    std::vector<float> out(n);
    ggml_dequantize(type, bytes.data(), static_cast<std::int64_t>(n), out.data());
    return out;
}

std::vector<std::int32_t> codes_of(const GgmlTypeInfo& type, const std::string& bytes, std::size_t n) {
    std::vector<std::int32_t> out;
    GgmlBlockFields f;
    for (std::size_t b = 0; b < n / static_cast<std::size_t>(type.block_size); ++b) {
        ggml_block_fields(type, bytes.data() + b * static_cast<std::size_t>(type.type_size), f);
        out.insert(out.end(), f.codes, f.codes + type.block_size);
    }
    return out;
}

std::vector<float> abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
    std::vector<float> e(a.size());
    for (std::size_t k = 0; k < a.size(); ++k) e[k] = std::fabs(a[k] - b[k]);
    return e;
}

// Every panel's source for A's `values` against B's tensor `name`, checked against B's bytes decoded directly.
void check_panels(const Files& f, const char* name, const std::vector<float>& a, const Shape& shape,
                  const GgmlTypeInfo& type, const std::string& b_bytes) {
    const std::shared_ptr<const StoredBlocks> stored = read_stored_blocks(f.b_path, name);
    REQUIRE(stored->type == &type);
    const Tensor t = tensor_of(a, shape);
    const TensorView view = view_of(t);
    const QuantParams params = stored_params(shape, stored);
    const QuantConfig config = stored_config(*stored, QuantConfig{});
    const std::vector<float> b = decoded(type, b_bytes, a.size());
    const std::vector<std::int32_t> codes = codes_of(type, b_bytes, a.size());
    const std::vector<float> err = abs_diff(a, b);

    // B's values are not a quantization of A's: a pass that quantized A would not give them.
    std::vector<float> requantized = decoded(type, blocks_of(type, a), a.size());
    CHECK(requantized != b);

    // quantize_view, as --out-* and export take it.
    std::vector<std::int32_t> q(a.size());
    std::vector<float> deq(a.size()), e(a.size());
    const Metrics m = quantize_view(view, params, config, QuantOutputs{q.data(), deq.data(), e.data()});
    CHECK(deq == b);
    CHECK(q == codes);
    CHECK(e == err);
    double e2 = 0;
    for (float x : err) e2 += static_cast<double>(x) * x;
    CHECK(m.mse == doctest::Approx(e2 / static_cast<double>(a.size())).epsilon(1e-12));
    CHECK(m.max_abs_error == *std::max_element(err.begin(), err.end()));
    CHECK(m.clipped == 0);

    // The figure's overview at full resolution, and a window of cells as the zoomed figure reads it.
    const OverviewGrid grid = overview_grid(shape, std::int64_t{1} << 20);
    REQUIRE(grid.exact());
    const QuantOverview o = quantize_overview(view, params, config, grid);
    CHECK(o.dequantized_mean == b);
    CHECK(o.error_max == err);
    for (std::size_t k = 0; k < a.size(); ++k) REQUIRE(o.codes_mean[k] == static_cast<float>(codes[k]));
    CHECK(o.metrics.mse == doctest::Approx(m.mse).epsilon(1e-12));
    WindowResults w;
    const CellWindow cells{1, 3, 2, std::min<std::int64_t>(40, shape.back() - 3)};  // row0, col0, rows, cols: inside a block
    quantize_window(view, params, config, 0, cells, w);
    for (std::int64_t r = 0; r < cells.rows; ++r)
        for (std::int64_t c = 0; c < cells.cols; ++c) {
            const auto flat = static_cast<std::size_t>((cells.row0 + r) * shape.back() + cells.col0 + c);
            const auto at = static_cast<std::size_t>(r * cells.cols + c);
            CHECK(w.original[at] == a[flat]);
            CHECK(w.dequantized[at] == b[flat]);
            CHECK(w.codes[at] == codes[flat]);
            CHECK(w.error[at] == err[flat]);
        }

    // One element's trace and its Bits view: B's block, field by field.
    const std::int64_t flat = static_cast<std::int64_t>(a.size()) - 77;
    const ElementTrace tr = trace_element(view, params, config, flat);
    CHECK(tr.r == a[static_cast<std::size_t>(flat)]);
    CHECK(tr.dequantized == b[static_cast<std::size_t>(flat)]);
    CHECK(tr.code == codes[static_cast<std::size_t>(flat)]);
    CHECK(tr.error == err[static_cast<std::size_t>(flat)]);
    const CellBits bits = cell_bits(view, params, config, flat, -1.0f);
    GgmlBlockFields fields;
    ggml_block_fields(type, b_bytes.data() + flat / type.block_size * type.type_size, fields);
    REQUIRE(bits.ggml.type == &type);
    CHECK(bits.ggml.fields.d_bits == fields.d_bits);
    CHECK(bits.ggml.fields.dmin_bits == fields.dmin_bits);
    CHECK(std::memcmp(bits.ggml.fields.sub_scale, fields.sub_scale, sizeof fields.sub_scale) == 0);
    CHECK(std::memcmp(bits.ggml.fields.sub_min, fields.sub_min, sizeof fields.sub_min) == 0);
    CHECK(bits.ggml.dequantized == b[static_cast<std::size_t>(flat)]);
    CHECK(bits.ggml.value == a[static_cast<std::size_t>(flat)]);
    CHECK(!bits.ggml.weighted);
    const std::int64_t block = flat / type.block_size;
    CHECK(stored_pair(view, params, config, block).scale == fields.d);
    const std::vector<std::int32_t> block_q = block_codes(a.data() + block * type.block_size, type.block_size, params, config, block);
    CHECK(block_q == std::vector<std::int32_t>(codes.begin() + block * type.block_size, codes.begin() + (block + 1) * type.block_size));
}

}  // namespace

TEST_CASE("stored blocks: the panels of A against B's q4_K are B's decoded bytes and the error is the difference") {
    const Files f;
    check_panels(f, "w", f.w, {6, 512}, type_of(GgmlType::Q4_K), f.b_w);
}

TEST_CASE("stored blocks: q8_0 (a row with its own kernels) is decoded from B's bytes too") {
    const Files f;
    check_panels(f, "bias", f.bias, {64, 32}, type_of(GgmlType::Q8_0), f.b_bias);
}

TEST_CASE("stored blocks: streamed results come in order and equal the whole arrays") {
    const Files f;
    const auto stored = read_stored_blocks(f.b_path, "w");
    const Tensor t = tensor_of(f.w, {6, 512});
    const QuantParams params = stored_params(t.shape, stored);
    const QuantConfig config = stored_config(*stored, QuantConfig{});
    std::vector<float> deq(f.w.size(), -1.0f);
    OutputSelection wanted;
    wanted.dequantized = true;
    const Metrics m = quantize_view(view_of(t), params, config, wanted, [&](std::int64_t first, std::int64_t count, const QuantOutputs& out) {
        REQUIRE(out.dequantized != nullptr);
        std::copy_n(out.dequantized, count, deq.begin() + first);
    });
    CHECK(deq == decoded(type_of(GgmlType::Q4_K), f.b_w, f.w.size()));
    CHECK(m.count == static_cast<std::int64_t>(f.w.size()));
}

TEST_CASE("stored blocks: what B cannot be is one line") {
    const Files f;
    const auto message = [&](const std::function<void()>& run) {
        try {
            run();
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    const std::string shape = message([&] { stored_params({6, 512}, read_stored_blocks(f.b_path, "wide")); });
    CHECK(shape == "the stored q4_K tensor is 12x512, this one 6x512");
    const std::string i32 = message([&] { make_stored_blocks(type_of(GgmlType::I32), {4}, std::vector<std::uint8_t>(16)); });
    CHECK(i32 == "its type i32 is neither quantized blocks nor values QuantScope reads");
    const std::string iq2 = message([&] { read_stored_blocks(f.b_path, "iq2"); });
    CHECK(qs::test::contains(iq2, "tensor 'iq2': its type iq2_xxs has no codes QuantScope shows"));
    CHECK(qs::test::contains(message([&] { read_stored_blocks(f.b_path, "nope"); }), "no tensor named 'nope'"));
    CHECK(qs::test::contains(message([&] { read_stored_blocks(f.dir / "b.safetensors", "w"); }), "b.safetensors"));
    for (const std::string& m : {shape, i32, iq2}) CHECK(m.find('\n') == std::string::npos);

    // Codes a quantizer never writes: q8_0's -128 and tq2_0's 2 decode, but lie outside the type's codes.
    std::string q8(34, '\0');
    q8[2] = static_cast<char>(-128);
    CHECK(message([&] { make_stored_blocks(type_of(GgmlType::Q8_0), {32}, {q8.begin(), q8.end()}); }) ==
          "block 0 holds the code -128, outside q8_0's -127..127");
    std::string tq2(66, '\0');
    tq2[0] = 3;  // the first element's 2 bits: 3, which stands for 2
    CHECK(qs::test::contains(message([&] { make_stored_blocks(type_of(GgmlType::TQ2_0), {256}, {tq2.begin(), tq2.end()}); }),
                             "outside tq2_0's -1..1"));
    CHECK(qs::test::contains(message([&] { make_stored_blocks(type_of(GgmlType::Q4_K), {256}, std::vector<std::uint8_t>(100)); }),
                             "stored bytes are not those of a 256 q4_K tensor"));
}

// B stores plain values (an F32 A against its F16 or BF16 B, the commonest pair; or an F32 B): r' is B's values,
// the error |A - B| and the metrics in double as `compare` measures them; no codes, no levels, nothing bit by bit.
TEST_CASE("stored blocks: B's F16 or BF16 or F32 values (GGUF or safetensors) are r' against A with no codes") {
    const Files f;
    std::string f16, bf16, f32;
    for (const float v : f.w_b) {
        const std::uint16_t h = qs::test16::to_f16(v), b = qs::test16::to_bf16(v);
        f16 += GgufWriter::raw(std::vector<std::uint16_t>{h});
        bf16 += GgufWriter::raw(std::vector<std::uint16_t>{b});
    }
    f32 = GgufWriter::raw(f.w_b);
    GgufWriter g;
    g.tensor("w16", {512, 6}, 1, f16).tensor("wb16", {512, 6}, 30, bf16).tensor("w32", {512, 6}, 0, f32);
    const std::string gguf = f.dir / "values.gguf", st = f.dir / "values.safetensors";
    qs::test::write_bytes(gguf, g.build());
    qs::test::write_bytes(st, qs::test::safetensors_file(
                                  R"({"w16":{"dtype":"F16","shape":[6,512],"data_offsets":[0,6144]},)"
                                  R"("w32":{"dtype":"F32","shape":[6,512],"data_offsets":[6144,18432]}})",
                                  f16 + f32));
    const Tensor a = tensor_of(f.w, {6, 512});
    struct Case {
        std::string path, name;
        GgmlType type;
        FormatId format;
    };
    for (const Case& c : {Case{gguf, "w16", GgmlType::F16, FormatId::Fp16}, Case{gguf, "wb16", GgmlType::BF16, FormatId::Bf16},
                          Case{gguf, "w32", GgmlType::F32, FormatId::Fp16}, Case{st, "w16", GgmlType::F16, FormatId::Fp16},
                          Case{st, "w32", GgmlType::F32, FormatId::Fp16}}) {
        CAPTURE(c.path);
        CAPTURE(c.name);
        const std::shared_ptr<const StoredBlocks> stored = read_stored_blocks(c.path, c.name);
        REQUIRE(stored->values());
        CHECK(stored->type == &type_of(c.type));
        CHECK(stored->format == c.format);
        const QuantConfig config = stored_config(*stored, QuantConfig{});
        CHECK(config.format == c.format);
        CHECK(config.mode == Mode::Cast);
        const QuantParams params = stored_params(a.shape, stored);
        CHECK(params.block_count == 1);
        const std::string& bytes = c.type == GgmlType::F16 ? f16 : c.type == GgmlType::BF16 ? bf16 : f32;
        const std::vector<float> b = decoded(type_of(c.type), bytes, f.w.size());
        std::vector<std::int32_t> codes(f.w.size(), 7);
        std::vector<float> deq(f.w.size()), err(f.w.size());
        const QuantOutputs out{codes.data(), deq.data(), err.data()};
        const Metrics m = quantize_view(view_of(a), params, config, out);
        CHECK(deq == b);
        double sq_err = 0, sq_a = 0, max_err = 0;
        for (std::size_t k = 0; k < b.size(); ++k) {
            const double e = static_cast<double>(f.w[k]) - b[k];
            REQUIRE(err[k] == static_cast<float>(std::fabs(e)));
            REQUIRE(codes[k] == 0);
            sq_err += e * e;
            sq_a += static_cast<double>(f.w[k]) * f.w[k];
            max_err = std::max(max_err, std::fabs(e));
        }
        CHECK(m.mse == doctest::Approx(sq_err / static_cast<double>(b.size())).epsilon(1e-12));
        REQUIRE(m.sqnr_db);
        CHECK(*m.sqnr_db == doctest::Approx(10.0 * std::log10(sq_a / sq_err)).epsilon(1e-12));
        CHECK(m.max_abs_error == max_err);
        CHECK(m.levels_used == 0);
        CHECK(m.levels_total == 0);
        // The overview (the window's panels) the same, and one element's trace: A, B's value, |A - B|.
        const QuantOverview o = quantize_overview(view_of(a), params, config, overview_grid(a.shape, std::int64_t{1} << 20));
        CHECK(o.dequantized_mean == b);
        CHECK(o.metrics.max_abs_error == max_err);
        const ElementTrace t = trace_element(a, params, config, 777);
        CHECK(t.r == f.w[777]);
        CHECK(t.dequantized == b[777]);
        CHECK(t.error == std::fabs(f.w[777] - b[777]));
        // Nothing bit by bit, and no codes for a block: one line each.
        const std::string bits = qs::test::error_of([&] { cell_bits(view_of(a), params, config, 777, 1.0f); });
        CHECK(qs::test::contains(bits, "values, not codes"));
        CHECK(qs::test::contains(qs::test::error_of([&] { stored_block_codes(*stored, 0); }), "there are no codes"));
    }
}

// The window's numbers of a large F32 A against its F16 B (a million values: the overview sums them in pieces
// on every thread) are `compare`'s row for the tensor: MSE and SQNR up to the order of the sums, the largest error
// to the bit.
TEST_CASE("stored blocks: B's F16 values against a large A give compare's row") {
    const std::size_t rows = 1024, cols = 1024;
    std::vector<float> a = laplace(rows * cols, 21);
    std::string f16;
    f16.reserve(a.size() * 2);
    for (const float v : a) f16 += GgufWriter::raw(std::vector<std::uint16_t>{qs::test16::to_f16(v * 1.001f)});
    qs::test::TempDir dir;
    GgufWriter wa, wb;
    wa.tensor("big", {cols, rows}, 0, GgufWriter::raw(a));
    wb.tensor("big", {cols, rows}, 1, f16);
    qs::test::write_bytes(dir / "a.gguf", wa.build());
    qs::test::write_bytes(dir / "b.gguf", wb.build());
    std::vector<CompareRow> compared;
    compare_checkpoints(open_checkpoint(dir / "a.gguf"), open_checkpoint(dir / "b.gguf"),
                        [&](const CompareRow& r) { compared.push_back(r); });
    REQUIRE(compared.size() == 1);
    REQUIRE(compared[0].error.empty());
    const std::shared_ptr<const StoredBlocks> stored = read_stored_blocks(dir / "b.gguf", "big");
    const Tensor ta = tensor_of(a, {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols)});
    const QuantParams params = stored_params(ta.shape, stored);
    const QuantConfig config = stored_config(*stored, QuantConfig{});
    const QuantOverview o = quantize_overview(view_of(ta), params, config, overview_grid(ta.shape, 4096));
    CHECK(o.metrics.mse == doctest::Approx(compared[0].mse).epsilon(1e-12));
    REQUIRE(o.metrics.sqnr_db);
    REQUIRE(compared[0].sqnr_db);
    CHECK(*o.metrics.sqnr_db == doctest::Approx(*compared[0].sqnr_db).epsilon(1e-12));
    CHECK(o.metrics.max_abs_error == compared[0].max_abs_error);
}
