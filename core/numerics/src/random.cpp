#include "quantscope/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/format.hpp"

namespace qs {

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

namespace {

// SplitMix64 seeds xoshiro256**; both are fully specified, so a seed gives the same tensor on every
// platform and compiler (std::normal_distribution is implementation-defined).
class Xoshiro256 {
public:
    explicit Xoshiro256(std::uint64_t seed) {
        for (auto& word : s_) word = splitmix64(seed);
    }
    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

// K distinct positions by Floyd's algorithm (K draws whatever numel is), in the order drawn, each set to
// centre +- F * std with a sign from the same stream: the K position draws first, then the K sign draws, so the
// same spec gives the same outliers everywhere. The positions taken are one bit each of numel (1/32 of the
// tensor's own bytes): a hash set and a list of K positions cost ~70 bytes an outlier, gigabytes and minutes
// for K in the tens of millions.
void place_outliers(const RandomSpec& spec, Xoshiro256& rng, Tensor& t) {
    const std::int64_t n = t.numel(), k = spec.outliers;
    const bool normal = spec.distribution == Distribution::Normal;
    const double centre = normal ? spec.mean : 0.5 * (spec.low + spec.high);
    const double std = normal ? spec.std : (spec.high - spec.low) / std::sqrt(12.0);
    const double offset = spec.outlier_scale * std;
    const double furthest = std::fabs(centre) + offset;
    if (!(furthest <= std::numeric_limits<float>::max()))
        throw Error("outliers at " + format_exact(spec.outlier_scale) + " x the std (" + format_g(std) +
                    ") would lie outside float32's range");
    Xoshiro256 signs = rng;  // the sign stream starts after the K position draws (one next() each)
    for (std::int64_t i = 0; i < k; ++i) signs.next();
    std::vector<bool> chosen(static_cast<std::size_t>(n), false);
    for (std::int64_t j = n - k; j < n; ++j) {
        const std::int64_t pick = std::min(static_cast<std::int64_t>(rng.uniform() * static_cast<double>(j + 1)), j);
        const std::int64_t position = chosen[static_cast<std::size_t>(pick)] ? j : pick;
        chosen[static_cast<std::size_t>(position)] = true;
        const double sign = (signs.next() >> 63) ? -1.0 : 1.0;
        t.values[static_cast<std::size_t>(position)] = static_cast<float>(centre + sign * offset);
    }
    rng = signs;  // as before: the stream continues after the signs
}

}  // namespace

Distribution parse_distribution(const std::string& text) {
    if (text == "normal") return Distribution::Normal;
    if (text == "uniform") return Distribution::Uniform;
    throw Error("unknown distribution " + quoted_text(text) + ": expected normal or uniform");
}

Tensor generate_random(const RandomSpec& spec) {
    const std::int64_t n = checked_numel(spec.shape);
    if (spec.distribution == Distribution::Normal && (!std::isfinite(spec.mean) || !std::isfinite(spec.std) || spec.std <= 0))
        throw Error("normal distribution needs a finite mean and std > 0 (got mean " + format_exact(spec.mean) + ", std " +
                    format_exact(spec.std) + ")");
    if (spec.distribution == Distribution::Uniform &&
        (!std::isfinite(spec.low) || !std::isfinite(spec.high) || spec.high <= spec.low))
        throw Error("uniform distribution needs finite low < high (got " + format_exact(spec.low) + ", " +
                    format_exact(spec.high) + ")");
    // Values are float32: a range beyond it would overflow (low + (high - low) u is Inf for +-1e308, and a
    // double outside float's range converted to float is undefined behaviour).
    constexpr double kFloatMax = std::numeric_limits<float>::max();
    if (spec.distribution == Distribution::Uniform && (std::abs(spec.low) > kFloatMax || std::abs(spec.high) > kFloatMax))
        throw Error("uniform low and high must lie in float32's range [" + format_exact(-kFloatMax) + ", " + format_exact(kFloatMax) +
                    "] (got " + format_exact(spec.low) + ", " + format_exact(spec.high) + ")");
    if (spec.outliers < 0 || spec.outliers > n)
        throw Error("outliers must be between 0 and the number of elements (" + std::to_string(n) + ")");
    if (spec.pin_range < 0) throw Error("pin-range must be >= 0 (got " + std::to_string(spec.pin_range) + ")");
    if (spec.pin_range > n)
        throw Error("pinning the range sets the first " + std::to_string(spec.pin_range) +
                    " elements (max + 1, min - 1, 0, ...), but the tensor has only " + std::to_string(n));
    if (spec.outliers > 0 && !(std::isfinite(spec.outlier_scale) && spec.outlier_scale > 0))
        throw Error("outlier scale must be a finite number > 0 (got " + format_exact(spec.outlier_scale) + ")");

    Tensor t;
    t.shape = spec.shape;
    t.values.resize(static_cast<std::size_t>(n));
    Xoshiro256 rng(spec.seed);
    if (spec.distribution == Distribution::Uniform) {
        for (float& v : t.values) v = static_cast<float>(spec.low + (spec.high - spec.low) * rng.uniform());
        // float rounding can land exactly on `high`; keep the documented half-open range.
        for (float& v : t.values)
            if (v >= spec.high) v = std::nextafter(static_cast<float>(spec.high), -INFINITY);
    } else {
        // Box-Muller, two values per pair of uniforms.
        for (std::size_t i = 0; i < t.values.size(); i += 2) {
            const double u1 = 1.0 - rng.uniform();  // (0, 1]: log is finite
            const double u2 = rng.uniform();
            const double radius = std::sqrt(-2.0 * std::log(u1));
            const double pair[2] = {spec.mean + spec.std * radius * std::cos(2 * M_PI * u2),
                                    spec.mean + spec.std * radius * std::sin(2 * M_PI * u2)};
            for (std::size_t k = 0; k < 2 && i + k < t.values.size(); ++k) {
                if (!(std::abs(pair[k]) <= kFloatMax))
                    throw Error("normal distribution with mean " + format_exact(spec.mean) + " and std " + format_exact(spec.std) +
                                " gives " + format_g(pair[k]) + " at index " +
                                index_to_string(spec.shape, static_cast<std::int64_t>(i + k)) +
                                ", outside float32's range");
                t.values[i + k] = static_cast<float>(pair[k]);
            }
        }
    }
    if (spec.outliers > 0) place_outliers(spec, rng, t);
    if (spec.pin_range > 0) {
        // As the lesson: [0,0,0] = max + 1, [0,0,1] = min - 1, [0,0,2] = 0, and the pattern repeats.
        const auto [lo, hi] = std::minmax_element(t.values.begin(), t.values.end());
        const float r_min = *lo, r_max = *hi;
        for (std::int64_t k = 0; k < spec.pin_range; ++k) {
            const float pattern[3] = {r_max + 1.0f, r_min - 1.0f, 0.0f};
            t.values[static_cast<std::size_t>(k)] = pattern[k % 3];
        }
    }
    return t;
}

}  // namespace qs
