#include "quantscope/compare.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <vector>

#include "compare_sums.hpp"
#include "parallel.hpp"
#include "region_release.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

using detail::LaneSums;
using detail::TileSums;

// Values summed per tile (the unit of the sums' order): a multiple of every block size (32, 256). A tile is
// decoded and summed a chunk at a time, both chunks' floats (2 x 16 KB) staying in the core's first-level cache
// between the decoder writing them and the sums reading them. Threads take a group of tiles at a time (the unit
// of work only: the sums do not depend on it): 512K values, 1 MiB of F16, large enough that two threads seldom
// fault pages into the same page table at once (its lock was 1 % of the time with groups of 256K values), small
// enough that resident memory stays a few groups (16 MiB in test_compare with groups of 1M values, 10-13 with
// these); no thread waits for the other but at the end of the run.
constexpr std::int64_t kTile = std::int64_t{1} << 16;
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kGroup = 8;
constexpr std::size_t kBatchRows = 4096;
static_assert(kTile % kChunk == 0 && kChunk % 256 == 0, "chunks of whole blocks, tiles of whole chunks");

// The next chunk's bytes asked for while this chunk is summed, a slice at a time between slices of the sums, so
// that the decoder finds them in the second-level cache instead of waiting on memory (the sums are arithmetic,
// the decoding of F16 was mostly waiting: 5-8 % of compare's CPU time; all at once, the prefetches themselves
// waited for free miss buffers). A prefetch never faults: a page not mapped yet (or past a shrunk file's end)
// is skipped.
constexpr std::int64_t kSlice = 512;
class Prefetch {
public:
    // `bytes` from `begin`, asked for in `slices` equal parts.
    Prefetch(const std::uint8_t* begin, std::int64_t bytes, std::int64_t slices)
        : at_(begin), end_(begin + bytes), step_((bytes + 64 * slices - 1) / (64 * slices) * 64) {}
    void next_part() {
        const std::uint8_t* stop = end_ - at_ > step_ ? at_ + step_ : end_;
        for (; at_ < stop; at_ += 64) __builtin_prefetch(at_, 0, 2);
    }

private:
    const std::uint8_t* at_;
    const std::uint8_t* end_;
    std::int64_t step_;
};

std::int64_t element_count(const CheckpointShape& shape) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    return n;
}

// Safetensors' F32/F16/BF16/F64 are ggml's F32/F16/BF16/F64 byte for byte (IEEE, little-endian), so one
// decoder reads both kinds of file: the type's to_float.
const GgmlTypeInfo* decoder_of(const CheckpointTensor& t) {
    if (!t.readable) return nullptr;
    const GgmlTypeInfo* type = ggml_type_named(t.dtype);
    return type != nullptr && type->decodes ? type : nullptr;
}

// One checkpoint's shard kept mapped while its tensors are read, the next one mapped when a tensor needs it.
class ShardReader {
public:
    explicit ShardReader(const Checkpoint& checkpoint) : checkpoint_(checkpoint) {}
    const CheckpointShard& shard_of(const CheckpointTensor& t) {
        if (!open_ || index_ != t.shard) {
            open_.reset();
            open_ = std::make_unique<CheckpointShard>(checkpoint_, t.shard);
            index_ = t.shard;
        }
        return *open_;
    }

private:
    const Checkpoint& checkpoint_;
    std::unique_ptr<CheckpointShard> open_;
    std::size_t index_ = 0;
};

double bits_per_weight(const CheckpointTensor& t, std::int64_t elements) {
    return elements > 0 ? static_cast<double>(t.end - t.begin) * 8.0 / static_cast<double>(elements) : 0.0;
}

// Why a tensor cannot be compared, or empty.
std::string why_not(const CheckpointTensor& a, const CheckpointTensor& b) {
    if (a.shape != b.shape)
        return "shapes differ: " + shape_to_string(a.shape) + " in A, " + shape_to_string(b.shape) + " in B";
    if (element_count(a.shape) == 0) return "the tensor has no elements";
    for (const auto& [t, side] : {std::pair{&a, "A"}, std::pair{&b, "B"}})
        if (decoder_of(*t) == nullptr)
            return std::string(side) + " stores it as " + std::string(t->dtype) + ", which QuantScope does not decode";
    return {};
}

