// A tensor quantized with a ggml type as ggml's block bytes (FORMATS.md "llama.cpp (ggml) types": what a
// GGUF file holds for it, row after row), and the importance-weighted error the JSON reports beside mse.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/format_params.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// The blocks of `view` quantized with config's ggml type (q8_0 ... tq2_0), with config's importance where
// the type takes it: bit for bit the blocks the pass decodes. `write(bytes, size)` gets them in order, a
// batch at a time (memory bounded whatever the tensor). Throws qs::Error for a config without a ggml type or
// one check_config refuses.
void ggml_block_bytes(const TensorView& view, const QuantConfig& config,
                      const std::function<void(const std::uint8_t* bytes, std::size_t size)>& write);
// The same after a pass over `view` with `params` (quantize_checked's format_params): the blocks the params
// kept are written as they are, without quantizing them again; params that kept none quantize as above.
void ggml_block_bytes(const TensorView& view, const QuantConfig& config, const FormatParams& params,
                      const std::function<void(const std::uint8_t* bytes, std::size_t size)>& write);

// Σ w·e² / Σ w of each row (w the row's importance, one weight per column, e = r - r'), averaged over the
// rows: llama.cpp weighs a row's error by its imatrix so, and every row counts the same. Fed the errors
// |r - r'| in flat order, a run at a time.
class ImportanceError {
public:
    explicit ImportanceError(Importance weights);
    void add(const float* error, std::int64_t count);
    double mean() const;  // over the rows seen whole

private:
    Importance weights_;
    std::int64_t column_ = 0, rows_ = 0;
    double row_weighted_ = 0, row_weight_ = 0, sum_of_rows_ = 0;
};

}  // namespace qs
