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
    // F32, F16, BF16, F64 decode (to_float): plain values; the integer types (I8 ... I64) do not.
    const bool values = type.block_size == 1 && type.decodes;
    const FormatTraits* row = values ? nullptr : row_of_type(type);
    if (!values && (!type.decodes || row == nullptr)) {
        throw Error(std::string("its type ") + type.name +
                    (type.block_size == 1 ? " is neither quantized blocks nor values QuantScope reads"
                                          : " has no codes QuantScope shows"));
    }
    if (shape.empty() || shape.back() % type.block_size != 0)
        throw Error(std::string("its shape ") + shape_to_string(shape) + " is not whole blocks of " + type.name);
    auto out = std::make_shared<StoredBlocks>();
    out->type = &type;
    out->format = values ? (type.type == GgmlType::BF16 ? FormatId::Bf16 : FormatId::Fp16) : row->id;
    out->shape = std::move(shape);
    if (static_cast<std::int64_t>(bytes.size()) != ggml_row_bytes(type, out->numel()))
        throw Error("its stored bytes are not those of a " + shape_to_string(out->shape) + " " + type.name + " tensor");
    out->bytes = std::move(bytes);
    if (values) return out;  // no codes to check
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

QuantConfig stored_config(const StoredBlocks& stored, QuantConfig base) {
    QuantConfig c = with_format(base, stored.format);
    if (stored.values()) {
        c.mode = Mode::Cast;  // s = 1: what a float type's values are, with no scale stored
        c.granularity = Granularity::Tensor;
    }
    return c;
}

QuantParams stored_params(const Shape& shape, std::shared_ptr<const StoredBlocks> stored) {
    if (!stored) throw Error("no stored blocks");
    check_shape(*stored, shape);
    QuantParams p;
    if (stored->values()) {
        // No scale per value: one block of the whole tensor, s = 1 (a scale per element would cost 12 bytes each).
        p.block_stride = stored->numel();
        p.block_count = 1;
        p.scale.assign(1, 1.0);
        p.zero_point.assign(1, 0);
        p.stored = std::move(stored);
        return p;
    }
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
    double max_err_exact = 0;  // plain values: |A - B| in double
    bool values = false;       // plain values: no codes, no levels
    std::vector<std::uint8_t> seen;

    Metrics metrics(std::int64_t n, FormatId format) const {
        Metrics m;
        m.count = n;
        m.mse = sq_err / static_cast<double>(n);
        m.rmse = std::sqrt(m.mse);
        m.mae = abs_err / static_cast<double>(n);
        m.max_abs_error = values ? max_err_exact : max_err;
        m.l2_error = std::sqrt(sq_err);
        if (sq_r > 0 && sq_err > 0) m.sqnr_db = 10.0 * std::log10(sq_r / sq_err);
        if (!values) {  // plain values have no codes: no levels used of none
            m.levels_used = std::count(seen.begin(), seen.end(), std::uint8_t{1});
            m.levels_total = format_levels(format);
        }
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
    std::vector<float> scratch(kRun), deq(kRun), err(kRun);
    if (stored.values()) {
        // B's values against A's: no codes. The error as compare_checkpoints measures it, A - B in double, so
        // the metrics are `compare`'s row for the tensor (up to the order of the sums: the maximum to the bit).
        view.guarded([&] {
            for (std::int64_t k = 0; k < n; k += kRun) {
                const std::int64_t len = std::min(kRun, n - k);
                const float* r = floats_at(view, k, len, scratch.data());
                ggml_dequantize(type, stored.block(first + k), len, deq.data());
                for (std::int64_t i = 0; i < len; ++i) {
                    const auto at = static_cast<std::size_t>(i);
                    const double a = r[i], e = std::fabs(a - static_cast<double>(deq[at]));
                    err[at] = static_cast<float>(e);
                    sums.max_err_exact = std::max(sums.max_err_exact, e);
                    sums.sq_err += e * e;
                    sums.abs_err += e;
                    sums.sq_r += a * a;
                    sums.r += a;
                }
                if (out.codes) std::fill_n(out.codes + k, len, 0);
                if (out.dequantized) std::copy_n(deq.data(), len, out.dequantized + k);
                if (out.error) std::copy_n(err.data(), len, out.error + k);
            }
        });
        return;
    }
    const std::int32_t lo = code_space_of(stored).lo;
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
    StoredSums sums;
    if (stored.values()) {
        sums.values = true;
        return sums;
    }
    const CodeSpace space = code_space_of(stored);
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
    if (stored.values()) {
        // B's value, no code: r' is B's value, and with s = 1 the "scaled" value is A's own.
        ElementTrace t;
        t.flat_index = flat;
        t.block = 0;
        view.guarded([&] { t.r = *floats_at(view, flat, 1, &t.r); });
        ggml_dequantize(type, stored.block(flat), 1, &t.dequantized);
        t.scale = 1.0f;
        t.scaled = t.r;
        t.rounded = t.dequantized;
        t.error = std::fabs(t.r - t.dequantized);
        return t;
    }
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
    if (stored.values()) throw Error("B stores " + std::string(stored.type->name) + " values: there are no codes");
    if (block < 0 || block >= stored.blocks()) throw Error("block index out of range");
    GgmlBlockFields fields;
    ggml_block_fields(*stored.type, stored.block(block), fields);
    return std::vector<std::int32_t>(fields.codes, fields.codes + stored.type->block_size);
}

std::uint64_t stored_blocks_digest(const StoredBlocks& stored) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto mix = [&](const std::uint8_t* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    };
    const auto type = static_cast<std::uint32_t>(stored.type->type);
    mix(reinterpret_cast<const std::uint8_t*>(&type), sizeof type);
    for (const std::int64_t d : stored.shape) mix(reinterpret_cast<const std::uint8_t*>(&d), sizeof d);
    mix(stored.bytes.data(), stored.bytes.size());
    return h;
}

}  // namespace qs
