// quantize's JSON with many blocks (issue 8, item 7): every (s, z) up to 4096 blocks, then a summary, the
// full list only with --all-params; memory bounded by the tensor, not by the block count.
#include <doctest/doctest.h>

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
TEST_CASE("quantize with a million blocks fits a memory limit a few times the tensor") {
    // 1024 x 1024 in groups of 1 is a 4 MiB tensor and 1M blocks. Its full JSON alone would be ~30 MB,
    // built several times over; within 150 MB of address space (the program, its threads and the tensor
    // included) only a summary fits.
    TempDir dir;
    const Run r = run("quantize --random normal --shape 1024x1024 --granularity group --group-size 1 --calibrate mse",
                      dir, "", 150 * 1024);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.out, "\"count\": 1048576"));
}
#endif
