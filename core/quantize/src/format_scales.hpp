// Internal: an element format's scale as the passes compute it, and a block's scale of on-demand params
// (format_params.cpp): for the passes over tensors (format_pass.cpp, params.cpp), not the formats' own rows.
#pragma once

#include <cstdint>

#include "quantscope/format_params.hpp"
#include "quantscope/number_format.hpp"

namespace qs::detail {

// An element format's symmetric s from a block's largest magnitude (format_params.cpp).
float symmetric_format_scale(float amax, FormatId format);

// Block `block`'s scale of on-demand params, its values read without taking their guard (the caller holds it).
float on_demand_scale_unguarded(const FormatParams& params, std::int64_t block);

}  // namespace qs::detail
