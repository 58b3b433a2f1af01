// A format's config: from a QuantConfig, and the checks that refuse what a format cannot take. Apart from the
// heavy passes so that config.cpp (and the session reader's fuzz target) links only the format table.
#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"

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
    return f;
}

void check_format_config(const FormatConfig& config, const Shape& shape) {
    const FormatInfo& info = format_info(config.format);
    const std::string name = info.name;
    if (config.format == FormatId::Int) throw Error("int<N> is not quantized through a number format");
    if (info.kind == FormatKind::Block) {
        if (config.scaling != ElementScaling::Symmetric || config.granularity != Granularity::Tensor)
            throw Error(name + " has its own block scale: it takes no --mode, --scale or --granularity");
        const std::int64_t last = shape.empty() ? 0 : shape.back();
        if (last % info.block_size != 0)
            throw Error(name + ": its block of " + std::to_string(info.block_size) +
                        " elements must divide the last axis (" + std::to_string(last) + ")");
        return;
    }
    if (config.scaling == ElementScaling::Cast && info.kind != FormatKind::Float)
        throw Error("--mode cast applies to float formats, not " + name);
    if (config.scaling != ElementScaling::Symmetric && config.granularity != Granularity::Tensor)
        throw Error(name + ": --mode " + to_string(config.scaling) + " is per tensor (no --granularity)");
    if (config.scaling == ElementScaling::Manual) {
        const auto s = static_cast<float>(config.manual_scale);
        if (!(std::isfinite(config.manual_scale) && std::isfinite(s) && s > 0))
            throw Error(name + ": --scale must be a positive finite float32, got " + format_g(config.manual_scale));
    }
    check_config(format_layout_config(config), shape);
}

}  // namespace qs
