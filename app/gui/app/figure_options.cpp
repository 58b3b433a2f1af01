#include "gui/app/figure_options.hpp"

#include <algorithm>
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
            {"--slice", true}, {"--select", true}};
}

namespace {

std::int64_t SlicesOf(const Shape& shape) { return shape.size() == 3 ? shape[0] : 1; }

// --select I,J (one index per axis, from 0): the element's flat index. Throws qs::Error naming the option.
std::int64_t ParseSelect(const std::string& text, const Shape& shape) {
    std::vector<std::int64_t> index;
    std::size_t start = 0;
    while (start <= text.size() && index.size() <= shape.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        std::string part = text.substr(start, comma - start);
        part.erase(0, part.find_first_not_of(' '));
        part.erase(part.find_last_not_of(' ') + 1);
        const bool digits = !part.empty() && part.size() <= 12 && part.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) break;
        index.push_back(std::stoll(part));
        start = comma + 1;
    }
    std::string dims;
    for (std::int64_t d : shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    bool ok = start > text.size() && index.size() == shape.size();
    std::int64_t flat = 0;
    for (std::size_t a = 0; ok && a < shape.size(); ++a) {
        ok = index[a] < shape[a];
        flat = flat * shape[a] + index[a];
    }
    if (!ok)
        throw Error("--select: " + quoted_text(text) + " is not an element of the " + dims + " tensor (" +
                    std::to_string(shape.size()) + " indices from 0, e.g. --select " +
                    (shape.size() == 1 ? "0" : shape.size() == 2 ? "0,1" : "0,0,1") + ")");
    return flat;
}

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
    if (const std::string* s = args.get("--select")) {
        // The selected element's pipeline under the figure (and its bits in the window's Bits tab); on a
        // rank-3 tensor its slice is shown unless --slice says otherwise.
        const std::int64_t flat = ParseSelect(*s, shape);
        view.emplace_back("figure.selected", std::to_string(flat));
        if (shape.size() == 3 && !args.has("--slice"))
            view.emplace_back("figure.slice", std::to_string(flat / (shape[1] * shape[2])));
        else if (shape.size() == 3 && flat / (shape[1] * shape[2]) != cli::parse_int("--slice", *args.get("--slice")))
            throw Error("--select " + *s + " is not in --slice " + *args.get("--slice"));
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
    std::int64_t numel = 1;
    for (std::int64_t d : input.shape()) numel *= d;
    const std::size_t from_session = view.size() - options.size();
    for (std::size_t i = 0; i < view.size(); ++i) {
        const auto& [key, value] = view[i];
        if (key == "figure.slice") {
            // A session's value is skipped when it is not a slice of this tensor, as the window does.
            char* end = nullptr;
            const long long slice = std::strtoll(value.c_str(), &end, 10);
            if (end != value.c_str() && *end == '\0' && slice >= 0 && slice < SlicesOf(input.shape()))
                png.slice = static_cast<int>(slice);
        } else if (key == "figure.selected" && i >= from_session) {  // a session's selection: not in its PNG
            char* end = nullptr;
            const long long flat = std::strtoll(value.c_str(), &end, 10);
            if (end != value.c_str() && *end == '\0' && flat >= -1 && flat < numel) png.selected = flat;
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
