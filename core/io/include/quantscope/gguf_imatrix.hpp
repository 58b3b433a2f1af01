// llama.cpp's importance matrix as llama-imatrix writes it in GGUF: for a weight tensor NAME, the F32 tensors
// `NAME.in_sum2` (ne {columns, matrices}: the sum over tokens of each input column's x²) and `NAME.counts`
// (one token count per matrix; ne {1, matrices}). Merged experts keep one matrix per expert in one tensor.
// The importance is in_sum2 / count per matrix in float32, and 1 for a matrix that saw no token (count 0),
// as llama-quantize's load_imatrix computes it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qs {

struct GgufImportance {
    std::int64_t columns = 0;
    std::int64_t matrices = 0;     // 1 for a plain weight; the experts of a merged tensor
    std::vector<float> weights;    // matrices x columns, matrix after matrix
};

// Reads NAME's importance for a weight of `columns` columns. Throws qs::Error "<file>: <field>: ..." for a
// missing or non-F32 tensor, a length that does not match `columns` or the counts, or a NaN, infinite or
// negative sum, count or importance.
GgufImportance read_gguf_imatrix(const std::string& path, const std::string& tensor_name, std::int64_t columns);

}  // namespace qs
