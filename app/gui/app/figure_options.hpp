// The figure's command-line options, one parser for `quantscope render` and the window (--cmap, --annotate,
// --lesson-look, --grid, --slice), and the one headless figure both write when there is no window.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/options.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

// Key/value pairs as a session's "view" keeps them ("figure.colormap" = "viridis", ...).
using ViewSettings = std::vector<std::pair<std::string, std::string>>;

std::vector<cli::OptionSpec> FigureOptionSpecs();

// The options given, as view pairs, each value checked by the figure panel's own parser (qs::Error naming the
// option, or a slice the tensor does not have).
ViewSettings FigureOptionsAsView(const cli::ParsedArgs& args, const Shape& shape);

// Throws qs::Error unless `path` ends in .png (any case): `option` names where the path came from.
void CheckPngPath(const std::string& option, const std::string& path);

// The headless figure of `input` (quantized with its config): the figure panel's defaults, then the figure.*
// pairs of the session `input` came from (if it did), then `options` (the command line's), `width` pixels
// wide, written atomically to `path`. Throws qs::Error with one line.
void RenderFigureFile(const cli::Input& input, const ViewSettings& options, int width, const std::string& path);

}  // namespace qs::gui
