#include "quantscope/compare.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <vector>

#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include "parallel.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

// Values summed per tile (the unit of work of a thread, and of the sums' order): a multiple of every block
// size (32, 256). A tile is decoded and summed a chunk at a time, both chunks' floats (2 x 16 KB) staying in
// the core's first-level cache between the decoder writing them and the sums reading them.
constexpr std::int64_t kTile = std::int64_t{1} << 16;
constexpr std::int64_t kChunk = 4096;
constexpr std::int64_t kGroup = 4;  // tiles a thread takes at once, then gives their pages back
static_assert(kTile % kChunk == 0 && kChunk % 256 == 0, "chunks of whole blocks, tiles of whole chunks");

std::int64_t element_count(const Shape& shape) {
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

// One tile's sums, combined in tile order afterwards so the result does not depend on the thread count.
struct TileSums {
    double error = 0, signal = 0, max_error = 0;
};

// A tile's sums in eight lanes: lane l sums the tile's elements l, l + 8, l + 16, ... in order, and the lanes are
// added in order at the end: the same numbers whether the compiler vectorises the lanes or not, on any machine,
// and however the tile is cut into chunks (each chunk but the tile's last a multiple of eight long).
class LaneSums {
public:
    void add(const float* a, const float* b, std::int64_t count) {
        std::int64_t k = 0;
#if defined(__AVX512F__)
        // Lane l holds elements k + l: the scalar lanes' operations, eight at once (GCC 12 leaves the loop below
        // scalar, and it was two thirds of compare's time).
        __m512d e2 = _mm512_load_pd(error_), s2 = _mm512_load_pd(signal_), mx = _mm512_load_pd(max_error_);
        const __m512d abs_mask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL));
        for (; k + kLanes <= count; k += kLanes) {
            const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(a + k));
            const __m512d e = _mm512_sub_pd(x, _mm512_cvtps_pd(_mm256_loadu_ps(b + k)));
            e2 = _mm512_add_pd(e2, _mm512_mul_pd(e, e));
            s2 = _mm512_add_pd(s2, _mm512_mul_pd(x, x));
            mx = _mm512_max_pd(mx, _mm512_and_pd(e, abs_mask));
        }
        _mm512_store_pd(error_, e2);
        _mm512_store_pd(signal_, s2);
        _mm512_store_pd(max_error_, mx);
#endif
        for (; k + kLanes <= count; k += kLanes)
            for (int l = 0; l < kLanes; ++l) one(a[k + l], b[k + l], l);
        for (int l = 0; k < count; ++k, ++l) one(a[k], b[k], l);
    }
    TileSums total() const {
        TileSums s;
        for (int l = 0; l < kLanes; ++l) {
            s.error += error_[l];
            s.signal += signal_[l];
            s.max_error = std::max(s.max_error, max_error_[l]);
        }
        return s;
    }

private:
    static constexpr int kLanes = 8;
    void one(float a, float b, int l) {
        const double x = a, e = x - static_cast<double>(b);
        error_[l] += e * e;
        signal_[l] += x * x;
        max_error_[l] = std::max(max_error_[l], std::fabs(e));
    }
    alignas(64) double error_[kLanes] = {}, signal_[kLanes] = {}, max_error_[kLanes] = {};
};

// Decodes both tensors tile by tile on every thread, a chunk at a time, and fills the row's numbers (or its
// error, for a value that is not finite); returns the row's sums. A file that shrank throws.
TileSums compare_values(const CheckpointShard& fa, const CheckpointTensor& ta, const GgmlTypeInfo& type_a,
                        const CheckpointShard& fb, const CheckpointTensor& tb, const GgmlTypeInfo& type_b,
                        CompareRow& row) {
    const std::int64_t n = row.elements;
    const std::int64_t tiles = (n + kTile - 1) / kTile;
    std::vector<TileSums> sums(static_cast<std::size_t>(tiles));
    const std::uint8_t* base_a = fa.file().data() + fa.data_offset() + ta.begin;
    const std::uint8_t* base_b = fb.file().data() + fb.data_offset() + tb.begin;
    fa.file().will_read(fa.data_offset() + ta.begin, ta.end - ta.begin);
    fb.file().will_read(fb.data_offset() + tb.begin, tb.end - tb.begin);
    // Tiles are taken kGroup at a time, and a group's pages leave this process's memory once it is summed (by
    // the thread that read them, in one call a file: each call interrupts the other core to flush its TLB).
    const std::int64_t groups = (tiles + kGroup - 1) / kGroup;
    detail::NextIndex next(0, groups);
    const auto release = [](const CheckpointShard& f, const CheckpointTensor& t, const GgmlTypeInfo& type,
                            std::int64_t first, std::int64_t count) {
        f.file().done_reading(f.data_offset() + t.begin + static_cast<std::size_t>(ggml_row_bytes(type, first)),
                              static_cast<std::size_t>(ggml_row_bytes(type, count)));
    };
    // One tile's sums: both mappings guarded for the whole tile (a guard per chunk cost more than the sums).
    const auto sum_tile = [&](std::int64_t tile, float* a, float* b) {
        const std::int64_t first = tile * kTile, count = std::min(kTile, n - first);
        fa.file().read_guarded([&] {
            return fb.file().read_guarded([&] {
                LaneSums lanes;
                // A ggml tensor's rows are whole blocks, and a chunk starts at a multiple of every block size.
                for (std::int64_t at = first; at < first + count; at += kChunk) {
                    const std::int64_t len = std::min(kChunk, first + count - at);
                    ggml_dequantize(type_a, base_a + ggml_row_bytes(type_a, at), len, a);
                    ggml_dequantize(type_b, base_b + ggml_row_bytes(type_b, at), len, b);
                    lanes.add(a, b, len);
                }
                sums[static_cast<std::size_t>(tile)] = lanes.total();
                return 0;
            });
        });
    };
    detail::parallel_run(nullptr, detail::pass_threads(n), [&](int, int) {
        alignas(64) float a[kChunk], b[kChunk];  // on the stack: nothing allocated (or faulted in) per tensor
        for (std::int64_t group; next.take(group);) {
            const std::int64_t tile_end = std::min(tiles, (group + 1) * kGroup);
            for (std::int64_t tile = group * kGroup; tile < tile_end; ++tile) sum_tile(tile, a, b);
            const std::int64_t first = group * kGroup * kTile, count = std::min(n, tile_end * kTile) - first;
            release(fa, ta, type_a, first, count);
            release(fb, tb, type_b, first, count);
        }
    });
    // The pages shared by two groups leave too (they stay in the page cache): resident memory follows a group.
    fa.file().done_reading(fa.data_offset() + ta.begin, ta.end - ta.begin);
    fb.file().done_reading(fb.data_offset() + tb.begin, tb.end - tb.begin);
    TileSums total;
    for (const TileSums& s : sums) {
        total.error += s.error;
        total.signal += s.signal;
        total.max_error = std::max(total.max_error, s.max_error);
    }
    // A stored NaN or infinity makes a sum NaN or infinite (and max skips NaN): no error can be measured. So does
    // an F64 beyond float32's range, which its to_float makes infinite (the stored value is finite: not 'stored').
    if (!std::isfinite(total.error) || !std::isfinite(total.signal)) {
        row.error = "a value is not finite in float32 (NaN, infinity, or an F64 beyond float32's range), so no error "
                    "is measured";
        return total;
    }
    row.mse = total.error / static_cast<double>(n);
    row.max_abs_error = total.max_error;
    if (total.signal > 0) row.relative_rmse = std::sqrt(row.mse) / std::sqrt(total.signal / static_cast<double>(n));
    if (total.error > 0 && total.signal > 0) row.sqnr_db = 10.0 * std::log10(total.signal / total.error);
    return total;
}

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
            return std::string(side) + " stores it as " + t->dtype + ", which QuantScope does not decode";
    return {};
}

