// A format's config: from a QuantConfig, and the checks that refuse what a format cannot take. Apart from the
// heavy passes so that config.cpp (and the session reader's fuzz target) links only the format table.
#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_config.hpp"

namespace qs {

// The layout of an element format's blocks, as int<N> has it for the same granularity.
QuantConfig format_layout_config(const FormatConfig& config) {
    QuantConfig q;
    q.mode = Mode::Symmetric;
    q.granularity = config.granularity;
    q.axis = config.axis;
    q.group_size = config.group_size;
    return q;
}

const char* to_string(ElementScaling scaling) {
    switch (scaling) {
        case ElementScaling::Symmetric: return "symmetric";
        case ElementScaling::Cast: return "cast";
        case ElementScaling::Manual: return "manual";
    }
    return "symmetric";
}

FormatConfig format_config(const QuantConfig& config) {
    FormatConfig f;
    f.format = config.format;
    f.scaling = config.mode == Mode::Cast     ? ElementScaling::Cast
                : config.mode == Mode::Manual ? ElementScaling::Manual
                                              : ElementScaling::Symmetric;
    f.granularity = config.granularity;
    f.axis = config.axis;
    f.group_size = config.group_size;
    f.manual_scale = config.manual_scale;
    f.importance = config.importance;
    return f;
}

bool clips_counted(const FormatConfig& config) {
    const FormatTraits& row = format_traits(config.format);
    return config.scaling != ElementScaling::Symmetric || row.own_blocks() || row.scale_from_values;
}

// What the format refuses, and why, is its row's (an element format's checks, a block format's own block).
void check_format_config(const FormatConfig& config, const Shape& shape) {
    const FormatTraits& row = format_traits(config.format);
    row.check(row, config, shape);
    if (config.importance) check_importance(*config.importance, shape.empty() ? 0 : shape.back());
}

}  // namespace qs
