// Activations for the layer lab (SPEC "Layer", --random-inputs): seeded N(0, 1) tokens, optionally through a
// ReLU (post-activation inputs are >= 0), with K fixed input channels scaled by F in every token, as LLM
// activations have (LLM.int8()'s outlier features).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/tensor.hpp"

namespace qs {

// Ramp is not random: x[t, k] = k + 1, the course's x = [1, 2, 3] for in = 3.
enum class InputDistribution { Normal, Relu, Ramp };
InputDistribution parse_input_distribution(const std::string& text);  // normal|relu|ramp
const char* to_string(InputDistribution distribution);                // "normal", "relu", "ramp"

struct LayerInputSpec {
    InputDistribution distribution = InputDistribution::Normal;
    std::int64_t tokens = 1;
    std::uint64_t seed = 0;
    std::int64_t outlier_channels = 0;  // K
    double outlier_scale = 1.0;         // F
};

// The K distinct channels of [0, in) the seed picks, ascending (the same for every run and machine).
std::vector<std::int64_t> outlier_channels(const LayerInputSpec& spec, std::int64_t in);

// x of shape [tokens, in]: N(0, 1) from the seed (as --random normal with that seed), max(0, x) for relu,
// k + 1 for ramp; the chosen channels multiplied by F. Throws qs::Error for tokens < 1, a tensor above kMaxElements, K
// outside [0, in], F not finite or scaling a value past float32.
Tensor generate_layer_inputs(const LayerInputSpec& spec, std::int64_t in);

}  // namespace qs
