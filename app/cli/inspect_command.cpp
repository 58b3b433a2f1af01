// `quantscope inspect FILE`: what a tensor file holds, without reading the tensor data.
#include <algorithm>
#include <cstdio>

#include "cli/commands.hpp"
#include "quantscope/json_writer.hpp"
#include "cli/options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/safetensors.hpp"

namespace qs::cli {

const char* const kInspectHelp =
    "usage: quantscope inspect FILE.safetensors [--json]\n"
    "\n"
    "Lists every tensor of a .safetensors file: name, dtype and shape (one per line, or one JSON object\n"
    "with --json). Only the header is read.\n";

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
    std::size_t width = 4;
    for (const auto& e : file.list()) width = std::max(width, e.name.size());
    std::printf("%-*s  %-5s  %s\n", static_cast<int>(width), "name", "dtype", "shape");
    for (const auto& e : file.list())
        std::printf("%-*s  %-5s  %s\n", static_cast<int>(width), e.name.c_str(), e.dtype.c_str(),
                    e.shape.empty() ? "scalar" : shape_to_string(e.shape).c_str());
    return 0;
}

}  // namespace qs::cli
