// A stored ggml quantization shown against another tensor's values (stored_blocks.hpp): decoding only.
#include "quantscope/stored_blocks.hpp"

#include <algorithm>
#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/format_traits.hpp"

namespace qs {
namespace {

// Elements decoded at a time: a multiple of every block size.
constexpr std::int64_t kRun = 4096;

const FormatTraits* row_of_type(const GgmlTypeInfo& type) {
    for (const FormatId id : all_formats())
        if (format_traits(id).ggml == &type) return &format_traits(id);
    return nullptr;
}

// What the element at `j` of a block was multiplied by and what was added (to_float: r' = grid * scale + offset).
float scale_at(const GgmlBlockFields& f, int j) { return f.sub_blocks > 0 ? f.sub_scale_used[j / f.sub_size] : f.d; }
float offset_at(const GgmlBlockFields& f, int j) {
    if (f.sub_blocks > 0) return -f.sub_min_used[j / f.sub_size];
    return f.has_dmin ? f.dmin : 0.0f;
}

CodeSpace code_space_of(const StoredBlocks& stored) {
    const FormatTraits& row = format_traits(stored.format);
    return row.code_space(row, stored_config(stored, QuantConfig{}));
}

void check_shape(const StoredBlocks& stored, const Shape& shape) {
    if (shape != stored.shape)
        throw Error("the stored " + std::string(stored.type->name) + " tensor is " + shape_to_string(stored.shape) +
                    ", this one " + shape_to_string(shape));
}

void check_slice(const StoredBlocks& stored, std::int64_t first, std::int64_t count) {
    const std::int64_t size = stored.type->block_size;
    if (first < 0 || count < 0 || first % size != 0 || count % size != 0 || first + count > stored.numel())
        throw Error("stored blocks do not match the tensor's elements");
}

}  // namespace

std::int64_t StoredBlocks::numel() const {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    return n;
}

std::shared_ptr<const StoredBlocks> make_stored_blocks(const GgmlTypeInfo& type, Shape shape,
                                                       std::vector<std::uint8_t> bytes) {
    const FormatTraits* row = row_of_type(type);
    if (!type.decodes || row == nullptr) {
        const bool values = type.block_size == 1;  // F32, F16, BF16, F64 and the integer types
        throw Error(std::string("its type ") + type.name +
                    (values ? " stores values, not quantized blocks" : " has no codes QuantScope shows"));
    }
    if (shape.empty() || shape.back() % type.block_size != 0)
        throw Error(std::string("its shape ") + shape_to_string(shape) + " is not whole blocks of " + type.name);
    auto out = std::make_shared<StoredBlocks>();
    out->type = &type;
    out->format = row->id;
    out->shape = std::move(shape);
    if (static_cast<std::int64_t>(bytes.size()) != ggml_row_bytes(type, out->numel()))
        throw Error("its stored bytes are not those of a " + shape_to_string(out->shape) + " " + type.name + " tensor");
    out->bytes = std::move(bytes);
    // A file may hold codes the type's quantizer never writes (q8_0's -128, tq2_0's 2): they decode, but they
    // lie outside the codes the window counts and colours.
    const CodeSpace space = code_space_of(*out);
    GgmlBlockFields fields;
    for (std::int64_t b = 0; b < out->blocks(); ++b) {
        ggml_block_fields(type, out->block(b), fields);
        for (int j = 0; j < type.block_size; ++j)
            if (fields.codes[j] < space.lo || fields.codes[j] > space.hi)
                throw Error("block " + std::to_string(b) + " holds the code " + std::to_string(fields.codes[j]) +
                            ", outside " + type.name + "'s " + std::to_string(space.lo) + ".." + std::to_string(space.hi));
    }
    return out;
}

QuantConfig stored_config(const StoredBlocks& stored, QuantConfig base) { return with_format(base, stored.format); }

QuantParams stored_params(const Shape& shape, std::shared_ptr<const StoredBlocks> stored) {
    if (!stored) throw Error("no stored blocks");
    check_shape(*stored, shape);
    QuantParams p;
    p.block_stride = stored->type->block_size;
    p.block_count = stored->blocks();
    p.scale.resize(static_cast<std::size_t>(p.block_count));
    p.zero_point.assign(static_cast<std::size_t>(p.block_count), 0);
    GgmlBlockFields fields;
    for (std::int64_t b = 0; b < p.block_count; ++b) {
        ggml_block_fields(*stored->type, stored->block(b), fields);
        p.scale[static_cast<std::size_t>(b)] = fields.d;
    }
    p.stored = std::move(stored);
    return p;
}

namespace {

// The sums a pass adds up, in element order, and the codes seen (index code - lo).
struct StoredSums {
    double sq_err = 0, abs_err = 0, sq_r = 0, r = 0;
    float max_err = 0;
    std::vector<std::uint8_t> seen;

