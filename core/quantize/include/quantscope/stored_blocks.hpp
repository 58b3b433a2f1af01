// A quantization already made (issue 23 item 6, "B's stored values"): a ggml tensor's block bytes as a file
// holds them. QuantParams carries them (QuantParams::stored) so that every pass, trace and view of another
// tensor of the same shape (A, the original) shows them as its quantization without quantizing anything
// again: r' is the type's to_float of the stored bytes (ggml_dequantize), the codes and the scales are the
// stored blocks' fields (ggml_block_fields), and the error is |r - r'| with r the tensor's own values.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/number_format.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

struct StoredBlocks {
    const GgmlTypeInfo* type = nullptr;
    FormatId format = FormatId::Int;  // the format row of `type` (what the window's type list calls it)
    Shape shape;                      // of the values the bytes encode, row-major as numpy shows it
    std::vector<std::uint8_t> bytes;  // ggml's blocks in flat order, ggml_row_bytes(type, numel) of them

    std::int64_t numel() const;
    std::int64_t blocks() const { return numel() / type->block_size; }
    // B stores plain values (F16, BF16, F32, F64: a block of one value, no code and no scale): r' is B's value
    // decoded, the error |A - B|, and there are no codes (a pass writes 0 and counts no levels). Its format
    // is the row that keys it in the window's type list (fp16 for F16, F32 and F64; bf16 for BF16).
    bool values() const { return type->block_size == 1; }
    const std::uint8_t* block(std::int64_t b) const { return bytes.data() + b * type->type_size; }
};

// Checks and wraps a tensor's stored blocks: the type must be one QuantScope decodes and quantizes (it has a
// format row) or a plain value type it decodes (F16, BF16, F32, F64: StoredBlocks::values), the last axis a
// whole number of blocks, and `bytes` exactly the tensor's. Throws qs::Error saying which.
std::shared_ptr<const StoredBlocks> make_stored_blocks(const GgmlTypeInfo& type, Shape shape,
                                                       std::vector<std::uint8_t> bytes);

// The config and params that show `stored` as the quantization of a tensor of `shape`: the stored type's
// format, one block per ggml block, each block's scale its decoded d (plain values: the cast mode, one block of
// the whole tensor with s = 1). Throws qs::Error when the shapes differ.
QuantConfig stored_config(const StoredBlocks& stored, QuantConfig base);
QuantParams stored_params(const Shape& shape, std::shared_ptr<const StoredBlocks> stored);

// The pass over elements [first, first + view.numel()) of the tensor (first and the count whole blocks, or the
// count running to the tensor's end): r' decoded from the stored blocks, codes their fields', error |r - r'|,
// the metrics as the format pass sums them (nothing is clipped: no rounding happens here).
Metrics quantize_stored_slice(const TensorView& view, std::int64_t first, const StoredBlocks& stored,
                              const QuantOutputs& out);
// The whole tensor, its results streamed to `sink` a block-aligned batch at a time (quantize_view's contract).
// `whole` (all three arrays of numel) or `sink` with the kinds `wanted`; either may be null.
Metrics quantize_stored(const TensorView& view, const StoredBlocks& stored, const QuantOutputs* whole,
                        const OutputSelection& wanted, const ResultSink* sink);

// One element: its stored code, what the code stands for (`rounded`), the scale it was multiplied by (a
// k-quant's sub-block d * sc), r' and |r - r'|.
ElementTrace trace_stored(const TensorView& view, const StoredBlocks& stored, std::int64_t flat);
// The codes of block `block` as stored (plain values have none: throws).
std::vector<std::int32_t> stored_block_codes(const StoredBlocks& stored, std::int64_t block);

// A 64-bit digest of the stored bytes with their type and shape (FNV-1a): a saved session tells by it that B's
// tensor changed since.
std::uint64_t stored_blocks_digest(const StoredBlocks& stored);

}  // namespace qs
