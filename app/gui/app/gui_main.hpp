// Entry point of the window: `quantscope` and `quantscope gui [options]`.
#pragma once

#include <string>
#include <vector>

namespace qs::gui {

// `args` are the arguments after "gui". Returns the process exit code (2 on a bad option).
int run_gui(const std::vector<std::string>& args);

}  // namespace qs::gui
