#include "quantscope/format_table.hpp"

#include <algorithm>

#include "quantscope/error.hpp"
#include "quantscope/format_quantize.hpp"

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

std::vector<FormatRow> format_table(const TensorView& view, const std::function<bool()>& keep_going) {
    std::vector<FormatRow> rows;
    for (const QuantConfig& c : format_table_configs(view.shape)) {
        if (keep_going && !keep_going()) break;
        const Quantization q = quantize_checked(view, c);
        FormatRow row;
        row.config = c;
        row.format = dtype_name(c);
        const bool block = c.format != FormatId::Int && format_info(c.format).kind == FormatKind::Block;
        row.granularity = block ? "block" : to_string(c.granularity);
        if (block) row.group_size = format_info(c.format).block_size;
        if (c.granularity == Granularity::Group) row.group_size = c.group_size;
        const FormatCost cost = quantization_cost(c, view.numel(), q.params.block_count);
        row.bits_per_weight = cost.bits_per_weight;
        row.bytes = cost.bytes;
        row.metrics = q.metrics;
        rows.push_back(std::move(row));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const FormatRow& a, const FormatRow& b) { return a.bits_per_weight < b.bits_per_weight; });
    return rows;
}

}  // namespace qs
