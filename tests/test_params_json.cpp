// quantize's JSON with many blocks (issue 8, item 7): every (s, z) up to 4096 blocks, then a summary, the
// full list only with --all-params; memory bounded by the tensor, not by the block count: the pairs of
// many tiny blocks are computed on demand rather than stored.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "quantscope/calibrate.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"

#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"
#include "test_helpers.hpp"

using namespace qs::test;

namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("quantize lists up to 4096 blocks' parameters and summarises more") {
    TempDir dir;
    // 64 x 128 in groups of 2: exactly 4096 blocks, listed.
    Run r = run("quantize --random normal --shape 64x128 --granularity group --group-size 2", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "\"scale\": ["));
    CHECK(contains(r.out, "\"zero_point\": ["));
    CHECK(count_of(r.out, ", ") > 2 * 4096);
    // Groups of 1: 8192 blocks, a summary under the same keys.
    r = run("quantize --random normal --shape 64x128 --granularity group --group-size 1", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "\"scale\": {\"count\": 8192, \"min\": "));
    CHECK(contains(r.out, "\"zero_point\": {\"count\": 8192, \"min\": "));
    CHECK(r.out.size() < 1000);
    // --all-params: the whole list again.
    r = run("quantize --random normal --shape 64x128 --granularity group --group-size 1 --all-params", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, "\"scale\": ["));
    CHECK(count_of(r.out, ", ") > 2 * 8192);
    r = run("quantize --help", dir);
    CHECK(contains(r.out, "--all-params"));
}

#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reserves terabytes of address space up front
TEST_CASE("quantize with 4M blocks of one value needs the file and no per-block storage") {
    // 2048 x 2048 in groups of 1: a 16 MiB file and 4M blocks. Storing every block's double s and int32 z
    // would take 48 MiB, three times the values: each block's pair is computed from its value inside the
    // pass instead. What must be held: the file's mapping plus the program (40 MiB, two threads as in the
    // file test of test_streaming.cpp).
    TempDir dir;
    qs::RandomSpec spec;
    spec.shape = {2048, 2048};
    spec.seed = 5;
    const qs::Tensor t = qs::generate_random(spec);
    const std::string input = dir / "w.npy";
    qs::save_floats(input, t.shape, t.values.data());
    const long long cap_kb = static_cast<long long>(std::filesystem::file_size(input) / 1024) + 40 * 1024;
    for (const char* calibration : {"minmax", "percentile:99", "mse"}) {
        const Run r = run("quantize " + shell_quote(input) + " --granularity group --group-size 1 --calibrate " +
                              calibration,
                          dir, "OMP_NUM_THREADS=2", cap_kb);
        INFO(std::string(calibration) << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "\"count\": 4194304"));
    }
}
#endif

// Params computed on demand must be the params that would have been stored, bit for bit, and the pass must
// give the same results with either.
TEST_CASE("per-block pairs computed on demand equal stored ones in every layout and calibration") {
    struct Case {
        qs::Shape shape;
        qs::Granularity granularity;
        int axis;
        std::int64_t group;
    };
    const Case cases[] = {
        {{256, 512}, qs::Granularity::Group, 0, 1},    // 131072 blocks of 1
        {{256, 512}, qs::Granularity::Group, 0, 2},    // contiguous pairs
        {{2, 65536}, qs::Granularity::Channel, 1, 0},  // interleaved: each channel's 2 values 65536 apart
        {{131072}, qs::Granularity::Channel, 0, 0},    // a 1-D tensor per channel
    };
    for (const Case& c : cases) {
        qs::RandomSpec spec;
        spec.shape = c.shape;
        spec.seed = 9;
        const qs::Tensor t = qs::generate_random(spec);
        for (const char* calibration : {"minmax", "percentile:90", "mse"}) {
            for (qs::Mode mode : {qs::Mode::Asymmetric, qs::Mode::Symmetric}) {
                CAPTURE(c.shape.back());
                CAPTURE(calibration);
                qs::QuantConfig config;
                config.mode = mode;
                config.granularity = c.granularity;
                config.axis = c.axis;
                config.group_size = c.group;
                qs::parse_calibration(calibration, config);
                const qs::QuantParams lazy = qs::compute_params(t, config);
                REQUIRE(lazy.on_demand());
                CHECK(lazy.scale.empty());
                // The stored twin: every pair asked for once.
                qs::QuantParams stored = lazy;
                stored.recipe = nullptr;
                for (std::int64_t b = 0; b < lazy.block_count; ++b) {
                    double s;
                    std::int32_t z;
                    lazy.pair(b, s, z);
                    stored.scale.push_back(s);
                    stored.zero_point.push_back(z);
                }
                // Spot checks against the calibrator on the block's gathered values.
                std::vector<float> values;
                for (std::int64_t b : {std::int64_t{0}, lazy.block_count / 3, lazy.block_count - 1}) {
                    qs::gather_block(t, stored, b, values);
                    double s;
                    std::int32_t z;
                    if (config.calibration == qs::Calibration::Mse)
                        qs::mse_params(values.data(), static_cast<std::int64_t>(values.size()), config, false, s, z);
                    else
                        qs::params_from_range(qs::calibrate_block(values, config), config, s, z);
                    CHECK(stored.scale[static_cast<std::size_t>(b)] == s);
                    CHECK(stored.zero_point[static_cast<std::size_t>(b)] == z);
                }
                double s_lo, s_hi;
                std::int32_t z_lo, z_hi;
                lazy.ranges(s_lo, s_hi, z_lo, z_hi);
                CHECK(s_lo == *std::min_element(stored.scale.begin(), stored.scale.end()));
                CHECK(s_hi == *std::max_element(stored.scale.begin(), stored.scale.end()));
                CHECK(z_lo == *std::min_element(stored.zero_point.begin(), stored.zero_point.end()));
                CHECK(z_hi == *std::max_element(stored.zero_point.begin(), stored.zero_point.end()));
                qs::QuantResult a, b;
                qs::quantize_into(t, lazy, config, a);
                qs::quantize_into(t, stored, config, b);
                CHECK(a.codes == b.codes);
                CHECK(a.dequantized == b.dequantized);
                CHECK(a.metrics.mse == b.metrics.mse);
                const qs::ElementTrace tr = qs::trace_element(t, lazy, config, t.numel() - 1);
                CHECK(tr.code == b.codes.back());
            }
        }
    }
}

TEST_CASE("few or large blocks keep their pairs stored") {
    qs::RandomSpec spec;
    spec.shape = {64, 128};
    const qs::Tensor t = qs::generate_random(spec);
    qs::QuantConfig config;
    config.granularity = qs::Granularity::Group;
    config.group_size = 1;  // 8192 blocks: fewer than the on-demand threshold
    CHECK_FALSE(qs::compute_params(t, config).on_demand());
    spec.shape = {1024, 1024};
    const qs::Tensor big = qs::generate_random(spec);
    config.group_size = 4;  // 262144 blocks, 12 bytes each for 16 bytes of values
    const qs::QuantParams p = qs::compute_params(big, config);
    CHECK_FALSE(p.on_demand());
    CHECK(p.scale.size() == 262144);
}