// One output row, planned before any value is read: 24 bytes, its CompareRow made only when it is emitted (a
// header of a million tensors planned a million rows of names, shapes and types at once: 290 MB).
struct PlannedRow {
    const CheckpointTensor* a = nullptr;  // A's tensor; null when only B has it
    const CheckpointTensor* b = nullptr;  // B's; null when only A has it
    bool compared = false;                // in both, and its values are compared (why_not is empty)
};

CompareRow row_of(const PlannedRow& plan) {
    CompareRow row;
    const CheckpointTensor& t = plan.a != nullptr ? *plan.a : *plan.b;
    row.name = t.name;
    row.shape = t.shape;
    row.elements = element_count(t.shape);
    if (plan.a != nullptr) {
        row.dtype_a = plan.a->dtype;
        row.bits_per_weight_a = bits_per_weight(*plan.a, row.elements);
    }
    if (plan.b != nullptr) {
        row.dtype_b = plan.b->dtype;
        row.bits_per_weight_b = bits_per_weight(*plan.b, element_count(plan.b->shape));
    }
    if (plan.a == nullptr || plan.b == nullptr)
        row.error = plan.a != nullptr ? "not in B" : "not in A";
    else
        row.error = why_not(*plan.a, *plan.b);
    return row;
}

// The rows in order (A's tensors in file order, then those only B has) and the bytes progress counts: A's
// tensors and their matches in B. B's tensors are matched through a sorted index, not a map of names.
std::vector<PlannedRow> plan_rows(const Checkpoint& a, const Checkpoint& b, std::uint64_t& bytes_total) {
    std::vector<std::uint32_t> b_by_name(b.tensors.size());
    for (std::size_t i = 0; i < b_by_name.size(); ++i) b_by_name[i] = static_cast<std::uint32_t>(i);
    const auto name_of = [&](std::uint32_t i) -> std::string_view { return b.tensors[i].name; };
    std::sort(b_by_name.begin(), b_by_name.end(), [&](std::uint32_t x, std::uint32_t y) { return name_of(x) < name_of(y); });
    std::vector<bool> matched(b.tensors.size());
    std::vector<PlannedRow> rows;
    rows.reserve(a.tensors.size());
    for (const CheckpointTensor& ta : a.tensors) {
        bytes_total += ta.end - ta.begin;
        const auto at = std::lower_bound(b_by_name.begin(), b_by_name.end(), ta.name,
                                         [&](std::uint32_t i, std::string_view n) { return name_of(i) < n; });
        if (at == b_by_name.end() || name_of(*at) != ta.name) {
            rows.push_back({&ta, nullptr, false});
            continue;
        }
        const CheckpointTensor& tb = b.tensors[*at];
        matched[*at] = true;
        bytes_total += tb.end - tb.begin;
        rows.push_back({&ta, &tb, why_not(ta, tb).empty()});
    }
    for (std::size_t i = 0; i < b.tensors.size(); ++i)
        if (!matched[i]) rows.push_back({nullptr, &b.tensors[i], false});
    return rows;
}

// A row's numbers from its tiles' sums, added in tile order; returns the row's sums.
TileSums finish_row(CompareRow& row, const TileSums* tiles, std::int64_t count) {
    TileSums total;
    for (std::int64_t k = 0; k < count; ++k) {
        total.error += tiles[k].error;
        total.signal += tiles[k].signal;
        total.max_error = std::max(total.max_error, tiles[k].max_error);
    }
    // A stored NaN or infinity makes a sum NaN or infinite (and max skips NaN): no error can be measured. So does
    // an F64 beyond float32's range, which its to_float makes infinite (the stored value is finite: not 'stored').
    if (!std::isfinite(total.error) || !std::isfinite(total.signal)) {
        row.error = "a value is not finite in float32 (NaN, infinity, or an F64 beyond float32's range), so no error "
                    "is measured";
        return total;
    }
    const auto n = static_cast<double>(row.elements);
    row.mse = total.error / n;
    row.max_abs_error = total.max_error;
    if (total.signal > 0) row.relative_rmse = std::sqrt(row.mse) / std::sqrt(total.signal / n);
    if (total.error > 0 && total.signal > 0) row.sqnr_db = 10.0 * std::log10(total.signal / total.error);
    return total;
}

