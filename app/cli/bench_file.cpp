// `quantscope bench`'s whole-process rows (issue 10, "cost follows the work"): `quantscope quantize
// FILE.npy` run as a child process, metrics only and with its three outputs, against `cp` of the same file
// in the same run. A process's time and peak memory include what a kernel benchmark hides: loading the
// file, allocating and writing the results, exit.
#include "cli/bench_file.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/tensor_io.hpp"

extern char** environ;

namespace qs::cli {
namespace {

struct ProcessRun {
    double wall_ms = 0;
    double peak_mib = 0;  // the child's peak resident memory, as the kernel counts it
};

// Runs `argv` (argv[0] looked up on PATH) with stdout discarded and waits for it; it must exit 0.
ProcessRun run_process(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    const int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawn_error != 0) throw Error("bench: cannot start " + argv[0] + ": " + std::strerror(spawn_error));
    int status = 0;
    struct rusage usage {};
    while (::wait4(pid, &status, 0, &usage) < 0)
        if (errno != EINTR) throw Error(std::string("bench: waiting for a child failed: ") + std::strerror(errno));
    ProcessRun run;
    run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    run.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::string command;
        for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
        throw Error("bench: '" + command + "' failed");
    }
    return run;
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

std::string own_executable() {
    char path[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) throw Error("bench: cannot find the program's own path (/proc/self/exe)");
    return std::string(path, static_cast<std::size_t>(n));
}

// A fresh folder under the temporary directory, removed with its files.
struct ScratchFolder {
    std::filesystem::path path;
    ScratchFolder() {
        std::string pattern = (std::filesystem::temp_directory_path() / "quantscope-bench-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr)
            throw Error("bench: cannot create a temporary folder: " + std::string(std::strerror(errno)));
        path = pattern;
    }
    ~ScratchFolder() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    std::string operator/(const char* name) const { return (path / name).string(); }
};

}  // namespace

void add_file_rows(JsonObject& json, const Tensor& tensor, int rounds) {
    const ScratchFolder folder;
    const std::string input = folder / "W.npy";
    save_floats(input, tensor.shape, tensor.values.data());
    const double file_mib = static_cast<double>(std::filesystem::file_size(input)) / (1024.0 * 1024.0);
    const std::string self = own_executable();
    const std::vector<std::string> copy = {"cp", input, folder / "copy.npy"};
    const std::vector<std::string> metrics = {self, "quantize", input};
    const std::vector<std::string> outputs = {self,          "quantize",          input,
                                              "--out-quantized", folder / "q.npy", "--out-dequantized",
                                              folder / "d.npy",  "--out-error",    folder / "e.npy"};
    // One round each to warm the page cache and create the output files, then the three in turn, so that a
    // drift in the machine's speed touches all of them alike; the ratios are taken round by round.
    run_process(copy), run_process(metrics), run_process(outputs);
    std::vector<double> cp_ms, metrics_ms, outputs_ms, metrics_ratio, outputs_ratio, metrics_peak, outputs_peak;
    for (int round = 0; round < rounds; ++round) {
        const ProcessRun c = run_process(copy), m = run_process(metrics), o = run_process(outputs);
        cp_ms.push_back(c.wall_ms);
        metrics_ms.push_back(m.wall_ms);
        outputs_ms.push_back(o.wall_ms);
        metrics_ratio.push_back(m.wall_ms / c.wall_ms);
        outputs_ratio.push_back(o.wall_ms / c.wall_ms);
        metrics_peak.push_back(m.peak_mib);
        outputs_peak.push_back(o.peak_mib);
    }
    json.number("file_mib", file_mib)
        .integer("file_rounds", rounds)
        .number("cp_file_ms", median(cp_ms))
        .number("quantize_file_ms", median(metrics_ms))
        .number("quantize_file_ratio_to_cp", median(metrics_ratio))
        .number("quantize_file_peak_mib", median(metrics_peak))
        .number("quantize_file_peak_target_mib", 1.3 * file_mib + 50)
        .number("quantize_file_outputs_ms", median(outputs_ms))
        .number("quantize_file_outputs_ratio_to_cp", median(outputs_ratio))
        .number("quantize_file_outputs_peak_mib", median(outputs_peak));
}

}  // namespace qs::cli
