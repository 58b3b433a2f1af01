#include "gui/app/gui_options.hpp"

#include <algorithm>
#include <filesystem>

#include "cli/lessons.hpp"
#include "gui/app/analysis_tabs.hpp"
#include "quantscope/importance_file.hpp"
#include "gui/panels/model_panel.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {

std::vector<cli::OptionSpec> GuiFileOptionSpecs() {
    return cli::join(FigureOptionSpecs(), {{"--save-figure", true}, {"--save-session", true}, {"--presenter", false},
                                                {"--panels", true}, {"--compare", true}});
}

namespace {

// --panels controls,figure,metrics,histogram: the View menu's panels to show (the others hidden), as the
// session's panels.* pairs.
ViewSettings PanelsAsView(const std::string& list) {
    const char* const names[] = {"controls", "figure", "metrics", "histogram"};
    bool shown[4] = {false, false, false, false};
    std::size_t at = 0;
    while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const std::string name = list.substr(at, comma - at);
        bool known = false;
        for (int i = 0; i < 4; ++i) {
            if (name == names[i]) shown[i] = known = true;
        }
        if (!known)
            throw Error("--panels: " + quoted_text(name) + " is not controls, figure, metrics or histogram");
        at = comma + 1;
    }
    ViewSettings view;
    for (int i = 0; i < 4; ++i) view.emplace_back(std::string("panels.") + names[i], shown[i] ? "1" : "0");
    return view;
}

}  // namespace

cli::Input LoadGuiInput(cli::ParsedArgs args, bool screenshot, GuiFileOptions& files) {
    files = GuiFileOptions{};
    for (const char* name : {"--save-figure", "--save-session"}) {
        if (!args.has(name)) continue;
        if (!screenshot) throw Error(std::string(name) + " needs --screenshot (in the window, use the File menu)");
        if (args.get(name)->empty()) throw Error(std::string(name) + ": the path is empty");
    }
    if (const std::string* s = args.get("--save-figure")) {
        CheckPngPath("--save-figure", *s);
        files.save_figure = *s;
    }
    if (const std::string* s = args.get("--save-session")) {
        if (lower_extension(*s) != ".json") throw Error("--save-session: " + quoted_text(*s) + " must end in .json");
        files.save_session = *s;
    }
    // A model file of several tensors without --tensor: show its list rather than refuse (load_tensor wants
    // exactly one tensor). A file that does not open falls through to load_input's own error.
    if (args.positionals.size() == 1 && !args.has("--tensor") && IsModelFilePath(args.positionals[0])) {
        try {
            if (open_checkpoint(args.positionals[0]).tensors.size() != 1) {
                files.browse = files.model = args.positionals[0];
                args.positionals.clear();
            }
        } catch (const std::exception&) {
        }
    }
    // A sharded checkpoint's index: the lesson tensor, with the checkpoint in the Model tab.
    if (args.positionals.size() == 1 && IsCheckpointIndexPath(args.positionals[0])) {
        if (args.has("--tensor")) throw Error("--tensor: pick the tensor in the Model tab of a sharded checkpoint");
        files.model = args.positionals[0];
        args.positionals.clear();
    }
    // A GGUF model without --tensor: the lesson tensor, with the model in the Model tab.
    if (args.positionals.size() == 1 && !args.has("--tensor") && lower_extension(args.positionals[0]) == ".gguf") {
        files.model = args.positionals[0];
        args.positionals.clear();
    }
    if (const std::string* s = args.get("--compare")) {
        // With --tensor: the model's comparison, and that tensor opened against B (a click on its row); the
        // tensor itself is read as --tensor reads it first.
        const std::string* tensor = args.get("--tensor");
        if (files.model.empty() && tensor && args.positionals.size() == 1 && IsModelFilePath(args.positionals[0])) {
            files.model = args.positionals[0];
            files.compare_tensor = *tensor;
        }
        if (files.model.empty()) throw Error("--compare needs a checkpoint to compare (.gguf, .safetensors or an index)");
        if (s->empty()) throw Error("--compare: the path is empty");
        files.compare = *s;
        files.browse.clear();  // the comparison is what was asked for: no tensor list over it
    }
    // A file is opened as a view of its mapping: a tensor larger than memory allows as float32 still opens.
    cli::Input input = cli::load_input(args, true, true);
    files.view = FigureOptionsAsView(args, input.shape());
    if (args.has("--presenter")) files.view.emplace_back("presenter", "1");
    if (const std::string* s = args.get("--panels")) {
        for (const auto& pair : PanelsAsView(*s)) files.view.push_back(pair);
    }
    return input;
}

