// Internal to compare.cpp: a mapped file's pages given back a 2 MiB region at a time, once every piece of work
// that reads the region is done. Work taken by several threads in any order leaves resident memory at a few
// regions, and a region given back whole is one madvise that unmaps its huge page (a page-cached file's large
// folios are mapped 2 MiB at once) without splitting it, where giving back each piece's own pages split the
// huge pages and cost a call (and a TLB flush on the other cores) per piece.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "quantscope/atomic_file.hpp"

namespace qs::detail {

class RegionRelease {
public:
    static constexpr std::size_t kRegion = std::size_t{2} << 20;

    explicit RegionRelease(const MappedFile& file)
        : file_(file),
          base_(reinterpret_cast<std::uintptr_t>(file.data()) / kRegion * kRegion),
          regions_((reinterpret_cast<std::uintptr_t>(file.data()) + file.size() - base_ + kRegion - 1) / kRegion),
          readers_(std::make_unique<std::atomic<std::int32_t>[]>(regions_)) {}

    // Before any work starts: a piece of work will read bytes [offset, offset + length) of the file.
    void will_read(std::size_t offset, std::size_t length) {
        if (length == 0) return;
        for (std::size_t r = first(offset); r <= last(offset, length); ++r)
            readers_[r].fetch_add(1, std::memory_order_relaxed);
    }
    // That piece is done: the regions nobody else will read leave this process's memory (they stay cached).
    void done(std::size_t offset, std::size_t length) const {
        if (length == 0) return;
        for (std::size_t r = first(offset); r <= last(offset, length); ++r)
            if (readers_[r].fetch_sub(1, std::memory_order_acq_rel) == 1) {
                const auto data = reinterpret_cast<std::uintptr_t>(file_.data());
                const std::uintptr_t begin = std::max(base_ + r * kRegion, data);
                const std::size_t at = begin - data;
                file_.done_reading(at, base_ + (r + 1) * kRegion - begin);
            }
    }

private:
    std::size_t first(std::size_t offset) const {
        return (reinterpret_cast<std::uintptr_t>(file_.data()) + offset - base_) / kRegion;
    }
    std::size_t last(std::size_t offset, std::size_t length) const { return first(offset + length - 1); }

    const MappedFile& file_;
    std::uintptr_t base_;
    std::size_t regions_;
    std::unique_ptr<std::atomic<std::int32_t>[]> readers_;
};

}  // namespace qs::detail
