#include "quantscope/presets.hpp"

#include "quantscope/error.hpp"
#include "quantscope/random.hpp"

namespace qs {

Tensor lesson_tensor() {
    return Tensor{{3, 3}, {191.6f, -13.5f, 728.6f, 92.14f, 295.5f, -184.0f, 0.0f, 684.6f, 245.5f}};
}

// Seed 004's torch.randn((4, 4)), as printed to four decimals. The printed values alone do not give its s
// (0.01562342737235275) or its MSE (2.3408e-05): these are values that print the same and give those too
// (r_max and r_min chosen so that (r_max - r_min) / 255 is that double, and [3, 0], [3, 2] moved by 3.4e-5 for
// the MSE), so every number the notebook printed is reproduced (lesson d-randn-4x4).
Tensor lesson_randn_4x4() {
    return Tensor{{4, 4},
                  {2.207587f, -1.77638698f, -0.911499977f, -0.0221999995f, 0.216700003f, -1.74839997f, -1.49899995f,
                   0.709999979f, 0.889299989f, 0.924499989f, -0.877300024f, 0.260399997f, -1.08533394f, 0.847800016f,
                   -0.321065992f, -0.587199986f}};
}

std::vector<std::string> preset_names() {
    return {"lesson", "lesson-manual", "lesson-randn-4x4", "randn-4x4", "outliers-4x128x256", "layer-64x128"};
}

Preset make_preset(const std::string& name) {
    Preset p;
    p.name = name;
    if (name == "lesson") {
        p.description = "the lessons' 3x3 test tensor, asymmetric int8";
        p.tensor = lesson_tensor();
    } else if (name == "lesson-manual") {
        p.description = "the lessons' 3x3 test tensor with the hand-picked s = 3.5, z = -70";
        p.tensor = lesson_tensor();
        p.config.mode = Mode::Manual;
        p.config.manual_scale = 3.5;
        p.config.manual_zero_point = -70;
    } else if (name == "lesson-randn-4x4") {
        p.description = "the torch.randn((4, 4)) seed 004 printed (s = 0.01562342737235275, z = -14)";
        p.tensor = lesson_randn_4x4();
    } else if (name == "randn-4x4") {
        p.description = "a seeded torch.randn((4, 4)) look-alike: normal(0, 1), seed 0 (lesson-randn-4x4 is the notebook's)";
        RandomSpec spec;
        spec.shape = {4, 4};
        p.tensor = generate_random(spec);
    } else if (name == "outliers-4x128x256") {
        p.description = "uniform(-50, 150) of shape 4x128x256 with the range pinned at [0,0,0..2] as seed 001 does (max + 1, min - 1, 0), seed 0";
        RandomSpec spec;
        spec.distribution = Distribution::Uniform;
        spec.shape = {4, 128, 256};
        spec.low = -50;
        spec.high = 150;
        spec.pin_range = 3;  // the seed's max + 1, min - 1, 0: they pin the range, they are no outliers
        p.tensor = generate_random(spec);
    } else if (name == "layer-64x128") {
        p.description = "a linear layer's weights W [out, in]: normal(0, 0.05) of shape 64x128, seed 0, int8 symmetric "
                        "per output channel (the layer lab's W)";
        RandomSpec spec;
        spec.shape = {64, 128};
        spec.std = 0.05;
        p.tensor = generate_random(spec);
        p.config.mode = Mode::Symmetric;
        p.config.granularity = Granularity::Channel;
    } else {
        std::string known;
        for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
        throw Error("unknown preset " + quoted_text(name) + ": expected one of " + known);
    }
    return p;
}

}  // namespace qs
