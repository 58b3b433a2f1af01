// `quantscope render`: the figure as a PNG without a display (see render_command.cpp).
#pragma once

#include <string>
#include <vector>

namespace qs::gui {

// `args` are the arguments after "render"; throws qs::Error on bad input; returns the exit code.
int run_render(const std::vector<std::string>& args);

extern const char* const kRenderHelp;

}  // namespace qs::gui
