// An element format's scales in groups of 1 on 16-bit input would cost 4 bytes of params per 2-byte element
// (and 12 more as the QuantParams mirror): like QuantParams' pairs, they are then computed on demand. The
// on-demand scales must be the stored ones bit for bit, and the pass the same with either.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "quantscope/format_quantize.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"
#include "test_helpers.hpp"

namespace {

// The bf16 bytes of `t` (float32's top 16 bits) and the float32 tensor of exactly those values.
struct Bf16Copy {
    std::vector<std::uint8_t> bytes;
    qs::Tensor exact;
};
Bf16Copy bf16_of(const qs::Tensor& t) {
    Bf16Copy c;
    c.exact = t;
    for (std::size_t i = 0; i < t.values.size(); ++i) {
        std::uint32_t u;
        std::memcpy(&u, &t.values[i], sizeof u);
        u &= 0xffff0000u;
        std::memcpy(&c.exact.values[i], &u, sizeof u);
        c.bytes.push_back(static_cast<std::uint8_t>((u >> 16) & 0xff));
        c.bytes.push_back(static_cast<std::uint8_t>(u >> 24));
    }
    return c;
}

}  // namespace

TEST_CASE("format scales computed on demand equal stored ones and the pass is the same with either") {
    qs::RandomSpec spec;
    spec.shape = {256, 512};  // 131072 groups of 1
    spec.seed = 21;
    const Bf16Copy c = bf16_of(qs::generate_random(spec));
    qs::TensorView view;
    view.shape = spec.shape;
    view.type = qs::ElementType::BF16;
    view.data = c.bytes.data();
    const auto n = static_cast<std::size_t>(c.exact.numel());
    for (const char* dtype : {"fp8-e4m3", "nf4", "fp4-e2m1", "fp6-e3m2"}) {
        const std::string name = dtype;
        CAPTURE(name);
        qs::QuantConfig qc;
        qs::parse_dtype(dtype, qc);
        qc = qs::with_format(qc, qc.format);
        qc.granularity = qs::Granularity::Group;
        qc.group_size = 1;
        const qs::FormatConfig config = qs::format_config(qc);
        const qs::FormatParams lazy = qs::compute_format_params(view, config);
        REQUIRE(lazy.on_demand());
        CHECK(lazy.scale.empty());
        // Stored: the same values as float32 (4 bytes a value: a scale apiece costs no more, so stored).
        const qs::FormatParams stored = qs::compute_format_params(qs::view_of(c.exact), config);
        REQUIRE_FALSE(stored.on_demand());
        REQUIRE(stored.scale.size() == n);
        qs::FormatParams kept = lazy;
        kept.store_scales();
        CHECK_FALSE(kept.on_demand());
        CHECK(std::memcmp(kept.scale.data(), stored.scale.data(), n * sizeof(float)) == 0);
        CHECK(lazy.scale_of(12345) == stored.scale[12345]);

        std::vector<std::int32_t> codes_a(n), codes_b(n);
        std::vector<float> deq_a(n), deq_b(n), err_a(n), err_b(n);
        const qs::Metrics a = qs::quantize_format_view(view, lazy, config, qs::QuantOutputs{codes_a.data(), deq_a.data(), err_a.data()});
        const qs::Metrics b = qs::quantize_format_view(view, stored, config, qs::QuantOutputs{codes_b.data(), deq_b.data(), err_b.data()});
        CHECK(codes_a == codes_b);
        CHECK(std::memcmp(deq_a.data(), deq_b.data(), n * sizeof(float)) == 0);
        CHECK(std::memcmp(err_a.data(), err_b.data(), n * sizeof(float)) == 0);
        CHECK(a.mse == b.mse);
        CHECK(a.clipped == b.clipped);
        CHECK(a.levels_used == b.levels_used);
        const qs::FormatTrace t = qs::trace_format_element(view, lazy, config, 77777);
        CHECK(t.code == codes_b[77777]);
        CHECK(t.scale == stored.scale[77777]);

        // The int entry points' mirror (zero points 0) is on demand too, with the same scales.
        const qs::Quantization q = qs::quantize_checked(view, qc);
        CHECK(q.params.on_demand());
        CHECK(q.params.scale_of(4321) == static_cast<double>(stored.scale[4321]));
        CHECK(q.params.zero_point_of(4321) == 0);
        CHECK(q.metrics.mse == b.mse);
    }
}

TEST_CASE("format scales in groups of 1 on bf16 stay within an address-space cap") {
#if !defined(__SANITIZE_ADDRESS__)
    // 4096 x 4096 bf16 (32 MB): stored, the scales took 64 MB and their QuantParams mirror 192 MB more.
    qs::test::TempDir dir;
    const std::int64_t n = 4096LL * 4096;
    std::string data(static_cast<std::size_t>(2 * n), '\0');
    for (std::int64_t i = 0; i < n; ++i) {
        const auto h = static_cast<std::uint16_t>(0x3c00 + (i * 7919) % 0x0800);  // bf16 values in [0.0078, 0.0156)
        data[static_cast<std::size_t>(2 * i)] = static_cast<char>(h & 0xff);
        data[static_cast<std::size_t>(2 * i + 1)] = static_cast<char>(h >> 8);
    }
    const std::string header = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[4096,4096],\"data_offsets\":[0," +
                               std::to_string(2 * n) + "]}}";
    const std::string path = dir / "w.safetensors";
    qs::test::write_bytes(path, qs::test::safetensors_file(header, data));
    const qs::test::Run r = qs::test::run("quantize '" + path + "' --dtype fp8-e4m3 --granularity group --group-size 1",
                                          dir, "", 200 * 1024);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"mse\"") != std::string::npos);
#endif
}
