// The MSE calibrator's search for one block (calibrate.hpp "mse"); the errors it compares are measured by
// block_error.hpp.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <memory>
#include <numeric>

#include "bit_patterns.hpp"
#include "block_error.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/error.hpp"
#include "quantscope/mse_plane.hpp"
#include "quantscope/params.hpp"

namespace qs {
namespace {

using detail::chunk_sse;
using detail::MomentHistogram;
using detail::serial_sse;

// The fallback search: a grid of shrink factors, then a golden-section search around its best point.
constexpr int kGridPoints = 64;
constexpr double kMinShrink = 0.05;
constexpr int kGoldenSteps = 18;
// Blocks up to this size are searched on their own values; larger ones on a histogram of themselves (with
// the per-bin sums that make the error of a whole bin exact), measuring only the finalists exactly.
constexpr std::int64_t kExactSearchMax = 1024;
// The plane search of a whole tensor (asymmetric): up to this many values its grid is measured on the values
// themselves, as the window's map does; the best cells measured exactly; rows either side of the best refined.
constexpr std::int64_t kExactPlaneMax = 16384;
constexpr std::size_t kPlaneFinalists = 4;
constexpr std::size_t kPlaneBins = 512;
constexpr std::int64_t kPlaneRows = 2;
// The exact one-dimensional minimisation gives up beyond this many code changes per value (then the grid
// and golden-section search take over).
constexpr std::int64_t kMaxStepsPerValue = 8;

using ConstMapF = Eigen::Map<const Eigen::ArrayXf>;

// The min/max range shrunk by c: around 0 when it contains 0 (0 stays exactly representable), else around
// its centre.
ValueRange shrink(const ValueRange& full, double c) {
    if (c == 1.0) return full;  // exactly min/max, not min/max give or take an ulp of the centre arithmetic
    if (full.lo <= 0 && full.hi >= 0) return {c * full.lo, c * full.hi};
    const double centre = 0.5 * (full.lo + full.hi);
    return {centre - c * (centre - full.lo), centre + c * (full.hi - centre)};
}

// The exact minimum, in real arithmetic, over s in [s_lo, s_hi] of sum_i (r_i - s (q_i(s) - z))^2 with
// q_i(s) = clamp(round(r_i / s + z), q_min, q_max) and z fixed. Between two code changes the sum is a quadratic
// A - 2 s B + s^2 C, minimised in closed form; the code changes are visited in order of s. Returns the s of
// the least sum, inside its piece (not on a code change, where float32 could round either way), or a
// negative number when the values would change code more than `max_steps` times over the interval.
class RowMinimum {
public:
    double operator()(const float* r, std::int64_t n, std::int32_t z, double s_lo, double s_hi, const IntType& dtype,
                      std::int64_t max_steps) {
        if (n > kMaxIndex) return -1;
        const double q_min = dtype.q_min(), q_max = dtype.q_max(), inv_lo = 1.0 / s_lo, inv_hi = 1.0 / s_hi;
        // Codes by a product with 1 / s, not a quotient: a code off by one next to an end only adds an empty
        // piece, and the caller measures the answer exactly.
        auto code = [&](double v, double inv_s) { return std::clamp(std::rint(v * inv_s + z), q_min, q_max); };
        offsets_.resize(static_cast<std::size_t>(n));
        last_codes_.resize(static_cast<std::size_t>(n));
        std::int64_t count = 0;
        double a = 0, b = 0, c = 0;  // sum r^2, sum r d, sum d^2 with d = q - z
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = r[i], first = code(v, inv_hi), last = code(v, inv_lo);
            const double d = first - z;
            offsets_[static_cast<std::size_t>(i)] = d;
            last_codes_[static_cast<std::size_t>(i)] = last;
            a += v * v, b += v * d, c += d * d;
            count += static_cast<std::int64_t>(std::abs(last - first));
        }
        if (count > max_steps) return -1;
        collect_steps(r, n, z, count);
        best_sse_ = std::numeric_limits<double>::infinity();
        best_scale_ = s_hi;
        double upper = s_hi;
        for (auto key = steps_.rbegin(); key != steps_.rend(); ++key) {  // from s_hi down
            const double lower = std::clamp(scale_of(*key), s_lo, upper);
            piece(lower, upper, a, b, c);
            upper = lower;
            const auto index = static_cast<std::size_t>((*key & kPayloadMask) >> 1);
            const double delta = (*key & 1) ? 1.0 : -1.0;
            double& d = offsets_[index];
            b += r[index] * delta;
            c += 2 * d * delta + 1;
            d += delta;
        }
        piece(s_lo, upper, a, b, c);
        return best_scale_;
    }

private:
    // A code change is one sortable integer: the bits of its (positive) scale with the low bits replaced by
    // the value's index and the direction. Sorting integers is several times cheaper than sorting structs,
    // and dropping 11 of 52 mantissa bits only reorders changes closer than 1e-12 relative (the caller
    // measures the answer exactly).
    static constexpr int kPayloadBits = 11;
    static constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << kPayloadBits) - 1;
    static constexpr std::int64_t kMaxIndex = std::int64_t{1} << (kPayloadBits - 1);
    static_assert(kExactSearchMax <= kMaxIndex, "a block searched exactly must fit the payload");

