// `quantscope render`: the four-panel figure as a PNG, with no display, through the GUI's own drawing
// code (figure_png.hpp draws DrawFigurePanel with platform/offscreen_renderer.hpp's OffscreenRenderer, an EGL
// surfaceless framebuffer).
#include "gui/app/render_command.hpp"

#include <cstdio>

#include "cli/options.hpp"
#include "gui/app/figure_options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {

const char* const kRenderHelp =
    "usage: quantscope render [INPUT | --preset NAME | --random ...] [quantize options] --out FIG.png\n"
    "                         [--width PX] [--annotate auto|on|off] [--cmap coolwarm|viridis|greys]\n"
    "                         [--slice I] [--select I,J] [--lesson-look] [--layout auto|row|grid] [--grid]\n"
    "\n"
    "Writes the four-panel figure (original, quantized, dequantized, error) as a PNG without any display.\n"
    "The same input gives the same bytes. Quantize options as for `quantscope quantize --help`.\n"
    "--select I,J prints that element's pipeline under the figure (one index per axis, from 0).\n";

int run_render(const std::vector<std::string>& args) {
    if (cli::print_help_if_asked(args, kRenderHelp)) return 0;
    using namespace qs::cli;
    const auto specs = join(join(join(tensor_source_options(), quantize_options()), FigureOptionSpecs()),
                            {{"--out", true}, {"--width", true}});
    const ParsedArgs parsed = parse_args(args, specs);
    const std::string* out = parsed.get("--out");
    if (!out) throw Error("render needs --out FIG.png");
    CheckPngPath("--out", *out);
    int width = 1600;
    if (auto v = parsed.get("--width")) {
        const std::int64_t w = parse_int("--width", *v);
        if (w < 320 || w > 8192) throw Error("--width must be between 320 and 8192 pixels");
        width = static_cast<int>(w);
    }
    const Input input = load_input(parsed, true, true);
    const ViewSettings view = FigureOptionsAsView(parsed, input.shape());
    check_distinct_files(input_files(parsed, input), {{"--out", *out}});
    RenderFigureFile(input, view, width, *out);
    std::printf("quantscope: wrote %s\n", printable(*out, kMaxMessageChars).c_str());
    return 0;
}

}  // namespace qs::gui
