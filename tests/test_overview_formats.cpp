// The window's one-pass overview cuts a large tensor into pieces: a number format's scales must still be
// the whole tensor's (a per-tensor fp8 s, NVFP4's g), so its metrics equal `quantize`'s.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

TEST_CASE("overview of a number format over many pieces has the metrics of quantize") {
    qs::RandomSpec spec;
    spec.shape = {512, 1024};  // 4 pieces of 2^17 elements
    spec.seed = 4;
    qs::Tensor t = qs::generate_random(spec);
    t.values[7] = 40.0f;  // the largest magnitude sits in the first piece only
    const qs::TensorView view = qs::view_of(t);
    for (const char* dtype : {"fp8-e4m3", "nf4", "fp4-e2m1", "nvfp4", "mxfp4", "q4_0"}) {
        CAPTURE(dtype);
        qs::QuantConfig config;
        qs::parse_dtype(dtype, config);
        config = qs::with_format(config, config.format);
        const qs::Quantization whole = qs::quantize_checked(view, config);
        const qs::QuantParams params = qs::compute_params(view, config);
        const qs::QuantOverview o = qs::quantize_overview(view, params, config, qs::overview_grid(t.shape, 4096));
        CHECK(o.metrics.mse == doctest::Approx(whole.metrics.mse).epsilon(1e-9));
        CHECK(o.metrics.max_abs_error == whole.metrics.max_abs_error);
        CHECK(o.metrics.clipped == whole.metrics.clipped);
    }
}

TEST_CASE("an exact overview of a number format under one scale holds each cell's r' and not s times its code") {
    // int<N>'s r' = s (q - z) follows from the mean code; an fp8 bit pattern or an nf4 index does not.
    qs::RandomSpec spec;
    spec.shape = {64, 96};
    spec.seed = 25;
    const qs::Tensor t = qs::generate_random(spec);
    const qs::TensorView view = qs::view_of(t);
    for (const char* dtype : {"int8", "fp8-e4m3", "nf4", "bf16", "q4_0"}) {
        CAPTURE(dtype);
        qs::QuantConfig config;
        qs::parse_dtype(dtype, config);
        if (std::string(dtype) != "int8") config = qs::with_format(config, config.format);
        qs::QuantParams params;
        const qs::QuantResult whole = qs::quantize(t, config, &params);
        const qs::QuantOverview o = qs::quantize_overview(view, params, config, qs::overview_grid(t.shape, 1 << 20));
        REQUIRE(o.grid.exact());
        int mismatches = 0;
        for (std::size_t i = 0; i < whole.dequantized.size(); ++i) {
            mismatches += o.dequantized_mean[i] != whole.dequantized[i];
            mismatches += o.codes_mean[i] != static_cast<float>(whole.codes[i]);
            mismatches += o.error_max[i] != whole.error[i];
        }
        CHECK(mismatches == 0);
        CHECK(o.dequantized_lo == *std::min_element(whole.dequantized.begin(), whole.dequantized.end()));
        CHECK(o.dequantized_hi == *std::max_element(whole.dequantized.begin(), whole.dequantized.end()));
    }
}

TEST_CASE("a slice quantized with the whole tensor's format params gives the whole pass's results") {
    qs::RandomSpec spec;
    spec.shape = {64, 256};
    spec.seed = 9;
    qs::Tensor t = qs::generate_random(spec);
    t.values[3] = 25.0f;  // outside the slice: the slice's own per-tensor s or g would differ
    const qs::TensorView view = qs::view_of(t);
    const std::int64_t n = t.numel(), first = 4096, count = 2048;
    for (const char* dtype : {"fp8-e4m3", "bf16", "nf4", "nf4 groups of 64", "nvfp4", "mxfp4", "q4_1"}) {
        CAPTURE(dtype);
        qs::QuantConfig config;
        const bool grouped = std::strchr(dtype, ' ') != nullptr;
        qs::parse_dtype(grouped ? "nf4" : dtype, config);
        config = qs::with_format(config, config.format);
        if (grouped) config.granularity = qs::Granularity::Group, config.group_size = 64;
        const qs::FormatConfig format = qs::format_config(config);
        const qs::FormatParams params = qs::compute_format_params(view, format);
        std::vector<std::int32_t> codes(static_cast<std::size_t>(n)), slice_codes(static_cast<std::size_t>(count));
        std::vector<float> deq(static_cast<std::size_t>(n)), slice_deq(static_cast<std::size_t>(count));
        qs::quantize_format_view(view, params, format, qs::QuantOutputs{codes.data(), deq.data(), nullptr});
        qs::TensorView sub = view;
        sub.shape = {count};
        sub.data = view.data + static_cast<std::size_t>(first) * qs::element_size(view.type);
        qs::quantize_format_slice(sub, first, params, format, qs::QuantOutputs{slice_codes.data(), slice_deq.data(), nullptr});
        bool same = true;
        for (std::int64_t k = 0; k < count; ++k) {
            const auto i = static_cast<std::size_t>(first + k), j = static_cast<std::size_t>(k);
            same = same && codes[i] == slice_codes[j] && std::memcmp(&deq[i], &slice_deq[j], sizeof(float)) == 0;
        }
        CHECK(same);
    }
}

