// `quantscope export` of a large tensor streams: a quantized GGUF tensor is decoded a tile at a time straight into
// the output file, and the pages of the file already written leave the process's memory. It used to decode the
// whole tensor into float32 first (64 MiB here; 605 MB of resident memory for a 268 MB-as-F16 Q4_K tensor).
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "cli/commands.hpp"
#include "gguf_writer.hpp"
#include "quantscope/ggml_types.hpp"
#include "test_helpers.hpp"

namespace {

long resident_bytes() {
    long pages = 0, rss = 0;
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return 0;
    if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    std::fclose(f);
    return rss * static_cast<long>(sysconf(_SC_PAGESIZE));
}

// The largest growth of resident memory while `work` runs, sampled every 200 µs.
template <class Work>
long peak_growth(Work&& work) {
    const long before = resident_bytes();
    std::atomic<bool> done{false};
    std::atomic<long> peak{before};
    std::thread sampler([&] {
        while (!done.load()) {
            peak.store(std::max(peak.load(), resident_bytes()));
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    work();
    done.store(true);
    sampler.join();
    return peak.load() - before;
}

}  // namespace

TEST_CASE("export: a quantized GGUF tensor is decoded a tile at a time into the file and never whole") {
    const std::int64_t rows = 4096, cols = 4096;  // 64 MiB as float32
    const qs::GgmlTypeInfo& q8 = *qs::ggml_type_info(static_cast<std::uint32_t>(qs::GgmlType::Q8_0));
    std::vector<float> values(static_cast<std::size_t>(rows * cols));
    std::uint32_t state = 7;
    for (float& x : values) {
        state = state * 1664525u + 1013904223u;
        x = static_cast<float>(static_cast<std::int32_t>(state >> 8) - (1 << 23)) * 0x1p-28f;
    }
    std::string blocks(static_cast<std::size_t>(qs::ggml_row_bytes(q8, rows * cols)), '\0');
    qs::ggml_quantize_blocks(q8, values.data(), rows * cols / q8.block_size, nullptr, blocks.data());
    values = {};
    const qs::test::TempDir dir;
    qs::test::GgufWriter w;
    w.tensor("w", {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows)}, 8, blocks);
    qs::test::write_bytes(dir / "q.gguf", w.build());
    blocks = {};
    const std::string out = dir / "w.npy", codes = dir / "codes.npy";
    const long growth = peak_growth([&] {
        CHECK(qs::cli::run_export({dir / "q.gguf", "--tensor", "w", "--out", out, "--codes", codes}) == 0);
    });
    MESSAGE("resident growth while exporting: " << growth / 1024 << " KiB");
    CHECK(std::filesystem::file_size(out) > static_cast<std::uintmax_t>(rows * cols * 4));
    CHECK(std::filesystem::file_size(codes) > static_cast<std::uintmax_t>(rows * cols));
#if defined(__SANITIZE_ADDRESS__)
    constexpr long kBound = 56L * 1024 * 1024;
#else
    constexpr long kBound = 24L * 1024 * 1024;
#endif
    CHECK(growth < kBound);
}