// The values of consecutive rows whose tensors lie in the same pair of shards, compared by one set of threads
// that go from one tensor to the next without waiting for each other: a thread takes the next group of tiles
// of whichever tensor comes next, so no thread is started or waited for per tensor. Thread 0 also hands the
// rows out in order as they complete (`emit`), so a row appears as soon as its last tile is summed.
class BatchRun {
public:
    BatchRun(std::vector<PlannedRow>& rows, std::size_t first, std::size_t last, const CheckpointShard& fa,
             const CheckpointShard& fb, const std::function<bool(const PlannedRow&, CompareRow&, const TileSums&)>& emit)
        : rows_(rows), first_(first), last_(last), fa_(fa), fb_(fb), emit_(emit), release_a_(fa.file()),
          release_b_(fb.file()), next_row_(first) {
        work_ = std::make_unique<Work[]>(last - first);
        std::int64_t groups = 0, elements = 0;
        for (std::size_t r = first; r < last; ++r) {
            Work& w = work_[r - first];
            w.group_begin = groups;
            if (!rows[r].compared) continue;
            w.type_a = decoder_of(*rows[r].a);
            w.type_b = decoder_of(*rows[r].b);
            w.elements = element_count(rows[r].a->shape);
            w.tiles = (w.elements + kTile - 1) / kTile;
            const std::int64_t count = (w.tiles + kGroup - 1) / kGroup;
            w.remaining.store(count);
            for (std::int64_t g = 0; g < count; ++g) {
                const auto [a_at, a_bytes] = group_bytes(fa, *rows[r].a, *w.type_a, w, g);
                const auto [b_at, b_bytes] = group_bytes(fb, *rows[r].b, *w.type_b, w, g);
                release_a_.will_read(a_at, a_bytes);
                release_b_.will_read(b_at, b_bytes);
            }
            groups += count;
            elements += w.elements;
        }
        for (std::size_t r = first; r < last; ++r) group_begins_.push_back(work_[r - first].group_begin);
        groups_ = groups;
        elements_ = elements;
    }

    // Runs the batch; false when `emit` asked to stop (a cancel). A file that shrank throws.
    bool run() {
        detail::NextIndex next(0, groups_);
        detail::parallel_run(nullptr, detail::pass_threads(elements_), [&](int thread, int) {
            try {
                fa_.file().run_guarded([&] { fb_.file().run_guarded([&] { work(next, thread == 0); }); });
            } catch (...) {
                stop_.store(true);
                throw;
            }
        });
        return emit_ready() && next_row_ == last_;
    }

private:
    struct Work {
        const GgmlTypeInfo* type_a = nullptr;
        const GgmlTypeInfo* type_b = nullptr;
        std::int64_t elements = 0, tiles = 0, group_begin = 0;
        std::once_flag started;
        std::unique_ptr<TileSums[]> sums;  // one per tile, from the tensor's first group taken to its row's emission
        std::atomic<std::int64_t> remaining{0};  // groups not yet summed
    };

    const std::uint8_t* base(const CheckpointShard& f, const CheckpointTensor& t) const {
        return f.file().data() + f.data_offset() + t.begin;
    }
    // Where group `g` of a tensor lies in its file: offset and length.
    static std::pair<std::size_t, std::size_t> group_bytes(const CheckpointShard& f, const CheckpointTensor& t,
                                                          const GgmlTypeInfo& type, const Work& w, std::int64_t g) {
        const std::int64_t first = g * kGroup * kTile, count = std::min(w.elements, (g + 1) * kGroup * kTile) - first;
        return {f.data_offset() + t.begin + static_cast<std::size_t>(ggml_row_bytes(type, first)),
                static_cast<std::size_t>(ggml_row_bytes(type, count))};
    }

