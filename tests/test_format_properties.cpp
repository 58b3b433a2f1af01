// Properties every format's pass keeps on random tensors: codes in range, r' exactly scale * grid[code],
// clipped = the elements that saturated, the trace agrees with the pass, streaming and thread count change
// no bit; bad input is one clear error.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "quantscope/error.hpp"
#include "quantscope/blocks.hpp"
#include "quantscope/config.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/quantize.hpp"

using namespace qs;

namespace {

Tensor random_tensor(std::uint32_t seed, Shape shape) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Tensor t{shape, {}};
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    for (std::int64_t i = 0; i < n; ++i) t.values.push_back(normal(rng) * (i % 97 == 5 ? 40.0f : 1.0f));
    return t;
}

// What grid[code] stands for and r' must be, independently of the pass's own arithmetic.
float expected_deq(const FormatParams& p, std::int64_t i, std::int32_t code) {
    const FormatInfo& info = format_info(p.format);
    const auto b = static_cast<std::size_t>(p.block_of(i));
    const float s = p.scale[b];
    switch (p.format) {
        case FormatId::Nf4: return s * nf4_codebook()[static_cast<std::size_t>(code)];
        case FormatId::Q8_0: return static_cast<float>(code) * s + 0.0f;
        case FormatId::Q4_0: return static_cast<float>(code - 8) * s + 0.0f;
        case FormatId::Q4_1: return static_cast<float>(code) * s + p.offset[b] + 0.0f;
        default: break;
    }
    const float v = float_from_code(static_cast<std::uint32_t>(code), info.element);
    return info.kind == FormatKind::Block ? v * s : s * v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// ggml's codec rows (q5_0 ... tq2_0): r' is their codec's to_float of nested scales, not scale * grid[code];
// test_ggml_rows_cli.cpp and test_ggml_rows_bits.cpp hold them to the codecs, and the tests below that need
// no grid formula take them too.
bool codec_row(FormatId id) {
    return format_info(id).ggml && id != FormatId::Q8_0 && id != FormatId::Q4_0 && id != FormatId::Q4_1;
}

std::vector<FormatConfig> configs() {
    std::vector<FormatConfig> out;
    for (FormatId id : all_formats()) {
        if (codec_row(id)) continue;
        FormatConfig c;
        c.format = id;
        out.push_back(c);
        if (format_info(id).kind == FormatKind::Block) continue;
        c.granularity = Granularity::Channel;
        c.axis = 1;
        out.push_back(c);
        c.granularity = Granularity::Group;
        c.group_size = 16;
        out.push_back(c);
        c.granularity = Granularity::Tensor;
        c.scaling = ElementScaling::Manual;
        c.manual_scale = 0.05;
        out.push_back(c);
        if (format_info(id).kind == FormatKind::Float) {
            c.scaling = ElementScaling::Cast;
            out.push_back(c);
        }
    }
    return out;
}

}  // namespace

namespace {

// Codes in range, r' = scale * grid[code] bit for bit, the error, the trace agreeing with the (vectorised)
// pass and the clipped count; returns the quantization for the caller's further checks.
FormatQuantization check_pass_against_trace(const Tensor& t, const FormatConfig& c) {
    const std::int64_t n = t.numel();
    std::vector<std::int32_t> codes(static_cast<std::size_t>(n));
    std::vector<float> deq(static_cast<std::size_t>(n)), err(static_cast<std::size_t>(n));
    const FormatQuantization q = quantize_format(view_of(t), c, {codes.data(), deq.data(), err.data()});
    const FormatInfo& info = format_info(c.format);
    std::int64_t clipped = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        if (c.format == FormatId::Q8_0) {
            REQUIRE(codes[k] >= -127);
            REQUIRE(codes[k] <= 127);
        } else {
            REQUIRE(codes[k] >= 0);
            REQUIRE(codes[k] < (1 << info.element_bits));
        }
        REQUIRE(same_bits(deq[k], expected_deq(q.params, i, codes[k])));
        REQUIRE(err[k] == std::fabs(t.values[k] - deq[k]));
        const FormatTrace tr = trace_format_element(view_of(t), q.params, c, i);
        REQUIRE(tr.code == codes[k]);
        REQUIRE(same_bits(tr.dequantized, deq[k]));
        clipped += tr.clipped ? 1 : 0;
        // An element format saturates exactly when |r / s| passes the largest value; that counts as clipped
        // except under the symmetric scale (rounded to nearest, only a block's maximum lands a hair past it).
        if (info.kind == FormatKind::Float) {
            const bool past = std::fabs(t.values[k] / tr.scale) > info.element.largest();
            REQUIRE(tr.clipped == (past && clips_counted(c)));
            if (past) REQUIRE(std::fabs(tr.grid_value) == static_cast<float>(info.element.largest()));
        }
    }
    CHECK(q.metrics.clipped == clipped);
    return q;
}

