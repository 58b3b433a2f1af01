// `quantscope inspect FILE`: what a tensor file holds, without reading the tensor data.
#include <algorithm>
#include <cstdio>
#include <functional>
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

// A list member of a streamed object: its key, item count and each item's JSON.
struct StreamedList {
    const char* key;
    std::size_t count;
    std::function<std::string(std::size_t)> item;
};

// The object `head` followed by `lists` as its last members, their items given to `out` one at a time: the
// output of a header of a million tensors (or KVs) is never held whole (inspect --json of one held it three
// times, 764 MB).
void write_streamed(JsonObject head, const std::vector<StreamedList>& lists, const std::function<void(const std::string&)>& out) {
    std::string tail = "}";
    for (std::size_t k = lists.size(); k-- > 0;) {
        head.raw(lists[lists.size() - 1 - k].key, "[]");
        tail = std::string(k + 1 < lists.size() ? ", " : "") + "\"" + lists[k].key + "\": []" + tail;
    }
    std::string text = head.str();
    text.resize(text.size() - tail.size());  // the members before the lists: JsonObject's own format
    out(text);
    for (std::size_t k = 0; k < lists.size(); ++k) {
        out(std::string(k ? ", " : "") + "\"" + lists[k].key + "\": [");
        for (std::size_t i = 0; i < lists[k].count; ++i) out((i ? ", " : "") + lists[k].item(i));
        out("]");
    }
    out("}");
}

void gguf_json(const GgufFile& file, const std::string& path, const std::function<void(const std::string&)>& out) {
    JsonObject head;
    head.string("file", path).string("format", "gguf").integer("version", file.version());
    head.integer("alignment", static_cast<std::int64_t>(file.alignment()));
    head.integer("data_offset", static_cast<std::int64_t>(file.data_offset()));
    const auto kv_json = [&](std::size_t i) {
        const GgufKv& kv = file.metadata()[i];
        JsonObject m;
        m.string("key", kv.key).string("type", gguf_value_type_name(kv.type));
        if (kv.type == GgufValueType::ARRAY)
            m.string("item_type", gguf_value_type_name(kv.item_type)).integer("count", static_cast<std::int64_t>(kv.count));
        m.raw(kv.type == GgufValueType::ARRAY ? "first_items" : "value", kv.shown);
        return m.str();
    };
    const auto tensor_json = [&](std::size_t i) {
        const GgufTensor& t = file.list()[i];
        JsonObject o;
        o.string("name", std::string(t.name)).string("dtype", gguf_type_label(t)).integer("type_id", t.type_id);
        o.raw("shape", shape_to_json(t.shape())).integer("offset", static_cast<std::int64_t>(t.offset));
        if (t.type != nullptr)
            o.integer("bytes", static_cast<std::int64_t>(t.bytes));
        else
            o.raw("bytes", "null");
        o.number("bits_per_weight", bits_per_weight(t));
        return o.str();
    };
    write_streamed(std::move(head), {{"metadata", file.metadata().size(), kv_json}, {"tensors", file.list().size(), tensor_json}},
                   out);
}

int inspect_gguf(const std::string& path) {
    const GgufFile file(path);
    std::printf("GGUF v%u, alignment %llu, data at byte %zu, %zu metadata keys, %zu tensors\n", file.version(),
                static_cast<unsigned long long>(file.alignment()), file.data_offset(), file.metadata().size(),
                file.list().size());
    std::size_t key_width = 3;
    for (const GgufKv& kv : file.metadata()) key_width = std::max(key_width, character_count(printable(kv.key, kListedNameChars)));
    for (const GgufKv& kv : file.metadata()) {
        const std::string key = printable(kv.key, kListedNameChars);
        const std::string count = kv.type == GgufValueType::ARRAY ? "(" + std::to_string(kv.count) + ") " : "";
        std::printf("%s%s  %-13s  %s%s\n", key.c_str(), std::string(key_width - character_count(key), ' ').c_str(),
                    kv_type(kv).c_str(), count.c_str(), printable(kv.shown, kListedNameChars).c_str());
    }
    std::printf("\n");
    // The names' width in a first pass, each line made in a second: no list of a million printable names.
    std::size_t width = 4;
    for (const GgufTensor& t : file.list()) width = std::max(width, character_count(printable(t.name, kListedNameChars)));
    std::printf("%s  %-8s  %-20s  %12s  %12s  %s\n", ("name" + std::string(width - 4, ' ')).c_str(), "type", "shape",
                "offset", "bytes", "bits/weight");
    for (const GgufTensor& t : file.list()) {
        const std::string name = printable(t.name, kListedNameChars);
        const std::optional<double> bpw = bits_per_weight(t);
        char bits[32] = "?";
        if (bpw) std::snprintf(bits, sizeof bits, "%.6g", *bpw);
        std::printf("%s  %-8s  %-20s  %12llu  %12s  %s\n", (name + std::string(width - character_count(name), ' ')).c_str(),
                    gguf_type_label(t).c_str(), t.n_dims == 0 ? "scalar" : shape_to_string(t.shape()).c_str(),
                    static_cast<unsigned long long>(t.offset), t.type ? std::to_string(t.bytes).c_str() : "?", bits);
    }
    return 0;
}

}  // namespace

void write_inspect_json(const std::string& path, const std::function<void(const std::string&)>& out) {
    if (lower_extension(path) == ".gguf") return gguf_json(GgufFile(path), path, out);
    const SafetensorsFile file(path);
    JsonObject head;
    head.string("file", path);
    const auto tensor_json = [&](std::size_t i) {
        const SafetensorsEntry& e = file.list()[i];
        JsonObject t;
        t.string("name", e.name).string("dtype", e.dtype).raw("shape", shape_to_json(e.shape));
        return t.str();
    };
    write_streamed(std::move(head), {{"tensors", file.list().size(), tensor_json}}, out);
}

std::string inspect_json(const std::string& path) {
    std::string json;
    write_inspect_json(path, [&](const std::string& piece) { json += piece; });
    return json;
}

int run_inspect(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kInspectHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {{"--json", false}});
    if (parsed.positionals.size() != 1) throw Error("inspect needs exactly one FILE.safetensors or FILE.gguf");
    if (parsed.has("--json")) {
        // Written as it is made; an error (a header that lies) comes before the first byte, as the file is
        // checked in full when opened.
        write_inspect_json(parsed.positionals[0], [](const std::string& piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
        std::fputc('\n', stdout);
        return 0;
    }
    if (lower_extension(parsed.positionals[0]) == ".gguf") return inspect_gguf(parsed.positionals[0]);
    const SafetensorsFile file(parsed.positionals[0]);
    // Names come from the file: escaped (a raw ESC or line break would act on the terminal) and aligned on
    // what the terminal shows, characters rather than bytes.
    std::size_t width = 4;
    for (const auto& e : file.list()) width = std::max(width, character_count(printable(e.name, kListedNameChars)));
    const auto padded = [&](const std::string& text) { return text + std::string(width - character_count(text), ' '); };
    std::printf("%s  %-5s  %s\n", padded("name").c_str(), "dtype", "shape");
    for (const SafetensorsEntry& e : file.list())
        std::printf("%s  %-5s  %s\n", padded(printable(e.name, kListedNameChars)).c_str(), e.dtype.c_str(),
                    e.shape.empty() ? "scalar" : shape_to_string(e.shape).c_str());
    return 0;
}

}  // namespace qs::cli
