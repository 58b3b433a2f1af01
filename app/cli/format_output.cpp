#include "cli/format_output.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <type_traits>

#include "quantscope/format_quantize.hpp"
#include "quantscope/ggml_blocks.hpp"
#include "quantscope/ggml_types.hpp"

namespace qs::cli {
namespace {

// Up to this many blocks the JSON lists every block's s and z; beyond, a summary (count, min, max) unless
// --all-params: 8192 x 8192 with group size 1 would otherwise print 2 GB of numbers.
constexpr std::size_t kListedBlocks = 4096;

template <class T>
std::string summary_json(std::int64_t count, T lo, T hi) {
    JsonObject summary;
    summary.integer("count", count);
    if constexpr (std::is_floating_point_v<T>)
        summary.number("min", lo).number("max", hi);
    else
        summary.integer("min", lo).integer("max", hi);
    return summary.str();
}

template <class T>
std::string listed(const std::vector<T>& values, bool all) {
    if (all || values.size() <= kListedBlocks) return JsonObject::array(values);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    return summary_json(static_cast<std::int64_t>(values.size()), *lo, *hi);
}

void put_le(std::vector<std::uint8_t>& out, std::uint32_t value, int bytes) {
    for (int b = 0; b < bytes; ++b) out.push_back(static_cast<std::uint8_t>(value >> (8 * b)));
}

void put_float(std::vector<std::uint8_t>& out, float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    put_le(out, u, 4);
}

// The stored scales after the codes: int<N> s (float32) per block then z (float32) per block unless
// symmetric; an element format's s (float32) per block, none when cast; MX an E8M0 byte per block; NVFP4
// an E4M3 byte per block then g (float32); Q8_0 / Q4_0 d (fp16) per block; Q4_1 d per block then m per block.
std::vector<std::uint8_t> scale_section(const QuantConfig& config, const Quantization& q) {
    std::vector<std::uint8_t> out;
    const FormatTraits& info = format_traits(config.format);
    if (info.is_int()) {
        for_each_pair(q.params, [&](double s, std::int32_t) { put_float(out, static_cast<float>(s)); });
        if (config.mode != Mode::Symmetric)
            for_each_pair(q.params, [&](double, std::int32_t z) { put_float(out, static_cast<float>(z)); });
        return out;
    }
    const FormatParams& p = q.format_params;
    if (!info.own_blocks()) {
        if (p.scaled && p.on_demand())  // the same scales, computed block by block
            for_each_pair(q.params, [&](double s, std::int32_t) { put_float(out, static_cast<float>(s)); });
        else if (p.scaled)
            for (float s : p.scale) put_float(out, s);
        return out;
    }
    const int stored_bytes = info.scale_bits == 8 ? 1 : 2;
    for (std::uint16_t bits : p.stored) put_le(out, bits, stored_bytes);
    if (info.has_global_scale()) put_float(out, p.global_scale);
    if (info.has_offset)  // fp16, as the scales
        for (float m : p.offset) put_le(out, fp16_bits_saturating(m), 2);
    return out;
}

}  // namespace

std::string listed_json(const std::vector<double>& values, bool all) { return listed(values, all); }

std::string listed_json(const std::vector<float>& values, bool all) {
    return listed(std::vector<double>(values.begin(), values.end()), all);
}

void params_json(const QuantParams& params, bool all, std::string& scales, std::string& zero_points) {
    if (all || params.block_count <= static_cast<std::int64_t>(kListedBlocks)) {
        if (!params.on_demand()) {
            scales = JsonObject::array(params.scale);
            zero_points = JsonObject::array(params.zero_point);
            return;
        }
        std::vector<double> s;
        std::vector<std::int32_t> z;
        for_each_pair(params, [&](double sb, std::int32_t zb) { s.push_back(sb), z.push_back(zb); });
        scales = JsonObject::array(s);
        zero_points = JsonObject::array(z);
        return;
    }
    double s_min, s_max;
    std::int32_t z_min, z_max;
    params.ranges(s_min, s_max, z_min, z_max);
    scales = summary_json(params.block_count, s_min, s_max);
    zero_points = summary_json(params.block_count, z_min, z_max);
}

void for_each_pair(const QuantParams& params, const std::function<void(double, std::int32_t)>& visit) {
    for (std::int64_t b = 0; b < params.block_count; ++b) {
        double s;
        std::int32_t z;
        params.pair(b, s, z);
        visit(s, z);
    }
}

// The smallest npy integer type of the row's codes: int8 / uint8 up to 8 bits, int16 / uint16 beyond.
NpyDtype code_npy_dtype(const QuantConfig& config) {
    const FormatTraits& row = format_traits(config.format);
    const CodeSpace codes = row.code_space(row, config);
    if (codes.bits <= 8) return codes.is_signed ? NpyDtype::I1 : NpyDtype::U1;
    return codes.is_signed ? NpyDtype::I2 : NpyDtype::U2;
}

int code_bits(const QuantConfig& config) {
    const FormatTraits& row = format_traits(config.format);
    return row.code_space(row, config).bits;
}

void describe_quantization(JsonObject& json, const QuantConfig& config, const Quantization& q, bool all_params) {
    json.string("dtype", dtype_name(config));
    const FormatTraits& info = format_traits(config.format);
    if (info.is_int()) {
        std::string scales, zero_points;
        params_json(q.params, all_params, scales, zero_points);
        json.integer("q_min", config.dtype.q_min())
            .integer("q_max", config.dtype.q_max())
            .string("mode", to_string(config.mode))
            .string("granularity", to_string(config.granularity))
            .string("calibration", calibration_label(config))
            .raw("scale", scales)
            .raw("zero_point", zero_points);
        return;
    }
    const FormatParams& p = q.format_params;
    json.raw("q_min", "null").raw("q_max", "null");
    if (info.own_blocks())
        json.string("mode", "block").string("granularity", "block").integer("block_size", info.block_size);
    else
        json.string("mode", to_string(config.mode)).string("granularity", to_string(config.granularity));
    std::string scales = listed_json(p.scale, all_params), unused;
    if (p.on_demand()) params_json(q.params, all_params, scales, unused);
    json.string("calibration", calibration_label(config))
        .raw("scale", scales)
        .raw("zero_point", listed_json(p.offset, all_params));
    if (info.has_global_scale()) json.number("global_scale", p.global_scale);
}

void describe_sub_blocks(JsonObject& json, const TensorView& values, const QuantConfig& config,
                         const FormatParams& params) {
    const FormatTraits& row = format_traits(config.format);
    if (!row.ggml) return;
    const GgmlTypeInfo& type = *row.ggml;
    std::vector<std::int32_t> scales, mins;
    GgmlBlockFields fields;
    ggml_block_bytes(values, config, params, [&](const std::uint8_t* bytes, std::size_t size) {
        for (std::size_t at = 0; at < size; at += static_cast<std::size_t>(type.type_size)) {
            ggml_block_fields(type, bytes + at, fields);
            scales.insert(scales.end(), fields.sub_scale, fields.sub_scale + fields.sub_blocks);
            if (row.has_offset) mins.insert(mins.end(), fields.sub_min, fields.sub_min + fields.sub_blocks);
        }
    });
    if (scales.empty()) return;  // no sub-blocks
    json.raw("sub_scales", JsonObject::array(scales));
    if (!mins.empty()) json.raw("sub_mins", JsonObject::array(mins));
}

void describe_metrics(JsonObject& json, const Metrics& m) {
    json.number("mse", m.mse)
        .number("rmse", m.rmse)
        .number("mae", m.mae)
        .number("max_abs_error", m.max_abs_error)
        .number("l2_error", m.l2_error)
        .number("sqnr_db", m.sqnr_db)
        .integer("clipped", m.clipped)
        .integer("levels_used", m.levels_used);
}

void describe_cost(JsonObject& json, const QuantConfig& config, const Quantization& q, std::int64_t n) {
    const FormatCost cost = quantization_cost(config, n, q.params.block_count);
    json.string("format_kind", to_string(format_traits(config.format).kind))
        .number("bits_per_weight", cost.bits_per_weight)
        .integer("bytes", cost.bytes);
}

void PackedWriter::append(const std::int32_t* codes, std::int64_t count) {
    const std::uint64_t mask = (std::uint64_t{1} << bits_) - 1;
    buffer_.clear();
    for (std::int64_t i = 0; i < count; ++i) {
        pending_ |= (static_cast<std::uint64_t>(static_cast<std::uint32_t>(codes[i])) & mask) << pending_bits_;
        pending_bits_ += bits_;
        while (pending_bits_ >= 8) {
            buffer_.push_back(static_cast<std::uint8_t>(pending_));
            pending_ >>= 8;
            pending_bits_ -= 8;
        }
    }
    out_(buffer_.data(), buffer_.size());
}

void PackedWriter::finish(const QuantConfig& config, const Quantization& q) {
    std::vector<std::uint8_t> tail;
    if (pending_bits_ > 0) tail.push_back(static_cast<std::uint8_t>(pending_));  // the unused high bits are 0
    pending_bits_ = 0;
    const std::vector<std::uint8_t> scales = scale_section(config, q);
    tail.insert(tail.end(), scales.begin(), scales.end());
    out_(tail.data(), tail.size());
}

}  // namespace qs::cli
