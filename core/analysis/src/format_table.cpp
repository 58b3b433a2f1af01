#include "quantscope/format_table.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>

#include "quantscope/error.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/overflow_message.hpp"
#include "quantscope/params.hpp"

namespace qs {

std::vector<QuantConfig> format_table_configs(const Shape& shape) {
    std::vector<QuantConfig> configs;
    const auto add_if_valid = [&](const QuantConfig& c) {
        try {
            check_config(c, shape);
            configs.push_back(c);
        } catch (const Error&) {
            // a block or group that does not divide the last axis: no row
        }
    };
    for (FormatId id : all_formats()) {
        QuantConfig c;
        c.format = id;
        c.mode = Mode::Symmetric;
        add_if_valid(c);
    }
    for (int bits : {8, 4}) {
        QuantConfig c;
        c.dtype.bits = bits;
        add_if_valid(c);
        c.granularity = Granularity::Channel;
        c.axis = 0;
        add_if_valid(c);
        c.granularity = Granularity::Group;
        for (std::int64_t g : {32, 128}) {
            c.group_size = g;
            add_if_valid(c);
        }
    }
    return configs;
}

namespace {

// A row's pass: quantize_checked's metrics and blocks. Once one pass has checked the values and found their
// range (`amax` then set), element formats per tensor and block formats skip their own statistics pass: one
// read of the tensor each.
Quantization row_quantization(const TensorView& view, const QuantConfig& c, std::optional<float>& amax) {
    if (!is_int_format(c.format) && amax) {
        const FormatConfig config = format_config(c);
        FormatParams p;
        if (format_params_from_amax(config, view.shape, *amax, p)) {
            Quantization q;
            q.metrics = quantize_format_view(view, p, config);
            q.params.block_stride = p.block_stride;
            q.params.block_count = p.block_count;
            // A float32 overflow of r' is an error naming the element: quantize_checked's own pass says it.
            if (std::isfinite(q.metrics.max_abs_error)) return q;
        }
    }
    Quantization q = quantize_checked(view, c);
    if (!amax) amax = std::max(std::fabs(q.range.min), std::fabs(q.range.max));
    return q;
}

FormatRow table_row(const TensorView& view, const QuantConfig& c, std::optional<float>& amax) {
    Quantization q;
    std::string overflow;
    try {
        q = row_quantization(view, c, amax);
    } catch (const Float32Overflow& e) {  // the values are fine (a value error would throw anything else)
        overflow = e.what();
        // Its blocks, for the row's cost (the pass that overflowed found them; its parameters again, no pass).
        if (is_int_format(c.format)) set_block_layout(view.shape, c, q.params);
        else q.params.block_count = compute_format_params(view, format_config(c), nullptr, false).block_count;
        q.metrics.mse = q.metrics.max_abs_error = std::numeric_limits<double>::infinity();
    }
    FormatRow row;
    row.error = overflow;
    row.config = c;
    row.format = dtype_name(c);
    const bool block = format_traits(c.format).own_blocks();
    row.granularity = block ? "block" : to_string(c.granularity);
    if (block) row.group_size = format_info(c.format).block_size;
    if (c.granularity == Granularity::Group) row.group_size = c.group_size;
    const FormatCost cost = quantization_cost(c, view.numel(), q.params.block_count);
    row.bits_per_weight = cost.bits_per_weight;
    row.bytes = cost.bytes;
    row.metrics = q.metrics;
    return row;
}

}  // namespace

FormatRow format_table_row(const TensorView& view, const QuantConfig& c) {
    std::optional<float> amax;
    return table_row(view, c, amax);
}

FormatRow format_table_row(const TensorView& view, const QuantConfig& c, std::optional<float>& amax) {
    return table_row(view, c, amax);
}

void sort_by_bits(std::vector<FormatRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const FormatRow& a, const FormatRow& b) { return a.bits_per_weight < b.bits_per_weight; });
}

std::vector<FormatRow> format_table(const TensorView& view, const std::function<bool()>& keep_going) {
    std::vector<FormatRow> rows;
    std::optional<float> amax;  // the values' largest magnitude, from the first row's checked pass
    for (const QuantConfig& c : format_table_configs(view.shape)) {
        if (keep_going && !keep_going()) break;
        rows.push_back(table_row(view, c, amax));
    }
    sort_by_bits(rows);
    return rows;
}

double comparable_sqnr_db(const FormatRow& row) { return comparable_sqnr_db(row.metrics); }

std::vector<std::size_t> pareto_front(const std::vector<FormatRow>& rows) {
    std::vector<std::size_t> order(rows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (rows[a].bits_per_weight != rows[b].bits_per_weight) return rows[a].bits_per_weight < rows[b].bits_per_weight;
        return comparable_sqnr_db(rows[a]) > comparable_sqnr_db(rows[b]);
    });
    // Walking by bits (ties: the best SQNR first), a row is on the front when its SQNR beats every cheaper
    // row's, or equals the best so far at the same bits as the row that set it (an exact tie).
    std::vector<std::size_t> front;
    double best = -std::numeric_limits<double>::infinity();
    for (std::size_t i : order) {
        if (!rows[i].error.empty()) continue;
        const double q = comparable_sqnr_db(rows[i]);
        const bool tie = !front.empty() && q == best && rows[i].bits_per_weight == rows[front.back()].bits_per_weight;
        if (front.empty() || q > best || tie) {
            front.push_back(i);
            best = q;
        }
    }
    return front;
}

std::optional<std::size_t> pareto_dominator(const std::vector<FormatRow>& rows, const std::vector<std::size_t>& front,
                                            std::size_t i) {
    if (std::find(front.begin(), front.end(), i) != front.end()) return std::nullopt;
    const double q = comparable_sqnr_db(rows[i]);
    for (std::size_t f : front)
        if (rows[f].bits_per_weight <= rows[i].bits_per_weight && comparable_sqnr_db(rows[f]) >= q) return f;
    return std::nullopt;
}

}  // namespace qs
