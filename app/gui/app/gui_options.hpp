// The window's command line: `quantscope [gui] [INPUT] [options]`, parsed and checked before anything opens.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/options.hpp"
#include "gui/app/figure_options.hpp"
#include "quantscope/lesson.hpp"

namespace qs::gui {

// What the gui command line asks about files besides its INPUT.
struct GuiFileOptions {
    ViewSettings view;          // --cmap --annotate --lesson-look --slice, as view pairs (as `render` has them)
    std::string save_figure;    // --save-figure PNG: File > Save figure as PNG, scripted (needs --screenshot)
    std::string save_session;   // --save-session JSON: File > Save session, scripted (needs --screenshot)
    std::string browse;         // a .safetensors INPUT of several tensors given without --tensor: list them
    std::string model;          // that file, or a sharded checkpoint's index: the Model tab's checkpoint
    std::string compare;        // --compare B: the Model tab compares the model with B, on show at the start
    std::string compare_tensor; // with --tensor NAME: that row opened against B's stored values, as a click on it
};

// The options GuiFileOptions reads: the figure's (FigureOptionSpecs), --save-figure and --save-session.
std::vector<cli::OptionSpec> GuiFileOptionSpecs();
// cli::load_input(args, true) plus the options above, checked (qs::Error on a bad value, a slice the tensor does
// not have, or a scripted save without --screenshot). A model file with several tensors and no --tensor opens
// the lesson with the file's list on show instead of failing.
cli::Input LoadGuiInput(cli::ParsedArgs args, bool screenshot, GuiFileOptions& files);

extern const char* const kGuiHelp;

struct GuiOptions {
    cli::Input input;
    int width = 0, height = 0;  // --size; 0: settings or default
    std::string screenshot;
    int frames = 5;
    int bench_frames = 0;
    float font_scale = 0.0f;  // --font-scale; 0: settings or 1
    bool use_settings = true;
    int tab = -1;             // --tab: the analysis tab shown first (an index of AnalysisTabs())
    bool layout_report = false;  // --layout-report: with --screenshot, print what the figure showed as JSON
    GuiFileOptions files;     // figure options, scripted saves, a model file to list
    // --lesson NAME|FILE [--step K]: the lesson to open and its step (0-based); `input` holds that step's
    // tensor and settings (what a headless render shows).
    std::shared_ptr<const Lesson> lesson;
    std::string lesson_ref;     // the NAME or FILE given, as sessions name the lesson again
    int lesson_step = 0;
    std::string importance_path;  // --importance, absolute (input.config.importance holds its weights)
};

// qs::Error (one line) on a bad option, value, input or output path.
GuiOptions ParseGuiOptions(const std::vector<std::string>& args);

}  // namespace qs::gui
