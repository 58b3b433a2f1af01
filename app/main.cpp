// quantscope: dispatches to the GUI or a command. Every qs::Error becomes one line
// "quantscope: error: ..." on stderr and exit code 2.
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/options.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"
#ifdef QS_HAVE_GUI
#include "gui/app/gui_main.hpp"
#include "gui/app/render_command.hpp"
#endif

namespace {

// SPEC: exactly one line on stderr, whatever the exception says. A qs::Error is already printable and short;
// other exceptions (the standard library's) are made so by message_line.
void print_error(const char* message) { qs::cli::print_message_line("error", message); }

int dispatch(const std::vector<std::string>& args) {
    using namespace qs::cli;
    if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
        std::fputs(kMainHelp, stdout);
        return 0;
    }
    if (!args.empty() && args[0] == "--version") {
        std::printf("quantscope %s\n", QS_VERSION);
        return 0;
    }
    const std::string command = args.empty() ? "gui" : args[0];
    const std::vector<std::string> rest(args.empty() ? args.end() : args.begin() + 1, args.end());
    if (command == "quantize") return run_quantize(rest);
    if (command == "bench") return run_bench(rest);
    if (command == "inspect") return run_inspect(rest);
    if (command == "export") return run_export(rest);
    if (command == "compare") return run_compare(rest);
    if (command == "sweep") return run_sweep(rest);
    if (command == "layer") return run_layer(rest);
    if (command == "lesson") return run_lesson(rest);
    if (command == "formats") return run_formats(rest);
#ifdef QS_HAVE_GUI
    if (command == "render") return qs::gui::run_render(rest);
#endif
    if (command == "gui" || (!args.empty() && args[0].rfind("--", 0) == 0) ||
        (!args.empty() && command.find('.') != std::string::npos)) {
        // `quantscope FILE.npy` and `quantscope --preset lesson` open the window too.
        const std::vector<std::string> gui_args = command == "gui" ? rest : args;
#ifdef QS_HAVE_GUI
        return qs::gui::run_gui(gui_args);
#else
        (void)gui_args;
        throw qs::Error("this build has no GUI (configured with QS_BUILD_GUI=OFF)");
#endif
    }
    throw qs::Error("unknown command " + qs::quoted_text(command) + " (see quantscope --help)");
}

}  // namespace

namespace qs::cli {
const char* const kMainHelp =
    "QuantScope: see and teach linear quantization.\n"
    "\n"
    "usage: quantscope [gui] [INPUT | --preset NAME | --random ...] [options]   open the window\n"
    "       quantscope quantize INPUT [options]    quantize a tensor, print JSON metrics\n"
    "       quantscope render [INPUT] --out FIG.png the figure as a PNG, no display needed\n"
    "       quantscope inspect FILE.safetensors    list the tensors of a checkpoint (or FILE.gguf)\n"
    "       quantscope sweep CHECKPOINT [options]  quantize every tensor of a checkpoint, one row each\n"
    "       quantscope export CHECKPOINT [options] one tensor's values as float32 (.gguf dequantized)\n"
    "       quantscope compare A B [--json | --csv] two checkpoints tensor by tensor (F16 against Q4_K_M)\n"
    "       quantscope formats INPUT [--json]      every number format on one tensor: bits vs error\n"
    "       quantscope lesson list | check NAME    the lessons (open one: quantscope gui --lesson NAME)\n"
    "       quantscope layer --weights W [options] a linear layer y = x W^T + b quantized, against float64\n"
    "       quantscope bench [--shape RxC]         time the pipeline\n"
    "       quantscope --help | --version\n"
    "\n"
    "Run `quantscope COMMAND --help` for the options of a command.\n";
}  // namespace qs::cli

int main(int argc, char** argv) {
    // A write past the file size limit (ulimit -f) would kill the program with SIGXFSZ and leave its temporary
    // behind; ignored, the write fails with EFBIG and ends in one error line naming the user's file.
    std::signal(SIGXFSZ, SIG_IGN);
    // One malloc arena. glibc gives a thread that finds the main arena locked an arena of its own (up to 8 per
    // core), each reserving 64 MB of address space: how many exist depends on which threads met when, so under
    // a cap on address space (ulimit -v) the same run fit one time and failed the next (opening a 64M-element
    // tensor in the window needed 436 to over 448 MB; 425 MB every time with one arena). The passes allocate
    // per pass, not per value, so the one lock is not contended (the window and the commands take the same time).
    mallopt(M_ARENA_MAX, 1);
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        return dispatch(args);
    } catch (const std::bad_alloc&) {
        print_error("out of memory");
        return 2;
    } catch (const std::exception& e) {
        print_error(e.what());
        return 2;
    } catch (...) {
        print_error("an unexpected error (not a std::exception)");
        return 2;
    }
}
