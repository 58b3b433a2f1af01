#include "quantscope/presets.hpp"

#include "quantscope/error.hpp"
#include "quantscope/random.hpp"

namespace qs {

Tensor lesson_tensor() {
    return Tensor{{3, 3}, {191.6f, -13.5f, 728.6f, 92.14f, 295.5f, -184.0f, 0.0f, 684.6f, 245.5f}};
}

std::vector<std::string> preset_names() {
    return {"lesson", "lesson-manual", "randn-4x4", "outliers-4x128x256"};
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
    } else if (name == "randn-4x4") {
        p.description = "torch.randn((4, 4)) of the lessons: normal(0, 1), seed 0";
        RandomSpec spec;
        spec.shape = {4, 4};
        p.tensor = generate_random(spec);
    } else if (name == "outliers-4x128x256") {
        p.description = "uniform(-50, 150) of shape 4x128x256 with the lesson's outliers at [0,0,0..2], seed 0";
        RandomSpec spec;
        spec.distribution = Distribution::Uniform;
        spec.shape = {4, 128, 256};
        spec.low = -50;
        spec.high = 150;
        spec.outliers = 3;
        p.tensor = generate_random(spec);
    } else {
        std::string known;
        for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
        throw Error("unknown preset " + quoted_text(name) + ": expected one of " + known);
    }
    return p;
}

}  // namespace qs