    Metrics metrics(std::int64_t n, FormatId format) const {
        Metrics m;
        m.count = n;
        m.mse = sq_err / static_cast<double>(n);
        m.rmse = std::sqrt(m.mse);
        m.mae = abs_err / static_cast<double>(n);
        m.max_abs_error = max_err;
        m.l2_error = std::sqrt(sq_err);
        if (sq_r > 0 && sq_err > 0) m.sqnr_db = 10.0 * std::log10(sq_r / sq_err);
        m.levels_used = std::count(seen.begin(), seen.end(), std::uint8_t{1});
        m.levels_total = format_levels(format);
        m.sum = r;
        m.signal_energy = sq_r;
        m.error_energy = sq_err;
        return m;
    }
};

// Elements [first, first + view.numel()) decoded and compared with the view's values, into `out`'s arrays.
void run_stored(const TensorView& view, std::int64_t first, const StoredBlocks& stored, const QuantOutputs& out,
                StoredSums& sums) {
    const std::int64_t n = view.numel();
    check_slice(stored, first, n);
    const GgmlTypeInfo& type = *stored.type;
    const int size = type.block_size;
    const std::int32_t lo = code_space_of(stored).lo;
    std::vector<float> scratch(kRun), deq(kRun), err(kRun);
    std::vector<std::int32_t> codes(kRun);
    GgmlBlockFields fields;
    view.guarded([&] {
        for (std::int64_t k = 0; k < n; k += kRun) {
            const std::int64_t len = std::min(kRun, n - k);
            const float* r = floats_at(view, k, len, scratch.data());
            const std::int64_t block0 = (first + k) / size;
            ggml_dequantize(type, stored.block(block0), len, deq.data());
            for (std::int64_t b = 0; b < len / size; ++b) {
                ggml_block_fields(type, stored.block(block0 + b), fields);
                std::copy_n(fields.codes, size, codes.data() + b * size);
            }
            for (std::int64_t i = 0; i < len; ++i) {
                const auto at = static_cast<std::size_t>(i);
                const float e = std::fabs(r[i] - deq[at]);
                err[at] = e;
                sums.max_err = std::max(sums.max_err, e);
                sums.sq_err += static_cast<double>(e) * e;
                sums.abs_err += e;
                sums.sq_r += static_cast<double>(r[i]) * r[i];
                sums.r += r[i];
                sums.seen[static_cast<std::size_t>(codes[at] - lo)] = 1;  // in range: make_stored_blocks checked
            }
            if (out.codes) std::copy_n(codes.data(), len, out.codes + k);
            if (out.dequantized) std::copy_n(deq.data(), len, out.dequantized + k);
            if (out.error) std::copy_n(err.data(), len, out.error + k);
        }
    });
}

StoredSums sums_for(const StoredBlocks& stored) {
    const CodeSpace space = code_space_of(stored);
    StoredSums sums;
    sums.seen.assign(static_cast<std::size_t>(space.hi - space.lo + 1), 0);
    return sums;
}

}  // namespace

Metrics quantize_stored_slice(const TensorView& view, std::int64_t first, const StoredBlocks& stored,
                              const QuantOutputs& out) {
    if (view.numel() == 0) throw Error("cannot quantize an empty tensor");
    StoredSums sums = sums_for(stored);
    run_stored(view, first, stored, out, sums);
    return sums.metrics(view.numel(), stored.format);
}

Metrics quantize_stored(const TensorView& view, const StoredBlocks& stored, const QuantOutputs* whole,
                        const OutputSelection& wanted, const ResultSink* sink) {
    check_shape(stored, view.shape);
    if (whole || !sink) return quantize_stored_slice(view, 0, stored, whole ? *whole : QuantOutputs{});
    // Batches of whole blocks (a batch is a multiple of every block size), each delivered kind by kind.
    const std::int64_t n = view.numel(), batch = std::min(n, std::int64_t{1} << 20);
    std::vector<std::int32_t> codes(wanted.codes ? static_cast<std::size_t>(batch) : 0);
    std::vector<float> deq(wanted.dequantized ? static_cast<std::size_t>(batch) : 0);
    std::vector<float> err(wanted.error ? static_cast<std::size_t>(batch) : 0);
    const QuantOutputs out{codes.empty() ? nullptr : codes.data(), deq.empty() ? nullptr : deq.data(),
                           err.empty() ? nullptr : err.data()};
    StoredSums sums = sums_for(stored);
    for (std::int64_t first = 0; first < n; first += batch) {
        const std::int64_t count = std::min(batch, n - first);
        TensorView part = view;
        part.shape = {count};
        part.data = view.data + static_cast<std::size_t>(first) * element_size(view.type);
        run_stored(part, first, stored, out, sums);
        if (out.codes) (*sink)(first, count, QuantOutputs{out.codes, nullptr, nullptr});
        if (out.dequantized) (*sink)(first, count, QuantOutputs{nullptr, out.dequantized, nullptr});
        if (out.error) (*sink)(first, count, QuantOutputs{nullptr, nullptr, out.error});
    }
    return sums.metrics(n, stored.format);
}

ElementTrace trace_stored(const TensorView& view, const StoredBlocks& stored, std::int64_t flat) {
    if (flat < 0 || flat >= view.numel() || flat >= stored.numel()) throw Error("element index out of range");
    const GgmlTypeInfo& type = *stored.type;
    const std::int64_t block = flat / type.block_size;
    const int j = static_cast<int>(flat - block * type.block_size);
    GgmlBlockFields fields;
    ggml_block_fields(type, stored.block(block), fields);
    std::vector<float> deq(static_cast<std::size_t>(type.block_size));
    ggml_dequantize(type, stored.block(block), type.block_size, deq.data());
    const FormatTraits& row = format_traits(stored.format);
    const std::vector<float> grid = row.grid(row);
    ElementTrace t;
    t.flat_index = flat;
    t.block = block;
    view.guarded([&] { t.r = *floats_at(view, flat, 1, &t.r); });
    t.code = fields.codes[j];
    t.scale = scale_at(fields, j);
    t.scaled = t.scale != 0 ? (t.r - offset_at(fields, j)) / t.scale : 0.0f;
    t.rounded = grid[static_cast<std::size_t>(t.code - code_space_of(stored).lo)];  // the grid is in code order
    t.dequantized = deq[static_cast<std::size_t>(j)];
    t.error = std::fabs(t.r - t.dequantized);
    return t;
}

std::vector<std::int32_t> stored_block_codes(const StoredBlocks& stored, std::int64_t block) {
    if (block < 0 || block >= stored.blocks()) throw Error("block index out of range");
    GgmlBlockFields fields;
    ggml_block_fields(*stored.type, stored.block(block), fields);
    return std::vector<std::int32_t>(fields.codes, fields.codes + stored.type->block_size);
}

}  // namespace qs