    static std::uint64_t key_of(double scale, std::int64_t index, bool up) {
        std::uint64_t bits;
        std::memcpy(&bits, &scale, sizeof bits);
        return (bits & ~kPayloadMask) | static_cast<std::uint64_t>(index) << 1 | (up ? 1u : 0u);
    }
    static double scale_of(std::uint64_t key) {
        key &= ~kPayloadMask;
        double scale;
        std::memcpy(&scale, &key, sizeof scale);
        return scale;
    }

    // As s shrinks, |r / s| grows: a code moves away from z one step at each half-integer. Most values change
    // code at most once over the window: that step is written without a branch on whether it exists.
    void collect_steps(const float* r, std::int64_t n, std::int32_t z, std::int64_t count) {
        steps_.resize(static_cast<std::size_t>(count) + 1);
        std::size_t out = 0;
        for (std::int64_t i = 0; i < n; ++i) {
            const double v = r[i], first = offsets_[static_cast<std::size_t>(i)] + z,
                         last = last_codes_[static_cast<std::size_t>(i)];
            const bool up = last > first;
            const double delta = up ? 1.0 : -1.0, half = 0.5 * delta - z;
            steps_[out] = key_of(v / (first + half), i, up);
            out += first != last;
            if (std::abs(last - first) > 1)
                for (double k = first + delta; k != last; k += delta) steps_[out++] = key_of(v / (k + half), i, up);
        }
        steps_.resize(out);
        std::sort(steps_.begin(), steps_.end());
    }

    void piece(double lower, double upper, double a, double b, double c) {
        if (!(upper > lower)) return;
        const double s = c > 0 ? std::clamp(b / c, lower, upper) : upper;
        const double sse = a - 2 * s * b + s * s * c;
        if (sse >= best_sse_) return;
        best_sse_ = sse;
        const double margin = std::min(0.5 * (upper - lower), 1e-6 * s);
        best_scale_ = std::clamp(s, lower + margin, upper - margin);
    }

    std::vector<std::uint64_t> steps_;
    std::vector<double> offsets_, last_codes_;
    double best_sse_ = 0, best_scale_ = 0;
};

// The MSE calibrator for one block: the least squared error over the min/max range shrunk by c in
// [kMinShrink, 1] (see calibrate.hpp). Its cost is linear in the block's size with a small constant, whatever
// the block count: the scales whose range provably clips the block's extremes by more than min/max's whole
// error are never tried (for a small block that leaves a sliver near c = 1), a small block minimises exactly
// over what is left, a big one searches on its histogram, and no evaluation starts a thread team.
class MseSearch {
public:
    MseSearch(const float* values, std::int64_t n, const QuantConfig& config, bool whole_tensor)
        : values_(values), n_(n), config_(config), whole_tensor_(whole_tensor) {
        ConstMapF a(values, n);
        set_range(a.minCoeff(), a.maxCoeff());
        if (n > kExactSearchMax) histogram_ = std::make_unique<MomentHistogram>(values, n, actual_lo_, actual_hi_, whole_tensor);
    }
    // A whole tensor read from a view in its stored type (more than kExactPlaneMax values: every search
    // then runs on the histogram, and only the exact measurements read the view again, a pass each).
    MseSearch(const TensorView& view, const QuantConfig& config, const PassControl& control)
        : view_(&view), n_(view.numel()), config_(config), whole_tensor_(true), control_(control) {
        float lo = 0, hi = 0;
        value_range(view, lo, hi);
        set_range(lo, hi);
        histogram_ = std::make_unique<MomentHistogram>(view, actual_lo_, actual_hi_);
    }

