#include "quantscope/layer_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/random.hpp"
#include "quantscope/text.hpp"

namespace qs {

InputDistribution parse_input_distribution(const std::string& text) {
    if (text == "normal") return InputDistribution::Normal;
    if (text == "relu") return InputDistribution::Relu;
    if (text == "ramp") return InputDistribution::Ramp;
    throw Error("unknown input distribution " + quoted_text(text) + ": expected normal, relu or ramp");
}

const char* to_string(InputDistribution distribution) {
    switch (distribution) {
        case InputDistribution::Relu: return "relu";
        case InputDistribution::Ramp: return "ramp";
        case InputDistribution::Normal: break;
    }
    return "normal";
}

std::vector<std::int64_t> outlier_channels(const LayerInputSpec& spec, std::int64_t in) {
    if (spec.outlier_channels < 0 || spec.outlier_channels > in)
        throw Error("--outlier-channels must be between 0 and the " + std::to_string(in) + " input channels; got " +
                    std::to_string(spec.outlier_channels));
    // Floyd's sampling: K distinct values of [0, in) in O(K), whatever in is.
    std::uint64_t state = spec.seed ^ 0x6C61796572ull;  // "layer": not the values' own stream
    std::unordered_set<std::int64_t> chosen;
    std::vector<std::int64_t> out;
    for (std::int64_t j = in - spec.outlier_channels; j < in; ++j) {
        const auto t = static_cast<std::int64_t>(splitmix64(state) % static_cast<std::uint64_t>(j + 1));
        const std::int64_t pick = chosen.count(t) ? j : t;
        chosen.insert(pick);
        out.push_back(pick);
    }
    std::sort(out.begin(), out.end());
    return out;
}

Tensor generate_layer_inputs(const LayerInputSpec& spec, std::int64_t in) {
    if (spec.tokens < 1) throw Error("--tokens must be >= 1; got " + std::to_string(spec.tokens));
    if (!std::isfinite(spec.outlier_scale))
        throw Error("--outlier-scale must be a finite number; got " + format_exact(spec.outlier_scale));
    const std::vector<std::int64_t> channels = outlier_channels(spec, in);
    RandomSpec random;
    random.shape = {spec.tokens, in};
    random.seed = spec.seed;
    checked_numel(random.shape);  // the size before any memory is taken
    Tensor x;
    if (spec.distribution == InputDistribution::Ramp) {
        x.shape = random.shape;
        x.values.resize(static_cast<std::size_t>(spec.tokens * in));
        for (std::int64_t i = 0; i < spec.tokens * in; ++i) x.values[static_cast<std::size_t>(i)] = static_cast<float>(i % in + 1);
    } else {
        x = generate_random(random);
    }
    if (spec.distribution == InputDistribution::Relu)
        for (float& v : x.values) v = std::max(v, 0.0f);
    for (std::int64_t t = 0; t < spec.tokens; ++t)
        for (std::int64_t k : channels) {
            float& v = x.values[static_cast<std::size_t>(t * in + k)];
            const double scaled = static_cast<double>(v) * spec.outlier_scale;
            v = static_cast<float>(scaled);
            if (!std::isfinite(v))
                throw Error("--outlier-scale " + format_exact(spec.outlier_scale) + " takes x[" + std::to_string(t) + ", " +
                            std::to_string(k) + "] past float32's range");
        }
    return x;
}

}  // namespace qs
