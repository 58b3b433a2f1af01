#include "quantscope/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/pitfalls.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

std::int64_t element_count(const CheckpointShape& shape) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;  // the header check bounds the product by the file size
    return n;
}

void quantize_row(const TensorView& view, const SweepSettings& settings, SweepRow& row) {
    const QuantConfig config = settings.configure ? settings.configure(view, settings.config) : settings.config;
    const Quantization q = quantize_checked(view, config);
    const Metrics& m = q.metrics;
    const double n = static_cast<double>(row.elements);
    row.min = q.range.min;
    row.max = q.range.max;
    row.mean = m.sum / n;
    // One pass: the variance from the sums the quantize pass already makes (in double), never below 0.
    row.std = std::sqrt(std::max(0.0, m.signal_energy / n - row.mean * row.mean));
    if (row.std > 0) row.max_over_std = std::max(std::fabs(row.min), std::fabs(row.max)) / row.std;
    row.metrics = m;
    row.bits_per_weight = sweep_bits_per_weight(config, static_cast<std::size_t>(q.params.block_count), row.elements);
    if (config.overflow == Overflow::Wrap) row.warning = wrap_warning(view, q.params, config);
}

void add_to_total(const SweepRow& row, SweepTotal& total, double& error_energy, double& signal_energy) {
    if (!row.error.empty()) {
        ++total.error_rows;
        return;
    }
    ++total.tensors;
    total.elements += row.elements;
    total.bytes_in += row.bytes;
    total.bytes_quantized +=
        static_cast<std::uint64_t>(std::ceil(row.bits_per_weight * static_cast<double>(row.elements) / 8.0));
    error_energy += row.metrics.error_energy;
    signal_energy += row.metrics.signal_energy;
}

}  // namespace

double sweep_bits_per_weight(const QuantConfig& config, std::size_t blocks, std::int64_t elements) {
    // The one rule quantize and formats print (FORMATS.md): a float32 s per block and a float32 z where one is
    // stored, so a row here never disagrees with `quantize --tensor NAME` on the same options.
    return quantization_cost(config, elements, static_cast<std::int64_t>(blocks)).bits_per_weight;
}

std::vector<const CheckpointTensor*> sweep_tensors(const Checkpoint& checkpoint, const SweepSettings& settings) {
    std::vector<const CheckpointTensor*> kept;
    for (const CheckpointTensor& t : checkpoint.tensors)
        if (t.readable && element_count(t.shape) >= 2 && (!settings.keep || settings.keep(std::string(t.name))))
            kept.push_back(&t);
    return kept;
}

SweepTotal sweep_checkpoint(const Checkpoint& checkpoint, const SweepSettings& settings,
                            const std::function<void(const SweepRow&)>& on_row, const SweepProgress& progress,
                            const std::atomic<bool>* cancel) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<const CheckpointTensor*> tensors = sweep_tensors(checkpoint, settings);
    std::uint64_t bytes_total = 0, bytes_done = 0;
    for (const CheckpointTensor* t : tensors) bytes_total += t->end - t->begin;

    SweepTotal total;
    double error_energy = 0, signal_energy = 0;
    std::size_t next = 0;
    while (next < tensors.size() && !(cancel && cancel->load())) {
        // The tensors come shard by shard: this shard is mapped while its tensors are swept, then released.
        const std::size_t shard = tensors[next]->shard;
        const CheckpointShard file(checkpoint, shard);
        std::size_t released = 0;  // the bytes before this (a page boundary) are given back
        const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        for (; next < tensors.size() && tensors[next]->shard == shard && !(cancel && cancel->load()); ++next) {
            const CheckpointTensor& t = *tensors[next];
            SweepRow row;
            row.name = t.name;
            row.shape = t.shape;
            row.dtype = t.dtype;
            row.elements = element_count(t.shape);
            row.bytes = t.end - t.begin;
            try {
                Tensor decoded;  // a quantized GGUF tensor's values; empty for a stored float type
                const TensorView view = file.view(t, decoded);
                file.file().will_read(file.data_offset() + t.begin, row.bytes);
                quantize_row(view, settings, row);
            } catch (const Error& e) {
                row.error = e.what();
            }
            // Its pages leave this process's memory (they stay in the page cache): resident memory follows one
            // tensor, not the shard. The tensors come by data offset, so every byte before this one's end is done
            // with, the header's too: tensors smaller than a page (a million of 128 bytes) shared their pages with
            // the next one and none was ever given back (the whole file stayed resident).
            const std::size_t end = file.data_offset() + static_cast<std::size_t>(t.end);
            if (end > released) {
                file.file().done_reading(released, end - released);
                released = end / page * page;
            }
            add_to_total(row, total, error_energy, signal_energy);
            if (on_row) on_row(row);
            bytes_done += row.bytes;
            if (progress) progress(bytes_done, bytes_total);
        }
    }
    total.cancelled = next < tensors.size();
    if (total.elements > 0) total.mse = error_energy / static_cast<double>(total.elements);
    if (error_energy > 0 && signal_energy > 0) total.sqnr_db = 10.0 * std::log10(signal_energy / error_energy);
    total.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (total.seconds > 0) total.gb_per_s = static_cast<double>(total.bytes_in) / total.seconds / 1e9;
    return total;
}

// Numbers as the JSON prints them (they round-trip), null as an empty field.
std::string sweep_csv_line(const SweepRow& row) {
    const auto field = csv_field;
    std::string line = field(csv_name(row.name)) + "," + shape_to_string(row.shape) + "," + row.dtype + "," + std::to_string(row.elements);
    const bool ok = row.error.empty();
    const auto number = [&](std::optional<double> value) {
        line += ",";
        const std::string text = ok && value ? format_json_number(*value) : "null";
        if (text != "null") line += text;
    };
    const Metrics& m = row.metrics;
    for (const std::optional<double> v : {std::optional<double>(row.min), std::optional<double>(row.max),
                                          std::optional<double>(row.mean), std::optional<double>(row.std), row.max_over_std,
                                          std::optional<double>(m.mse), std::optional<double>(m.rmse),
                                          std::optional<double>(m.mae), std::optional<double>(m.max_abs_error), m.sqnr_db})
        number(v);
    line += "," + (ok ? std::to_string(m.clipped) : std::string());
    number(row.bits_per_weight);
    line += "," + (ok ? std::string() : field(row.error));
    return line;
}

std::string sweep_csv_header() {
    return "name,shape,dtype,elements,min,max,mean,std,max_over_std,mse,rmse,mae,max_abs_error,sqnr_db,clipped,"
           "bits_per_weight,error";
}

}  // namespace qs
