// Seeded random tensors: the same spec gives the same tensor on every run and every machine.
#pragma once

#include <cstdint>
#include <string>

#include "quantscope/tensor.hpp"

namespace qs {

enum class Distribution { Normal, Uniform };

struct RandomSpec {
    Distribution distribution = Distribution::Normal;
    Shape shape{4, 4};
    std::uint64_t seed = 0;
    double mean = 0.0, std = 1.0;     // Normal
    double low = 0.0, high = 1.0;     // Uniform, values in [low, high)
    // Real outliers: `outliers` elements at distinct positions chosen from the seed, each set to
    // centre +- outlier_scale * std of the distribution (normal: mean and std; uniform: (low + high) / 2 and
    // (high - low) / sqrt(12)), the sign from the seed too.
    std::int64_t outliers = 0;
    double outlier_scale = 10.0;
    // The lesson's recipe, which only pins the range: element k (flat, k = 0..pin_range-1) becomes max + 1,
    // min - 1, 0, max + 1, ... (max and min of the values after the outliers); 3 gives seed 001's [0,0,0],
    // [0,0,1], [0,0,2].
    std::int64_t pin_range = 0;
};

// SplitMix64's next output (advances `state`): fully specified, so whatever a seed picks (the random tensors'
// generator state, the layer's outlier channels) is the same on every platform and compiler.
std::uint64_t splitmix64(std::uint64_t& state);

Distribution parse_distribution(const std::string& text);  // normal|uniform
// Throws qs::Error for a bad shape, std <= 0 or non-finite, high <= low, low or high outside float32's range,
// a normal value outside float32's range (naming its index), outliers or pin_range < 0 or > numel, an
// outlier_scale that is not finite and > 0 or puts an outlier outside float32's range.
Tensor generate_random(const RandomSpec& spec);

}  // namespace qs