const char* const kGuiHelp =
    "usage: quantscope [gui] [INPUT | --preset NAME | --random normal|uniform --shape RxC[xD] [--seed N]\n"
    "                        [--mean M --std S | --low L --high H] [--outliers K [--outlier-scale F]]\n"
    "                        [--pin-range]]\n"
    "                        [quantize options] [--size WxH] [--font-scale F] [--no-settings]\n"
    "                        [--cmap NAME] [--annotate auto|on|off] [--lesson-look] [--layout auto|row|grid]\n"
    "                        [--slice I] [--select I,J] [--panels controls,figure,metrics,histogram]\n"
    "                        [--screenshot out.png [--frames N] [--save-figure F.png] [--save-session S.json]]\n"
    "                        [--bench-frames N] [--tab NAME] [--presenter] [--lesson NAME [--step K]]\n"
    "                        [--layout-report] [--importance W.npy]\n"
    "\n"
    "Opens the window on INPUT (.npy, .csv, .safetensors [--tensor NAME] or a saved SESSION.json), a preset or\n"
    "a random tensor; the lesson's 3x3 tensor by default. A .safetensors file of several tensors without\n"
    "--tensor opens its list of tensors to pick from.\n"
    "Quantize options: --dtype int8 --mode asymmetric|symmetric --scale S --zero-point Z\n"
    "  --granularity tensor|channel|group --axis A --group-size G --rounding half-even|half-away\n"
    "  --calibrate C --recompute-scale --overflow clamp|wrap --recipe naive-max255\n"
    "  --size WxH          window size (default: the last one, or 1600x900)\n"
    "  --font-scale F      text size factor 0.5..3 (Ctrl+= / Ctrl+- / Ctrl+0 in the window)\n"
    "  --no-settings       neither read nor write ~/.config/quantscope/settings.ini\n"
    "  --screenshot PNG    draw N frames (default 5, at least 3), save the window as PNG, exit (an input,\n"
    "                      session lesson or model file that does not open: its line, exit 2, no PNG)\n"
    "  --cmap, --annotate, --lesson-look, --layout, --slice   figure settings, as for `quantscope render`\n"
    "                      (--layout row: the four panels in a row, grid: 2x2; --grid is --layout grid)\n"
    "  --select I,J        select that element (one index per axis, from 0), as a click on its cell does:\n"
    "                      its pipeline under the figure, its bits in the Bits tab (--tab bits)\n"
    "  --panels LIST       the View menu's panels to show, the others hidden (e.g. --panels figure,metrics)\n"
    "  --save-figure PNG   with --screenshot: also File > Save figure as PNG (the `render` image)\n"
    "  --save-session JSON with --screenshot: also File > Save session\n"
    "  --layout-report     with --screenshot: print one JSON line of what the figure showed (cells whose value\n"
    "                      was printed per panel, the values' size, windows whose contents are cut at the edge\n"
    "                      (cut_text: text drawn past its window's edge or its line),\n"
    "                      table columns whose cells are cut, tables shown only in part (cut_tables: cut at\n"
    "                      a window's edge), the colorbars' legend in presenter mode, the Bits tab's lines when\n"
    "                      it is shown, the error banner, the histogram's bars, the calibrator rows, whether\n"
    "                      compare's B showed)\n"
    "  --bench-frames N    drag the manual scale (per channel or group: the bits) for N frames, print\n"
    "                      timing medians as JSON, exit\n"
    "  --presenter         start in presenter mode: the figure alone, for a projector (F5 / Esc in the window)\n"
    "  --lesson NAME       open a lesson (quantscope lesson list) or a lesson FILE.json at --step K (from 1):\n"
    "                      PageDown / PageUp or the arrows step through it, R reveals what a step hides\n"
    "  --importance W.npy  one float32 weight per column, as for `quantize`: the ggml types that take it\n"
    "                      quantize weighted by it (the Importance toggle; File > Open importance...)\n"
    "  --tab NAME          the analysis tab shown first: histograms, landscape, calibrators, compare, formats\n"
    "                      (every number format: bits per weight against SQNR), model, layer (the current\n"
    "                      tensor as W of y = x W^T: output error, LLM.int8, SmoothQuant), bits (the selected\n"
    "                      cell's code, block scale and packed byte, bit by bit)\n"
    "                      (a screenshot waits until its background computation is done)\n"
    "Without a display the figure is rendered headless to ~/.cache/quantscope/figure.png (or the\n"
    "--screenshot path).\n";

