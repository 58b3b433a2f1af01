// The per-block scales of a float, codebook or block format (FORMATS.md), as a pass uses them.
#pragma once

#include <cstdint>
#include <vector>

#include "quantscope/number_format.hpp"

namespace qs {

struct FormatParams {
    FormatId format = FormatId::Fp8E4M3;
    // Which block element i uses, as QuantParams: (i / block_stride) % block_count.
    std::int64_t block_stride = 1;
    std::int64_t block_count = 1;
    std::vector<float> scale;           // per block, as used: s; MX: X; NVFP4: sb * g; ggml: fp16(d)
    std::vector<float> offset;          // Q4_1: fp16(m) per block; empty otherwise
    std::vector<std::uint16_t> stored;  // block formats: the stored scale's bits (E8M0 byte, E4M3 sb, fp16 d)
    float global_scale = 1;             // NVFP4: g (1 otherwise)
    bool scaled = true;                 // false in cast mode: no scale is stored

    std::int64_t block_of(std::int64_t flat) const { return (flat / block_stride) % block_count; }
};

}  // namespace qs
