#include "gui/widgets/colormap.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace qs::gui {
namespace {

// ---- Moreland's diverging colormap (K. Moreland, "Diverging Color Maps for Scientific Visualization", 2009).
// Interpolation in the Msh space (polar CIELAB), through a white-ish midpoint of magnitude 88, between the two
// published endpoint colors. matplotlib's "coolwarm" is this map sampled at 33 points.

constexpr double kPi = 3.14159265358979323846;

struct Vec3 {
    double x, y, z;
};

double SrgbToLinear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }
double LinearToSrgb(double c) { return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1.0 / 2.4) - 0.055; }

// D65 reference white, as Moreland's paper uses.
constexpr Vec3 kWhite{0.95047, 1.0, 1.08883};

double LabF(double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; }
double LabFinv(double t) { return t > 0.206893 ? t * t * t : (t - 16.0 / 116.0) / 7.787; }

Vec3 SrgbToMsh(Vec3 c) {
    const double r = SrgbToLinear(c.x), g = SrgbToLinear(c.y), b = SrgbToLinear(c.z);
    const double X = 0.4124 * r + 0.3576 * g + 0.1805 * b;
    const double Y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    const double Z = 0.0193 * r + 0.1192 * g + 0.9505 * b;
    const double fx = LabF(X / kWhite.x), fy = LabF(Y / kWhite.y), fz = LabF(Z / kWhite.z);
    const double L = 116.0 * fy - 16.0, A = 500.0 * (fx - fy), B = 200.0 * (fy - fz);
    const double M = std::sqrt(L * L + A * A + B * B);
    return {M, M > 0 ? std::acos(L / M) : 0.0, std::atan2(B, A)};
}

Vec3 MshToSrgb(Vec3 msh) {
    const double L = msh.x * std::cos(msh.y);
    const double A = msh.x * std::sin(msh.y) * std::cos(msh.z);
    const double B = msh.x * std::sin(msh.y) * std::sin(msh.z);
    const double fy = (L + 16.0) / 116.0, fx = fy + A / 500.0, fz = fy - B / 200.0;
    const double X = kWhite.x * LabFinv(fx), Y = kWhite.y * LabFinv(fy), Z = kWhite.z * LabFinv(fz);
    const double r = 3.2406 * X - 1.5372 * Y - 0.4986 * Z;
    const double g = -0.9689 * X + 1.8758 * Y + 0.0415 * Z;
    const double b = 0.0557 * X - 0.2040 * Y + 1.0570 * Z;
    return {LinearToSrgb(r), LinearToSrgb(g), LinearToSrgb(b)};
}

// Hue twist toward the midpoint, so an unsaturated color keeps a sensible hue (the paper's "adjust hue").
double AdjustHue(const Vec3& sat, double unsat_m) {
    if (sat.x >= unsat_m - 0.1) return sat.z;
    const double spin = sat.y * std::sqrt(unsat_m * unsat_m - sat.x * sat.x) / (sat.x * std::sin(sat.y));
    return sat.z > -kPi / 3.0 ? sat.z + spin : sat.z - spin;
}

Vec3 Moreland(Vec3 c1, Vec3 c2, double t) {
    Vec3 m1 = SrgbToMsh(c1), m2 = SrgbToMsh(c2);
    // Radically different hues: pass through an unsaturated midpoint.
    if (m1.y > 0.05 && m2.y > 0.05 && std::fabs(m1.z - m2.z) > kPi / 3.0) {
        const double mid = std::fmax(std::fmax(m1.x, m2.x), 88.0);
        if (t < 0.5) {
            m2 = {mid, 0.0, 0.0};
            t *= 2.0;
        } else {
            m1 = {mid, 0.0, 0.0};
            t = 2.0 * t - 1.0;
        }
    }
    if (m1.y < 0.05 && m2.y > 0.05) m1.z = AdjustHue(m2, m1.x);
    else if (m2.y < 0.05 && m1.y > 0.05) m2.z = AdjustHue(m1, m2.x);
    return MshToSrgb({(1 - t) * m1.x + t * m2.x, (1 - t) * m1.y + t * m2.y, (1 - t) * m1.z + t * m2.z});
}

