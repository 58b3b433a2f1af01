#include "read_ahead.hpp"

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdint>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <system_error>

namespace qs::detail {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kDefaultReadahead = 128 * kKiB;  // the kernel's default read_ahead_kb

// The device's readahead size, which caps what one hint reads (the kernel takes the larger of it and the
// device's largest request, so this is never too much); the kernel's default where sysfs does not say
// (a file system without a block device of its own).
std::size_t readahead_bytes(dev_t device) {
    unsigned long kib = 0;
    try {
        const std::string text = read_small_file("/sys/class/bdi/" + std::to_string(major(device)) + ":" +
                                                     std::to_string(minor(device)) + "/read_ahead_kb",
                                                 64);
        kib = std::strtoul(text.c_str(), nullptr, 10);
    } catch (const Error&) {
        return kDefaultReadahead;
    }
    if (kib == 0) return kDefaultReadahead;
    return std::clamp<std::size_t>(kib * kKiB, kDefaultReadahead, 16 * kKiB * kKiB);
}

// cachestat(2) (Linux 6.5; the same number on every architecture), declared here for older headers.
constexpr long kCachestat = 451;
struct CachestatRange {
    std::uint64_t off, len;
};
struct Cachestat {
    std::uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

std::size_t physical_memory() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

}  // namespace

ReadAhead::ReadAhead(const std::uint8_t* begin, std::size_t size, dev_t device, int fd)
    : begin_(begin), size_(size), page_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))), device_(device), fd_(fd) {}

ReadAhead::~ReadAhead() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
}

std::size_t ReadAhead::hints() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return hints_;
}

// Whether the page cache holds every page of the range (false where cachestat is missing or refused).
bool ReadAhead::cached(std::size_t offset, std::size_t length) const {
    if (fd_ < 0 || length == 0) return false;
    CachestatRange range{offset, length};
    Cachestat stat{};
    if (::syscall(kCachestat, fd_, &range, &stat, 0) != 0) return false;
    const std::size_t first = offset / page_, last = (offset + length - 1) / page_;
    return stat.nr_cache >= last - first + 1;
}

bool ReadAhead::hint(std::size_t offset, std::size_t length) const {
    if (cached(offset, length)) return false;
    // Advice only: a failure (memory short, the file shrank) leaves the reader to fault the pages in.
    ::madvise(const_cast<std::uint8_t*>(begin_) + offset, length, MADV_WILLNEED);
    return true;
}

void ReadAhead::request(std::size_t offset, std::size_t length) {
    if (offset >= size_) return;
    length = std::min(length, size_ - offset);
    const std::size_t start = offset / page_ * page_;  // madvise wants a page-aligned start
    length += offset - start;
    const std::lock_guard<std::mutex> lock(mutex_);
    // Asked of sysfs the first time only, and never for files nobody reads ahead (settings, fonts).
    if (chunk_ == 0) chunk_ = std::max(page_, readahead_bytes(device_) / page_ * page_);
    next_ = end_ = start;  // whatever was still to hint is not wanted any more
    if (length <= chunk_) {
        if (hint(start, length)) ++hints_;
        return;
    }
    end_ = start + std::min(length, std::max(chunk_, physical_memory() / 4));
    if (!thread_.joinable()) {
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error&) {  // no thread to spare: the first hint only, as before
            end_ = next_;
            if (hint(start, chunk_)) ++hints_;
        }
    }
    wake_.notify_all();
}

void ReadAhead::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stop_ || next_ < end_; });
        if (stop_) return;
        const std::size_t at = next_, length = std::min(chunk_, end_ - at);
        next_ += length;
        lock.unlock();
        // May block while the device's queue is full: the reader never waits on it.
        const bool hinted = hint(at, length);
        lock.lock();
        if (hinted) ++hints_;
    }
}

}  // namespace qs::detail
