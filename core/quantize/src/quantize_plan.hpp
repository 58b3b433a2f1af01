// Internal to the fused quantize passes (quantize.cpp, the window's overview): how a pass cuts the tensor
// into work items and adds their sums, so that every pass over the same params adds the same items in the
// same order and gets the same metrics to the bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"

namespace qs::detail {

// Elements per work item: small enough that the temporaries stay in L1/L2, large enough to amortise
// the per-item bookkeeping.
constexpr std::int64_t kChunk = 4096;
// Blocks whose contiguous runs are at least this long use one (s, z) per run; shorter runs (e.g. channels
// of the last axis, tiny groups) expand s and z per element.
constexpr std::int64_t kMinRun = 64;
// Consecutive items make a tile of about this many elements: the unit of parallel work.
constexpr std::int64_t kTile = std::int64_t{1} << 16;

// The sums of one chunk (work item).
struct Sums {
    double sum_sq_err = 0, sum_abs_err = 0, sum_sq_r = 0, sum_r = 0;
    void add(const Sums& o) {
        sum_sq_err += o.sum_sq_err;
        sum_abs_err += o.sum_abs_err;
        sum_sq_r += o.sum_sq_r;
        sum_r += o.sum_r;
    }
};

// The items' sums added in the order the whole-buffer pass has always used, so that the metrics keep their
// bits (goldens, saved sessions, the lessons' numbers): the items split into `parts` contiguous ranges as
// OpenMP's schedule(static) splits a loop over that many threads, each range summed item by item, then
// the ranges in order. `parts` is fixed by the machine (omp_get_num_procs, the default thread count), not
// by the threads that actually run, so the bits do not depend on OMP_NUM_THREADS, on how the work is
// scheduled, or on whether the results are streamed.
class OrderedSums {
public:
    OrderedSums(std::int64_t items, std::int64_t parts)
        : per_part_(items / parts), longer_parts_(items % parts), ranges_(static_cast<std::size_t>(parts)) {}
    // Items must come in increasing order.
    void add(std::int64_t item, const Sums& sums) { ranges_[static_cast<std::size_t>(part_of(item))].add(sums); }
    Sums total() const {
        Sums all;
        for (const Sums& range : ranges_) all.add(range);
        return all;
    }

private:
    // libgomp's static split: the first (items % parts) ranges hold one item more.
    std::int64_t part_of(std::int64_t item) const {
        const std::int64_t in_longer = longer_parts_ * (per_part_ + 1);
        if (item < in_longer) return item / (per_part_ + 1);
        return longer_parts_ + (item - in_longer) / per_part_;
    }
    std::int64_t per_part_, longer_parts_;
    std::vector<Sums> ranges_;
};

// The work items of a pass and how they group into tiles. Items are in flat order:
//   per_run: chunks inside one run of block_stride elements (one s, z each);
//   otherwise: plain chunks of the flat array, with s and z expanded per element.
struct Plan {
    std::int64_t n = 0, stride = 1, count = 1;
    bool per_run = false;
    std::int64_t chunks_per_run = 0, items = 0, items_per_tile = 1, tiles = 0;
    std::int64_t item_max = kChunk;  // elements in the longest item

    Plan(std::int64_t elements, const QuantParams& params)
        : n(elements), stride(params.block_stride), count(params.block_count), per_run(stride >= kMinRun) {
        chunks_per_run = per_run ? (stride + kChunk - 1) / kChunk : 0;
        items = per_run ? (n / stride) * chunks_per_run : (n + kChunk - 1) / kChunk;
        item_max = per_run ? std::min(stride, kChunk) : kChunk;
        items_per_tile = std::max<std::int64_t>(1, kTile / item_max);
        tiles = (items + items_per_tile - 1) / items_per_tile;
    }
    // Item i covers [begin, begin + len); `block` is its (s, z) index when per_run.
    void item(std::int64_t i, std::int64_t& begin, std::int64_t& len, std::int64_t& block) const {
        if (per_run) {
            const std::int64_t run = i / chunks_per_run, c = i % chunks_per_run;
            begin = run * stride + c * kChunk;
            len = std::min(kChunk, stride - c * kChunk);
            block = run % count;
        } else {
            begin = i * kChunk;
            len = std::min(kChunk, n - begin);
            block = -1;
        }
    }
    // The elements of tiles [t0, t1): [first, end).
    void tile_span(std::int64_t t0, std::int64_t t1, std::int64_t& first, std::int64_t& end) const {
        std::int64_t len, block, last_begin;
        item(t0 * items_per_tile, first, len, block);
        item(std::min(items, t1 * items_per_tile) - 1, last_begin, len, block);
        end = last_begin + len;
    }
};

// Whether use_portable_kernel(true) is in force (the AVX2 kernels are then not used).
bool portable_only();

// The metrics of a pass from its ordered sums and its order-free parts.
Metrics metrics_from_sums(const Sums& total, std::int64_t n, float max_err, std::int64_t clipped,
                          std::int64_t levels_used, std::int64_t levels_total);

}  // namespace qs::detail
