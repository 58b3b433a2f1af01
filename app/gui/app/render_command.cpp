// `quantscope render`: the four-panel figure as a PNG, with no display, through the GUI's own drawing
// code (offscreen.hpp renders DrawFigurePanel into an EGL surfaceless framebuffer).
#include "gui/app/render_command.hpp"

#include <cstdio>
#include <filesystem>

#include "cli/options.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/app/figure_png.hpp"
#include "quantscope/error.hpp"
#include "quantscope/quantize.hpp"

namespace qs::gui {

const char* const kRenderHelp =
    "usage: quantscope render [INPUT | --preset NAME | --random ...] [quantize options] --out FIG.png\n"
    "                         [--width PX] [--annotate auto|on|off] [--cmap coolwarm|viridis|greys]\n"
    "                         [--slice I] [--lesson-look] [--grid]\n"
    "\n"
    "Writes the four-panel figure (original, quantized, dequantized, error) as a PNG without any display.\n"
    "The same input gives the same bytes. Quantize options as for `quantscope quantize --help`.\n";

int run_render(const std::vector<std::string>& args) {
    if (cli::print_help_if_asked(args, kRenderHelp)) return 0;
    using namespace qs::cli;
    const auto specs = join(join(tensor_source_options(), quantize_options()),
                            {{"--out", true},
                             {"--width", true},
                             {"--annotate", true},
                             {"--cmap", true},
                             {"--slice", true},
                             {"--lesson-look", false},
                             {"--grid", false}});
    const ParsedArgs parsed = parse_args(args, specs);
    const std::string* out = parsed.get("--out");
    if (!out) throw Error("render needs --out FIG.png");
    if (std::filesystem::path(*out).extension() != ".png") throw Error("--out: '" + *out + "' must end in .png");
    int width = 1600;
    if (auto v = parsed.get("--width")) {
        const std::int64_t w = parse_int("--width", *v);
        if (w < 320 || w > 8192) throw Error("--width must be between 320 and 8192 pixels");
        width = static_cast<int>(w);
    }
    FigurePanelSettings settings;
    settings.show_toolbar = false;
    if (auto v = parsed.get("--annotate")) {
        if (*v == "auto") settings.annotate = AnnotateMode::Auto;
        else if (*v == "on") settings.annotate = AnnotateMode::On;
        else if (*v == "off") settings.annotate = AnnotateMode::Off;
        else throw Error("--annotate: '" + *v + "' is not auto, on or off");
    }
    if (auto v = parsed.get("--cmap"))
        if (*v == "white" || !ParseColormap(v->c_str(), settings.colormap))
            throw Error("--cmap: unknown colormap '" + *v + "' (coolwarm, viridis, greys)");
    settings.lesson_look = parsed.has("--lesson-look");
    settings.grid = parsed.has("--grid");  // the four panels as 2 x 2

    const Input input = load_input(parsed, true);
    check_distinct_files(input_files(parsed, input), {{"--out", *out}});
    FigurePngOptions options;
    if (auto v = parsed.get("--slice")) {
        const std::int64_t slice = parse_int("--slice", *v);
        if (slice < 0 || slice >= input.tensor.slices())
            throw Error("--slice " + *v + " is out of range (the tensor has " + std::to_string(input.tensor.slices()) +
                        (input.tensor.slices() == 1 ? " slice)" : " slices)"));
        options.slice = static_cast<int>(slice);
    }
    QuantParams params;
    const QuantResult result = quantize(input.tensor, input.config, &params);
    QuantView view;
    view.tensor = &input.tensor;
    view.config = &input.config;
    view.params = &params;
    view.result = &result;
    view.generation = 1;
    std::string error;
    if (render_figure_png(view, settings, options, width, *out, &error) != 0) throw Error(error);
    std::printf("quantscope: wrote %s\n", out->c_str());
    return 0;
}

}  // namespace qs::gui