    // A whole bf16/f16 tensor from its bit patterns (more than kExactPlaneMax values): the view's search on the
    // same histogram, built from the patterns, and every exact measurement a sum over the patterns.
    MseSearch(const detail::PatternTable& table, const QuantConfig& config)
        : table_(&table), n_(table.n), config_(config), whole_tensor_(true) {
        set_range(table.lo, table.hi);
        histogram_ = std::make_unique<MomentHistogram>(table, actual_lo_, actual_hi_);
    }

    void run(double& scale, std::int32_t& zero_point) {
        Point best = at(1.0);
        best.sse = exact(best);
        if (best.sse > 0) search(best);
        if (best.sse > 0 && whole_tensor_ && config_.mode == Mode::Asymmetric) search_plane(best);
        scale = best.scale;
        zero_point = best.zero_point;
    }

private:
    struct Point {
        double c = 1, scale = 1, sse = 0;
        std::int32_t zero_point = 0;
    };

    Point at(double c) const {
        Point p;
        p.c = c;
        params_from_range(shrink(full_, c), config_, p.scale, p.zero_point);
        return p;
    }
    void set_range(float lo, float hi) {
        actual_lo_ = lo;
        actual_hi_ = hi;
        const double m = std::max(std::abs(actual_lo_), std::abs(actual_hi_));
        full_ = config_.mode == Mode::Symmetric ? ValueRange{-m, m} : ValueRange{actual_lo_, actual_hi_};
    }
    double exact(const Point& p) const {
        if (table_ != nullptr)
            return detail::pattern_sse(*table_, static_cast<float>(p.scale), static_cast<float>(p.zero_point), config_, scratch_);
        if (view_ != nullptr)
            return values_mse(*view_, p.scale, p.zero_point, config_, control_) * static_cast<double>(n_);
        return whole_tensor_ ? values_mse(values_, n_, p.scale, p.zero_point, config_) * static_cast<double>(n_)
                         : serial_sse(values_, n_, p.scale, p.zero_point, config_);
    }
    double estimate(const Point& p) const { return histogram_ ? histogram_->sse(p.scale, p.zero_point, config_) : exact(p); }

    // No value quantizes past the largest (smallest) code's value: with z fixed, a scale below this bound
    // clips the block's max or min alone by more than the whole error `sse`.
    double smallest_useful_scale(std::int32_t z, double sse) const {
        const double margin = std::sqrt(sse) * (1 + 1e-6);
        double s = 0;
        if (config_.dtype.q_max() > z) s = std::max(s, (actual_hi_ - margin) / (config_.dtype.q_max() - z));
        if (config_.dtype.q_min() < z) s = std::max(s, (-actual_lo_ - margin) / (z - config_.dtype.q_min()));
        return s * (1 - 1e-6);
    }

    void search(Point& best) {
        // Along the shrink factors, z stays min/max's and s falls with c: a row of the (s, z) plane.
        const double s_lo = std::max(at(kMinShrink).scale, smallest_useful_scale(best.zero_point, best.sse));
        if (!(s_lo < best.scale)) return;
        if (!histogram_) {
            static thread_local RowMinimum row;  // its buffers are reused from block to block
            Point p = best;
            p.scale = row(values_, n_, best.zero_point, s_lo, best.scale, config_.dtype, kMaxStepsPerValue * n_ + 64);
            if (p.scale > 0) {
                p.sse = exact(p);
                if (p.sse < best.sse) best = p;
                return;
            }
        }
        grid_and_golden(best, s_lo);
    }