TEST_CASE("the window's zoomed cells of a number format are quantize's outputs bit for bit") {
    qs::RandomSpec spec;
    spec.shape = {3, 40, 96};
    spec.seed = 12;
    const qs::Tensor t = qs::generate_random(spec);
    const qs::TensorView view = qs::view_of(t);
    const auto n = static_cast<std::size_t>(t.numel());
    for (const char* dtype : {"q4_0", "q8_0", "q4_1", "nvfp4", "mxfp4", "fp8-e4m3", "nf4"}) {
        const std::string name = dtype;
        CAPTURE(name);
        qs::QuantConfig config;
        qs::parse_dtype(dtype, config);
        config = qs::with_format(config, config.format);
        // What `quantscope quantize --out-quantized --out-dequantized --out-error` writes.
        std::vector<std::int32_t> codes(n);
        std::vector<float> deq(n), err(n);
        const qs::Quantization q = qs::quantize_checked(
            view, config, qs::OutputSelection{true, true, true},
            [&](std::int64_t first, std::int64_t count, const qs::QuantOutputs& b) {
                if (b.codes) std::copy(b.codes, b.codes + count, codes.begin() + first);
                if (b.dequantized) std::copy(b.dequantized, b.dequantized + count, deq.begin() + first);
                if (b.error) std::copy(b.error, b.error + count, err.begin() + first);
            });
        // A window that starts and ends inside blocks of 32 of the last axis, in the second slice.
        const qs::CellWindow w{5, 13, 20, 70};
        qs::WindowResults out;
        qs::quantize_window(view, q.params, config, 1, w, out);
        int mismatches = 0;
        for (std::int64_t r = 0; r < w.rows; ++r)
            for (std::int64_t c = 0; c < w.cols; ++c) {
                const auto flat = static_cast<std::size_t>((40 + w.row0 + r) * 96 + w.col0 + c);
                const auto i = static_cast<std::size_t>(r * w.cols + c);
                mismatches += out.codes[i] != codes[flat];
                mismatches += std::memcmp(&out.dequantized[i], &deq[flat], sizeof(float)) != 0;
                mismatches += std::memcmp(&out.error[i], &err[flat], sizeof(float)) != 0;
                mismatches += out.original[i] != t.values[flat];
            }
        CHECK(mismatches == 0);
    }
}

TEST_CASE("quantize_view given a number format quantizes with the params it is passed") {
    qs::RandomSpec spec;
    spec.shape = {64, 256};
    spec.seed = 5;
    const qs::Tensor t = qs::generate_random(spec);
    qs::Tensor half = t;  // the same shape, other values: its own scales would be half of t's
    for (float& v : half.values) v *= 0.5f;
    const auto n = static_cast<std::size_t>(t.numel());
    for (const char* dtype : {"fp8-e4m3", "nf4", "nvfp4", "q4_0"}) {
        const std::string name = dtype;
        CAPTURE(name);
        qs::QuantConfig config;
        qs::parse_dtype(dtype, config);
        config = qs::with_format(config, config.format);
        const qs::QuantParams params = qs::compute_params(qs::view_of(t), config);
        std::vector<float> got(n), want(n);
        qs::quantize_view(qs::view_of(half), params, config, qs::QuantOutputs{nullptr, got.data(), nullptr});
        const qs::FormatConfig format = qs::format_config(config);
        qs::quantize_format_view(qs::view_of(half), qs::compute_format_params(qs::view_of(t), format), format,
                                 qs::QuantOutputs{nullptr, want.data(), nullptr});
        CHECK(std::memcmp(got.data(), want.data(), n * sizeof(float)) == 0);
    }
}