namespace {

// --lesson NAME [--step K]: the lesson, and its step's tensor and settings as the window's input.
void ApplyLessonOption(const cli::ParsedArgs& parsed, const std::string& name, GuiOptions& o) {
    if (!parsed.positionals.empty() || parsed.has("--preset") || parsed.has("--random"))
        throw Error("--lesson sets its own tensor: give no INPUT, --preset or --random with it");
    // Its steps set the quantization too: an option that would be overridden at the first step is refused
    // like an input file, never silently dropped.
    for (const std::vector<cli::OptionSpec>& options : {cli::tensor_source_options(), cli::quantize_options()})
        for (const cli::OptionSpec& option : options)
            if (parsed.has(option.name))
                throw Error("--lesson sets its own tensor and quantization: give no " + option.name + " with it");
    o.lesson = std::make_shared<const Lesson>(cli::load_lesson(name));
    o.lesson_ref = name;
    const std::int64_t steps = static_cast<std::int64_t>(o.lesson->steps.size());
    if (const std::string* v = parsed.get("--step")) {
        const std::int64_t k = cli::parse_int("--step", *v);
        if (k < 1 || k > steps)
            throw Error("--step " + *v + ": lesson " + quoted_text(o.lesson->name) + " has steps 1 to " + std::to_string(steps));
        o.lesson_step = static_cast<int>(k - 1);
    }
    const LessonState& s = o.lesson->steps[static_cast<std::size_t>(o.lesson_step)].state;
    o.input.tensor = *s.tensor;
    o.input.file.reset();
    o.input.config = s.config;
    o.input.label = s.tensor_label;
    o.input.note.clear();
    o.input.source = TensorSource{};
    const std::vector<std::string> presets = preset_names();
    if (std::find(presets.begin(), presets.end(), s.tensor_label) != presets.end()) {
        o.input.source.kind = TensorSource::Kind::Preset;
        o.input.source.preset = s.tensor_label;
    }
}

}  // namespace

