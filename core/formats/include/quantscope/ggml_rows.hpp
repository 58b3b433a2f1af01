// The format table's ggml rows and their codecs meet here: a run of a tensor's values quantized into ggml's
// block bytes as the rows' passes quantize them (FORMATS.md "llama.cpp (ggml) types"), for --out-packed and
// whatever else needs the bytes a GGUF file would hold.
#pragma once

#include <cstdint>

#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_types.hpp"

namespace qs {

// n values (whole blocks of `type`) from flat index place.first into n / block_size blocks at `out`: the
// importance-weighted quantizer where `place` carries importance and the type takes it (each row's part
// with its own columns' weights and its row's sum of squares), ggml's reference quantizer otherwise.
void ggml_quantize_at(const GgmlTypeInfo& type, const float* r, std::int64_t n, const ChunkPlace& place, void* out);

}  // namespace qs
