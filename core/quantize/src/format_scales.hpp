// Internal: an element format's scale as the passes compute it, and a block's scale of on-demand params
// (format_params.cpp): for the passes over tensors (format_pass.cpp, params.cpp), not the formats' own rows.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quantscope/format_config.hpp"
#include "quantscope/format_params.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/number_format.hpp"

namespace qs::detail {

// An element format's symmetric s from a block's largest magnitude (format_params.cpp).
float symmetric_format_scale(float amax, FormatId format);

// Block `block`'s scale of on-demand params, its values read without taking their guard (the caller holds it).
float on_demand_scale_unguarded(const FormatParams& params, std::int64_t block);

// The config's importance into the params where the format's ggml type weighs by it (row_length from the
// shape); nothing otherwise.
void take_importance(const FormatConfig& config, const Shape& shape, FormatParams& p);
// Each row's ggml_row_sum_squares: what the importance-weighted quantizers take besides the weights.
std::shared_ptr<const std::vector<float>> row_sums_of_squares(const TensorView& view, std::int64_t row_length);
// Where the run of values from flat index `first` lies for the row's kernels (importance, g).
ChunkPlace chunk_place(const FormatParams& p, std::int64_t first);

}  // namespace qs::detail
