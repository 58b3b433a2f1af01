// Internal: the (s, z) of one block computed from its values, for params computed on demand
// (QuantParams::recipe). The quantize pass calls it on threads that already read under the view's guard.
#pragma once

#include <cstdint>

#include "quantscope/params.hpp"

namespace qs::detail {

// Blocks of up to this many elements may be computed on demand (more never cost more than their values).
constexpr std::int64_t kMaxOnDemandBlock = 8;

// The params of `view` with nothing stored per block: the recipe and the ranges of s and z over all blocks,
// found by computing every block's pair once (blocks in parallel, each from its few values). A config whose
// format is not Int: the format's symmetric s per block, z = 0.
void on_demand_params(const TensorView& view, const QuantConfig& config, QuantParams& params);

// Block `block`'s pair from its values, read without taking the guard (the caller holds it).
void compute_pair_unguarded(const QuantParams& params, std::int64_t block, double& scale, std::int32_t& zero_point);

}  // namespace qs::detail
