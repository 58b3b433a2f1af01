// The named starting points of SPEC and the lessons: a tensor and the settings that go with it.
#pragma once

#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

struct Preset {
    std::string name;
    std::string description;
    Tensor tensor;
    QuantConfig config;
};

// lesson, lesson-manual, lesson-randn-4x4, randn-4x4, outliers-4x128x256, layer-64x128.
std::vector<std::string> preset_names();
// Throws qs::Error naming the known presets when `name` is not one of them.
Preset make_preset(const std::string& name);

// The lessons' 3x3 test tensor.
Tensor lesson_tensor();
// The 4x4 torch.randn tensor seed 004 printed (see presets.cpp for how its hidden digits were chosen).
Tensor lesson_randn_4x4();

}  // namespace qs
