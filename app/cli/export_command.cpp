// `quantscope export CHECKPOINT --tensor NAME --out X.npy [--codes Q.npy]`: one tensor's values as float32 (a
// ggml type's to_float for a quantized GGUF tensor), and a ggml tensor's stored codes. Streamed: a tile of whole
// blocks (GGUF) or a chunk (safetensors) at a time, never the whole tensor decoded, so memory stays small
// whatever the tensor's size.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/text.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {

const char* const kExportHelp =
    "usage: quantscope export CHECKPOINT --tensor NAME --out X.npy [--codes Q.npy]\n"
    "\n"
    "Writes one tensor of a .gguf file, a .safetensors file or a sharded checkpoint's\n"
    "*.safetensors.index.json as float32 (.npy or .csv): a quantized GGUF tensor as its type's to_float\n"
    "gives it (ggml's dequantized values). --tensor may be left out when the file holds one tensor.\n"
    "  --codes Q.npy   a quantized GGUF tensor's stored codes, as quantize --out-quantized writes them\n"
    "                  for that type (int8; uint8 where every code is >= 0)\n"
    "Rank 4 is written folded to 3-D as quantize reads it. Both files appear together or not at all.\n";

namespace {

constexpr std::int64_t kChunk = 1 << 20;  // values per piece of a streamed stored-float tensor
constexpr std::int64_t kTile = 1 << 16;   // values per piece of a streamed GGUF tensor (whole blocks)

// FORMATS.md "llama.cpp (ggml) types": the types whose codes can be negative are written as int8.
NpyDtype codes_dtype(GgmlType type) {
    switch (type) {
        case GgmlType::Q8_0: case GgmlType::Q3_K: case GgmlType::Q6_K: case GgmlType::TQ1_0: case GgmlType::TQ2_0:
            return NpyDtype::I1;
        default: return NpyDtype::U1;
    }
}

bool is_stored_float(GgmlType type) {
    return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::F64;
}

// An F64 value beyond float32's range would be written as inf, another value than the file holds: refused as
// quantize refuses it (a stored inf or NaN is written as it is). `values` are elements [first, first + count).
void check_f64_range(const TensorView& view, const float* values, std::int64_t first, std::int64_t count) {
    if (view.type != ElementType::F64) return;
    for (std::int64_t k = 0; k < count; ++k) {
        if (!std::isinf(values[k])) continue;
        double stored = 0;
        view.guarded([&] { stored = load_le_double(view.data + static_cast<std::size_t>(first + k) * 8); });
        if (std::isfinite(stored)) throw_nonfinite(view, first + k);
    }
}

void export_gguf(const std::string& path, const std::string& name, AtomicFileWriter& values, AtomicFileWriter* codes) {
    const GgufFile file(path);
    std::string chosen = name;
    if (chosen.empty()) {
        if (file.list().size() != 1)
            throw Error(printable(path) + ": the file holds " + std::to_string(file.list().size()) + " tensors (" +
                        file.names_for_message() + "); choose one with --tensor NAME");
        chosen = std::string(file.list().front().name);
    }
    const Shape shape = file.view_shape(chosen);  // every check of opening it, shape folded as quantize does
    const GgufTensor& t = *file.find(chosen);
    // An F64 tensor's stored values (a view of the mapping, nothing decoded) for check_f64_range.
    Tensor unused;
    const TensorView stored_f64 = t.type->type == GgmlType::F64 ? file.view(chosen, unused) : TensorView{};
    if (codes != nullptr && is_stored_float(t.type->type))
        throw Error(printable(path) + ": tensor " + quoted_text(t.name) + " is " + gguf_type_label(t) +
                    ", which stores values, not codes: --codes needs a quantized tensor");
    TensorWriter value_writer(values, shape, NpyDtype::F4);
    std::unique_ptr<TensorWriter> code_writer;
    if (codes != nullptr) code_writer = std::make_unique<TensorWriter>(*codes, shape, codes_dtype(t.type->type));
    // A tile of whole blocks at a time (a row may be longer than memory allows), decoded straight into the
    // writer's stream; its pages leave this process's memory once written (they stay in the page cache).
    const std::int64_t n = t.elements, block = t.type->block_size;
    const std::int64_t tile = std::min(n, kTile / block * block);
    std::vector<float> decoded(static_cast<std::size_t>(tile));
    std::vector<std::int32_t> tile_codes(codes != nullptr ? static_cast<std::size_t>(tile) : 0);
    const std::size_t start = file.data_offset() + static_cast<std::size_t>(t.offset);
    file.file().will_read(start, static_cast<std::size_t>(t.bytes));
    for (std::int64_t first = 0; first < n; first += tile) {
        const std::int64_t count = std::min(tile, n - first);  // rows are whole blocks: so is every tile
        const std::size_t at = static_cast<std::size_t>(ggml_row_bytes(*t.type, first));
        const std::uint8_t* bytes = file.bytes_of(t) + at;
        file.file().read_guarded([&] {
            ggml_dequantize(*t.type, bytes, count, decoded.data());
            if (codes != nullptr) {
                GgmlBlockFields fields;
                for (std::int64_t b = 0; b < count / block; ++b) {
                    ggml_block_fields(*t.type, bytes + b * t.type->type_size, fields);
                    std::copy(fields.codes, fields.codes + block, tile_codes.data() + b * block);
                }
            }
            return 0;
        });
        if (t.type->type == GgmlType::F64) check_f64_range(stored_f64, decoded.data(), first, count);
        value_writer.append(decoded.data(), count);
        if (code_writer) code_writer->append(tile_codes.data(), count);
        file.file().done_reading(start + at, static_cast<std::size_t>(ggml_row_bytes(*t.type, count)));
    }
    value_writer.finish();
    if (code_writer) code_writer->finish();
}

void export_safetensors(const std::string& path, const std::string& name, AtomicFileWriter& values) {
    const Checkpoint checkpoint = open_checkpoint(path);  // an index: every shard's header checked against it
    std::string chosen = name;
    if (chosen.empty()) {
        if (checkpoint.tensors.size() != 1)
            throw Error(printable(path) + ": the checkpoint holds " + std::to_string(checkpoint.tensors.size()) +
                        " tensors; choose one with --tensor NAME");
        chosen = checkpoint.tensors.front().name;
    }
    const auto found = std::find_if(checkpoint.tensors.begin(), checkpoint.tensors.end(),
                                    [&](const CheckpointTensor& t) { return t.name == chosen; });
    if (found == checkpoint.tensors.end())
        throw Error(printable(path) + ": no tensor named " + quoted_text(chosen));
    const CheckpointShard shard(checkpoint, found->shard);
    Tensor unused;
    const TensorView view = shard.view(*found, unused);
    const std::size_t start = shard.data_offset() + static_cast<std::size_t>(found->begin);
    shard.file().will_read(start, static_cast<std::size_t>(found->end - found->begin));
    TensorWriter writer(values, view.shape, NpyDtype::F4);
    std::vector<float> scratch(static_cast<std::size_t>(std::min(kChunk, view.numel())));
    const std::size_t size = element_size(view.type);
    for (std::int64_t first = 0; first < view.numel(); first += kChunk) {
        const std::int64_t count = std::min(kChunk, view.numel() - first);
        view.guarded([&] {
            const float* values = floats_at(view, first, count, scratch.data());
            check_f64_range(view, values, first, count);
            writer.append(values, count);
        });
        // Written: the chunk's pages leave this process's memory (they stay in the page cache).
        shard.file().done_reading(start + static_cast<std::size_t>(first) * size,
                                  static_cast<std::size_t>(count) * size);
    }
    writer.finish();
}

}  // namespace

int run_export(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kExportHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {{"--tensor", true}, {"--out", true}, {"--codes", true}});
    if (parsed.positionals.size() != 1) throw Error("export needs exactly one CHECKPOINT");
    const std::string& path = parsed.positionals[0];
    const std::string* out = parsed.get("--out");
    if (out == nullptr) throw Error("export needs --out X.npy");
    const std::string* codes = parsed.get("--codes");
    const std::string* tensor = parsed.get("--tensor");
    const bool gguf = lower_extension(path) == ".gguf";
    if (codes != nullptr && !gguf) throw Error(printable(path) + ": --codes applies only to a quantized tensor of a .gguf file");
    std::vector<FileRole> outputs{{"--out", *out}};
    if (codes != nullptr) outputs.push_back({"--codes", *codes});
    check_distinct_files({{"the input", path}}, outputs);

    OutputFiles files;
    AtomicFileWriter& values = files.add(*out);
    AtomicFileWriter* code_file = codes != nullptr ? &files.add(*codes) : nullptr;
    if (gguf)
        export_gguf(path, tensor ? *tensor : "", values, code_file);
    else
        export_safetensors(path, tensor ? *tensor : "", values);
    files.commit();
    return 0;
}

}  // namespace qs::cli
