// `quantscope bench`'s whole-process rows (issue 10, "cost follows the work"): `quantscope quantize
// FILE.npy` run as a child process, metrics only and with its three outputs, against `cp` of the same file
// in the same run. A process's time and peak memory include what a kernel benchmark hides: loading the
// file, allocating and writing the results, exit.
#include "cli/bench_file.hpp"

#include <fcntl.h>
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
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::cli {
namespace {

// The program `name` as found on PATH (or `name` itself when it holds a slash).
std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
    for (std::size_t start = 0; start <= dirs.size();) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        const std::string candidate = (end > start ? dirs.substr(start, end - start) : ".") + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        start = end + 1;
    }
    throw Error("bench: cannot find " + name + " on PATH");
}

}  // namespace

// Runs `argv` with its stdout dropped and waits for it; it must exit 0. A fork, not posix_spawn: a child
// spawned on the parent's memory (vfork) and one forked while the parent is large both report the parent's
// resident memory as their own peak; a fork of a small parent starts the child's count small.
ProcessRun run_process(const std::vector<std::string>& argv, std::string* captured) {
    const std::string program = find_program(argv[0]);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // The child's stdout goes to a pipe this process drains and drops (printing is part of the work).
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw Error(std::string("bench: cannot make a pipe: ") + std::strerror(errno));
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {  // only async-signal-safe calls until exec
        ::dup2(out[1], STDOUT_FILENO);
        ::execv(program.c_str(), args.data());
        ::_exit(127);
    }
    ::close(out[1]);
    char dropped[4096];
    for (ssize_t got = 1; pid > 0 && (got > 0 || (got < 0 && errno == EINTR));) {
        got = ::read(out[0], dropped, sizeof dropped);
        if (captured && got > 0) captured->append(dropped, static_cast<std::size_t>(got));
    }
    ::close(out[0]);
    if (pid < 0) throw Error(std::string("bench: cannot start a process: ") + std::strerror(errno));
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

ScratchFolder::ScratchFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "quantscope-bench-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw Error("bench: cannot create a temporary folder: " + std::string(std::strerror(errno)));
    path = pattern;
}

ScratchFolder::~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
}

FileFigures measure_file_rows(const RandomSpec& spec, int rounds) {
    const ScratchFolder folder;
    const std::string input = folder / "W.npy";
    {
        // Freed before the first child starts: see run_process.
        const Tensor tensor = generate_random(spec);
        save_floats(input, tensor.shape, tensor.values.data());
    }
    FileFigures f;
    f.rounds = rounds;
    f.file_mib = static_cast<double>(std::filesystem::file_size(input)) / (1024.0 * 1024.0);
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
    f.cp_ms = median(cp_ms);
    f.metrics_ms = median(metrics_ms);
    f.metrics_ratio = median(metrics_ratio);
    f.metrics_peak_mib = median(metrics_peak);
    f.outputs_ms = median(outputs_ms);
    f.outputs_ratio = median(outputs_ratio);
    f.outputs_peak_mib = median(outputs_peak);
    return f;
}

void add_file_rows(JsonObject& json, const FileFigures& f) {
    json.number("file_mib", f.file_mib)
        .integer("file_rounds", f.rounds)
        .number("cp_file_ms", f.cp_ms)
        .number("quantize_file_ms", f.metrics_ms)
        .number("quantize_file_ratio_to_cp", f.metrics_ratio)
        .number("quantize_file_peak_mib", f.metrics_peak_mib)
        .number("quantize_file_peak_target_mib", 1.3 * f.file_mib + 50)
        .number("quantize_file_outputs_ms", f.outputs_ms)
        .number("quantize_file_outputs_ratio_to_cp", f.outputs_ratio)
        .number("quantize_file_outputs_peak_mib", f.outputs_peak_mib);
}

}  // namespace qs::cli
