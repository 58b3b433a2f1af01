// Reading a mapped file ahead of its reader with many reads in flight. One MADV_WILLNEED over a whole
// tensor reads only its first few MiB: the kernel caps each hint at the device's readahead size (8 MiB
// here, 128 KiB by default) and silently drops the rest, after which the pass faults the file in at the
// pace of one readahead window at a time. Hints of at most that size, issued one after another from a
// thread of their own (each may block while the device's queue is full), keep the whole range queued
// instead: a cold 1 GB file is read at the disk's pace while the window opens and the first pass runs.
// A piece the page cache already holds whole is not hinted: the hint would only walk its pages (a compare of
// two page-cached checkpoints spent 4 % of its time there); cachestat(2) tells, where the kernel has it.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

namespace qs::detail {

class ReadAhead {
public:
    // `begin`, `size`: the whole mapping (page-aligned); `device`: the file's st_dev, whose readahead size
    // bounds each hint; `fd`: the mapped file, owned (closed by the destructor), to ask what is cached; -1
    // for none.
    ReadAhead(const std::uint8_t* begin, std::size_t size, dev_t device, int fd = -1);
    ~ReadAhead();  // stops the hints (the pages already asked for still arrive), joins the thread, closes fd
    ReadAhead(const ReadAhead&) = delete;
    ReadAhead& operator=(const ReadAhead&) = delete;

    // Bytes [offset, offset + length) will be read front to back soon: hint them, replacing any range still
    // being hinted. Never more than a quarter of the machine's memory ahead, so that a range larger than
    // memory does not push its own beginning out of the page cache before it is read.
    void request(std::size_t offset, std::size_t length);
    // Hints issued so far (for tests: a long range is hinted in pieces, not in one call; a cached piece is not).
    std::size_t hints() const;

private:
    void run();
    // Hints [offset, offset + length) unless the page cache holds all of it; true when hinted.
    bool hint(std::size_t offset, std::size_t length) const;
    bool cached(std::size_t offset, std::size_t length) const;

    const std::uint8_t* begin_;
    std::size_t size_, page_;
    dev_t device_;
    int fd_;
    std::size_t chunk_ = 0;  // each hint's size (the kernel reads no more per hint); set by the first request
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::size_t next_ = 0, end_ = 0, hints_ = 0;  // the range still to hint, under mutex_
    bool stop_ = false;
    std::thread thread_;  // started by the first request longer than one hint
};

}  // namespace qs::detail
