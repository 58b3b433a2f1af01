// Colormaps as 256-entry RGBA lookup tables, and the value -> color mapping every heatmap and colorbar uses.
// Colors are packed like ImU32 / a little-endian RGBA8 texel: R in the low byte, A in the high byte.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace qs::gui {

enum class Colormap : int {
    Coolwarm = 0,  // Moreland's diverging map, matplotlib's "coolwarm" (the lessons' choice)
    Viridis = 1,   // perceptually uniform sequential
    Greys = 2,     // white (low) to black (high), matplotlib's "Greys"
    White = 3,     // every value white: the lessons' helper draws the original and error this way
};
constexpr int kColormapCount = 4;

const char* ColormapName(Colormap map);  // "coolwarm", "viridis", "greys", "white"
// Parses a name of ColormapName; returns false (and leaves `out`) on anything else.
bool ParseColormap(const char* name, Colormap& out);
// Diverging maps have a neutral middle that should sit at 0.
bool IsDiverging(Colormap map);

using ColorLut = std::array<std::uint32_t, 256>;
// The table of `map`, built once on first use (pure function of the map: safe to share).
const ColorLut& GetColormapLut(Colormap map);

inline std::uint32_t PackRgba(std::uint8_t r, std::uint8_t g, std::uint8_t b, std::uint8_t a = 255) {
    return std::uint32_t{r} | (std::uint32_t{g} << 8) | (std::uint32_t{b} << 16) | (std::uint32_t{a} << 24);
}

// The only way from a position on a colour scale to an index of a ColorLut, total over every number:
// `position` counts table steps (0 = first entry, 255 = last) and is rounded to the nearest entry; below the
// table (and -inf) is entry 0, above it (and +inf) entry 255, NaN the middle entry 128. A template so that the
// heatmap's float pass and the double paths round alike.
template <typename Real>
inline std::size_t LutIndex(Real position) {
    const Real t = position + Real(0.5);
    if (t >= Real(0)) return t < Real(255) ? static_cast<std::size_t>(t) : 255;
    return t < Real(0) ? 0 : 128;
}

// How values map to [0, 1] before the lookup, clamped outside [lo, hi].
//   linear (center not set): lo -> 0, hi -> 1.
//   centered (two slopes, matplotlib's TwoSlopeNorm): lo -> 0, center -> 0.5, hi -> 1, linear on each side. With
//   a diverging map and center 0, zero is the neutral middle while the most negative value is the full blue and
//   the most positive the full red, however lopsided the range (the lessons' tensor spans -184 .. 728.6).
// Total: a NaN value, an empty or NaN range give 0.5 (the middle colour); infinite ends do not make a NaN.
struct ColorNorm {
    double lo = 0.0, hi = 1.0;
    double center = 0.0;
    bool centered = false;

    static ColorNorm Linear(double lo, double hi) { return ColorNorm{lo, hi, 0.0, false}; }
    static ColorNorm Centered(double lo, double hi, double center) { return ColorNorm{lo, hi, center, true}; }

    double to_unit(double v) const {
        if (!(hi > lo) || v != v) return 0.5;  // constant data or no number: the middle color
        if (v <= lo) return centered && center <= lo ? 0.5 : 0.0;
        if (v >= hi) return centered && center >= hi ? 0.5 : 1.0;
        if (!centered) return Fraction(lo, v, hi);
        if (v < center) return 0.5 * Fraction(lo, v, center);
        return center < hi ? 0.5 + 0.5 * Fraction(center, v, hi) : 0.5;
    }

private:
    // Where x lies between a < x < b, in [0, 1]: halved when b - a overflows, 0.5 when an end is infinite.
    static double Fraction(double a, double x, double b) {
        const double f = std::isfinite(b - a) ? (x - a) / (b - a) : (x * 0.5 - a * 0.5) / (b * 0.5 - a * 0.5);
        return f >= 0.0 ? (f <= 1.0 ? f : 1.0) : (f < 0.0 ? 0.0 : 0.5);
    }
};

inline std::uint32_t MapValue(const ColorLut& lut, const ColorNorm& norm, double v) {
    return lut[LutIndex(norm.to_unit(v) * 255.0)];
}

// Maps n values through the table (the per-change colormapping pass of a heatmap texture).
void MapValues(const ColorLut& lut, const ColorNorm& norm, const float* values, std::int64_t n, std::uint32_t* out);

// WCAG relative luminance of a packed sRGB color, 0 (black) .. 1 (white).
double RelativeLuminance(std::uint32_t rgba);
// Text color readable on `background`: dark grey on light cells, white on dark ones (seaborn's annotation rule,
// threshold 0.408).
std::uint32_t TextColorFor(std::uint32_t background);

}  // namespace qs::gui
