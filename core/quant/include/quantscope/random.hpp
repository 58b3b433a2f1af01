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
    // Outliers as in the lesson: element k (flat, k = 0..outliers-1) becomes max + 1, min - 1, 0, max + 1, ...
    // (max and min of the generated values); 3 reproduces the lesson's [0,0,0], [0,0,1], [0,0,2].
    std::int64_t outliers = 0;
};

Distribution parse_distribution(const std::string& text);  // normal|uniform
// Throws qs::Error for a bad shape, std <= 0 or non-finite, high <= low, low or high outside float32's range,
// a normal value outside float32's range (naming its index), outliers < 0 or > numel.
Tensor generate_random(const RandomSpec& spec);

}  // namespace qs
