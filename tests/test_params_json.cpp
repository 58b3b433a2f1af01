// quantize's JSON with many blocks (issue 8, item 7): every (s, z) up to 4096 blocks, then a summary, the
// full list only with --all-params; memory bounded by the tensor, not by the block count.
#include <doctest/doctest.h>

#include <filesystem>

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
TEST_CASE("quantize with 4M blocks needs the file and its 12 bytes of (s / z) per block and no more") {
    // 2048 x 2048 in groups of 1: a 16 MiB file and 4M blocks. What must be held: the file's mapping and
    // one double s and int32 z per block (48 MiB), plus the program (40 MiB, two threads as in the file
    // test of test_streaming.cpp). A per-block range array or float copies of s and z (8 bytes per block
    // each) do not fit.
    TempDir dir;
    qs::RandomSpec spec;
    spec.shape = {2048, 2048};
    spec.seed = 5;
    const qs::Tensor t = qs::generate_random(spec);
    const std::string input = dir / "w.npy";
    qs::save_floats(input, t.shape, t.values.data());
    const long long blocks = t.numel();
    const long long cap_kb = static_cast<long long>(std::filesystem::file_size(input) / 1024) + blocks * 12 / 1024 +
                             40 * 1024;
    for (const char* calibration : {"minmax", "mse"}) {
        const Run r = run("quantize " + shell_quote(input) + " --granularity group --group-size 1 --calibrate " +
                              calibration,
                          dir, "OMP_NUM_THREADS=2", cap_kb);
        INFO(std::string(calibration) << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(contains(r.out, "\"count\": 4194304"));
    }
}
#endif
