// A format's config (the format half of a QuantConfig) and the checks that refuse what a format cannot take
// (each format's row says what, format_traits.hpp), below the passes that take it (format_quantize.hpp).
#pragma once

#include <cstdint>

#include "quantscope/config.hpp"
#include "quantscope/number_format.hpp"

namespace qs {

// How an element format (float or nf4) chooses its scale s; block formats have fixed recipes.
enum class ElementScaling { Symmetric, Cast, Manual };
const char* to_string(ElementScaling scaling);  // "symmetric", "cast", "manual"

struct FormatConfig {
    FormatId format = FormatId::Fp8E4M3;            // not Int
    ElementScaling scaling = ElementScaling::Symmetric;
    Granularity granularity = Granularity::Tensor;  // element formats only; block formats are their own blocks
    int axis = 0;
    std::int64_t group_size = 0;
    double manual_scale = 1.0;                      // Manual only (per tensor)
    Importance importance;                          // ggml types that take one (QuantConfig::importance)

    friend bool operator==(const FormatConfig& a, const FormatConfig& b) {
        return a.format == b.format && a.scaling == b.scaling && a.granularity == b.granularity &&
               a.axis == b.axis && a.group_size == b.group_size && a.manual_scale == b.manual_scale &&
               same_importance(a.importance, b.importance);
    }
    friend bool operator!=(const FormatConfig& a, const FormatConfig& b) { return !(a == b); }
};

// The int<N> config whose block layout an element format shares (granularity, axis, group size).
QuantConfig format_layout_config(const FormatConfig& config);

// The format half of a QuantConfig whose `format` is not Int (mode Cast / Manual / otherwise symmetric).
FormatConfig format_config(const QuantConfig& config);

// Whether an element that saturates counts as clipped (FORMATS.md "Scale for element formats"): not under an
// element format's symmetric scale, which maps each block's own maximum onto the largest value (rounded to
// nearest, so the maximum may land a hair past it: nothing beyond the block's maximum is cut). Cast, a manual
// scale and the block formats count every saturated element.
bool clips_counted(const FormatConfig& config);

// Throws qs::Error naming the format when the config cannot apply to this shape: cast for nf4, a block
// format whose block does not divide the last axis, importance that does not fit (check_importance), a manual scale that is not positive finite float32,
// a bad axis or group size.
void check_format_config(const FormatConfig& config, const Shape& shape);

}  // namespace qs
