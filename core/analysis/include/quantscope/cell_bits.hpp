// Everything the window's Bits view shows of one element (issue 12 item 5): the fields of its code and
// what they decode to, its block's stored scale(s) as bits, and, for codes narrower than a byte, the byte
// of `--out-packed` that holds it with the codes it shares that byte with (first code in the lowest bits).
// The GUI only lays these out and prints them; every reading of a bit lives here and in bit_fields.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/bit_fields.hpp"
#include "quantscope/config.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// What a float code stands for.
enum class FloatClass { Zero, Subnormal, Normal, Infinity, NaN };
const char* to_string(FloatClass c);  // "zero", "subnormal", "normal", "infinity", "NaN"
FloatClass classify_float_code(std::uint32_t code, const FloatSpec& spec);

// The float32 layout (IEEE binary32), for scales stored as float32 (s, absmax, NVFP4's g).
FloatSpec float32_spec();

// One row of bit boxes: an element's code or a stored scale.
// SubScale / SubMin: a ggml k-quant's (or iq4_xs's) sub-block scale and min as stored, inside the block's d.
enum class BitRowRole { Code, BlockScale, TensorScale, Offset, SubScale, SubMin };
struct BitRow {
    BitRowRole role = BitRowRole::Code;
    std::string encoding;          // "fp8-e4m3", "int4", "uint2", "nf4 index", "E8M0", "E4M3", "fp16", "float32"
    std::uint32_t bits_value = 0;  // the stored bits as an unsigned number
    std::vector<BitField> fields;  // most significant first
    bool is_float = false;         // fields are sign / exponent [/ mantissa]
    FloatClass float_class = FloatClass::Normal;
    // What the row stands for: a float's value, an integer code's value (two's complement, or the offset
    // code itself), NF4's codebook level, Q4_0's q - 8, an E8M0 byte's 2^(raw - 127).
    double value = 0;
    // Integer codes (and NF4's index): each bit's weight, most significant first (two's complement: the top
    // bit weighs -2^(N-1)); `value` is the sum of the weights of the set bits (minus 8 for Q4_0).
    std::vector<double> weights;
    // A number stored with a bias (q6_K's code q + 32, q3_K's q + 4 and sub-block scale sc + 32, tq2_0's q + 1):
    // the bits are the stored number, fields[0].value the number it stands for (raw - bias).
    std::int32_t bias = 0;
    // SubScale / SubMin: the float32 to_float uses, d · sc (the codes' multiplier) or dmin · m (subtracted).
    double used = 0;
    int sub_block = -1;  // which sub-block of the block (SubScale / SubMin)
};

// The byte of --out-packed that holds element `flat` when codes take fewer than 8 bits, packed end to end
// (none for a ggml type: its file is ggml's block structs).
struct PackedSlot {
    std::int64_t element = 0;
    std::int32_t code = 0;  // as --out-quantized writes it
    int low_bit = 0;        // where the code's lowest bit lies in the byte (negative: it began a byte before)
    int bits = 0;
};
struct PackedByte {
    std::int64_t offset = -1;  // the byte's offset in the file; -1: the codes take whole bytes (none shown)
    std::uint8_t value = 0;
    std::vector<PackedSlot> slots;  // every code with a bit in this byte, the lowest bits first
};

// A ggml type's block around the element (FORMATS.md "llama.cpp (ggml) types"): the block's fields as
// stored (ggml_block_fields of the bytes the pass writes for it, importance included) and where the element
// sits in it: the super-block's d / dmin, its sub-block's scale and min as stored and as used (d * sc and
// dmin * m, the float32 products to_float uses), its code and what the code stands for.
struct GgmlCellBits {
    const GgmlTypeInfo* type = nullptr;  // null: the config's format is not a ggml type
    GgmlBlockFields fields;
    std::int64_t byte_offset = 0;  // the block's first byte in --out-packed (ggml's block structs, in order)
    int index = 0;                 // the element's place in its block
    int sub_block = -1;            // its sub-block (fields.sub_blocks > 0); -1: none
    float value = 0;               // r
    float code_value = 0;          // what the code stands for before the scales (q4_0: q - 8; iq4: the grid value)
    float dequantized = 0;         // r', the type's to_float of the block
    bool weighted = false;         // the importance-weighted quantizer wrote the block
};

struct CellBits {
    std::int64_t flat_index = 0, block = 0;
    int code_bits = 0;  // bits of one code as --out-packed stores it
    BitRow code;
    // The scales stored for the element's block, as --out-packed writes them: MX's E8M0 X; NVFP4's E4M3 sb
    // and the tensor's float32 g; ggml's fp16 d (and Q4_1's fp16 m, a k-quant's fp16 dmin), then for a
    // k-quant or iq4_xs the element's sub-block scale (and min) as stored, with what to_float makes of it;
    // an element format's float32 s (NF4: the absmax); int<N>'s float32 s. Empty in cast mode.
    std::vector<BitRow> scales;
    PackedByte packed;  // ggml types: none (their --out-packed is ggml's block structs; see ggml)
    // ggml types: the block's nesting. `code` then holds the code's bits as the block stores them (q6_K:
    // q + 32; q3_K: q + 4; tq2_0: q + 1; tq1_0: a base-3 digit) and `scales` d, dmin (or m), then the
    // element's sub-block scale and min (roles SubScale, SubMin) where the type has sub-blocks.
    GgmlCellBits ggml;
};

// The Bits view of element `flat` of `view` quantized with `params` (as compute_params gives them) and
// `config`. `tensor_amax` is max |r| over the tensor (NVFP4 derives its g from it; the window passes
// ValueOverview::amax()); pass a negative number to have it computed (one pass over the view).
// Throws qs::Error for an index out of range.
CellBits cell_bits(const TensorView& view, const QuantParams& params, const QuantConfig& config, std::int64_t flat,
                   float tensor_amax);

// The packed byte alone (offset -1 when config's codes take 8 bits or more). The byte is core packing's
// (pack_codes) over the codes around `flat`, the one --out-packed writes at `offset`.
PackedByte packed_byte_of(const TensorView& view, const QuantParams& params, const QuantConfig& config,
                          std::int64_t flat);

}  // namespace qs
