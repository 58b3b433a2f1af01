// The window's command line: `quantscope [gui] [INPUT] [options]`, parsed and checked before anything opens.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "gui/app/session_io.hpp"

namespace qs::gui {

extern const char* const kGuiHelp;

struct GuiOptions {
    cli::Input input;
    int width = 0, height = 0;  // --size; 0: settings or default
    std::string screenshot;
    int frames = 5;
    int bench_frames = 0;
    float font_scale = 0.0f;  // --font-scale; 0: settings or 1
    bool use_settings = true;
    int tab = -1;             // --tab: the analysis tab shown first
    GuiFileOptions files;     // figure options, scripted saves, a model file to list
};

// qs::Error (one line) on a bad option, value, input or output path.
GuiOptions ParseGuiOptions(const std::vector<std::string>& args);

}  // namespace qs::gui
