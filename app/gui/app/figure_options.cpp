#include "gui/app/figure_options.hpp"

#include <cstdlib>

#include "gui/app/figure_png.hpp"
#include "gui/document/recompute.hpp"
#include "gui/panels/figure_panel.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::gui {

std::vector<cli::OptionSpec> FigureOptionSpecs() {
    return {{"--cmap", true}, {"--annotate", true}, {"--lesson-look", false}, {"--grid", false}, {"--layout", true},
            {"--slice", true}};
}

namespace {

std::int64_t SlicesOf(const Shape& shape) { return shape.size() == 3 ? shape[0] : 1; }

}  // namespace

ViewSettings FigureOptionsAsView(const cli::ParsedArgs& args, const Shape& shape) {
    const std::int64_t slices = SlicesOf(shape);
    ViewSettings view;
    FigurePanelSettings scratch;  // the panel's parser is the one judge of a value
    if (const std::string* s = args.get("--cmap")) {
        if (!ApplyFigurePanelSetting(scratch, "colormap", s->c_str()))
            throw Error("--cmap: unknown colormap " + quoted_text(*s) + " (coolwarm, viridis, greys)");
        view.emplace_back("figure.colormap", *s);
    }
    if (const std::string* s = args.get("--annotate")) {
        if (!ApplyFigurePanelSetting(scratch, "annotate", s->c_str()))
            throw Error("--annotate: " + quoted_text(*s) + " is not auto, on or off");
        view.emplace_back("figure.annotate", *s);
    }
    if (args.has("--lesson-look")) view.emplace_back("figure.lesson_look", "1");
    if (args.has("--grid")) view.emplace_back("figure.layout", "grid");  // the four panels as 2 x 2
    if (const std::string* s = args.get("--layout")) {
        if (args.has("--grid")) throw Error("--grid is --layout grid: give one of them");
        if (!ApplyFigurePanelSetting(scratch, "layout", s->c_str()))
            throw Error("--layout: " + quoted_text(*s) + " is not auto, row or grid");
        view.emplace_back("figure.layout", *s);
    }
    if (const std::string* s = args.get("--slice")) {
        const std::int64_t slice = cli::parse_int("--slice", *s);
        if (slice < 0 || slice >= slices)
            throw Error("--slice " + *s + " is out of range (the tensor has " + std::to_string(slices) +
                        (slices == 1 ? " slice)" : " slices)"));
        view.emplace_back("figure.slice", std::to_string(slice));
    }
    return view;
}

void CheckPngPath(const std::string& option, const std::string& path) {
    if (path.empty()) throw Error(option + ": the path is empty");
    if (lower_extension(path) != ".png") throw Error(option + ": " + quoted_text(path) + " must end in .png");
}

void RenderFigureFile(const cli::Input& input, const ViewSettings& options, int width, const std::string& path) {
    ViewSettings view = input.from_session ? input.view : ViewSettings{};
    view.insert(view.end(), options.begin(), options.end());
    FigurePanelSettings settings;  // defaults: a PNG must not depend on a user's settings file
    settings.show_toolbar = false;
    FigurePngOptions png;
    for (const auto& [key, value] : view) {
        if (key == "figure.slice") {
            // A session's value is skipped when it is not a slice of this tensor, as the window does.
            char* end = nullptr;
            const long long slice = std::strtoll(value.c_str(), &end, 10);
            if (end != value.c_str() && *end == '\0' && slice >= 0 && slice < SlicesOf(input.shape()))
                png.slice = static_cast<int>(slice);
        } else if (key.rfind("figure.", 0) == 0) {
            ApplyFigurePanelSetting(settings, key.c_str() + 7, value.c_str());  // unknown keys: a newer session's
        }
    }
    // The figure reads the tensor where it is (no copy) and one pass's overview, as the window does.
    const std::shared_ptr<const TensorData> data =
        input.file ? MakeTensorData(std::shared_ptr<const TensorFile>(input.file))
                   : MakeTensorData(std::shared_ptr<const Tensor>(std::shared_ptr<const Tensor>(), &input.tensor));
    const QuantParams params = ParamsFor(*data, input.config);
    const QuantOverview overview = quantize_overview(data->view, params, input.config, data->values.grid);
    QuantView quantized;
    quantized.data = data.get();
    quantized.tensor = data->floats.get();
    quantized.config = &input.config;
    quantized.params = &params;
    quantized.overview = &overview;
    quantized.generation = 1;
    quantized.tensor_generation = 1;
    std::string error;
    if (!RenderFigurePng(quantized, settings, png, width, path, &error)) throw Error(error);
}

}  // namespace qs::gui
