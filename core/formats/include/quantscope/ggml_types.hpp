// llama.cpp's (ggml's) tensor types as GGUF stores them (FORMATS.md "llama.cpp (ggml) types"): their ids,
// block sizes and block bytes, and for each type QuantScope knows, its block codec, bit-exact with ggml's
// reference C (ggml-quants.c): quantize (ggml_quantize_chunk, with or without an importance vector),
// dequantize (the type's to_float) and the fields of one block as stored (the Bits view, --out-quantized,
// JSON's sub_scales). Blocks are ggml's structs of ggml-common.h, byte for byte, little-endian.
#pragma once

#include <cstdint>
#include <string_view>

namespace qs {

// ggml.h's enum ggml_type: the numbers GGUF files hold.
enum class GgmlType : std::uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20, IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
    I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28, IQ1_M = 29, BF16 = 30,
    TQ1_0 = 34, TQ2_0 = 35, MXFP4 = 39,
};

struct GgmlTypeInfo {
    GgmlType type = GgmlType::F32;
    const char* name = "";      // ggml's own spelling ("q4_K", "iq4_nl", "f16")
    int block_size = 1;         // values per block
    int type_size = 4;          // bytes per block
    bool decodes = false;       // ggml_dequantize reads it (the rest, IQ1_* ... IQ3_*, are listed only)
    bool quantizes = false;     // ggml_quantize_rows writes it (a QuantScope --dtype)
    bool takes_importance = false;  // ggml_quantize_chunk has an importance-weighted quantizer for it
};

// The type of a GGUF type id; nullptr for an id ggml does not define.
const GgmlTypeInfo* ggml_type_info(std::uint32_t id);
// The type named (any case: "Q4_K", "q4_k"); nullptr for none.
const GgmlTypeInfo* ggml_type_named(std::string_view name);
// Bytes of n values of the type (n a multiple of its block size).
std::int64_t ggml_row_bytes(const GgmlTypeInfo& type, std::int64_t n);

// An importance vector for some blocks of one row, as ggml's quantizers take `quant_weights`: `weights`
// is aligned with the values given (weights[k] for x[k]), and the row's own sum of squares in float32, in
// order (ggml_row_sum_squares), which some importance-weighted quantizers use for their sigma2.
struct GgmlImportance {
    const float* weights = nullptr;
    float row_sum_squares = 0;
    std::int64_t row_length = 0;
};
// Σ x[k]² over the row, each product and sum a float32 operation in index order (ggml's sum_x2).
float ggml_row_sum_squares(const float* x, std::int64_t n);

// Quantizes `blocks` whole blocks of x into ggml's block bytes at out (blocks * type_size bytes), as
// ggml_quantize_chunk does for them: the reference quantizer where `importance` is null, the importance-
// weighted one otherwise (types that have none ignore it). Needs type.quantizes.
void ggml_quantize_blocks(const GgmlTypeInfo& type, const float* x, std::int64_t blocks,
                          const GgmlImportance* importance, void* out);
// The type's to_float: n values (a multiple of the block size) from the blocks at `in`. Needs type.decodes.
void ggml_dequantize(const GgmlTypeInfo& type, const void* in, std::int64_t n, float* y);

// One block's fields as stored and as to_float uses them.
struct GgmlBlockFields {
    float d = 0;                 // the decoded fp16 d (MXFP4: the E8M0 scale)
    float dmin = 0;              // the decoded fp16 dmin (q4_1, q5_1: m); 0 where none is stored
    std::uint16_t d_bits = 0;    // the stored bits of d (MXFP4: the E8M0 byte)
    std::uint16_t dmin_bits = 0;
    bool has_dmin = false;
    int sub_blocks = 0;          // k-quants, iq4_xs: sub-blocks in the block (8 or 16); 0 where none
    int sub_size = 0;            // values per sub-block (32 or 16)
    std::int32_t sub_scale[16] = {};  // each sub-block's scale as stored (q4_K 6-bit 0..63, q6_K int8, q3_K
                                      // 6-bit minus 32, iq4_xs 6-bit minus 32, q2_K 4-bit)
    std::int32_t sub_min[16] = {};    // and its min where one is stored (q2_K, q4_K, q5_K)
    float sub_scale_used[16] = {};    // the float32 products to_float multiplies codes by (d * sc)
    float sub_min_used[16] = {};      // and subtracts (dmin * m)
    std::int32_t codes[256] = {};     // each value's integer code as FORMATS.md lists them (q6_K -32..31,
                                      // q3_K -4..3, iq4_* the index 0..15, tq* -1..1); the block's first
                                      // block_size entries (the rest keep what they held)
};
void ggml_block_fields(const GgmlTypeInfo& type, const void* block, GgmlBlockFields& out);

// What a pass over many blocks reads instead of each block's fields, the same values: every value's code (as
// GgmlBlockFields::codes lists them; codes[blocks * block_size]) and every scale group's used scale
// (group_scale[blocks * block_size / ggml_scale_group(type)]): a sub-block's d * sc (sub_scale_used), or the
// block's d where it has no sub-blocks.
int ggml_scale_group(const GgmlTypeInfo& type);
void ggml_block_codes(const GgmlTypeInfo& type, const void* in, std::int64_t blocks, std::int32_t* codes,
                      float* group_scale);
// Each block's d as used (decoded), its stored bits, and its dmin (q4_1, q5_1: m) or 0 where none is stored.
void ggml_block_scales(const GgmlTypeInfo& type, const void* in, std::int64_t blocks, float* d, std::uint16_t* d_bits,
                       float* dmin);

}  // namespace qs
