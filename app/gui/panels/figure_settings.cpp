// The figure's settings as (key, value) pairs: what settings.ini and a session's view keep of them.
#include <cstring>

#include "gui/panels/figure_panel.hpp"

namespace qs::gui {
namespace {

const char* kAnnotateNames[] = {"auto", "on", "off"};
const char* kLayoutNames[] = {"auto", "row", "grid"};

}  // namespace

const char* FigureLayoutName(FigureLayoutMode mode) { return kLayoutNames[static_cast<int>(mode)]; }

bool ParseFigureLayout(const char* text, FigureLayoutMode& out) {
    for (int i = 0; i < 3; ++i) {
        if (std::strcmp(text, kLayoutNames[i]) == 0) {
            out = static_cast<FigureLayoutMode>(i);
            return true;
        }
    }
    return false;
}

std::vector<std::pair<std::string, std::string>> FigurePanelSettingPairs(const FigurePanelSettings& s) {
    auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
    return {{"colormap", ColormapName(s.colormap)},
            {"lesson_look", flag(s.lesson_look)},
            {"shared_range", flag(s.shared_range)},
            {"annotate", kAnnotateNames[static_cast<int>(s.annotate)]},
            {"show_pipeline", flag(s.show_pipeline)},
            {"show_toolbar", flag(s.show_toolbar)},
            {"layout", FigureLayoutName(s.layout)}};
}

bool ApplyFigurePanelSetting(FigurePanelSettings& s, const char* key, const char* value) {
    auto parse_bool = [&](bool& out) {
        if (std::strcmp(value, "1") == 0 || std::strcmp(value, "true") == 0) out = true;
        else if (std::strcmp(value, "0") == 0 || std::strcmp(value, "false") == 0) out = false;
        else return false;
        return true;
    };
    if (std::strcmp(key, "colormap") == 0) {
        Colormap m;
        if (!ParseColormap(value, m) || m == Colormap::White) return false;
        s.colormap = m;
        return true;
    }
    if (std::strcmp(key, "annotate") == 0) {
        for (int i = 0; i < 3; ++i) {
            if (std::strcmp(value, kAnnotateNames[i]) == 0) {
                s.annotate = static_cast<AnnotateMode>(i);
                return true;
            }
        }
        return false;
    }
    if (std::strcmp(key, "lesson_look") == 0) return parse_bool(s.lesson_look);
    if (std::strcmp(key, "shared_range") == 0) return parse_bool(s.shared_range);
    if (std::strcmp(key, "show_pipeline") == 0) return parse_bool(s.show_pipeline);
    if (std::strcmp(key, "show_toolbar") == 0) return parse_bool(s.show_toolbar);
    if (std::strcmp(key, "layout") == 0) return ParseFigureLayout(value, s.layout);
    if (std::strcmp(key, "grid") == 0) {  // settings and sessions written before the layout had three choices
        bool grid = false;
        if (!parse_bool(grid)) return false;
        s.layout = grid ? FigureLayoutMode::Grid : FigureLayoutMode::Auto;
        return true;
    }
    return false;
}

}  // namespace qs::gui
