// The table behind `quantscope formats` and the window's Formats tab: its rows one at a time, and the
// Pareto front of bits per weight against SQNR that the tab's chart draws.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/random.hpp"

using namespace qs;

namespace {

FormatRow Row(double bits, std::optional<double> sqnr, double mse = 1.0) {
    FormatRow r;
    r.bits_per_weight = bits;
    r.metrics.sqnr_db = sqnr;
    r.metrics.mse = mse;
    return r;
}

}  // namespace

TEST_CASE("pareto front: the rows no other row beats in both fewer bits and higher SQNR") {
    const std::vector<FormatRow> rows = {
        Row(8.25, 40.0),  // 0: beaten by 3 (fewer bits, higher SQNR)
        Row(4.0, 10.0),   // 1: the cheapest
        Row(5.0, 15.0),   // 2: beaten by 4 (fewer bits, higher SQNR)
        Row(8.0, 41.0),   // 3
        Row(4.5, 20.0),   // 4
        Row(4.5, 18.0),   // 5: the same bits as 4, lower SQNR
        Row(16.0, 41.0),  // 6: as good as 3 for twice the bits
        Row(32.0, std::nullopt, 0.0),  // 7: lossless (no error): beats everything
        Row(4.0, 10.0),   // 8: equal to 1 in both: on the front too
    };
    CHECK(pareto_front(rows) == std::vector<std::size_t>{1, 8, 4, 3, 7});
    CHECK(comparable_sqnr_db(rows[7]) == std::numeric_limits<double>::infinity());
    // An error on an all-zero tensor has no SQNR: the worst possible, on the front only where it is cheapest.
    const std::vector<FormatRow> zero = {Row(4.0, std::nullopt, 2.0), Row(8.0, std::nullopt, 1.0), Row(3.0, std::nullopt, 3.0)};
    CHECK(comparable_sqnr_db(zero[0]) == -std::numeric_limits<double>::infinity());
    CHECK(pareto_front(zero) == std::vector<std::size_t>{2});
    CHECK(pareto_front({}).empty());
    // Why a row is off the front: the cheapest front row that costs no more and loses no more.
    const std::vector<std::size_t> front = pareto_front(rows);
    CHECK(pareto_dominator(rows, front, 0) == std::optional<std::size_t>{3});
    CHECK(pareto_dominator(rows, front, 2) == std::optional<std::size_t>{4});
    CHECK(pareto_dominator(rows, front, 5) == std::optional<std::size_t>{4});
    CHECK(pareto_dominator(rows, front, 6) == std::optional<std::size_t>{3});
    CHECK_FALSE(pareto_dominator(rows, front, 3).has_value());
    CHECK_FALSE(pareto_dominator(rows, front, 8).has_value());
}

TEST_CASE("pareto front: on a real table it rises with the bits and every other row is beaten by a front row") {
    RandomSpec spec;
    spec.shape = {8, 256};
    spec.outliers = 3;
    const Tensor t = generate_random(spec);
    const std::vector<FormatRow> rows = format_table(view_of(t));
    REQUIRE(rows.size() == 36);  // 28 formats and int8 / int4 in four layouts
    const std::vector<std::size_t> front = pareto_front(rows);
    REQUIRE(front.size() >= 2);
    CHECK(front.size() < rows.size());
    for (std::size_t k = 1; k < front.size(); ++k) {
        CHECK(rows[front[k]].bits_per_weight > rows[front[k - 1]].bits_per_weight);
        CHECK(comparable_sqnr_db(rows[front[k]]) > comparable_sqnr_db(rows[front[k - 1]]));
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        bool on_front = false, beaten = false;
        for (std::size_t f : front) {
            on_front = on_front || f == i;
            beaten = beaten || (rows[f].bits_per_weight <= rows[i].bits_per_weight &&
                                comparable_sqnr_db(rows[f]) >= comparable_sqnr_db(rows[i]));
        }
        CHECK((on_front || beaten));
    }
}

TEST_CASE("format table: one row at a time gives the rows of the whole table") {
    RandomSpec spec;
    spec.shape = {4, 128};
    const Tensor t = generate_random(spec);
    const std::vector<FormatRow> whole = format_table(view_of(t));
    // Each row on its own, and the rows sharing the values' amax as the window computes them.
    std::vector<FormatRow> by_row, shared;
    std::optional<float> amax;
    for (const QuantConfig& c : format_table_configs(t.shape)) {
        by_row.push_back(format_table_row(view_of(t), c));
        shared.push_back(format_table_row(view_of(t), c, amax));
    }
    CHECK(amax.has_value());
    sort_by_bits(by_row);
    sort_by_bits(shared);
    REQUIRE(by_row.size() == whole.size());
    REQUIRE(shared.size() == whole.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
        CHECK(by_row[i].format == whole[i].format);
        CHECK(by_row[i].config == whole[i].config);
        CHECK(by_row[i].metrics.mse == whole[i].metrics.mse);
        CHECK(by_row[i].metrics.max_abs_error == whole[i].metrics.max_abs_error);
        CHECK(by_row[i].bytes == whole[i].bytes);
        CHECK(shared[i].config == whole[i].config);
        CHECK(shared[i].metrics.mse == whole[i].metrics.mse);
        CHECK(shared[i].metrics.sqnr_db == whole[i].metrics.sqnr_db);
    }
    // Stopping between rows keeps the rows so far.
    int asked = 0;
    CHECK(format_table(view_of(t), [&] { return ++asked <= 3; }).size() == 3);
}

// Finite values near float32's limits: a quantization whose r' overflows (int4: s (q - z) past 3.4e38) is that
// row's error, as sweep gives a tensor's row one; the other rows compute (the whole table used to be refused).
TEST_CASE("format table: a row whose r' overflows float32 carries the error and the others compute") {
    Tensor t;
    t.shape = {4, 64};
    t.values.assign(256, 1.0f);
    for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = static_cast<float>(i % 17) - 8.0f;
    t.values[0] = 3.4e38f;
    t.values[1] = -3.4e38f;
    const std::vector<FormatRow> rows = format_table(view_of(t));
    REQUIRE(rows.size() == format_table_configs(t.shape).size());
    std::size_t overflowed = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const FormatRow& r = rows[i];
        CAPTURE(r.format);
        CHECK(r.bits_per_weight > 0);
        if (r.error.empty()) {
            CHECK(std::isfinite(r.metrics.max_abs_error));
            continue;
        }
        ++overflowed;
        CHECK(r.error.find("float32 overflow at index") == 0);
        CHECK(std::isinf(r.metrics.mse));
        CHECK(!r.metrics.sqnr_db);
        const std::vector<std::size_t> front = pareto_front(rows);
        CHECK(std::find(front.begin(), front.end(), i) == front.end());
    }
    CHECK(overflowed >= 1);
    CHECK(overflowed < rows.size());
    // A value that is not finite is still the table's error: no rows.
    t.values[5] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_AS(format_table(view_of(t)), Error);
}
