// MappedFile::will_read on a file that is not in the page cache: the whole range is read ahead, not only the
// first readahead window (one MADV_WILLNEED over a long range reads its first 128 KiB..8 MiB and drops the
// rest, which left a cold 1 GB tensor to be faulted in a window at a time: 5-6 s instead of ~1 s here).
// No timing: what is checked is which pages the kernel holds, and a generous deadline only bounds the wait.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "test_helpers.hpp"

using namespace qs::test;

namespace {

constexpr std::size_t kFileBytes = std::size_t{64} << 20;

void write_file(const std::string& path, std::size_t bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    std::vector<char> block(std::size_t{1} << 20);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<char>(i * 13 + 5);
    for (std::size_t done = 0; done < bytes; done += block.size())
        REQUIRE(::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()));
    REQUIRE(::fsync(fd) == 0);  // dirty pages cannot be dropped from the page cache
    ::close(fd);
}

// Drops the file's clean pages from the page cache (a file system that keeps them, such as tmpfs, ignores it).
void evict(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

// The fraction of the file's pages in the page cache, seen through a mapping of our own (mincore reports
// the page cache for a shared file mapping, whether or not this process touched the pages).
double resident_fraction(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    void* map = ::mmap(nullptr, kFileBytes, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    REQUIRE(map != MAP_FAILED);
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in_core(kFileBytes / page);
    REQUIRE(::mincore(map, kFileBytes, in_core.data()) == 0);
    ::munmap(map, kFileBytes);
    std::size_t resident = 0;
    for (unsigned char c : in_core) resident += c & 1u;
    return static_cast<double>(resident) / static_cast<double>(in_core.size());
}

}  // namespace

TEST_CASE("will_read reads a whole cold range ahead and not only its first readahead window") {
    const TempDir dir;
    const std::string path = dir / "cold.bin";
    write_file(path, kFileBytes);
    evict(path);
    const double before = resident_fraction(path);
    if (before > 0.1) {
        WARN_MESSAGE(false, "the page cache keeps this file (tmpfs?): nothing to read ahead, nothing checked");
        return;
    }
    const qs::MappedFile file(path);
    file.will_read(0, file.size());
    // The hints are given from a thread of the file's and the reads take their time: wait for them (at most a
    // minute, a bound on the wait and not a speed asked for), touching nothing of the file meanwhile.
    double now = before;
    for (int i = 0; i < 6000 && now < 0.9; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        now = resident_fraction(path);
    }
    INFO("resident before " << before << ", after the hints " << now << "; hints " << file.read_ahead_hints());
    // Best effort in the kernel (a read ahead may be dropped when memory is short): most of it, not all.
    CHECK(now >= 0.5);
    CHECK(file.read_ahead_hints() >= 2);  // in pieces: one hint for the whole range reads only its start
}

TEST_CASE("a mapped file closed while its range is being read ahead stops cleanly") {
    const TempDir dir;
    const std::string path = dir / "closed.bin";
    write_file(path, kFileBytes);
    for (int round = 0; round < 4; ++round) {
        evict(path);
        qs::MappedFile file(path);
        file.will_read(0, file.size());
        file.will_read(kFileBytes / 2, kFileBytes / 4);  // a second range replaces the first
        qs::MappedFile moved(std::move(file));            // the read-ahead moves with the mapping
        CHECK(moved.size() == kFileBytes);
    }  // destroyed with hints still to give: the thread stops before the unmapping (sanitizers watch)
    CHECK(qs::MappedFile(path).read_ahead_hints() == 0);
}

// A range the page cache already holds is not hinted: the hint would only walk its pages (4 % of a compare of
// two page-cached checkpoints). Where the kernel lacks cachestat(2) every range is hinted, as before.
TEST_CASE("will_read gives no hint for a range the page cache already holds") {
    const TempDir dir;
    const std::string path = dir / "cached.bin";
    write_file(path, kFileBytes);
    {
        const qs::MappedFile warm(path);  // read it once: every page in the cache
        std::uint64_t sum = 0;
        warm.read_guarded([&] {
            for (std::size_t k = 0; k < warm.size(); k += 4096) sum += warm.data()[k];
            return 0;
        });
        CHECK(sum > 0);
    }
    if (resident_fraction(path) < 1.0) {
        WARN_MESSAGE(false, "the page cache does not hold the whole file: nothing checked");
        return;
    }
    const qs::MappedFile file(path);
    file.will_read(0, file.size());
    file.will_read(kFileBytes / 2, 4096);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the hinting thread's turn (no timing checked)
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct {
        std::uint64_t off, len;
    } range{0, 4096};
    std::uint64_t stat[5] = {};
    const bool has_cachestat = ::syscall(451, fd, &range, stat, 0) == 0;
    ::close(fd);
    if (!has_cachestat) {
        WARN_MESSAGE(false, "no cachestat(2) here: every range is hinted");
        return;
    }
    CHECK(file.read_ahead_hints() == 0);
}
