#include "quantscope/config.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_config.hpp"

namespace qs {

const char* to_string(Mode mode) {
    switch (mode) {
        case Mode::Asymmetric: return "asymmetric";
        case Mode::Symmetric: return "symmetric";
        case Mode::Manual: return "manual";
        case Mode::Cast: return "cast";
    }
    return "?";
}

const char* to_string(Granularity granularity) {
    switch (granularity) {
        case Granularity::Tensor: return "tensor";
        case Granularity::Channel: return "channel";
        case Granularity::Group: return "group";
    }
    return "?";
}

const char* to_string(Rounding rounding) {
    return rounding == Rounding::HalfEven ? "half-even" : "half-away";
}

const char* to_string(Overflow overflow) { return overflow == Overflow::Clamp ? "clamp" : "wrap"; }

const char* to_string(Calibration calibration) {
    switch (calibration) {
        case Calibration::MinMax: return "minmax";
        case Calibration::Percentile: return "percentile";
        case Calibration::Mse: return "mse";
    }
    return "?";
}

std::string calibration_label(const QuantConfig& config) {
    if (config.calibration != Calibration::Percentile) return to_string(config.calibration);
    // The shortest text that reads back as the same P: "%g" alone would print 99.9999999 as "100".
    return "percentile:" + format_exact(config.percentile);
}

void parse_calibration(const std::string& text, QuantConfig& config) {
    if (text == "minmax") {
        config.calibration = Calibration::MinMax;
    } else if (text == "mse") {
        config.calibration = Calibration::Mse;
    } else if (text.rfind("percentile:", 0) == 0) {
        const std::string number = text.substr(11);
        char* end = nullptr;
        const double p = number.empty() ? NAN : std::strtod(number.c_str(), &end);
        if (number.empty() || end != number.c_str() + number.size() || !(p > 50 && p <= 100))
            throw Error("calibration " + quoted_text(text) + ": the percentile must be a number in (50, 100]");
        config.calibration = Calibration::Percentile;
        config.percentile = p;
    } else {
        throw Error("unknown calibration " + quoted_text(text) + ": expected minmax, percentile:P or mse");
    }
}

Mode parse_mode(const std::string& text) {
    if (text == "asymmetric") return Mode::Asymmetric;
    if (text == "symmetric") return Mode::Symmetric;
    if (text == "cast") return Mode::Cast;
    throw Error("unknown mode " + quoted_text(text) +
                ": expected asymmetric, symmetric or cast (manual: give --scale and --zero-point)");
}

void parse_dtype(const std::string& text, QuantConfig& config) {
    if (const std::optional<FormatId> format = parse_format_name(text)) {
        config.format = *format;
        return;
    }
    try {
        config.dtype = IntType::parse(text);
    } catch (const Error&) {
        std::string names;
        for (FormatId id : all_formats()) names += std::string(", ") + format_name(id);
        throw Error("unknown dtype " + quoted_text(text) + ": expected int2..int16, uint2..uint16" + names);
    }
    config.format = FormatId{};  // int<N>'s row
}

std::string dtype_name(const QuantConfig& config) {
    return is_int_format(config.format) ? config.dtype.name() : std::string(format_name(config.format));
}

namespace {

// The settings only int<N> has, refused by name for a format (FORMATS.md: no zero point, its own rounding).
void check_format_settings(const QuantConfig& config) {
    const std::string name = format_name(config.format);
    const bool block = format_traits(config.format).own_blocks();
    if (config.mode == Mode::Asymmetric)
        throw Error(name + " has no zero point: --mode asymmetric applies to int<N>" +
                    (block ? std::string() : " (use symmetric, cast or --scale S)"));
    if (config.mode == Mode::Manual && config.manual_zero_point != 0)
        throw Error(name + " has no zero point: --zero-point applies to int<N>");
    if (config.calibration != Calibration::MinMax)
        throw Error(name + (block ? " has its own block scale: it takes no --calibrate"
                                  : ": --calibrate applies to int<N> (its scale comes from max|r|)"));
    if (config.rounding != Rounding::HalfEven)
        throw Error(name + " rounds by its own rule: --rounding applies to int<N>");
    if (config.overflow != Overflow::Clamp) throw Error(name + " saturates: --overflow applies to int<N>");
    if (config.recompute_scale) throw Error(name + " has no zero point: --recompute-scale applies to int<N>");
}

}  // namespace

Granularity parse_granularity(const std::string& text) {
    if (text == "tensor") return Granularity::Tensor;
    if (text == "channel") return Granularity::Channel;
    if (text == "group") return Granularity::Group;
    throw Error("unknown granularity " + quoted_text(text) + ": expected tensor, channel or group");
}

Rounding parse_rounding(const std::string& text) {
    if (text == "half-even") return Rounding::HalfEven;
    if (text == "half-away") return Rounding::HalfAway;
    throw Error("unknown rounding " + quoted_text(text) + ": expected half-even or half-away");
}

Overflow parse_overflow(const std::string& text) {
    if (text == "clamp") return Overflow::Clamp;
    if (text == "wrap") return Overflow::Wrap;
    throw Error("unknown overflow " + quoted_text(text) + ": expected clamp or wrap");
}

void check_config(const QuantConfig& config, const Shape& shape) {
    if (!is_int_format(config.format)) {
        check_format_settings(config);
        check_format_config(format_config(config), shape);
        return;
    }
    if (config.importance) check_importance(*config.importance, shape.empty() ? 0 : shape.back());  // weighs the error
    if (config.mode == Mode::Cast)
        throw Error("--mode cast is the downcast of a float format, not of " + config.dtype.name());
    const IntType& t = config.dtype;
    if (t.bits < 2 || t.bits > 16) throw Error("dtype " + t.name() + " is not supported (2 to 16 bits)");
    if (config.mode == Mode::Symmetric && !t.is_signed)
        throw Error("symmetric mode needs a signed type, not " + t.name() + " (use asymmetric, or int" +
                    std::to_string(t.bits) + ")");
    if (config.mode == Mode::Manual) {
        const double s = config.manual_scale;
        // s is applied in float32 (SPEC): it must stay a positive, finite, normal float32 there too.
        if (!std::isfinite(s) || s <= 0)
            throw Error("scale must be finite and > 0, not " + format_exact(s));
        if (s < std::numeric_limits<float>::min() || s > std::numeric_limits<float>::max())
            throw Error("scale " + format_exact(s) + " is outside float32's normal range [" +
                        format_exact(std::numeric_limits<float>::min()) + ", " + format_exact(std::numeric_limits<float>::max()) + "]");
        if (config.manual_zero_point < t.q_min() || config.manual_zero_point > t.q_max())
            throw Error("zero point " + std::to_string(config.manual_zero_point) + " is outside [" +
                        std::to_string(t.q_min()) + ", " + std::to_string(t.q_max()) + "] of " + t.name());
        if (config.granularity != Granularity::Tensor)
            throw Error("a manual scale and zero point apply per tensor only, not per " +
                        std::string(to_string(config.granularity)));
        if (config.calibration != Calibration::MinMax)
            throw Error("calibration " + calibration_label(config) + " chooses s and z itself: not with a manual scale");
    }
    if (config.naive_norm != 0) {
        if (!(std::isfinite(config.naive_norm) && config.naive_norm > 0))
            throw Error("the naive recipe's max|r| must be finite and > 0, not " + format_exact(config.naive_norm));
        if (config.mode == Mode::Manual && (!(t == IntType{true, 8}) || config.manual_zero_point != 0))
            throw Error("the naive recipe (r / max|r| * 255 cast to int8) needs int8 and z = 0");
    }
    if (config.calibration == Calibration::Percentile && !(config.percentile > 50 && config.percentile <= 100))
        throw Error("percentile " + format_exact(config.percentile) + " is outside (50, 100]");
    const int rank = static_cast<int>(shape.size());
    if (config.granularity == Granularity::Channel && (config.axis < 0 || config.axis >= rank))
        throw Error("channel axis " + std::to_string(config.axis) + " is out of range for a rank-" +
                    std::to_string(rank) + " tensor (0 to " + std::to_string(rank - 1) + ")");
    if (config.granularity == Granularity::Group) {
        if (config.group_size < 1) throw Error("group size must be >= 1, not " + std::to_string(config.group_size));
        if (!shape.empty() && shape.back() % config.group_size != 0)
            throw Error("group size " + std::to_string(config.group_size) + " does not divide the last dimension " +
                        std::to_string(shape.back()));
    }
}

// The settings a format keeps from an int<N> config (or the reverse): FORMATS.md's defaults, so the
// switch never lands on a refused combination (a format has no zero point, calibrator or wrap).
bool same_importance(const Importance& a, const Importance& b) {
    return a == b || (a && b && *a == *b);
}

void check_importance_count(std::int64_t count, std::int64_t columns) {
    if (count != columns)
        throw Error("the importance has " + std::to_string(count) + " weights for " + std::to_string(columns) +
                    " columns (one per column of the last axis)");
}

void check_importance(const std::vector<float>& weights, std::int64_t columns) {
    check_importance_count(static_cast<std::int64_t>(weights.size()), columns);
    bool any = false;
    for (std::size_t k = 0; k < weights.size(); ++k) {
        if (!std::isfinite(weights[k]) || weights[k] < 0)
            throw Error("the importance of column " + std::to_string(k) + " is " +
                        (std::isnan(weights[k]) ? std::string("NaN") : weights[k] < 0 ? "negative" : "infinite") +
                        " (each weight must be finite and >= 0)");
        any = any || weights[k] > 0;
    }
    if (!any) throw Error("the importance is 0 in every column");
}

QuantConfig with_format(QuantConfig next, FormatId id) {
    const QuantConfig defaults;
    next.format = id;
    next.calibration = Calibration::MinMax;
    next.rounding = defaults.rounding;
    next.overflow = defaults.overflow;
    next.recompute_scale = false;
    next.naive_norm = defaults.naive_norm;
    const FormatTraits& row = format_traits(id);
    if (row.is_int()) {
        if (next.mode == Mode::Cast) next.mode = Mode::Asymmetric;
        if (next.mode == Mode::Symmetric && !next.dtype.is_signed) next.mode = Mode::Asymmetric;
        return next;
    }
    next.manual_zero_point = 0;
    if (next.mode == Mode::Asymmetric || (next.mode == Mode::Cast && !row.castable) || row.own_blocks())
        next.mode = Mode::Symmetric;
    if (row.own_blocks()) next.granularity = Granularity::Tensor;
    return next;
}

}  // namespace qs
