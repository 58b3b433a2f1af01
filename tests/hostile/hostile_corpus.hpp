// The hostile corpus (issue 8): the committed files of tests/hostile/corpus/ (make_corpus.py) and the inputs a
// repository cannot hold, and what every command must do with each: exit 0 or 2, at most one printable line on
// stderr, no signal, no hang. Shared by test_hostile.cpp (quantize, inspect, render) and
// tests/gui/test_hostile_gui.cpp (gui --screenshot).
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "quantscope/text.hpp"

namespace qs::hostile {

// Nothing a terminal would act on: no C0 control, no DEL, no C1 control, only valid UTF-8.
inline bool is_printable_line(const std::string& text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) return false;
        const std::size_t n = qs::utf8_sequence_length(text, i);
        if (n == 0) return false;
        if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) return false;
        i += n;
    }
    return true;
}

// Copies the corpus into `dir` (sessions refer to files beside them) and adds what git cannot hold: a FIFO, a
// symlink loop, a directory, empty files, a character device. Returns every input's path, sorted.
inline std::vector<std::string> make_inputs(const std::string& dir) {
    namespace fs = std::filesystem;
    fs::copy(fs::path(QS_TESTS_DIR) / "hostile" / "corpus", dir, fs::copy_options::recursive);
    const fs::path d(dir);
    REQUIRE(::mkfifo((d / "fifo.npy").c_str(), 0600) == 0);
    REQUIRE(::mkfifo((d / "fifo.safetensors").c_str(), 0600) == 0);
    fs::create_symlink("loop.npy", d / "loop.npy");
    fs::create_symlink("/dev/zero", d / "dev_zero.npy");
    fs::create_symlink("no-such-target.csv", d / "dangling.csv");
    fs::create_directory(d / "directory.npy");
    fs::create_directory(d / "directory.json");
    for (const char* empty : {"empty.npy", "empty.csv", "empty.safetensors", "empty.json"}) {
        std::FILE* f = std::fopen((d / empty).c_str(), "wb");
        REQUIRE(f != nullptr);
        std::fclose(f);
    }
    std::vector<std::string> inputs;
    for (const auto& entry : fs::directory_iterator(d)) inputs.push_back(entry.path().string());
    std::sort(inputs.begin(), inputs.end());
    REQUIRE(inputs.size() > 80);
    return inputs;
}

// What every command must do with every input. `exit_code` is the shell's: 124 after the time limit, 128 + N
// after signal N (an AddressSanitizer report aborts: SIGABRT).
// stdout may have many lines, but none with a character that acts on the terminal.
inline void check_survived(const std::string& what, int exit_code, const std::string& err, const std::string& out) {
    INFO(what << " -> exit " << exit_code << ", stderr: " << err.substr(0, 2000) << "\nstdout: " << out.substr(0, 2000));
    std::size_t start = 0;
    for (std::size_t end = out.find('\n'); end != std::string::npos; start = end + 1, end = out.find('\n', start))
        CHECK(is_printable_line(out.substr(start, end - start)));
    CHECK(is_printable_line(out.substr(start)));
    CHECK((exit_code == 0 || exit_code == 2));
    const auto lines = std::count(err.begin(), err.end(), '\n');
    CHECK(lines <= 1);
    if (exit_code == 2) CHECK(lines == 1);
    if (!err.empty()) {
        CHECK(err.back() == '\n');
        CHECK(is_printable_line(err.substr(0, err.size() - 1)));
        CHECK(err.size() < 1000);
    }
}

}  // namespace qs::hostile
