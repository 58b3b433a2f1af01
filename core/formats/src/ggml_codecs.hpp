// Internal: each ggml type's block codec, in the file of its family. ggml_types.cpp dispatches to them.
#pragma once

#include <cstdint>

#include "quantscope/ggml_types.hpp"

namespace qs::detail {

// `blocks` whole blocks of x into block bytes; importance null for the reference quantizer.
using GgmlQuantizeBlocks = void (*)(const float* x, std::int64_t blocks, const GgmlImportance* importance, void* out);

// A null member: the type does not do that (ggml_types.cpp then refuses it by name).
struct GgmlCodec {
    GgmlQuantizeBlocks quantize = nullptr;
    // to_float of `blocks` blocks.
    void (*dequantize)(const void* in, std::int64_t blocks, float* y) = nullptr;
    // One block's stored fields, its codes among them.
    void (*fields)(const void* block, GgmlBlockFields& out) = nullptr;
    // What a pass over many blocks reads instead of each block's fields (ggml_block_codes): each value's code
    // and each scale group's used scale, groups of scale_group values (0: the block). Null: read the fields.
    void (*codes)(const void* in, std::int64_t blocks, std::int32_t* codes, float* group_scale) = nullptr;
    int scale_group = 0;
    // Where the block's fp16 d and dmin (m) sit, -1 for none (ggml_block_scales; both -1: read the fields).
    int d_at = -1, dmin_at = -1;
};

GgmlCodec ggml_plain_codec(GgmlType type);    // F32, F16, BF16, F64: to_float only (ggml_plain.cpp)
GgmlCodec ggml_legacy_codec(GgmlType type);   // Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (ggml_legacy.cpp)
GgmlCodec ggml_k_codec(GgmlType type);        // Q2_K ... Q6_K (ggml_k_decode.cpp)
GgmlCodec ggml_iq_codec(GgmlType type);       // IQ4_NL, IQ4_XS (ggml_iq_quants.cpp)
GgmlCodec ggml_ternary_mxfp4_codec(GgmlType type);  // TQ1_0, TQ2_0, MXFP4 (ggml_ternary_mxfp4.cpp)
GgmlQuantizeBlocks ggml_k_quantizer(GgmlType type);  // Q2_K ... Q6_K's quantizers (ggml_k_quantize.cpp)

}  // namespace qs::detail