    void work(detail::NextIndex& next, bool emits) {
        alignas(64) float a[kChunk], b[kChunk];  // on the stack: nothing allocated (or faulted in) per tensor
        for (std::int64_t group; !stop_.load(std::memory_order_relaxed) && next.take(group);) {
            const std::size_t index = static_cast<std::size_t>(
                std::upper_bound(group_begins_.begin(), group_begins_.end(), group) - group_begins_.begin() - 1);
            Work& w = work_[index];
            const PlannedRow& plan = rows_[first_ + index];
            const CheckpointTensor &ta = *plan.a, &tb = *plan.b;
            std::call_once(w.started, [&] {
                fa_.file().will_read(fa_.data_offset() + ta.begin, ta.end - ta.begin);
                fb_.file().will_read(fb_.data_offset() + tb.begin, tb.end - tb.begin);
                w.sums = std::make_unique<TileSums[]>(static_cast<std::size_t>(w.tiles));
            });
            const std::uint8_t *base_a = base(fa_, ta), *base_b = base(fb_, tb);
            const std::int64_t local = group - w.group_begin, tile_end = std::min(w.tiles, (local + 1) * kGroup);
            for (std::int64_t tile = local * kGroup; tile < tile_end; ++tile) {
                const std::int64_t first = tile * kTile, count = std::min(kTile, w.elements - first);
                LaneSums lanes;
                // A ggml tensor's rows are whole blocks, and a chunk starts at a multiple of every block size.
                for (std::int64_t at = first; at < first + count; at += kChunk) {
                    const std::int64_t len = std::min(kChunk, first + count - at);
                    const std::int64_t next = std::min(kChunk, w.elements - at - len);
                    const std::int64_t a_at = ggml_row_bytes(*w.type_a, at), b_at = ggml_row_bytes(*w.type_b, at);
                    ggml_dequantize(*w.type_a, base_a + a_at, len, a);
                    ggml_dequantize(*w.type_b, base_b + b_at, len, b);
                    if (next <= 0) {
                        lanes.add(a, b, len);
                        continue;
                    }
                    const std::int64_t slices = (len + kSlice - 1) / kSlice;
                    Prefetch ahead_a(base_a + a_at + ggml_row_bytes(*w.type_a, len), ggml_row_bytes(*w.type_a, next),
                                     slices);
                    Prefetch ahead_b(base_b + b_at + ggml_row_bytes(*w.type_b, len), ggml_row_bytes(*w.type_b, next),
                                     slices);
                    for (std::int64_t k = 0; k < len; k += kSlice) {  // slices of whole eights: the same sums
                        ahead_a.next_part();
                        ahead_b.next_part();
                        lanes.add(a + k, b + k, std::min(kSlice, len - k));
                    }
                }
                w.sums[static_cast<std::size_t>(tile)] = lanes.total();
            }
            // The regions no other group reads leave this process's memory (they stay in the page cache):
            // resident memory follows the groups being read.
            const auto [a_at, a_bytes] = group_bytes(fa_, ta, *w.type_a, w, local);
            const auto [b_at, b_bytes] = group_bytes(fb_, tb, *w.type_b, w, local);
            release_a_.done(a_at, a_bytes);
            release_b_.done(b_at, b_bytes);
            w.remaining.fetch_sub(1, std::memory_order_acq_rel);
            // A file that shrank: the guard throws once this thread stops.
            if (fa_.file().has_shrunk() || fb_.file().has_shrunk()) stop_.store(true);
            if (emits && !emit_ready()) stop_.store(true);
        }
    }

    // Hands out the rows that are complete, in order; false once `emit` asked to stop.
    bool emit_ready() {
        if (stopped_by_emit_) return false;
        for (; next_row_ < last_; ++next_row_) {
            const PlannedRow& plan = rows_[next_row_];
            Work& w = work_[next_row_ - first_];
            TileSums sums;
            CompareRow row = row_of(plan);
            if (plan.compared) {
                if (w.remaining.load(std::memory_order_acquire) != 0) return true;
                // A file that shrank: its missing pages were read as zeros, so this row may hold numbers of zeros.
                // It does not go out; every thread's guard throws once the threads stop. (A group that met the
                // fault released `remaining` after the handler set the flag: the acquire above makes it seen.)
                if (fa_.file().has_shrunk() || fb_.file().has_shrunk()) return true;
                sums = finish_row(row, w.sums.get(), w.tiles);
                w.sums.reset();
            }
            if (!emit_(plan, row, sums)) {
                stopped_by_emit_ = true;
                return false;
            }
        }
        return true;
    }

    std::vector<PlannedRow>& rows_;
    const std::size_t first_, last_;
    const CheckpointShard &fa_, &fb_;
    const std::function<bool(const PlannedRow&, CompareRow&, const TileSums&)>& emit_;
    std::unique_ptr<Work[]> work_;
    detail::RegionRelease release_a_, release_b_;
    std::vector<std::int64_t> group_begins_;
    std::int64_t groups_ = 0, elements_ = 0;
    std::size_t next_row_;  // thread 0's, as the next one:
    bool stopped_by_emit_ = false;
    std::atomic<bool> stop_{false};
};

}  // namespace

