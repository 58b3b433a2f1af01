#include "quantscope/overview.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "overview_fused.hpp"
#include "overview_pieces.hpp"
#include "parallel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/stored_blocks.hpp"

namespace qs {
namespace {

constexpr std::int64_t kChunk = 4096;

// Where the elements [first, first + count) of the flat array fall in the grid: calls
// `segment(cell_row_base, col, len, offset)` for each run of one row of one slice, `cell_row_base` the index
// of the row's first block in slice-major block order, `offset` the run's position within [first, ...).
template <typename F>
void for_each_row_run(const OverviewGrid& g, std::int64_t first, std::int64_t count, F&& segment) {
    const std::int64_t slice_size = g.rows * g.cols;
    std::int64_t done = 0;
    while (done < count) {
        const std::int64_t flat = first + done;
        const std::int64_t slice = flat / slice_size, within = flat % slice_size;
        const std::int64_t row = within / g.cols, col = within % g.cols;
        const std::int64_t len = std::min(g.cols - col, count - done);
        segment(slice * g.cells_per_slice() + (row / g.fy) * g.out_cols(), col, len, done);
        done += len;
    }
}

}  // namespace

OverviewGrid overview_grid(const Shape& shape, std::int64_t max_cells) {
    OverviewGrid g = detail::slices_of(shape);
    max_cells = std::max<std::int64_t>(max_cells, g.slices);
    // Grow the blocks along whichever side has more blocks per cell of the other, keeping them about as
    // tall as wide in blocks of the slice (a tall slice gets tall blocks), until the grid fits.
    while (g.cells() > max_cells) {
        if (g.out_rows() >= g.out_cols() && g.fy < g.rows) {
            g.fy = std::min(g.rows, std::max(g.fy + 1, g.fy * 5 / 4));
        } else if (g.fx < g.cols) {
            g.fx = std::min(g.cols, std::max(g.fx + 1, g.fx * 5 / 4));
        } else {
            g.fy = std::min(g.rows, std::max(g.fy + 1, g.fy * 5 / 4));
        }
    }
    return g;
}

namespace {

// One kind's results folded into the overview as the pass streams them (in flat order, one batch at a time):
// the rows of the band of blocks being filled add (or max) into a row of per-column accumulators, a
// contiguous loop the compiler vectorises, and only when the band ends are its columns folded into blocks.
template <bool kMax, typename Cell>
class BandFolder {
public:
    BandFolder(const OverviewGrid& grid, Cell* cells) : g_(grid), cells_(cells), acc_(static_cast<std::size_t>(grid.cols)) {}
    template <typename T>
    void add(std::int64_t first, std::int64_t count, const T* values) {
        for_each_row_run(g_, first, count, [&](std::int64_t base, std::int64_t col, std::int64_t len, std::int64_t off) {
            if (base != band_) {
                flush();
                band_ = base;
            }
            const T* v = values + off;
            Acc* a = acc_.data() + col;
            for (std::int64_t k = 0; k < len; ++k) {
                if constexpr (kMax) a[k] = a[k] < static_cast<Acc>(v[k]) ? static_cast<Acc>(v[k]) : a[k];
                else a[k] += static_cast<Acc>(v[k]);
            }
        });
    }
    void flush() {
        if (band_ < 0) return;
        for (std::int64_t oc = 0; oc < g_.out_cols(); ++oc) {
            const std::int64_t c1 = std::min(g_.cols, (oc + 1) * g_.fx);
            Acc r = acc_[static_cast<std::size_t>(oc * g_.fx)];
            for (std::int64_t c = oc * g_.fx + 1; c < c1; ++c) {
                const Acc x = acc_[static_cast<std::size_t>(c)];
                if constexpr (kMax) r = r < x ? x : r;
                else r += x;
            }
            Cell& cell = cells_[band_ + oc];
            if constexpr (kMax) cell = cell < static_cast<Cell>(r) ? static_cast<Cell>(r) : cell;
            else cell += static_cast<Cell>(r);
        }
        std::fill(acc_.begin(), acc_.end(), Acc{});
        band_ = -1;
    }

private:
    using Acc = std::conditional_t<kMax, float, double>;
    const OverviewGrid& g_;
    Cell* cells_;
    std::vector<Acc> acc_;
    std::int64_t band_ = -1;
};

// How many of each code a batch holds: four interleaved tables, so runs of one code do not wait on each
// other's increments.
void count_codes(const std::int32_t* q, std::int64_t n, std::int32_t q_min, std::vector<std::int64_t>& counts,
                 std::vector<std::uint32_t>& scratch) {
    const std::size_t levels = counts.size();
    scratch.assign(4 * levels + 1, 0);
    std::uint32_t* t = scratch.data();
    std::int64_t k = 0;
    // A code outside the range (which the quantizer never writes) is not counted rather than written past.
    const auto at = [&](std::int32_t code) {
        const auto i = static_cast<std::size_t>(static_cast<std::uint32_t>(code - q_min));
        return i < levels ? i : levels;
    };
    for (; k + 4 <= n; k += 4) {
        ++t[at(q[k])];
        ++t[std::min(levels + at(q[k + 1]), 4 * levels)];
        ++t[std::min(2 * levels + at(q[k + 2]), 4 * levels)];
        ++t[std::min(3 * levels + at(q[k + 3]), 4 * levels)];
    }
    for (; k < n; ++k) ++t[at(q[k])];
    for (std::size_t i = 0; i < levels; ++i) counts[i] += t[i] + t[levels + i] + t[2 * levels + i] + t[3 * levels + i];
}

// The smallest and largest of n floats and whether all are finite, in 16 lanes so that the loop vectorises
// (a NaN or an infinity makes v * 0 a NaN, which the lanes' sum keeps).
struct Extremes {
    float lo, hi;
    bool finite;
};
Extremes extremes(const float* v, std::int64_t n) {
    float lo[16], hi[16], zero[16];
    std::fill(lo, lo + 16, std::numeric_limits<float>::infinity());
    std::fill(hi, hi + 16, -std::numeric_limits<float>::infinity());
    std::fill(zero, zero + 16, 0.0f);
    std::int64_t k = 0;
    for (; k + 16 <= n; k += 16)
        for (int j = 0; j < 16; ++j) {
            const float x = v[k + j];
            lo[j] = x < lo[j] ? x : lo[j];
            hi[j] = x > hi[j] ? x : hi[j];
            zero[j] += x * 0.0f;
        }
    Extremes e{*std::min_element(lo, lo + 16), *std::max_element(hi, hi + 16), true};
    float z = 0.0f;
    for (int j = 0; j < 16; ++j) z += zero[j];
    for (; k < n; ++k) {
        e.lo = std::min(e.lo, v[k]);
        e.hi = std::max(e.hi, v[k]);
        z += v[k] * 0.0f;
    }
    e.finite = z == 0.0f;
    return e;
}

// The largest of n floats (not NaN), in 16 lanes so that the loop vectorises.
float batch_max(const float* v, std::int64_t n) {
    float lanes[16];
    std::fill(lanes, lanes + 16, -std::numeric_limits<float>::infinity());
    std::int64_t k = 0;
    for (; k + 16 <= n; k += 16)
        for (int j = 0; j < 16; ++j) lanes[j] = lanes[j] < v[k + j] ? v[k + j] : lanes[j];
    float top = *std::max_element(lanes, lanes + 16);
    for (; k < n; ++k) top = std::max(top, v[k]);
    return top;
}

}  // namespace

ValueOverview overview_values(const TensorView& view, const OverviewGrid& grid) {
    const std::int64_t n = view.numel();
    if (n == 0) throw Error("cannot show an empty tensor");
    if (ValueOverview fused; detail::fused_values_overview(view, grid, fused)) return fused;
    const int threads = detail::pass_threads(n);
    struct Part {
        float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
        std::int64_t argmin = 0, argmax = 0;
        bool finite = true;
    };
    std::vector<Part> parts(static_cast<std::size_t>(threads));
    // Each thread takes whole bands of blocks (fy rows of one slice), so no two threads add into one block and
    // the shared sums need no merge (nor lock).
    std::vector<double> sums(static_cast<std::size_t>(grid.cells()), 0.0);
    const std::int64_t bands = grid.slices * grid.out_rows();
    detail::NextIndex next(0, bands);
    detail::parallel_guarded(view, threads, [&](int thread, int) {
        Part& p = parts[static_cast<std::size_t>(thread)];
        BandFolder<false, double> folder(grid, sums.data());
        std::vector<float> scratch(kChunk);
        for (std::int64_t band = 0; next.take(band);) {
            const std::int64_t slice = band / grid.out_rows(), orow = band % grid.out_rows();
            const std::int64_t r0 = orow * grid.fy, r1 = std::min(grid.rows, r0 + grid.fy);
            const std::int64_t first = (slice * grid.rows + r0) * grid.cols, count = (r1 - r0) * grid.cols;
            for (std::int64_t at = 0; at < count; at += kChunk) {
                const std::int64_t len = std::min(kChunk, count - at);
                const float* v = floats_at(view, first + at, len, scratch.data());
                const Extremes e = extremes(v, len);
                p.finite = p.finite && e.finite;
                // Chunks come in flat order within a thread: a strictly new extreme is its first occurrence.
                if (e.lo < p.lo) p.lo = e.lo, p.argmin = first + at + (std::find(v, v + len, e.lo) - v);
                if (e.hi > p.hi) p.hi = e.hi, p.argmax = first + at + (std::find(v, v + len, e.hi) - v);
                folder.add(first + at, len, v);
            }
            folder.flush();
        }
    });
    ValueOverview out;
    out.grid = grid;
    bool first = true;
    for (const Part& p : parts) {
        if (!p.finite) throw_nonfinite(view, first_nonfinite(view));
        if (p.lo == std::numeric_limits<float>::infinity()) continue;  // a thread that got no band
        if (first || p.lo < out.lo || (p.lo == out.lo && p.argmin < out.argmin)) out.lo = p.lo, out.argmin = p.argmin;
        if (first || p.hi > out.hi || (p.hi == out.hi && p.argmax < out.argmax)) out.hi = p.hi, out.argmax = p.argmax;
        first = false;
    }
    out.mean = detail::block_means(grid, sums);
    return out;
}

namespace {

using detail::cut_band;
using detail::kPiece;
using detail::Piece;
using detail::piece_params;

// The metrics of the whole from its pieces' (sums added in piece order: the same bits on any thread count).
Metrics merge_metrics(const std::vector<Metrics>& parts, const std::vector<std::int64_t>& counts, std::int64_t levels) {
    if (parts.size() == 1) return parts[0];
    Metrics m;
    double abs_sum = 0;
    for (const Metrics& p : parts) {
        m.count += p.count;
        m.error_energy += p.error_energy;
        m.signal_energy += p.signal_energy;
        m.sum += p.sum;
        abs_sum += p.mae * static_cast<double>(p.count);
        m.max_abs_error = std::max(m.max_abs_error, p.max_abs_error);
        m.clipped += p.clipped;
        m.levels_used = std::max(m.levels_used, p.levels_used);
    }
    const auto n = static_cast<double>(m.count);
    m.mse = m.error_energy / n;
    m.rmse = std::sqrt(m.mse);
    m.mae = abs_sum / n;
    m.l2_error = std::sqrt(m.error_energy);
    if (m.signal_energy > 0 && m.error_energy > 0) m.sqnr_db = 10.0 * std::log10(m.signal_energy / m.error_energy);
    if (!counts.empty()) m.levels_used = std::count_if(counts.begin(), counts.end(), [](std::int64_t c) { return c > 0; });
    m.levels_total = parts.empty() ? levels : parts[0].levels_total;  // the pass's own count (a format's numbers)
    return m;
}

}  // namespace

namespace {

// quantize_overview's work: runs of whole bands of blocks (fy rows of one slice; consecutive bands are
// contiguous in the flat array) of at least kPiece elements, each cut in pieces. A small tensor is one piece:
// one quantize_view call, whose metrics are those of `quantscope quantize` bit for bit.
struct Work {
    std::vector<Piece> pieces;
    std::vector<std::int64_t> unit_start{0};  // pieces of work unit k: [unit_start[k], unit_start[k + 1])
    std::int64_t units() const { return static_cast<std::int64_t>(unit_start.size()) - 1; }
};

Work cut_work(const QuantParams& params, const OverviewGrid& grid) {
    Work work;
    const std::int64_t grid_bands = grid.slices * grid.out_rows();
    const auto band_end = [&](std::int64_t band) {  // flat index one past grid band `band`
        const std::int64_t slice = band / grid.out_rows(), r0 = (band % grid.out_rows()) * grid.fy;
        return (slice * grid.rows + std::min(grid.rows, r0 + grid.fy)) * grid.cols;
    };
    for (std::int64_t band = 0, a = 0; band < grid_bands;) {
        std::int64_t b = band_end(band++);
        while (band < grid_bands && b - a < kPiece) b = band_end(band++);
        if (!cut_band(params, a, b, work.pieces)) throw Error("quantization parameters do not match the tensor's shape");
        work.unit_start.push_back(static_cast<std::int64_t>(work.pieces.size()));
        a = b;
    }
    return work;
}

// What the pass writes where every thread can reach: the blocks' sums and maxima (a work unit is whole to
// one thread, so no two threads add into one block) and each piece's metrics.
struct PassCells {
    bool one_block;  // one int<N> (s, z) for the tensor: r' follows from the codes, deq_sums stays empty
    std::vector<double> code_sums, deq_sums;
    std::vector<float> err_max;
    std::vector<Metrics> piece_metrics;
};

// One thread's code counts, r' range and largest error, merged after the pass.
struct PassPart {
    std::vector<std::int64_t> counts;
    float deq_lo = std::numeric_limits<float>::infinity(), deq_hi = -std::numeric_limits<float>::infinity();
    float worst = -1.0f;
    std::int64_t worst_at = 0;
};

// Quantizes one piece as quantize does. A number format's scales are the given params' (the whole tensor's):
// each piece is quantized as the slice it is of the whole (its own scales from the piece alone would be a
// per-tensor s from a part).
class PieceQuantizer {
public:
    PieceQuantizer(const TensorView& view, const QuantParams& params, const QuantConfig& config)
        : view_(view), params_(params), config_(config), is_format_(!is_int_format(config.format) && !params.stored),
          format_(is_format_ ? format_config(config) : FormatConfig{}),
          format_params_(is_format_ ? format_params_for(view, params, config) : FormatParams{}) {}
    Metrics operator()(const Piece& piece, const QuantOutputs& out, QuantParams& scratch) const {
        TensorView sub = view_;
        sub.shape = {piece.count};
        sub.data = view_.data + static_cast<std::size_t>(piece.first) * element_size(view_.type);
        if (params_.stored) return quantize_stored_slice(sub, piece.first, *params_.stored, out);  // decoded, not quantized
        return is_format_ ? quantize_format_slice(sub, piece.first, format_params_, format_, out)
                          : quantize_view(sub, piece_params(params_, piece, scratch), config_, out);
    }

private:
    const TensorView& view_;
    const QuantParams& params_;
    const QuantConfig& config_;
    bool is_format_;
    FormatConfig format_;
    FormatParams format_params_;
};

// One thread of the pass: quantizes the work units it takes into buffers that stay in cache and folds each
// piece's results at once into the blocks, its code counts, its r' range and its largest error.
void run_pass_thread(const Work& work, const PieceQuantizer& quantize, const OverviewGrid& grid, std::int32_t q_min,
                     std::int64_t levels, detail::NextIndex& next, PassCells& cells, PassPart& part) {
    const bool one_block = cells.one_block;
    part.counts.assign(static_cast<std::size_t>(levels), 0);
    std::vector<std::int32_t> codes(kPiece);
    std::vector<float> deq(one_block ? 0 : kPiece), err(kPiece);
    std::vector<std::uint32_t> count_scratch;
    QuantParams scratch;
    // Bands are whole to one thread: the blocks it adds into are its own.
    BandFolder<false, double> code_folder(grid, cells.code_sums.data());
    BandFolder<true, float> err_folder(grid, cells.err_max.data());
    BandFolder<false, double> deq_folder(grid, one_block ? nullptr : cells.deq_sums.data());
    for (std::int64_t unit = 0; next.take(unit);) {
        const auto u = static_cast<std::size_t>(unit);
        for (std::int64_t i = work.unit_start[u]; i < work.unit_start[u + 1]; ++i) {
            const Piece& piece = work.pieces[static_cast<std::size_t>(i)];
            const QuantOutputs out{codes.data(), one_block ? nullptr : deq.data(), err.data()};
            cells.piece_metrics[static_cast<std::size_t>(i)] = quantize(piece, out, scratch);
            count_codes(codes.data(), piece.count, q_min, part.counts, count_scratch);
            code_folder.add(piece.first, piece.count, codes.data());
            const float top = batch_max(err.data(), piece.count);
            if (top > part.worst) {  // pieces come in flat order within a thread: the first maximum wins
                part.worst = top;
                part.worst_at = piece.first + (std::find(err.begin(), err.begin() + piece.count, top) - err.begin());
            }
            err_folder.add(piece.first, piece.count, err.data());
            if (!one_block) {
                const Extremes e = extremes(deq.data(), piece.count);
                part.deq_lo = std::min(part.deq_lo, e.lo);
                part.deq_hi = std::max(part.deq_hi, e.hi);
                deq_folder.add(piece.first, piece.count, deq.data());
            }
        }
        code_folder.flush();
        err_folder.flush();
        if (!one_block) deq_folder.flush();
    }
}

// The threads' parts and the blocks' sums as the overview: code counts and range, the first largest error,
// and r' (from the codes when one (s, z) maps them all).
QuantOverview merge_pass(const std::vector<PassPart>& parts, PassCells& cells, const QuantParams& params,
                         const OverviewGrid& grid, std::int32_t q_min, std::int64_t levels) {
    QuantOverview out;
    out.grid = grid;
    out.code_counts.assign(static_cast<std::size_t>(levels), 0);
    float deq_lo = std::numeric_limits<float>::infinity(), deq_hi = -std::numeric_limits<float>::infinity();
    float worst = -1.0f;
    for (const PassPart& part : parts) {
        if (part.counts.empty()) continue;
        for (std::size_t k = 0; k < part.counts.size(); ++k) out.code_counts[k] += part.counts[k];
        deq_lo = std::min(deq_lo, part.deq_lo);
        deq_hi = std::max(deq_hi, part.deq_hi);
        if (part.worst > worst || (part.worst == worst && part.worst_at < out.error_argmax))
            worst = part.worst, out.error_argmax = part.worst_at;
    }
    out.metrics = merge_metrics(cells.piece_metrics, out.code_counts, levels);
    detail::finish_blocks(grid, params, q_min, cells.code_sums, std::move(cells.err_max),
                          cells.one_block ? nullptr : &cells.deq_sums, deq_lo, deq_hi, out);
    return out;
}

}  // namespace

QuantOverview quantize_overview(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                                const OverviewGrid& grid, const ValueOverview* values) {
    const std::vector<std::int64_t>* bits = values && !values->bit_counts.empty() ? &values->bit_counts : nullptr;
    if (QuantOverview fused; detail::fused_int_overview(view, params, config, grid, bits, fused)) return fused;
    // The codes the config can produce (a format's bit patterns or indices, not int8's range).
    std::int32_t code_first = 0, code_last = 0;
    code_range(config, code_first, code_last);
    const std::int64_t levels = std::int64_t{code_last} - code_first + 1;
    if (levels > kMaxCountedLevels) throw Error("the window counts codes of at most 16 bits");
    const Work work = cut_work(params, grid);
    const auto cells = static_cast<std::size_t>(grid.cells());
    // r' follows from the mean code only for int<N>'s affine s (q - z); a format's grid is not affine in its
    // codes (an fp8 bit pattern, an nf4 index), so its blocks sum r' even under one scale.
    const bool one_block = params.block_count == 1 && is_int_format(config.format);
    PassCells pass{one_block, std::vector<double>(cells, 0.0), std::vector<double>(one_block ? 0 : cells, 0.0),
                   std::vector<float>(cells, 0.0f), std::vector<Metrics>(work.pieces.size())};
    const int threads = detail::pass_threads(view.numel());
    std::vector<PassPart> parts(static_cast<std::size_t>(threads));
    detail::NextIndex next(0, work.units());
    const PieceQuantizer quantize(view, params, config);
    detail::parallel_run(nullptr, threads, [&](int thread, int) {
        run_pass_thread(work, quantize, grid, code_first, levels, next, pass, parts[static_cast<std::size_t>(thread)]);
    });
    return merge_pass(parts, pass, params, grid, code_first, levels);
}

bool quantize_overview_blocks(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                              const OverviewGrid& grid, const ValueOverview& values, QuantOverview& out, const BlockRanges* ranges) {
    // One (s, z) on a bf16/f16 tensor: the whole pass takes its metrics and counts from the bit patterns and
    // runs a leaner kernel than this one (verified reciprocal, no clamp): it is the quicker step there.
    if (params.block_count == 1 && !values.bit_counts.empty()) return false;
    return detail::fused_int_blocks(view, params, config, grid, values.amax(), ranges, out);
}

double read_pass(const TensorView& view) {
    // The bytes as 64-bit words, summed in four lanes (which the compiler vectorises): a memory-bound read
    // with next to no arithmetic, on as many threads as the overview's pass.
    const std::int64_t n = view.numel();
    const auto bytes = static_cast<std::int64_t>(n * static_cast<std::int64_t>(element_size(view.type)));
    const std::int64_t words = bytes / 8;
    const int threads = detail::pass_threads(n);
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads), 0);
    detail::parallel_guarded(view, threads, [&](int thread, int count) {
        std::int64_t w0 = 0, w1 = 0;
        detail::static_share(words, thread, count, w0, w1);
        std::uint64_t acc[4] = {};
        std::int64_t w = w0;
        for (; w + 4 <= w1; w += 4)
            for (int j = 0; j < 4; ++j) {
                std::uint64_t word;
                std::memcpy(&word, view.data + 8 * (w + j), 8);
                acc[j] += word;
            }
        for (; w < w1; ++w) {
            std::uint64_t word;
            std::memcpy(&word, view.data + 8 * w, 8);
            acc[0] += word;
        }
        if (thread == 0)
            for (std::int64_t b = words * 8; b < bytes; ++b) acc[0] += view.data[b];
        sums[static_cast<std::size_t>(thread)] = acc[0] + acc[1] + acc[2] + acc[3];
    });
    std::uint64_t total = 0;
    for (std::uint64_t s : sums) total += s;
    return static_cast<double>(total);
}

}  // namespace qs
