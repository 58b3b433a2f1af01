// The widgets' contracts over hostile numbers: slider limits ImGui accepts and a colour for every value,
// whatever the data (NaN, +-Inf, empty, denormal or overflowing ranges).
#include <doctest/doctest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gui/widgets/colormap.hpp"
#include "gui/widgets/heatmap.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui_test_support.hpp"

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

TEST_CASE("colour index: every number is an entry of the table") {
    using qs::gui::LutIndex;
    for (double p : {-kInf, -1e300, -1.0, -0.5, -0.49, 0.0, 127.5, 254.49, 254.5, 255.0, 1e300, kInf, kNaN}) {
        CAPTURE(p);
        CHECK(LutIndex(p) < 256);
        CHECK(LutIndex(static_cast<float>(p)) == LutIndex(p));
    }
    CHECK(LutIndex(kNaN) == 128);
    CHECK(LutIndex(-kInf) == 0);
    CHECK(LutIndex(kInf) == 255);
    CHECK(LutIndex(127.5) == 128);
    CHECK(LutIndex(254.4) == 254);
}

TEST_CASE("colour mapping: NaN and infinite values and ranges map to a colour of the table") {
    const qs::gui::ColorLut& lut = qs::gui::GetColormapLut(qs::gui::Colormap::Viridis);
    const std::vector<double> ends = {-kInf, -DBL_MAX, -3e38, -1.0, -1e-40, 0.0, 1e-45, 1e-40, 1.0, 3e38, DBL_MAX,
                                      kInf, kNaN};
    std::vector<float> values;
    for (double v : ends) values.push_back(static_cast<float>(v));
    std::vector<std::uint32_t> out(values.size());
    for (double lo : ends)
        for (double hi : ends)
            for (int centered = 0; centered < 2; ++centered) {
                const qs::gui::ColorNorm norm =
                    centered ? qs::gui::ColorNorm::Centered(lo, hi, 0.0) : qs::gui::ColorNorm::Linear(lo, hi);
                // The heatmap's pass and the single value agree, and both stay inside the table.
                qs::gui::MapValues(lut, norm, values.data(), static_cast<std::int64_t>(values.size()), out.data());
                for (std::size_t i = 0; i < values.size(); ++i) {
                    CAPTURE(lo);
                    CAPTURE(hi);
                    CAPTURE(centered);
                    CAPTURE(values[i]);
                    const double u = norm.to_unit(values[i]);
                    CHECK(u >= 0.0);
                    CHECK(u <= 1.0);
                    CHECK(out[i] == qs::gui::MapValue(lut, norm, values[i]));
                }
            }
}

TEST_CASE("colour mapping: the heatmap pass gives every value of a centred norm its single-value colour") {
    // The pass maps a centred norm's values without to_unit's branches; each colour must still be MapValue's.
    const qs::gui::ColorLut& lut = qs::gui::GetColormapLut(qs::gui::Colormap::Coolwarm);
    for (const qs::gui::ColorNorm norm : {qs::gui::ColorNorm::Centered(-4.7, 4.2, 0.0), qs::gui::ColorNorm::Centered(-128.0, 127.0, 3.0),
                                          qs::gui::ColorNorm::Centered(0.001, 0.0181, 0.0093)}) {
        std::vector<float> values;
        for (int i = 0; i <= 20000; ++i) {
            const double t = static_cast<double>(i) / 20000.0;
            values.push_back(static_cast<float>(norm.lo - 1.0 + t * (norm.hi - norm.lo + 2.0)));
        }
        for (double v : {norm.lo, norm.center, norm.hi, std::nextafter(norm.center, -kInf), std::nextafter(norm.center, kInf)})
            values.push_back(static_cast<float>(v));
        std::vector<std::uint32_t> out(values.size());
        qs::gui::MapValues(lut, norm, values.data(), static_cast<std::int64_t>(values.size()), out.data());
        int differ = 0;
        for (std::size_t i = 0; i < values.size(); ++i) differ += out[i] != qs::gui::MapValue(lut, norm, values[i]);
        CAPTURE(norm.center);
        CHECK(differ == 0);
    }
}

