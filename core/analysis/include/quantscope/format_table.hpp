// Every format of FORMATS.md and int8 / int4 (per tensor, per channel on axis 0, groups of 32 and 128) on one
// tensor: bits per weight, bytes and error, sorted by bits per weight. The table behind `quantscope formats`
// and the window's cost-versus-error chart.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

struct FormatRow {
    QuantConfig config;                      // what to quantize with to get this row again
    std::string format;                      // "fp8-e4m3", "int8"
    std::string granularity;                 // "tensor", "channel", "group", "block"
    std::optional<std::int64_t> group_size;  // groups and block formats; empty otherwise
    double bits_per_weight = 0;
    std::int64_t bytes = 0;
    Metrics metrics;
    // Set when this quantization overflows float32 (quantize's line, Float32Overflow): the row stays, with
    // mse and max_abs_error infinite (as the window shows them) and no SQNR, off the Pareto front.
    std::string error;
};

// The configurations of the table, in FORMATS.md order (element formats per tensor in their default mode);
// those that cannot apply to `shape` (a block or group size not dividing the last axis) are left out.
std::vector<QuantConfig> format_table_configs(const Shape& shape);

// One row: `view` quantized with `config` (one of format_table_configs; metrics only). The window computes
// the table a row at a time, to show progress and stop between rows.
FormatRow format_table_row(const TensorView& view, const QuantConfig& config);
// The same, as format_table computes its rows: `amax` (empty at first) is set by the first row's checked pass
// to the values' largest magnitude, and lets the later element formats per tensor and block formats skip
// their own statistics pass (one read of the tensor each). The numbers are format_table_row's.
FormatRow format_table_row(const TensorView& view, const QuantConfig& config, std::optional<float>& amax);

// Sorts rows by bits per weight, ties keeping their order (the table's order).
void sort_by_bits(std::vector<FormatRow>& rows);

// Quantizes `view` with each of them (metrics only) and returns the rows sorted by bits per weight (ties
// in table order). `keep_going` (if given) is asked between rows; false stops with the rows so far.
std::vector<FormatRow> format_table(const TensorView& view, const std::function<bool()>& keep_going = {});

// A row's SQNR for comparing rows: comparable_sqnr_db of its metrics (+infinity for a lossless format).
double comparable_sqnr_db(const FormatRow& row);

// The Pareto front of cost against error (rows with an error left out): the indices of the rows that no other row beats, i.e. no other
// row has at most as many bits per weight and at least as high an SQNR (comparable_sqnr_db) with one of the
// two strictly better. Rows equal in both are all on the front. Ordered by bits per weight (equal rows by
// index), so the front reads left to right as a staircase that only rises.
std::vector<std::size_t> pareto_front(const std::vector<FormatRow>& rows);

// Why row `i` is off the front: the first row of `front` (pareto_front's order, cheapest first) that costs
// no more bits per weight and loses no more (SQNR at least as high); none for a row on the front.
std::optional<std::size_t> pareto_dominator(const std::vector<FormatRow>& rows, const std::vector<std::size_t>& front,
                                            std::size_t i);

}  // namespace qs