CompareTotal compare_checkpoints(const Checkpoint& a, const Checkpoint& b,
                                 const std::function<void(const CompareRow&)>& on_row, const CompareProgress& progress,
                                 const std::atomic<bool>* cancel) {
    const auto start = std::chrono::steady_clock::now();
    std::uint64_t bytes_total = 0, bytes_done = 0;
    std::vector<PlannedRow> rows = plan_rows(a, b, bytes_total);
    CompareTotal total;
    double error_energy = 0, signal_energy = 0;
    const auto cancelled = [&] { return cancel != nullptr && cancel->load(); };
    // Called in row order (on the calling thread); false stops the rows (a cancel).
    const std::function<bool(const PlannedRow&, CompareRow&, const TileSums&)> emit =
        [&](const PlannedRow& plan, CompareRow& row, const TileSums& sums) {
        if (cancelled()) return false;
        if (plan.compared && row.error.empty()) {
            error_energy += sums.error;
            signal_energy += sums.signal;
            total.elements += row.elements;
            total.bytes_a += plan.a->end - plan.a->begin;
            total.bytes_b += plan.b->end - plan.b->begin;
            total.max_abs_error = std::max(total.max_abs_error, row.max_abs_error);
        }
        ++(row.error.empty() ? total.tensors : total.error_rows);
        if (on_row) on_row(row);
        if (plan.a != nullptr && plan.b != nullptr) {
            bytes_done += (plan.a->end - plan.a->begin) + (plan.b->end - plan.b->begin);
            if (progress) progress(bytes_done, bytes_total);
        }
        return true;
    };
    ShardReader shards_a(a), shards_b(b);
    for (std::size_t first = 0; first < rows.size();) {
        // The batch: the next rows whose values lie in the same pair of shards (rows without values go along).
        std::size_t last = first;
        const PlannedRow* lead = nullptr;
        for (; last < rows.size(); ++last) {
            const PlannedRow& plan = rows[last];
            if (!plan.compared) continue;
            // A batch's bookkeeping is some 80 bytes a row: a million tiny tensors in one pair of files made one
            // batch of 80 MB. Threads are started once a batch, a few microseconds for kBatchRows rows.
            if (last - first >= kBatchRows) break;
            if (lead == nullptr)
                lead = &plan;
            else if (plan.a->shard != lead->a->shard || plan.b->shard != lead->b->shard)
                break;
        }
        bool go_on = true;
        if (lead == nullptr) {
            for (; first < last && go_on; ++first) {
                CompareRow row = row_of(rows[first]);
                go_on = emit(rows[first], row, TileSums{});
            }
        } else {
            // A shard that changed since it was opened throws here: the whole compare stops.
            const CheckpointShard& fa = shards_a.shard_of(*lead->a);
            const CheckpointShard& fb = shards_b.shard_of(*lead->b);
            go_on = BatchRun(rows, first, last, fa, fb, emit).run();
            first = last;
        }
        if (!go_on) break;
    }
    total.cancelled = cancelled();
    if (total.elements > 0) {
        const auto n = static_cast<double>(total.elements);
        total.mse = error_energy / n;
        total.bits_per_weight_a = static_cast<double>(total.bytes_a) * 8.0 / n;
        total.bits_per_weight_b = static_cast<double>(total.bytes_b) * 8.0 / n;
        if (signal_energy > 0) total.relative_rmse = std::sqrt(total.mse) / std::sqrt(signal_energy / n);
    }
    if (error_energy > 0 && signal_energy > 0) total.sqnr_db = 10.0 * std::log10(signal_energy / error_energy);
    total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return total;
}

std::string compare_csv_header() {
    return "name,shape,dtype_a,dtype_b,elements,bits_per_weight_a,bits_per_weight_b,mse,relative_rmse,sqnr_db,"
           "max_abs_error,error";
}

// Numbers as the JSON prints them, null (and a number the row does not have) as an empty field.
std::string compare_csv_line(const CompareRow& row) {
    const bool ok = row.error.empty();
    std::string line = csv_field(csv_name(row.name)) + "," + shape_to_string(row.shape) + "," +
                       row.dtype_a + "," + row.dtype_b + "," + std::to_string(row.elements);
    const auto number = [&](std::optional<double> value, bool known) {
        line += ",";
        if (known && value) line += format_json_number(*value);
    };
    number(row.bits_per_weight_a, !row.dtype_a.empty());
    number(row.bits_per_weight_b, !row.dtype_b.empty());
    number(row.mse, ok);
    number(row.relative_rmse, ok);
    number(row.sqnr_db, ok);
    number(row.max_abs_error, ok);
    line += "," + (ok ? std::string() : csv_field(row.error));
    return line;
}

}  // namespace qs