TEST_CASE("colour mapping: a denormal range spans the whole table and NaN is its middle") {
    const qs::gui::ColorLut& lut = qs::gui::GetColormapLut(qs::gui::Colormap::Viridis);
    const float tiny = 1e-40f;  // a float denormal: 255 / tiny overflows float
    const qs::gui::ColorNorm norm = qs::gui::ColorNorm::Linear(0.0, tiny);
    const float values[] = {0.0f, tiny / 2.0f, tiny, -tiny, 2.0f * tiny, std::numeric_limits<float>::quiet_NaN()};
    std::uint32_t out[6] = {};
    qs::gui::MapValues(lut, norm, values, 6, out);
    CHECK(out[0] == lut[0]);
    CHECK(out[1] == lut[128]);
    CHECK(out[2] == lut[255]);
    CHECK(out[3] == lut[0]);
    CHECK(out[4] == lut[255]);
    CHECK(out[5] == lut[128]);
    // An infinite error range: finite errors are the low end, the infinite one the high end.
    const qs::gui::ColorNorm open = qs::gui::ColorNorm::Linear(0.0, kInf);
    const float errors[] = {0.0f, 1.0f, std::numeric_limits<float>::infinity()};
    qs::gui::MapValues(lut, open, errors, 3, out);
    CHECK(out[0] == lut[0]);
    CHECK(out[1] == lut[0]);
    CHECK(out[2] == lut[255]);
    // The widest finite range keeps its middle.
    CHECK(qs::gui::ColorNorm::Linear(-DBL_MAX, DBL_MAX).to_unit(0.0) == doctest::Approx(0.5));
}

TEST_CASE("tick labels: a tiny or denormal range gets distinct short labels") {
    for (double hi : {1e-40, 3e-45, 2e-7, 1e-12}) {
        CAPTURE(hi);
        int decimals = 0;
        const std::vector<double> ticks = qs::gui::NiceTicks(-hi, hi, 5, &decimals);
        REQUIRE(ticks.size() >= 2);
        std::vector<std::string> labels;
        for (double t : ticks) labels.push_back(qs::gui::TickLabel(t, decimals));
        for (std::size_t i = 0; i < labels.size(); ++i) {
            CAPTURE(labels[i]);
            CHECK(labels[i].size() <= 10);
            for (std::size_t j = 0; j < i; ++j) CHECK(labels[i] != labels[j]);
        }
    }
    // Ordinary ranges keep their fixed-point labels.
    CHECK(qs::gui::TickLabel(0.5, 1) == "0.5");
    CHECK(qs::gui::TickLabel(-0.0001, 4) == "-0.0001");
    CHECK(qs::gui::TickLabel(2e5, 0) == "2e+05");
}

TEST_CASE("cell values: a tiny tensor's values print as numbers and not as 0.00000") {
    char buf[48];
    qs::gui::FormatCell(buf, sizeof buf, 1e-40, qs::gui::CellFormat::Real, qs::gui::kMaxCellDecimals + 1);
    CHECK(std::string(buf) == "1e-40");
    qs::gui::FormatCell(buf, sizeof buf, -2.5e-41, qs::gui::CellFormat::Real, qs::gui::kMaxCellDecimals + 1);
    CHECK(std::string(buf) == "-2.5e-41");
    // The lessons' ".2f" stays.
    qs::gui::FormatCell(buf, sizeof buf, 191.6, qs::gui::CellFormat::Real, 2);
    CHECK(std::string(buf) == "191.60");
    qs::gui::FormatCell(buf, sizeof buf, -0.001, qs::gui::CellFormat::Real, 2);
    CHECK(std::string(buf) == "0.00");
}

