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
};

// The configurations of the table, in FORMATS.md order (element formats per tensor in their default mode);
// those that cannot apply to `shape` (a block or group size not dividing the last axis) are left out.
std::vector<QuantConfig> format_table_configs(const Shape& shape);

// Quantizes `view` with each of them (metrics only) and returns the rows sorted by bits per weight (ties
// in table order). `keep_going` (if given) is asked between rows; false stops with the rows so far.
std::vector<FormatRow> format_table(const TensorView& view, const std::function<bool()>& keep_going = {});

}  // namespace qs