GuiOptions ParseGuiOptions(const std::vector<std::string>& args) {
    const std::vector<cli::OptionSpec> own = {
        {"--size", true}, {"--screenshot", true}, {"--frames", true}, {"--bench-frames", true},
        {"--font-scale", true}, {"--no-settings", false}, {"--tab", true}, {"--lesson", true}, {"--step", true},
        {"--layout-report", false}, {"--importance", true}};
    const cli::ParsedArgs parsed =
        cli::parse_args(args, cli::join(cli::join(cli::join(cli::tensor_source_options(), cli::quantize_options()), own),
                                        GuiFileOptionSpecs()));
    GuiOptions o;
    if (const std::string* v = parsed.get("--size")) {
        const auto x = v->find('x');
        if (x == std::string::npos) throw Error("--size: " + quoted_text(*v) + " is not WxH (e.g. 1600x900)");
        const std::int64_t w = cli::parse_int("--size", v->substr(0, x));
        const std::int64_t h = cli::parse_int("--size", v->substr(x + 1));
        if (w < 320 || h < 240 || w > 16384 || h > 16384)
            throw Error("--size: " + *v + " is out of range (320x240 to 16384x16384)");
        o.width = static_cast<int>(w);
        o.height = static_cast<int>(h);
    }
    if (const std::string* v = parsed.get("--screenshot")) {
        if (v->empty()) throw Error("--screenshot: the path is empty");
        o.screenshot = *v;
    }
    if (const std::string* v = parsed.get("--frames")) {
        if (o.screenshot.empty()) throw Error("--frames needs --screenshot");
        const std::int64_t n = cli::parse_int("--frames", *v);
        if (n < 1 || n > 100000) throw Error("--frames must be 1 to 100000");
        o.frames = static_cast<int>(std::max<std::int64_t>(n, 3));  // auto-sized windows need 3 frames
    }
    if (const std::string* v = parsed.get("--bench-frames")) {
        const std::int64_t n = cli::parse_int("--bench-frames", *v);
        if (n < 1 || n > 100000) throw Error("--bench-frames must be 1 to 100000");
        if (!o.screenshot.empty()) throw Error("--bench-frames and --screenshot do not go together");
        o.bench_frames = static_cast<int>(n);
    }
    if (const std::string* v = parsed.get("--font-scale")) {
        const double f = cli::parse_double("--font-scale", *v);
        if (!(f >= 0.5 && f <= 3.0)) throw Error("--font-scale must be 0.5 to 3");
        o.font_scale = static_cast<float>(f);
    }
    if (const std::string* v = parsed.get("--tab")) {
        o.tab = AnalysisTabIndex(*v);
        if (o.tab < 0) throw Error("--tab: " + quoted_text(*v) + " is not " + AnalysisTabWords());
    }
    o.layout_report = parsed.has("--layout-report");
    if (o.layout_report && o.screenshot.empty()) throw Error("--layout-report needs --screenshot");
    // Screenshots and benchmarks must not depend on what a user saved.
    o.use_settings = !parsed.has("--no-settings") && o.screenshot.empty() && o.bench_frames == 0;
    o.input = LoadGuiInput(parsed, !o.screenshot.empty(), o.files);
    if (parsed.has("--step") && !parsed.has("--lesson")) throw Error("--step needs --lesson NAME");
    if (const std::string* v = parsed.get("--importance")) {
        if (parsed.has("--lesson")) throw Error("--importance does not go with --lesson: a lesson's step gives its own");
        try {
            o.input.config.importance =
                read_importance_npy(*v, o.input.shape().empty() ? 0 : o.input.shape().back());
        } catch (const Error& e) {
            throw Error(std::string("--importance ") + e.what());
        }
        std::error_code ec;
        const std::filesystem::path abs = std::filesystem::absolute(*v, ec);
        o.importance_path = (ec ? std::filesystem::path(*v) : abs).lexically_normal().string();
    }
    if (const std::string* v = parsed.get("--lesson")) ApplyLessonOption(parsed, *v, o);
    std::vector<FileRole> outputs;
    if (!o.screenshot.empty()) outputs.push_back({"--screenshot", o.screenshot});
    if (!o.files.save_figure.empty()) outputs.push_back({"--save-figure", o.files.save_figure});
    if (!o.files.save_session.empty()) outputs.push_back({"--save-session", o.files.save_session});
    check_distinct_files(cli::input_files(parsed, o.input), outputs);
    return o;
}

}  // namespace qs::gui