    // The window's (s, z) plane (mse_plane.hpp) for a whole tensor in asymmetric mode: its grid around the
    // lessons' min/max, the few best cells measured exactly, then the rows through and beside the best cell
    // minimised in s. Up to kExactPlaneMax values the grid is measured as the window's map measures it (same
    // cells, same sums), so the answer is never worse than the map's "best on grid"; above, on the histogram.
    void search_plane(Point& best) {
        LandscapePoint minmax;
        asymmetric_params(actual_lo_, actual_hi_, config_.dtype, minmax.scale, minmax.zero_point, false);
        std::vector<double> scales;
        std::vector<std::int32_t> zps;
        landscape_grid(config_.dtype, minmax, nullptr, kLandscapeFine, scales, zps);
        // The map may reach below the smallest normal float32 (a denormal range) or past the largest: scales
        // the quantizer never uses (params.hpp), so the search stays within them.
        for (double& s : scales)
            s = std::clamp(s, static_cast<double>(std::numeric_limits<float>::min()),
                           static_cast<double>(std::numeric_limits<float>::max()));
        const std::size_t ns = scales.size(), cells = ns * zps.size();
        std::vector<double> mse(cells);
        if (!histogram_ || n_ <= kExactPlaneMax) {
            mse_grid(values_, n_, config_, scales, zps, mse);
        } else {  // a rougher histogram picks the finalists: 4096 cells on 8192 bins would cost seconds
            const MomentHistogram rough = histogram_->merged((histogram_->size() + kPlaneBins - 1) / kPlaneBins);
#pragma omp parallel for schedule(static)
            for (std::int64_t cell = 0; cell < static_cast<std::int64_t>(cells); ++cell)
                mse[static_cast<std::size_t>(cell)] =
                    rough.sse(scales[static_cast<std::size_t>(cell) % ns], zps[static_cast<std::size_t>(cell) / ns], config_);
        }
        std::vector<std::size_t> order(cells);
        std::iota(order.begin(), order.end(), std::size_t{0});
        const std::size_t finalists = std::min<std::size_t>(kPlaneFinalists, cells);
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(finalists), order.end(),
                          [&mse](std::size_t a, std::size_t b) { return mse[a] < mse[b] || (mse[a] == mse[b] && a < b); });
        for (std::size_t k = 0; k < finalists; ++k) {
            Point p;
            p.scale = scales[order[k] % ns];
            p.zero_point = zps[order[k] / ns];
            p.sse = exact(p);
            if (p.sse < best.sse) best = p;
        }
        // Between the best cell's neighbours: s over the two grid steps around it, z over the rows between.
        const std::size_t si = order[0] % ns, zi = order[0] / ns;
        const double s_lo = scales[si > 0 ? si - 1 : si], s_hi = scales[std::min(si + 1, ns - 1)];
        const std::int64_t z = zps[zi];
        const std::int64_t z_from = std::max<std::int64_t>(z - kPlaneRows, zi > 0 ? zps[zi - 1] + 1 : z);
        const std::int64_t z_to = std::min<std::int64_t>(z + kPlaneRows, zi + 1 < zps.size() ? zps[zi + 1] - 1 : z);
        Point refined;
        refined.sse = std::numeric_limits<double>::infinity();
        for (std::int64_t row = z_from; row <= z_to; ++row) {
            Point p = row_minimum(static_cast<std::int32_t>(row), s_lo, s_hi);
            if (p.sse < refined.sse) refined = p;
        }
        if (refined.sse < best.sse) {
            refined.sse = exact(refined);
            if (refined.sse < best.sse) best = refined;
        }
    }

    // The least error over s in [s_lo, s_hi] with z fixed: exact for a small block, else a golden-section search
    // on the estimate. Its sse is the estimate's.
    Point row_minimum(std::int32_t z, double s_lo, double s_hi) {
        Point p;
        p.zero_point = z;
        if (!histogram_) {
            static thread_local RowMinimum row;
            p.scale = row(values_, n_, z, s_lo, s_hi, config_.dtype, kMaxStepsPerValue * n_ + 64);
            if (p.scale > 0) {
                p.sse = exact(p);
                return p;
            }
        }
        auto at_scale = [&](double s) {
            Point q = p;
            q.scale = s;
            q.sse = estimate(q);
            return q;
        };
        const double inv_phi = (std::sqrt(5.0) - 1) / 2;
        double a = s_lo, b = s_hi;
        Point p1 = at_scale(b - inv_phi * (b - a)), p2 = at_scale(a + inv_phi * (b - a));
        for (int it = 0; it < kGoldenSteps; ++it) {
            if (p1.sse <= p2.sse) {
                b = p2.scale, p2 = p1;
                p1 = at_scale(b - inv_phi * (b - a));
            } else {
                a = p1.scale, p1 = p2;
                p2 = at_scale(a + inv_phi * (b - a));
            }
        }
        return p1.sse <= p2.sse ? p1 : p2;
    }

    // The shrink factors on a grid (those whose scale is below s_lo cannot win and are skipped), then a
    // golden-section search around the best.
    void grid_and_golden(Point& best, double s_lo) {
        const double step = (1.0 - kMinShrink) / (kGridPoints - 1);
        auto grid_c = [step](int i) { return kMinShrink + step * i; };
        Point grid_best;
        grid_best.sse = std::numeric_limits<double>::infinity();
        int best_index = kGridPoints - 1;
        for (int i = kGridPoints - 1; i >= 0; --i) {  // from c = 1 down: ties keep the wider range
            Point p = at(grid_c(i));
            if (p.scale < s_lo) break;
            p.sse = estimate(p);
            if (p.sse < grid_best.sse) grid_best = p, best_index = i;
        }
        double a = std::max(kMinShrink, grid_c(best_index - 1)), b = std::min(1.0, grid_c(best_index + 1));
        const double inv_phi = (std::sqrt(5.0) - 1) / 2;
        Point p1 = at(b - inv_phi * (b - a)), p2 = at(a + inv_phi * (b - a));
        p1.sse = estimate(p1);
        p2.sse = estimate(p2);
        for (int it = 0; it < kGoldenSteps; ++it) {
            if (p1.sse <= p2.sse) {
                b = p2.c, p2 = p1;
                p1 = at(b - inv_phi * (b - a));
                p1.sse = estimate(p1);
            } else {
                a = p1.c, p1 = p2;
                p2 = at(a + inv_phi * (b - a));
                p2.sse = estimate(p2);
            }
        }
        // The answer is the best of the search, the grid point and min/max, all measured exactly.
        for (Point p : {grid_best, p1.sse <= p2.sse ? p1 : p2}) {
            if (histogram_) p.sse = exact(p);
            if (p.sse < best.sse) best = p;
        }
    }

    const float* values_ = nullptr;
    const TensorView* view_ = nullptr;  // instead of values_: a whole tensor read in pieces
    const detail::PatternTable* table_ = nullptr;  // or its bit patterns
    mutable std::vector<float> scratch_;
    std::int64_t n_;
    const QuantConfig& config_;
    bool whole_tensor_;
    PassControl control_;
    double actual_lo_ = 0, actual_hi_ = 0;
    ValueRange full_;
    std::unique_ptr<MomentHistogram> histogram_;
};

}  // namespace