// Tensors [4, 64] whose blocks sit where a vectorised pass can go wrong: subnormal-only, near FLT_MAX, all
// zero, exact ties of the grids, a mix of huge and subnormal in one block, negative zero.
std::vector<Tensor> hostile_tensors() {
    std::vector<Tensor> out;
    const auto make = [&](auto&& value) {
        Tensor t{{4, 64}, {}};
        for (int i = 0; i < 256; ++i) t.values.push_back(value(i));
        out.push_back(std::move(t));
    };
    make([](int i) { return (i % 2 ? -1.0f : 1.0f) * std::ldexp(1.0f, -149 + i % 20); });        // subnormal only
    make([](int i) { return (i % 3 - 1) * std::nextafter(3.4028235e38f, 0.0f) / (1 + i % 5); }); // near FLT_MAX
    make([](int i) { return i < 64 ? 0.0f : (i < 128 ? -0.0f : static_cast<float>(i % 7) * 0.25f - 0.75f); });
    make([](int i) { return (i % 2 ? -1.0f : 1.0f) * 0.25f * static_cast<float>(i % 29); });     // ties: k/4
    make([](int i) { return i % 16 == 0 ? 3.0e38f : std::ldexp(1.0f, -140 + i % 9); });          // huge + tiny
    make([](int i) { return i % 32 == 0 ? 1.0e-30f : 0.0f; });                                   // one tiny a block
    return out;
}

}  // namespace

TEST_CASE("format properties: codes in range and r' exactly the scale times the grid value") {
    const Tensor t = random_tensor(3, {6, 5, 64});
    for (const FormatConfig& c : configs()) {
        CAPTURE(std::string(format_name(c.format)));
        CAPTURE(std::string(to_string(c.granularity)));
        CAPTURE(std::string(to_string(c.scaling)));
        const FormatQuantization q = check_pass_against_trace(t, c);
        const FormatInfo& info = format_info(c.format);
        CHECK(q.metrics.levels_used <= q.metrics.levels_total);
        CHECK(q.metrics.levels_used >= 2);
        if (c.scaling == ElementScaling::Symmetric && info.kind != FormatKind::Block) CHECK(q.metrics.clipped == 0);
        CHECK(q.range.min == *std::min_element(t.values.begin(), t.values.end()));
    }
}

TEST_CASE("format properties hold on hostile ranges: subnormal-only and near-FLT_MAX blocks and ties") {
    int k = 0;
    for (const Tensor& t : hostile_tensors()) {
        CAPTURE(k++);
        for (const FormatConfig& c : configs()) {
            CAPTURE(std::string(format_name(c.format)));
            CAPTURE(std::string(to_string(c.granularity)));
            CAPTURE(std::string(to_string(c.scaling)));
            const FormatQuantization q = check_pass_against_trace(t, c);
            CHECK(std::isfinite(q.metrics.mse));
            CHECK(q.metrics.levels_used <= q.metrics.levels_total);
        }
    }
}

TEST_CASE("format properties: streamed batches and one thread give the same bits as the whole pass") {
    const Tensor t = random_tensor(5, {1100, 1024});  // above the pass's 2^20-element batch
    const std::int64_t n = t.numel();
    for (FormatId id : {FormatId::Fp8E4M3, FormatId::Nf4, FormatId::MxFp4, FormatId::NvFp4, FormatId::Q4_1}) {
        CAPTURE(std::string(format_name(id)));
        FormatConfig c;
        c.format = id;
        std::vector<std::int32_t> codes(static_cast<std::size_t>(n));
        std::vector<float> deq(static_cast<std::size_t>(n));
        const FormatQuantization whole = quantize_format(view_of(t), c, {codes.data(), deq.data(), nullptr});
        std::vector<std::int32_t> streamed(static_cast<std::size_t>(n), -1000);
        const Metrics m = quantize_format_view(view_of(t), whole.params, c, OutputSelection{true, false, false},
                                               [&](std::int64_t first, std::int64_t count, const QuantOutputs& b) {
                                                   REQUIRE(b.codes != nullptr);
                                                   std::copy(b.codes, b.codes + count, streamed.begin() + first);
                                               });
        CHECK(streamed == codes);
        CHECK(m.mse == whole.metrics.mse);
        CHECK(m.mae == whole.metrics.mae);
        const int threads = omp_get_max_threads();
        omp_set_num_threads(1);
        const Metrics one = quantize_format_view(view_of(t), whole.params, c);
        omp_set_num_threads(threads);
        CHECK(one.mse == whole.metrics.mse);
        CHECK(one.sum == whole.metrics.sum);
        CHECK(one.levels_used == whole.metrics.levels_used);
    }
}

