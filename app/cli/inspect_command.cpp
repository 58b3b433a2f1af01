// `quantscope inspect FILE`: what a tensor file holds, without reading the tensor data.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "cli/commands.hpp"
#include "cli/reports.hpp"
#include "quantscope/json_writer.hpp"
#include "cli/options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {

const char* const kInspectHelp =
    "usage: quantscope inspect FILE.safetensors|FILE.gguf [--json]\n"
    "\n"
    "Lists every tensor of a .safetensors file: name, dtype and shape (one per line, or one JSON object\n"
    "with --json). Only the header is read.\n"
    "A .gguf file (llama.cpp; GGUF v2 and v3): its metadata keys and values, then every tensor: name, type,\n"
    "shape as numpy shows it (ggml's ne reversed), offset in the data section, bytes and bits per weight.\n"
    "Long values are shown cut short, in the table and in the JSON alike: a string longer than 200 bytes by\n"
    "its first 200 and its length (\"abc… (104857600 bytes)\"); an array by its count and its first items,\n"
    "at most 8 and about 1 KB of them (\"first_items\" in the JSON). The table also cuts names and values\n"
    "at 256 characters.\n";

// Longer than a message quotes (a listing is the place to read names) but bounded: a header may hold a
// name of megabytes.
constexpr std::size_t kListedNameChars = 256;

namespace {

// A KV's type as listed: "u32", "string", "array[string]" (nested: "array[array]").
std::string kv_type(const GgufKv& kv) {
    return kv.type == GgufValueType::ARRAY ? std::string("array[") + gguf_value_type_name(kv.item_type) + "]"
                                           : gguf_value_type_name(kv.type);
}

std::optional<double> bits_per_weight(const GgufTensor& t) {
    if (t.type == nullptr) return std::nullopt;
    return 8.0 * t.type->type_size / t.type->block_size;
}

std::string gguf_json(const GgufFile& file, const std::string& path) {
    std::string metadata = "[";
    for (std::size_t i = 0; i < file.metadata().size(); ++i) {
        const GgufKv& kv = file.metadata()[i];
        JsonObject m;
        m.string("key", kv.key).string("type", gguf_value_type_name(kv.type));
        if (kv.type == GgufValueType::ARRAY)
            m.string("item_type", gguf_value_type_name(kv.item_type)).integer("count", static_cast<std::int64_t>(kv.count));
        m.raw(kv.type == GgufValueType::ARRAY ? "first_items" : "value", kv.shown);
        metadata += (i ? ", " : "") + m.str();
    }
    std::string tensors = "[";
    for (std::size_t i = 0; i < file.list().size(); ++i) {
        const GgufTensor& t = file.list()[i];
        JsonObject o;
        o.string("name", std::string(t.name)).string("dtype", gguf_type_label(t)).integer("type_id", t.type_id);
        o.raw("shape", shape_to_json(t.shape())).integer("offset", static_cast<std::int64_t>(t.offset));
        if (t.type != nullptr)
            o.integer("bytes", static_cast<std::int64_t>(t.bytes));
        else
            o.raw("bytes", "null");
        o.number("bits_per_weight", bits_per_weight(t));
        tensors += (i ? ", " : "") + o.str();
    }
    JsonObject out;
    out.string("file", path).string("format", "gguf").integer("version", file.version());
    out.integer("alignment", static_cast<std::int64_t>(file.alignment()));
    out.integer("data_offset", static_cast<std::int64_t>(file.data_offset()));
    out.raw("metadata", metadata + "]").raw("tensors", tensors + "]");
    return out.str();
}

int inspect_gguf(const std::string& path) {
    const GgufFile file(path);
    std::printf("GGUF v%u, alignment %llu, data at byte %zu, %zu metadata keys, %zu tensors\n", file.version(),
                static_cast<unsigned long long>(file.alignment()), file.data_offset(), file.metadata().size(),
                file.list().size());
    std::size_t key_width = 3;
    std::vector<std::string> keys;
    for (const GgufKv& kv : file.metadata()) {
        keys.push_back(printable(kv.key, kListedNameChars));
        key_width = std::max(key_width, character_count(keys.back()));
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const GgufKv& kv = file.metadata()[i];
        const std::string count = kv.type == GgufValueType::ARRAY ? "(" + std::to_string(kv.count) + ") " : "";
        std::printf("%s%s  %-13s  %s%s\n", keys[i].c_str(), std::string(key_width - character_count(keys[i]), ' ').c_str(),
                    kv_type(kv).c_str(), count.c_str(), printable(kv.shown, kListedNameChars).c_str());
    }
    std::printf("\n");
    std::vector<std::string> names;
    std::size_t width = 4;
    for (const GgufTensor& t : file.list()) {
        names.push_back(printable(t.name, kListedNameChars));
        width = std::max(width, character_count(names.back()));
    }
    std::printf("%s  %-8s  %-20s  %12s  %12s  %s\n", ("name" + std::string(width - 4, ' ')).c_str(), "type", "shape",
                "offset", "bytes", "bits/weight");
    for (std::size_t i = 0; i < names.size(); ++i) {
        const GgufTensor& t = file.list()[i];
        const std::optional<double> bpw = bits_per_weight(t);
        char bits[32] = "?";
        if (bpw) std::snprintf(bits, sizeof bits, "%.6g", *bpw);
        std::printf("%s  %-8s  %-20s  %12llu  %12s  %s\n", (names[i] + std::string(width - character_count(names[i]), ' ')).c_str(),
                    gguf_type_label(t).c_str(), t.n_dims == 0 ? "scalar" : shape_to_string(t.shape()).c_str(),
                    static_cast<unsigned long long>(t.offset), t.type ? std::to_string(t.bytes).c_str() : "?", bits);
    }
    return 0;
}

}  // namespace

