// Every choice that defines a quantization (SPEC "Choosing scale s and zero point z", "Granularity").
#pragma once

#include <cstdint>
#include <string>

#include "quantscope/int_type.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

enum class Mode { Asymmetric, Symmetric, Manual };
enum class Granularity { Tensor, Channel, Group };
enum class Rounding { HalfEven, HalfAway };
// What happens to a rounded value outside [q_min, q_max]. Clamp is SPEC; Wrap is the teaching pitfall of
// a naive cast with no clamp (two's-complement wrap-around, e.g. 138 in int8 becomes -118) and is wrong.
enum class Overflow { Clamp, Wrap };

struct QuantConfig {
    IntType dtype{};                          // int8
    Mode mode = Mode::Asymmetric;
    Granularity granularity = Granularity::Tensor;
    int axis = 0;                             // Channel: the axis whose indices each get one (s, z)
    std::int64_t group_size = 0;              // Group: contiguous groups along the last axis
    Rounding rounding = Rounding::HalfEven;
    Overflow overflow = Overflow::Clamp;
    double manual_scale = 1.0;                // Manual only (per tensor)
    std::int32_t manual_zero_point = 0;       // Manual only
};

const char* to_string(Mode mode);                // "asymmetric", "symmetric", "manual"
const char* to_string(Granularity granularity);  // "tensor", "channel", "group"
const char* to_string(Rounding rounding);        // "half-even", "half-away"
Mode parse_mode(const std::string& text);                // asymmetric|symmetric (manual comes from --scale)
Granularity parse_granularity(const std::string& text);  // tensor|channel|group
Rounding parse_rounding(const std::string& text);        // half-even|half-away

// Throws qs::Error if the configuration cannot apply to a tensor of this shape: symmetric on an unsigned
// type, a manual scale that is not a positive finite float32, a manual zero point outside [q_min, q_max],
// manual with a granularity other than tensor, a channel axis out of range, a group size < 1 or not
// dividing the last dimension.
void check_config(const QuantConfig& config, const Shape& shape);

}  // namespace qs
