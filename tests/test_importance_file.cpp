// read_importance_npy: a .npy row of weights is held against the tensor's column count from its header, before
// any weight is read (a file of GBs of another length costs neither the read nor the memory), then weight by
// weight.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/importance_file.hpp"
#include "quantscope/npy.hpp"
#include "test_helpers.hpp"

namespace {

namespace fs = std::filesystem;

// A .npy file: the header numpy writes for `descr` and `shape`, then `data`, then a hole (a sparse file's zeros,
// no disk taken) up to `total_data` bytes of data.
void write_npy_file(const fs::path& path, const std::string& descr, const qs::Shape& shape, const std::string& data,
                    std::uintmax_t total_data) {
    const std::string header = qs::npy_header_bytes(descr, shape);
    qs::test::write_bytes(path, header + data);
    if (total_data > data.size()) fs::resize_file(path, header.size() + total_data);
}

std::string float_bytes(const std::vector<float>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

long peak_rss_kib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("importance file: the header's length is checked against the columns before any weight is read") {
    qs::test::TempDir dir;
    // 100 weights, one of them NaN, for 64 columns: the count is what is wrong, and it is said first (read weight
    // by weight, the NaN would have been named).
    std::vector<float> weights(100, 1.0f);
    weights[3] = std::nanf("");
    write_npy_file(dir.path / "nan100.npy", "<f4", {100}, float_bytes(weights), 0);
    CHECK_THROWS_WITH_AS(qs::read_importance_npy((dir.path / "nan100.npy").string(), 64),
                         doctest::Contains("the importance has 100 weights for 64 columns"), qs::Error);
    // 2 GiB of float64 zeros (the most elements a .npy may hold), sparse: refused from its header, without
    // reading it into the 1 GiB of float32 it would take.
    const std::int64_t huge = qs::kMaxElements;
    write_npy_file(dir.path / "huge.npy", "<f8", {huge}, "", static_cast<std::uintmax_t>(huge) * 8);
    const long before = peak_rss_kib();
    CHECK_THROWS_WITH_AS(qs::read_importance_npy((dir.path / "huge.npy").string(), 64),
                         doctest::Contains(("the importance has " + std::to_string(huge) + " weights for 64 columns").c_str()), qs::Error);
    CHECK(peak_rss_kib() - before < 256 * 1024);
    // Another rank, from the header too; the right length is read and checked weight by weight.
    write_npy_file(dir.path / "rank2.npy", "<f4", {8, 8}, float_bytes(std::vector<float>(64, 1.0f)), 0);
    CHECK_THROWS_WITH_AS(qs::read_importance_npy((dir.path / "rank2.npy").string(), 64),
                         doctest::Contains("must be one row of weights (rank 1), not 8x8"), qs::Error);
    write_npy_file(dir.path / "nan64.npy", "<f4", {64}, float_bytes(std::vector<float>(weights.begin(), weights.begin() + 64)), 0);
    CHECK_THROWS_AS(qs::read_importance_npy((dir.path / "nan64.npy").string(), 64), qs::Error);
    std::vector<float> good(64, 0.5f);
    write_npy_file(dir.path / "good.npy", "<f4", {64}, float_bytes(good), 0);
    const qs::Importance read = qs::read_importance_npy((dir.path / "good.npy").string(), 64);
    REQUIRE(read);
    CHECK(*read == good);
}
