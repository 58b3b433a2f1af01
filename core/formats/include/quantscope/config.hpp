// Every choice that defines a quantization (SPEC "Choosing scale s and zero point z", "Granularity").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "quantscope/int_type.hpp"
#include "quantscope/number_format.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

// Cast: the plain downcast of a float format (s = 1), FORMATS.md's --mode cast; not for int<N> or nf4.
enum class Mode { Asymmetric, Symmetric, Manual, Cast };
enum class Granularity { Tensor, Channel, Group };
enum class Rounding { HalfEven, HalfAway };
// What happens to a rounded value outside [q_min, q_max]. Clamp is SPEC; Wrap is the teaching pitfall of
// a naive cast with no clamp (two's-complement wrap-around, e.g. 138 in int8 becomes -118) and is wrong.
enum class Overflow { Clamp, Wrap };
// How asymmetric/symmetric choose the range [r_min, r_max] (or max|r|) of each block before the lessons'
// formulas turn it into (s, z): the lessons' min/max, a percentile clip, or the clip that minimises MSE.
enum class Calibration { MinMax, Percentile, Mse };

// An importance vector (FORMATS.md "llama.cpp (ggml) types", llama.cpp's imatrix): one float32 weight per
// column of the last axis. The ggml types with an importance-weighted quantizer (GgmlTypeInfo::
// takes_importance) quantize with it; the rest ignore it. Shared, so configs stay cheap to copy; null: none.
using Importance = std::shared_ptr<const std::vector<float>>;
bool same_importance(const Importance& a, const Importance& b);  // both none, or the same weights
// Throws qs::Error unless the weights fit a tensor whose last axis is `columns`: one per column, each finite
// and >= 0, not all 0. The message names what is wrong, not the file (the caller knows it).
void check_importance(const std::vector<float>& weights, std::int64_t columns);
// Its first check alone, on a count (a file's header declares it before any weight is read).
void check_importance_count(std::int64_t count, std::int64_t columns);

struct QuantConfig {
    IntType dtype{};                          // int8; used when format is Int
    FormatId format = FormatId::Int;          // a FORMATS.md format instead of int<N> (see format_quantize.hpp)
    Mode mode = Mode::Asymmetric;
    Granularity granularity = Granularity::Tensor;
    int axis = 0;                             // Channel: the axis whose indices each get one (s, z)
    std::int64_t group_size = 0;              // Group: contiguous groups along the last axis
    Rounding rounding = Rounding::HalfEven;
    Overflow overflow = Overflow::Clamp;
    double manual_scale = 1.0;                // Manual only (per tensor)
    std::int32_t manual_zero_point = 0;       // Manual only
    Calibration calibration = Calibration::MinMax;
    double percentile = 99.99;                // Percentile: P in (50, 100]
    // The lessons clamp a zero point that falls outside [q_min, q_max] but keep the scale, so an all-positive
    // (or all-negative) block loses part of its range. true: recompute s for the clamped z so the whole
    // range [r_min, r_max] stays representable (what PyTorch's observers do by including 0 in the range).
    bool recompute_scale = false;
    // The lesson's naive recipe, torch.round(r / norm * 255).to(torch.int8) with norm = max|r| (Recipe::NaiveMax255,
    // in manual mode with s = norm / 255 and z = 0): when > 0, a code is round(r / norm * 255) and r' is
    // q / 255 * norm, float32 operations in the lesson's order, rather than r / s + z and s (q - z), which
    // round differently near ties. 0: the SPEC formula. It applies in manual mode only, so a config derived
    // with another mode (the window's comparison of the base mode, a calibrator's table) is the SPEC formula.
    float naive_norm = 0;
    float active_naive_norm() const { return mode == Mode::Manual ? naive_norm : 0.0f; }
    Importance importance;                    // ggml types: the importance-weighted quantizer's weights

    // Every field: two configs are equal exactly when quantizing with them gives the same result. The one
    // comparison of configs in the program (the window's undo, its panels and the tests use it).
    friend bool operator==(const QuantConfig& a, const QuantConfig& b) {
        return a.dtype == b.dtype && a.format == b.format && a.mode == b.mode && a.granularity == b.granularity && a.axis == b.axis &&
               a.group_size == b.group_size && a.rounding == b.rounding && a.overflow == b.overflow &&
               a.manual_scale == b.manual_scale && a.manual_zero_point == b.manual_zero_point &&
               a.calibration == b.calibration && a.percentile == b.percentile &&
               a.recompute_scale == b.recompute_scale && a.naive_norm == b.naive_norm &&
               same_importance(a.importance, b.importance);
    }
    friend bool operator!=(const QuantConfig& a, const QuantConfig& b) { return !(a == b); }
};

const char* to_string(Mode mode);                // "asymmetric", "symmetric", "manual", "cast"
const char* to_string(Granularity granularity);  // "tensor", "channel", "group"
const char* to_string(Rounding rounding);        // "half-even", "half-away"
const char* to_string(Calibration calibration);  // "minmax", "percentile", "mse"
const char* to_string(Overflow overflow);        // "clamp", "wrap"
// "minmax", "percentile:99.9", "mse": the calibration as the command line writes it.
std::string calibration_label(const QuantConfig& config);
// Parses minmax | percentile:P | mse into config.calibration and config.percentile.
void parse_calibration(const std::string& text, QuantConfig& config);
Mode parse_mode(const std::string& text);                // asymmetric|symmetric|cast (manual comes from --scale)
// --dtype: int<N> / uint<N> into config.dtype (format Int) or a FORMATS.md name into config.format, any case.
void parse_dtype(const std::string& text, QuantConfig& config);
// "int8", "fp8-e4m3", ...
std::string dtype_name(const QuantConfig& config);
// `next` switched to format `id`, keeping what the new format allows (the window's type list, a lesson's
// step) and falling back to FORMATS.md's defaults for the rest: a format has no zero point, calibrator or
// wrap; a block format takes no mode or granularity; int<N> has no cast mode.
QuantConfig with_format(QuantConfig next, FormatId id);
Granularity parse_granularity(const std::string& text);  // tensor|channel|group
Rounding parse_rounding(const std::string& text);        // half-even|half-away
Overflow parse_overflow(const std::string& text);        // clamp|wrap

// Throws qs::Error if the configuration cannot apply to a tensor of this shape (a format: what
// check_format_config refuses, and the int<N>-only settings named with the format): symmetric on an unsigned
// type, a manual scale that is not a positive finite float32, a manual zero point outside [q_min, q_max],
// manual with a granularity other than tensor, a channel axis out of range, a group size < 1 or not
// dividing the last dimension, a percentile outside (50, 100], a calibration other than minmax in manual mode,
// a naive norm that is not a positive finite float32 or, in manual mode, comes without int8 and z = 0.
void check_config(const QuantConfig& config, const Shape& shape);

}  // namespace qs