std::uint8_t ToByte(double c) {
    const double v = std::round(c * 255.0);
    return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

ColorLut BuildCoolwarm() {
    // The paper's endpoints: blue (59, 76, 192) and red (180, 4, 38).
    const Vec3 blue{0.230, 0.299, 0.754}, red{0.706, 0.016, 0.150};
    ColorLut lut{};
    for (int i = 0; i < 256; ++i) {
        const Vec3 c = Moreland(blue, red, i / 255.0);
        lut[i] = PackRgba(ToByte(c.x), ToByte(c.y), ToByte(c.z));
    }
    // The endpoints exactly as published (the round trip through Lab moves them by a fraction of a unit).
    lut[0] = PackRgba(59, 76, 192);
    lut[255] = PackRgba(180, 4, 38);
    return lut;
}

// Piecewise-linear interpolation (in sRGB) between evenly spaced anchor colors.
ColorLut BuildFromAnchors(const std::uint32_t* hex, int count) {
    ColorLut lut{};
    for (int i = 0; i < 256; ++i) {
        const double pos = i / 255.0 * (count - 1);
        const int k = pos >= count - 1 ? count - 2 : static_cast<int>(pos);
        const double t = pos - k;
        auto channel = [&](int shift) {
            const double a = (hex[k] >> shift) & 0xFF, b = (hex[k + 1] >> shift) & 0xFF;
            return ToByte(((1 - t) * a + t * b) / 255.0);
        };
        lut[i] = PackRgba(channel(16), channel(8), channel(0));
    }
    return lut;
}

ColorLut BuildViridis() {
    // The ten standard anchor colors of viridis (0, 1/9, ..., 1), as published with the map.
    const std::uint32_t anchors[] = {0x440154, 0x482878, 0x3E4A89, 0x31688E, 0x26828E,
                                     0x1F9E89, 0x35B779, 0x6DCD59, 0xB4DE2C, 0xFDE725};
    return BuildFromAnchors(anchors, 10);
}

ColorLut BuildGreys() {
    const std::uint32_t anchors[] = {0xFFFFFF, 0x000000};
    return BuildFromAnchors(anchors, 2);
}

ColorLut BuildWhite() {
    ColorLut lut{};
    lut.fill(PackRgba(255, 255, 255));
    return lut;
}

}  // namespace

const char* ColormapName(Colormap map) {
    switch (map) {
        case Colormap::Coolwarm: return "coolwarm";
        case Colormap::Viridis: return "viridis";
        case Colormap::Greys: return "greys";
        case Colormap::White: return "white";
    }
    return "coolwarm";
}

bool ParseColormap(const char* name, Colormap& out) {
    for (int i = 0; i < kColormapCount; ++i) {
        if (std::strcmp(name, ColormapName(static_cast<Colormap>(i))) == 0) {
            out = static_cast<Colormap>(i);
            return true;
        }
    }
    return false;
}

bool IsDiverging(Colormap map) { return map == Colormap::Coolwarm; }

const ColorLut& GetColormapLut(Colormap map) {
    // Immutable tables, initialised once (thread-safe magic statics): not UI state.
    static const ColorLut coolwarm = BuildCoolwarm();
    static const ColorLut viridis = BuildViridis();
    static const ColorLut greys = BuildGreys();
    static const ColorLut white = BuildWhite();
    switch (map) {
        case Colormap::Coolwarm: return coolwarm;
        case Colormap::Viridis: return viridis;
        case Colormap::Greys: return greys;
        case Colormap::White: return white;
    }
    return coolwarm;
}

void MapValues(const ColorLut& lut, const ColorNorm& norm, const float* values, std::int64_t n, std::uint32_t* out) {
    if (!(norm.hi > norm.lo)) {
        for (std::int64_t i = 0; i < n; ++i) out[i] = lut[LutIndex(127.5)];
        return;
    }
    // The common linear case in float, branch-free enough to vectorise; only where the range is a finite float
    // span: a denormal range makes the float slope infinite, an infinite end makes every position NaN.
    const float lo = static_cast<float>(norm.lo);
    const float k = static_cast<float>(255.0 / (norm.hi - norm.lo));
    if (norm.centered && norm.lo < norm.center && norm.center < norm.hi && std::isfinite(norm.center - norm.lo) &&
        std::isfinite(norm.hi - norm.center)) {
        // The centred norm's two slopes as to_unit computes them (the same double arithmetic: the same colours)
        // without its branches, for the three value panels recolored on every slider step: below the centre the
        // upper slope's clamped fraction is 0, from it on the lower one's is exactly 1 (v - lo rounds to at least
        // center - lo). A NaN stays NaN to LutIndex, which gives it the middle colour as to_unit's 0.5 does.
        const double below = norm.center - norm.lo, above = norm.hi - norm.center;
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = values[i];
            const double low = std::min(std::max((v - norm.lo) / below, 0.0), 1.0);
            const double high = std::min(std::max((v - norm.center) / above, 0.0), 1.0);
            out[i] = lut[LutIndex((0.5 * low + 0.5 * high) * 255.0)];
        }
        return;
    }
    if (norm.centered || !std::isfinite(lo) || !std::isfinite(k) || !(k > 0.0f)) {
        for (std::int64_t i = 0; i < n; ++i) out[i] = MapValue(lut, norm, values[i]);
        return;
    }
    for (std::int64_t i = 0; i < n; ++i) out[i] = lut[LutIndex((values[i] - lo) * k)];
}

double RelativeLuminance(std::uint32_t rgba) {
    const double r = SrgbToLinear((rgba & 0xFF) / 255.0);
    const double g = SrgbToLinear(((rgba >> 8) & 0xFF) / 255.0);
    const double b = SrgbToLinear(((rgba >> 16) & 0xFF) / 255.0);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

std::uint32_t TextColorFor(std::uint32_t background) {
    return RelativeLuminance(background) > 0.408 ? PackRgba(38, 38, 38) : PackRgba(255, 255, 255);
}

}  // namespace qs::gui