std::string inspect_json(const std::string& path) {
    if (lower_extension(path) == ".gguf") return gguf_json(GgufFile(path), path);
    const SafetensorsFile file(path);
    std::string tensors = "[";
    for (std::size_t i = 0; i < file.list().size(); ++i) {
        const SafetensorsEntry& e = file.list()[i];
        JsonObject t;
        t.string("name", e.name).string("dtype", e.dtype).raw("shape", shape_to_json(e.shape));
        tensors += (i ? ", " : "") + t.str();
    }
    JsonObject json;
    json.string("file", path).raw("tensors", tensors + "]");
    return json.str();
}

int run_inspect(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kInspectHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {{"--json", false}});
    if (parsed.positionals.size() != 1) throw Error("inspect needs exactly one FILE.safetensors or FILE.gguf");
    if (parsed.has("--json")) {
        std::printf("%s\n", inspect_json(parsed.positionals[0]).c_str());
        return 0;
    }
    if (lower_extension(parsed.positionals[0]) == ".gguf") return inspect_gguf(parsed.positionals[0]);
    const SafetensorsFile file(parsed.positionals[0]);
    // Names come from the file: escaped (a raw ESC or line break would act on the terminal) and aligned on
    // what the terminal shows, characters rather than bytes.
    std::vector<std::string> names;
    std::size_t width = 4;
    for (const auto& e : file.list()) {
        names.push_back(printable(e.name, kListedNameChars));
        width = std::max(width, character_count(names.back()));
    }
    const auto padded = [&](const std::string& text) { return text + std::string(width - character_count(text), ' '); };
    std::printf("%s  %-5s  %s\n", padded("name").c_str(), "dtype", "shape");
    for (std::size_t i = 0; i < names.size(); ++i) {
        const SafetensorsEntry& e = file.list()[i];
        std::printf("%s  %-5s  %s\n", padded(names[i]).c_str(), e.dtype.c_str(),
                    e.shape.empty() ? "scalar" : shape_to_string(e.shape).c_str());
    }
    return 0;
}

}  // namespace qs::cli