TEST_CASE("cut tables: a table its window shows in part is counted and named but one shown whole or not at all is not") {
    // The layer lab's metrics table was cut at a scrolling child's bottom edge (the first screen showed half of
    // its rows) and --layout-report said nothing: its columns fit and the child could scroll.
    qs::gui_test::PanelWindow w(600, 300);
    int cut = -1;
    std::vector<std::string> names;
    const auto frame = [&](float above) {
        w.frame([&] {
            ImGui::BeginChild("##box", ImVec2(400, 200), true);
            ImGui::Dummy(ImVec2(10, above));
            if (ImGui::BeginTable("numbers", 2, ImGuiTableFlags_Borders)) {
                ImGui::TableSetupColumn("what");
                ImGui::TableSetupColumn("value");
                ImGui::TableHeadersRow();
                for (int r = 0; r < 4; ++r) {
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    ImGui::Text("row %d", r);
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted("1.5");
                }
                ImGui::EndTable();
            }
            ImGui::EndChild();
        });
        w.r.run([&] {  // after the frame, as --layout-report asks
            names.clear();
            cut = qs::gui::CountCutTables(&names);
        });
    };
    for (int i = 0; i < 3; ++i) frame(10.0f);
    CHECK(cut == 0);
    CHECK(names.empty());
    for (int i = 0; i < 3; ++i) frame(140.0f);  // its last rows under the child's bottom edge
    CHECK(cut == 1);
    REQUIRE(names.size() == 1);
    CHECK(names[0].find("##box") != std::string::npos);
    CHECK(names[0].find("/ table 'what'") != std::string::npos);
    for (int i = 0; i < 3; ++i) frame(400.0f);  // wholly below the edge: scrolling shows it, nothing is cut
    CHECK(cut == 0);
}

TEST_CASE("clipped table cells: a column narrower than its text is counted and named and one that fits is not") {
    qs::gui_test::PanelWindow w(600, 300);
    int clipped = -1;
    std::vector<std::string> names;
    const auto table = [&](float width, const char* text) {
        w.frame([&] {
            if (ImGui::BeginTable("cells", 2, ImGuiTableFlags_Borders)) {
                ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthFixed, width);
                ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(text);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted("1.57297");
                ImGui::EndTable();
            }
        });
        w.r.run([&] {  // after the frame, as --layout-report asks
            names.clear();
            clipped = qs::gui::CountClippedTableColumns(&names);
        });
    };
    for (int i = 0; i < 3; ++i) table(40.0f, "a label far wider than forty pixels");
    CHECK(clipped == 1);
    REQUIRE(names.size() == 1);
    CHECK(names[0] == "panel / name");
    for (int i = 0; i < 3; ++i) table(400.0f, "a label far wider than forty pixels");
    CHECK(clipped == 0);
    CHECK(names.empty());
}

TEST_CASE("same line or wrap: a row that ends near the window's edge wraps without reaching past it") {
    // GPTQ's step controls in the slide's layer lab at font scale 2: "Next >" ended its row within an item
    // spacing of the edge, SameLine moved past it and NewLine counted that as content, so --layout-report
    // called the window overflowing. A child 300 px wide; a button ending 4 px short of its content edge.
    qs::gui_test::PanelWindow w(600, 300);
    int overflowing = -1;
    std::vector<std::string> names;
    bool wrapped = false;
    for (int i = 0; i < 3; ++i) {
        w.frame([&] {
            ImGui::BeginChild("##row", ImVec2(300, 200), false, ImGuiWindowFlags_NoScrollbar);
            const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
            ImGui::Button("a", ImVec2(right - ImGui::GetCursorScreenPos().x - 4.0f, 0.0f));
            const float y = ImGui::GetCursorScreenPos().y;
            qs::gui::SameLineOrWrap(50.0f);
            wrapped = ImGui::GetCursorScreenPos().y >= y - 0.5f;
            ImGui::Button("b", ImVec2(50.0f, 0.0f));
            ImGui::EndChild();
        });
        w.r.run([&] {
            names.clear();
            overflowing = qs::gui::CountOverflowingWindows(&names);
        });
    }
    CHECK(wrapped);
    CHECK(overflowing == 0);
    CHECK(names.empty());
}
