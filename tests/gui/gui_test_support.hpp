// What the window tests share: a temporary directory, running the built binary (under xvfb-run) with
// its output captured and the user's settings kept out of it, and reading files back.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace qs::gui_test {

inline const char* const kXvfb = "xvfb-run -a -s \"-screen 0 1600x900x24\" ";

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline bool path_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// Exists and is not empty.
inline bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

inline bool have_xvfb() { return std::system("command -v xvfb-run >/dev/null 2>&1") == 0; }

// A fresh directory under $TMPDIR, removed with everything in it.
struct TempDir {
    std::string path;
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/qs-gui-test-XXXXXX";
        std::vector<char> buf(pattern.begin(), pattern.end());
        buf.push_back('\0');
        REQUIRE(::mkdtemp(buf.data()) != nullptr);
        path = buf.data();
    }
    ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
    std::string operator/(const std::string& name) const { return path + "/" + name; }
};

struct Run {
    int exit_code = -1;
    std::string out, err;
};

// Runs `command` through the shell with stdout and stderr captured to files in `dir`; the child's config
// and cache directories point into `dir`, so no test reads or writes the user's settings.
inline Run run(const TempDir& dir, const std::string& command) {
    const std::string out = dir.path + "/stdout", err = dir.path + "/stderr";
    const std::string env = "XDG_CONFIG_HOME='" + dir.path + "/config' XDG_CACHE_HOME='" + dir.path + "/cache' ";
    const int status = std::system((env + command + " >'" + out + "' 2>'" + err + "'").c_str());
    Run r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
}

}  // namespace qs::gui_test
