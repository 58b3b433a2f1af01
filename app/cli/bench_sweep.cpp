// `quantscope bench`'s sweep rows (issue 10, item 3): `quantscope sweep` of a sharded checkpoint the bench
// writes itself, as a whole process against `cp` of the same shards in the same run. A sweep is meant to be
// limited by reading the checkpoint, so it is reported as GB/s and as a ratio to the copy.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cli/bench_file.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/random.hpp"

namespace qs::cli {
namespace {

struct SyntheticTensor {
    std::string name, dtype;
    Shape shape;
};

// Two layers of a model, as bf16 and float32 (what real checkpoints store), each in its own shard: the
// bench's tensor shape in bf16, the same with half the rows in float32, and a norm vector.
std::vector<std::vector<SyntheticTensor>> synthetic_shards(const Shape& shape) {
    Shape half = shape;
    half[0] = std::max<std::int64_t>(1, half[0] / 2);
    std::vector<std::vector<SyntheticTensor>> shards;
    for (int layer = 0; layer < 2; ++layer) {
        const std::string prefix = "layers." + std::to_string(layer) + ".";
        shards.push_back({{prefix + "mlp.up.weight", "BF16", shape},
                          {prefix + "mlp.down.weight", "F32", half},
                          {prefix + "norm.weight", "F32", {shape.back()}}});
    }
    return shards;
}

std::string encode(const Tensor& t, const std::string& dtype) {
    std::string bytes;
    if (dtype == "F32") {
        bytes.resize(t.values.size() * 4);
        std::memcpy(bytes.data(), t.values.data(), bytes.size());
        return bytes;
    }
    bytes.resize(t.values.size() * 2);  // bf16: the top half of each float32 (truncated: fine for a benchmark)
    for (std::size_t i = 0; i < t.values.size(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &t.values[i], 4);
        const auto top = static_cast<std::uint16_t>(bits >> 16);
        std::memcpy(&bytes[2 * i], &top, 2);
    }
    return bytes;
}

std::size_t item_size(const std::string& dtype) { return dtype == "F32" ? 4 : 2; }

// Writes one shard, a tensor at a time; returns its size in bytes.
std::uint64_t write_shard(const std::string& path, const std::vector<SyntheticTensor>& tensors, std::uint64_t seed) {
    std::string header = "{";
    std::uint64_t offset = 0;
    for (const SyntheticTensor& t : tensors) {
        std::uint64_t bytes = item_size(t.dtype);
        for (const std::int64_t d : t.shape) bytes *= static_cast<std::uint64_t>(d);
        header += std::string(header.size() > 1 ? "," : "") + "\"" + t.name + "\":{\"dtype\":\"" + t.dtype +
                  "\",\"shape\":" + shape_to_json(t.shape) + ",\"data_offsets\":[" + std::to_string(offset) + "," +
                  std::to_string(offset + bytes) + "]}";
        offset += bytes;
    }
    header += "}";
    std::string length(8, '\0');
    for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    AtomicFileWriter out(path);
    out.write(length + header);
    for (const SyntheticTensor& t : tensors) {
        RandomSpec spec;
        spec.shape = t.shape;
        spec.seed = seed++;
        spec.std = 0.02;
        spec.pin_range = 8;
        out.write(encode(generate_random(spec), t.dtype));
    }
    out.commit();
    return 8 + header.size() + offset;
}

}  // namespace

SweepFigures measure_sweep_rows(const Shape& shape, int rounds) {
    const ScratchFolder folder;
    SweepFigures f;
    f.rounds = rounds;
    std::uint64_t bytes = 0;
    std::string index = "{\"weight_map\": {";
    std::vector<std::string> shard_paths;
    const auto shards = synthetic_shards(shape);
    for (std::size_t s = 0; s < shards.size(); ++s) {
        const std::string name = "model-0000" + std::to_string(s + 1) + ".safetensors";
        shard_paths.push_back((folder.path / name).string());
        bytes += write_shard(shard_paths.back(), shards[s], 100 * s);
        for (const SyntheticTensor& t : shards[s]) {
            index += std::string(f.tensors ? ", " : "") + "\"" + t.name + "\": \"" + name + "\"";
            ++f.tensors;
        }
    }
    const std::string index_path = folder / "model.safetensors.index.json";
    AtomicFileWriter index_file(index_path);
    index_file.write(index + "}}\n");
    index_file.commit();
    f.checkpoint_mib = static_cast<double>(bytes) / (1024.0 * 1024.0);

    std::vector<std::string> copy = {"cp"};
    copy.insert(copy.end(), shard_paths.begin(), shard_paths.end());
    std::filesystem::create_directory(folder.path / "copy");
    copy.push_back(folder / "copy");
    // int4 in groups of 128 (the whole last axis when 128 does not divide it).
    const std::int64_t group = shape.back() % 128 == 0 ? 128 : shape.back();
    f.options = "--dtype int4 --granularity group --group-size " + std::to_string(group);
    const std::vector<std::string> sweep = {own_executable(), "sweep", index_path, "--dtype", "int4",
                                            "--granularity", "group", "--group-size", std::to_string(group)};
    run_process(copy), run_process(sweep);  // warm the page cache
    std::vector<double> cp_ms, sweep_ms, ratio, peak;
    for (int round = 0; round < rounds; ++round) {
        const ProcessRun c = run_process(copy), w = run_process(sweep);
        cp_ms.push_back(c.wall_ms);
        sweep_ms.push_back(w.wall_ms);
        ratio.push_back(w.wall_ms / c.wall_ms);
        peak.push_back(w.peak_mib);
    }
    f.cp_ms = median(cp_ms);
    f.sweep_ms = median(sweep_ms);
    f.sweep_gb_per_s = static_cast<double>(bytes) / (f.sweep_ms * 1e-3) / 1e9;
    f.sweep_ratio = median(ratio);
    f.sweep_peak_mib = median(peak);
    return f;
}

void add_sweep_rows(JsonObject& json, const SweepFigures& f) {
    json.number("sweep_checkpoint_mib", f.checkpoint_mib)
        .integer("sweep_tensors", f.tensors)
        .string("sweep_options", f.options)
        .number("cp_checkpoint_ms", f.cp_ms)
        .number("sweep_ms", f.sweep_ms)
        .number("sweep_gb_per_s", f.sweep_gb_per_s)
        .number("sweep_ratio_to_cp", f.sweep_ratio)
        .number("sweep_peak_mib", f.sweep_peak_mib);
}

}  // namespace qs::cli