CompareRow absent_row(const CheckpointTensor& t, bool in_a) {
    CompareRow row;
    row.name = t.name;
    row.shape = t.shape;
    row.elements = element_count(t.shape);
    (in_a ? row.dtype_a : row.dtype_b) = t.dtype;
    (in_a ? row.bits_per_weight_a : row.bits_per_weight_b) = bits_per_weight(t, row.elements);
    row.error = in_a ? "not in B" : "not in A";
    return row;
}

}  // namespace

CompareTotal compare_checkpoints(const Checkpoint& a, const Checkpoint& b,
                                 const std::function<void(const CompareRow&)>& on_row, const CompareProgress& progress,
                                 const std::atomic<bool>* cancel) {
    const auto start = std::chrono::steady_clock::now();
    std::unordered_map<std::string, const CheckpointTensor*> in_b;
    for (const CheckpointTensor& t : b.tensors) in_b.emplace(t.name, &t);
    std::unordered_map<std::string, bool> in_a;
    std::uint64_t bytes_total = 0, bytes_done = 0;
    for (const CheckpointTensor& t : a.tensors) {
        in_a.emplace(t.name, true);
        bytes_total += t.end - t.begin;
        const auto match = in_b.find(t.name);
        if (match != in_b.end()) bytes_total += match->second->end - match->second->begin;
    }

    CompareTotal total;
    double error_energy = 0, signal_energy = 0;
    const auto emit = [&](const CompareRow& row) {
        ++(row.error.empty() ? total.tensors : total.error_rows);
        if (on_row) on_row(row);
    };
    ShardReader shards_a(a), shards_b(b);
    const auto cancelled = [&] { return cancel != nullptr && cancel->load(); };
    for (const CheckpointTensor& ta : a.tensors) {
        if (cancelled()) break;
        const auto match = in_b.find(ta.name);
        if (match == in_b.end()) {
            emit(absent_row(ta, true));
            continue;
        }
        const CheckpointTensor& tb = *match->second;
        CompareRow row;
        row.name = ta.name;
        row.shape = ta.shape;
        row.dtype_a = ta.dtype;
        row.dtype_b = tb.dtype;
        row.elements = element_count(ta.shape);
        row.bits_per_weight_a = bits_per_weight(ta, row.elements);
        row.bits_per_weight_b = bits_per_weight(tb, element_count(tb.shape));
        row.error = why_not(ta, tb);
        if (row.error.empty()) {
            // A shard that changed since it was opened throws here: the whole compare stops.
            const CheckpointShard& fa = shards_a.shard_of(ta);
            const CheckpointShard& fb = shards_b.shard_of(tb);
            const TileSums sums = compare_values(fa, ta, *decoder_of(ta), fb, tb, *decoder_of(tb), row);
            if (row.error.empty()) {
                error_energy += sums.error;
                signal_energy += sums.signal;
                total.elements += row.elements;
                total.bytes_a += ta.end - ta.begin;
                total.bytes_b += tb.end - tb.begin;
                total.max_abs_error = std::max(total.max_abs_error, row.max_abs_error);
            }
        }
        emit(row);
        bytes_done += (ta.end - ta.begin) + (tb.end - tb.begin);
        if (progress) progress(bytes_done, bytes_total);
    }
    if (!cancelled())
        for (const CheckpointTensor& tb : b.tensors)
            if (in_a.count(tb.name) == 0) emit(absent_row(tb, false));
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
