#include "gui/platform/settings.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>

#include <sys/stat.h>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

// A few hundred bytes are written; anything far bigger is not ours.
constexpr std::size_t kMaxSettingsBytes = std::size_t{1} << 20;

std::string Env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

// XDG base directory rule: the variable if it is an absolute path, else $HOME/<fallback>.
std::string XdgDir(const char* variable, const char* fallback) {
    std::string base = Env(variable);
    if (base.empty() || base[0] != '/') {
        const std::string home = Env("HOME");
        if (home.empty()) return {};
        base = home + "/" + fallback;
    }
    return base + "/quantscope";
}

bool ParseInt(const std::string& text, int& out) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno != 0 || v < -1000000 || v > 1000000) return false;
    out = static_cast<int>(v);
    return true;
}

bool ParseFloat(const std::string& text, float& out) {
    char* end = nullptr;
    const float v = std::strtof(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(v == v)) return false;
    out = v;
    return true;
}

bool ParseBool(const std::string& text, bool& out) {
    if (text == "1" || text == "true") out = true;
    else if (text == "0" || text == "false") out = false;
    else return false;
    return true;
}

}  // namespace

std::string ConfigDir() { return XdgDir("XDG_CONFIG_HOME", ".config"); }
std::string CacheDir() { return XdgDir("XDG_CACHE_HOME", ".cache"); }

std::string SettingsPath() {
    const std::string dir = ConfigDir();
    return dir.empty() ? std::string() : dir + "/settings.ini";
}

Settings LoadSettings(const std::string& path) {
    Settings s;
    if (path.empty()) return s;
    std::string text;
    try {
        text = read_small_file(path, kMaxSettingsBytes);
    } catch (const Error&) {
        return s;  // none yet, or not a settings file (a FIFO, a directory, something huge): the defaults
    }
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line[0] == ';' || line[0] == '[') continue;
        const auto eq = line.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = line.substr(0, eq);
        const std::string value = line.substr(eq + 1);
        if (key == "window_x") ParseInt(value, s.window_x);
        else if (key == "window_y") ParseInt(value, s.window_y);
        else if (key == "window_width") ParseInt(value, s.window_width);
        else if (key == "window_height") ParseInt(value, s.window_height);
        else if (key == "maximized") ParseBool(value, s.maximized);
        else if (key == "font_scale") ParseFloat(value, s.font_scale);
        else if (key == "panel.controls") ParseBool(value, s.panels.controls);
        else if (key == "panel.figure") ParseBool(value, s.panels.figure);
        else if (key == "panel.metrics") ParseBool(value, s.panels.metrics);
        else if (key == "panel.histogram") ParseBool(value, s.panels.histogram);
        else if (key.rfind("figure.", 0) == 0) s.figure[key.substr(7)] = value;
    }
    // A damaged file must not give an unusable window.
    if (s.window_width < 400 || s.window_width > 16384) s.window_width = 1600;
    if (s.window_height < 300 || s.window_height > 16384) s.window_height = 900;
    if (!(s.font_scale >= 0.5f && s.font_scale <= 4.0f)) s.font_scale = 1.0f;
    return s;
}

bool MakeDirs(const std::string& dir, std::string* error) {
    if (dir.empty()) {
        if (error) *error = "no directory (HOME is not set)";
        return false;
    }
    for (std::size_t pos = 1; pos <= dir.size(); ++pos) {
        if (pos != dir.size() && dir[pos] != '/') continue;
        const std::string part = dir.substr(0, pos);
        if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
            if (error) *error = "cannot create " + part + ": " + std::strerror(errno);
            return false;
        }
    }
    return true;
}

bool SaveSettings(const std::string& path, const Settings& s, std::string* error) {
    if (path.empty()) {
        if (error) *error = "no config directory (HOME is not set)";
        return false;
    }
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0 && !MakeDirs(path.substr(0, slash), error)) return false;

    std::ostringstream out;
    out << "# QuantScope window settings (rewritten on exit)\n";
    if (s.window_x >= 0 && s.window_y >= 0) {
        out << "window_x=" << s.window_x << "\n" << "window_y=" << s.window_y << "\n";
    }
    out << "window_width=" << s.window_width << "\n"
        << "window_height=" << s.window_height << "\n"
        << "maximized=" << (s.maximized ? 1 : 0) << "\n"
        << "font_scale=" << s.font_scale << "\n"
        << "panel.controls=" << (s.panels.controls ? 1 : 0) << "\n"
        << "panel.figure=" << (s.panels.figure ? 1 : 0) << "\n"
        << "panel.metrics=" << (s.panels.metrics ? 1 : 0) << "\n"
        << "panel.histogram=" << (s.panels.histogram ? 1 : 0) << "\n";
    for (const auto& [key, value] : s.figure) {
        if (key.find_first_of("=\n") == std::string::npos && value.find('\n') == std::string::npos) {
            out << "figure." << key << "=" << value << "\n";
        }
    }
    try {
        const std::string bytes = out.str();
        qs::write_file_atomic(path, bytes.data(), bytes.size());
    } catch (const std::exception& e) {
        if (error) *error = error_text(e);
        return false;
    }
    return true;
}

}  // namespace qs::gui
