// The widgets' contracts over hostile numbers: slider limits ImGui accepts whatever the data.
#include <doctest/doctest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gui/widgets/widgets.hpp"

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// What ImGui 1.86's SliderBehavior asserts, plus what makes a slider usable: finite, ordered, not empty.
void CheckAdmissible(const qs::gui::SliderLimits& l, bool logarithmic) {
    CHECK(std::isfinite(l.lo));
    CHECK(std::isfinite(l.hi));
    CHECK(l.lo >= -FLT_MAX / 2.0f);
    CHECK(l.hi <= FLT_MAX / 2.0f);
    CHECK(l.lo < l.hi);
    if (logarithmic) CHECK(l.lo >= FLT_MIN);
}

}  // namespace

TEST_CASE("slider limits: finite and ordered within FLT_MAX/2 for any pair of doubles") {
    const std::vector<double> hostile = {0.0, -0.0, 1.0, -1.0, 3e36, -3e36, 3e38, -3e38, 1e300, -1e300,
                                         DBL_MAX, -DBL_MAX, FLT_MAX, -FLT_MAX, FLT_MAX / 2.0, FLT_MIN, 1e-40,
                                         -1e-40, 5e-324, kInf, -kInf, kNaN};
    for (double lo : hostile)
        for (double hi : hostile)
            for (bool logarithmic : {false, true}) {
                CAPTURE(lo);
                CAPTURE(hi);
                CAPTURE(logarithmic);
                CheckAdmissible(qs::gui::SafeSliderLimits(lo, hi, logarithmic), logarithmic);
            }
}

TEST_CASE("slider limits: ordinary limits pass unchanged") {
    const qs::gui::SliderLimits a = qs::gui::SafeSliderLimits(0.035, 350.0, true);
    CHECK(a.lo == 0.035f);
    CHECK(a.hi == 350.0f);
    const qs::gui::SliderLimits b = qs::gui::SafeSliderLimits(-2.5, 7.0);
    CHECK(b.lo == -2.5f);
    CHECK(b.hi == 7.0f);
    // The manual scale's two decades around a computed scale of 2e36: the top is cut to FLT_MAX/2.
    const qs::gui::SliderLimits c = qs::gui::SafeSliderLimits(2e34, 2e38, true);
    CHECK(c.lo == 2e34f);
    CHECK(c.hi == FLT_MAX / 2.0f);
}

TEST_CASE("int slider limits: within INT_MIN/2..INT_MAX/2 and ordered") {
    const std::vector<std::int64_t> hostile = {0, -1, 1, 15, INT_MAX, INT_MIN, INT64_MAX, INT64_MIN,
                                               std::int64_t(1) << 40, -(std::int64_t(1) << 40)};
    for (std::int64_t lo : hostile)
        for (std::int64_t hi : hostile) {
            CAPTURE(lo);
            CAPTURE(hi);
            const qs::gui::SliderIntLimits l = qs::gui::SafeSliderIntLimits(lo, hi);
            CHECK(l.lo >= INT_MIN / 2);
            CHECK(l.hi <= INT_MAX / 2);
            CHECK(l.lo <= l.hi);
        }
    const qs::gui::SliderIntLimits z = qs::gui::SafeSliderIntLimits(-128, 127);
    CHECK(z.lo == -128);
    CHECK(z.hi == 127);
    // A rank-3 tensor of no slices: one position, not a reversed slider.
    const qs::gui::SliderIntLimits empty = qs::gui::SafeSliderIntLimits(0, -1);
    CHECK(empty.lo == 0);
    CHECK(empty.hi == 0);
}
