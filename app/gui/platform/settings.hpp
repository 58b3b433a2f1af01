// What the window remembers between runs: its size and position, the font scale, which panels are
// open and the figure settings. Kept in the user's config dir, never the working directory:
// $XDG_CONFIG_HOME/quantscope/settings.ini, else ~/.config/quantscope/settings.ini. Plain `key=value`
// lines; unknown keys and bad values are ignored (a damaged file never stops the program).
#pragma once

#include <map>
#include <string>

namespace qs::gui {

struct PanelToggles {
    bool controls = true;   // left column: quantization controls and the tensor editor
    bool figure = true;     // the four heatmaps
    bool metrics = true;
    bool histogram = true;
};

struct Settings {
    int window_x = -1, window_y = -1;  // -1: let the window manager place the window
    int window_width = 1600, window_height = 900;  // in screen coordinates
    bool maximized = false;
    float font_scale = 1.0f;  // the user's Ctrl+= / Ctrl+- factor, on top of the monitor's content scale
    PanelToggles panels;
    // The figure panel's settings as `figure.<key>` lines, stored verbatim so this file does not need
    // to know the figure's fields (the figure panel converts them).
    std::map<std::string, std::string> figure;
};

// "$XDG_CONFIG_HOME/quantscope" or "$HOME/.config/quantscope"; "" when neither variable is set.
std::string ConfigDir();
// "$XDG_CACHE_HOME/quantscope" or "$HOME/.cache/quantscope"; "" when neither variable is set.
std::string CacheDir();
// ConfigDir() + "/settings.ini", or "" without a config dir.
std::string SettingsPath();

// Missing file: defaults, no warning. Never throws.
Settings LoadSettings(const std::string& path);
// Creates the directory if needed and writes atomically (temporary file in the same directory, then
// rename). Returns false with a message on failure; the old file is then untouched.
bool SaveSettings(const std::string& path, const Settings& settings, std::string* error);

// Creates `dir` and its parents (like mkdir -p). Returns false with a message on failure.
bool MakeDirs(const std::string& dir, std::string* error);

}  // namespace qs::gui
