// `quantscope inspect FILE`: what a tensor file holds, without reading the tensor data.
#include <algorithm>
#include <cstdio>

#include "cli/commands.hpp"
#include "quantscope/json_writer.hpp"
#include "cli/options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {

const char* const kInspectHelp =
    "usage: quantscope inspect FILE.safetensors [--json]\n"
    "\n"
    "Lists every tensor of a .safetensors file: name, dtype and shape (one per line, or one JSON object\n"
    "with --json). Only the header is read.\n";

// Longer than a message quotes (a listing is the place to read names) but bounded: a header may hold a
// name of megabytes.
constexpr std::size_t kListedNameChars = 256;

int run_inspect(const std::vector<std::string>& args) {
    if (print_help_if_asked(args, kInspectHelp)) return 0;
    const ParsedArgs parsed = parse_args(args, {{"--json", false}});
    if (parsed.positionals.size() != 1) throw Error("inspect needs exactly one FILE.safetensors");
    const SafetensorsFile file(parsed.positionals[0]);
    if (parsed.has("--json")) {
        std::string tensors = "[";
        for (std::size_t i = 0; i < file.list().size(); ++i) {
            const SafetensorsEntry& e = file.list()[i];
            JsonObject t;
            t.string("name", e.name).string("dtype", e.dtype).raw("shape", shape_to_json(e.shape));
            tensors += (i ? ", " : "") + t.str();
        }
        JsonObject json;
        json.string("file", parsed.positionals[0]).raw("tensors", tensors + "]");
        std::printf("%s\n", json.str().c_str());
        return 0;
    }
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