void mse_params(const float* values, std::int64_t n, const QuantConfig& config, bool whole_tensor, double& scale,
                std::int32_t& zero_point) {
    if (n < 1) throw Error("cannot calibrate an empty block");
    MseSearch(values, n, config, whole_tensor).run(scale, zero_point);
}

void mse_params(const TensorView& view, const QuantConfig& config, double& scale, std::int32_t& zero_point,
                const PassControl& control) {
    const std::int64_t n = view.numel();
    if (n < 1) throw Error("cannot calibrate an empty block");
    if (n <= kExactPlaneMax) {  // searched on the values themselves: a float32 copy of at most 64 KiB
        const Tensor values = materialize(view);
        mse_params(values.values.data(), n, config, true, scale, zero_point);
        return;
    }
    MseSearch(view, config, control).run(scale, zero_point);
}

namespace detail {

void pattern_mse_params(const TensorView& view, const PatternTable& table, const QuantConfig& config, double& scale,
                        std::int32_t& zero_point) {
    if (table.n < 1) throw Error("cannot calibrate an empty block");
    if (table.n <= kExactPlaneMax) return mse_params(view, config, scale, zero_point);  // searched on the values
    MseSearch(table, config).run(scale, zero_point);
}

}  // namespace detail

}  // namespace qs