TEST_CASE("format pass: a NaN is one error naming its index and an empty range is handled") {
    Tensor t{{2, 32}, std::vector<float>(64, 1.0f)};
    t.values[37] = NAN;
    for (FormatId id : {FormatId::Fp16, FormatId::Q4_0, FormatId::NvFp4}) {
        FormatConfig c;
        c.format = id;
        CHECK_THROWS_WITH_AS(quantize_format(view_of(t), c), doctest::Contains("[1, 5]"), Error);
    }
    // All zeros: s = 1 (element formats), X = 1 (MX), g = 1 (NVFP4), d = 0 (ggml): r' = 0, no NaN.
    const Tensor zeros{{2, 256}, std::vector<float>(512, 0.0f)};
    for (FormatId id : all_formats()) {
        CAPTURE(std::string(format_name(id)));
        FormatConfig c;
        c.format = id;
        const FormatQuantization q = quantize_format(view_of(zeros), c);
        CHECK(q.metrics.mse == 0);
        CHECK(q.metrics.clipped == 0);
        CHECK_FALSE(q.metrics.sqnr_db.has_value());
    }
}

TEST_CASE("format pass: values near float32's limits saturate and stay finite") {
    Tensor t{{2, 256}, {}};
    for (int i = 0; i < 512; ++i)
        t.values.push_back((i % 2 ? -1 : 1) * (i % 256 < 8 ? 3.4e38f : std::ldexp(1.0f, -140 + i % 256)));
    std::vector<FormatConfig> all = configs();
    for (FormatId id : all_formats())
        if (codec_row(id)) all.push_back(FormatConfig{id});
    for (const FormatConfig& c : all) {
        CAPTURE(std::string(format_name(c.format)));
        CAPTURE(std::string(to_string(c.scaling)));
        std::vector<float> deq(512);
        const FormatQuantization q = quantize_format(view_of(t), c, {nullptr, deq.data(), nullptr});
        for (float d : deq) REQUIRE(std::isfinite(d));
        CHECK(std::isfinite(q.metrics.mse));
    }
}

TEST_CASE("format through the int entry points: compute_params quantize and trace_element agree with the format pass") {
    const Tensor t = random_tensor(9, {1, 256});
    for (FormatId id : all_formats()) {
        CAPTURE(std::string(format_name(id)));
        QuantConfig qc;
        qc.format = id;
        qc.mode = Mode::Symmetric;
        FormatConfig fc;
        fc.format = id;
        std::vector<std::int32_t> codes(256);
        std::vector<float> deq(256);
        const FormatQuantization want = quantize_format(view_of(t), fc, {codes.data(), deq.data(), nullptr});
        QuantParams params;
        const QuantResult got = quantize(t, qc, &params);
        CHECK(got.codes == codes);
        CHECK(got.dequantized == deq);
        CHECK(got.metrics.mse == want.metrics.mse);
        CHECK(params.scale.size() == want.params.scale.size());
        for (std::int64_t i = 0; i < 256; ++i) {
            const ElementTrace tr = trace_element(t, params, qc, i);
            REQUIRE(tr.code == codes[static_cast<std::size_t>(i)]);
            REQUIRE(tr.dequantized == deq[static_cast<std::size_t>(i)]);
        }
    }
}

TEST_CASE("block codes: one block's codes from its gathered values equal the pass's for every format") {
    // The window's code histogram of one block reads these; for ggml the codes must come from the block's
    // float32 d (r / fp16(d) moves some codes across a rounding boundary: q4_0 and q8_0 failed before).
    const Tensor t = random_tensor(11, {8, 256});
    for (const FormatId id : {FormatId::Q8_0, FormatId::Q4_0, FormatId::Q4_1, FormatId::Nf4, FormatId::MxFp4,
                              FormatId::NvFp4, FormatId::Fp8E4M3, FormatId::Q5_0, FormatId::Q4_K, FormatId::Iq4_XS}) {
        const QuantConfig config = with_format(QuantConfig{}, id);
        QuantParams params;
        const QuantResult whole = quantize(t, config, &params);
        std::int64_t mismatches = 0;
        for (std::int64_t b = 0; b < params.block_count; ++b) {
            const std::vector<float> values = block_elements(t.values.data(), t.numel(), params, b);
            const std::vector<std::int32_t> want =
                block_elements(whole.codes.data(), t.numel(), params, b);
            const std::vector<std::int32_t> got =
                block_codes(values.data(), static_cast<std::int64_t>(values.size()), params, config, b);
            REQUIRE(got.size() == want.size());
            for (std::size_t i = 0; i < got.size(); ++i) mismatches += got[i] != want[i];
        }
        CHECK_MESSAGE(mismatches == 0, format_name(id));
    }
}
