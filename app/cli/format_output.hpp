// What `quantize` writes for a number format beyond int<N> (FORMATS.md "What the command line and JSON add"):
// the codes' numpy type, the JSON fields of the format and its cost, and --out-packed's bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/quantize.hpp"

namespace qs::cli {

// --out-quantized: int8/uint8 (int16/uint16 above 8 bits) for int<N>; a float element's bit pattern as
// uint8 (uint16 for fp16 / bf16); the NF4 index and Q4_0 / Q4_1 codes as uint8; Q8_0 as int8.
NpyDtype code_npy_dtype(const QuantConfig& config);
// The bits one code packs into (int<N>: N; a format: its element's bits).
int code_bits(const QuantConfig& config);

// A JSON array of every value, or, above 4096 values without `all`, a summary {"count", "min", "max"}: what
// `quantize` and `layer` print for per-block scales (8192 x 8192 in groups of 1 would print 2 GB of numbers).
std::string listed_json(const std::vector<double>& values, bool all);
std::string listed_json(const std::vector<float>& values, bool all);
// Every (s, z) of int<N> params in block order, stored or computed on demand (then computed here, once each).
void for_each_pair(const QuantParams& params, const std::function<void(double, std::int32_t)>& visit);
// The same for the s and z of int<N> params, stored or computed on demand.
void params_json(const QuantParams& params, bool all, std::string& scales, std::string& zero_points);

// The JSON fields from "dtype" to "zero_point" for any config (formats: q_min / q_max null, mode and
// granularity "block" for a block format with its block_size, scale as used, zero_point [] or Q4_1's m).
// `all_params`: list every block even beyond 4096.
void describe_quantization(JsonObject& json, const QuantConfig& config, const Quantization& q, bool all_params);
// SPEC's metrics, in SPEC's order: mse, rmse, mae, max_abs_error, l2_error, sqnr_db, clipped, levels_used.
void describe_metrics(JsonObject& json, const Metrics& m);
// A ggml type with sub-blocks (the k-quants, iq4_xs): `sub_scales`, every block's sub-block scales as
// stored, block after block, and `sub_mins` where mins are stored (q2_k, q4_k, q5_k). Nothing otherwise.
// Reads the blocks `params` kept, or quantizes the values again (ggml_block_bytes): --all-params only.
void describe_sub_blocks(JsonObject& json, const TensorView& values, const QuantConfig& config,
                         const FormatParams& params);
// format_kind, bits_per_weight and bytes (after the metrics).
void describe_cost(JsonObject& json, const QuantConfig& config, const Quantization& q, std::int64_t n);

// --out-packed FILE.bin (README "Packed codes"): the codes end to end at code_bits each, the first in the
// lowest bits of the first byte, then the stored scales, all little-endian, no header. Its size is the
// JSON's `bytes`.
// The bytes go to `out` as they are made (a file, or the Python module's bytes).
class PackedWriter {
public:
    using ByteSink = std::function<void(const std::uint8_t* bytes, std::size_t size)>;
    PackedWriter(ByteSink out, int bits) : out_(std::move(out)), bits_(bits) {}
    void append(const std::int32_t* codes, std::int64_t count);  // in flat order
    void finish(const QuantConfig& config, const Quantization& q);

private:
    ByteSink out_;
    int bits_;
    std::uint64_t pending_ = 0;  // bits not yet written, lowest first
    int pending_bits_ = 0;
    std::vector<std::uint8_t> buffer_;
};

}  // namespace qs::cli
