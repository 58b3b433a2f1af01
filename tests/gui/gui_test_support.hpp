// What the window tests share: a temporary directory, running the built binary (under xvfb-run) with
// its output captured and the user's settings kept out of it, and reading files back; for the panel tests, a
// tensor with its quantization as the app hands it to the panels, and an offscreen window drawing a panel.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cfloat>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <imgui.h>

#include "gui/document/quant_view.hpp"
#include "gui/document/recompute.hpp"
#include "gui/document/tensor_data.hpp"
#include "gui/panels/intents.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/widgets/style.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_io.hpp"

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
// xvfb-run's own failures (two servers started at once racing for a display number under `-a`, a lock
// left behind) say "xvfb-run: error" and are not the program's: the command is run again, up to three times.
inline Run run(const TempDir& dir, const std::string& command) {
    const std::string out = dir.path + "/stdout", err = dir.path + "/stderr";
    const std::string env = "XDG_CONFIG_HOME='" + dir.path + "/config' XDG_CACHE_HOME='" + dir.path + "/cache' ";
    Run r;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int status = std::system((env + command + " >'" + out + "' 2>'" + err + "'").c_str());
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = read_file(out);
        r.err = read_file(err);
        if (r.err.find("xvfb-run: error") == std::string::npos) break;
    }
    return r;
}

// A shared tensor with its quantization: what the app hands the panels. The full-size result is the tests'
// reference; the view carries only the overview, as the document's does.
struct SharedQuant {
    std::shared_ptr<const qs::gui::TensorData> data;
    std::shared_ptr<const qs::Tensor> tensor;
    qs::QuantConfig config;
    qs::QuantParams params;
    qs::QuantResult result;
    qs::QuantOverview overview;
    std::uint64_t generation = 1;
    qs::gui::QuantView view() const {
        qs::gui::QuantView v;
        v.data = data.get();
        v.tensor = tensor.get();
        v.config = &config;
        v.params = &params;
        v.overview = &overview;
        v.generation = generation;
        return v;
    }
    void requantize(const qs::QuantConfig& c) {
        config = c;
        result = qs::quantize(*tensor, config, &params);
        overview = qs::quantize_overview(data->view, params, config, data->values.grid);
        ++generation;
    }
};

inline SharedQuant MakeSharedQuant(qs::Tensor t, const qs::QuantConfig& c) {
    SharedQuant s;
    s.tensor = std::make_shared<const qs::Tensor>(std::move(t));
    s.data = qs::gui::MakeTensorData(s.tensor);
    s.requantize(c);
    return s;
}

// A tensor file opened as the window opens a large one (a view of its mapping, no float32 copy when above the
// in-memory limit) with its quantization's overview: the view the panels get, as for SharedQuant.
struct MappedQuant {
    std::shared_ptr<const qs::gui::TensorData> data;
    qs::QuantConfig config;
    qs::QuantParams params;
    qs::QuantOverview overview;
    qs::gui::QuantView view() const {
        qs::gui::QuantView v;
        v.data = data.get();
        v.config = &config;
        v.params = &params;
        v.overview = &overview;
        v.generation = v.tensor_generation = 1;
        return v;
    }
};

inline MappedQuant OpenMapped(const std::string& path, const qs::QuantConfig& config = {}) {
    MappedQuant m;
    m.data = qs::gui::MakeTensorData(std::make_shared<const qs::TensorFile>(path, ""));
    m.config = config;
    m.params = qs::gui::ParamsFor(*m.data, m.config);
    m.overview = qs::quantize_overview(m.data->view, m.params, m.config, m.data->values.grid);
    return m;
}

// An offscreen window of the app's look (fonts at `font_px`), drawing a frame's `body` full-size in one
// undecorated ImGui window, as a panel in the app's column would be. Set QS_FIGURE_PNG_DIR to keep save()'s PNGs.
struct PanelWindow {
    qs::gui::OffscreenRenderer r;
    explicit PanelWindow(int w = 1400, int h = 800, float font_px = 16.0f) {
        std::string error;
        const bool ok = r.init(w, h, [font_px] {
            qs::gui::BuildFonts(font_px);
            qs::gui::ApplyStyle(true, font_px / 16.0f);
        }, &error);
        REQUIRE_MESSAGE(ok, "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
    }
    template <typename F>
    void frame(F&& body, ImVec2 mouse = ImVec2(-FLT_MAX, -FLT_MAX), bool down = false) {
        r.frame([&] {
            ImGui::SetNextWindowPos(ImVec2(0, 0));
            ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
            ImGui::Begin("panel", nullptr, ImGuiWindowFlags_NoDecoration);
            body();
            ImGui::End();
        }, mouse, down);
    }
    void save(const std::string& name) {
        if (const char* dir = std::getenv("QS_FIGURE_PNG_DIR")) {
            std::vector<std::uint8_t> px;
            r.read_pixels(px);
            std::string error;
            CHECK(qs::gui::WritePngAtomic(std::string(dir) + "/qs_panel_" + name + ".png", r.width(), r.height(), px,
                                            true, &error));
        }
    }
};

// The last intent of kind T a panel queued in `out` (and the queue emptied), if any.
template <class T>
std::optional<T> Asked(qs::gui::Intents& out) {
    std::optional<T> asked;
    for (qs::gui::Intent& i : out.take())
        if (T* t = std::get_if<T>(&i)) asked = std::move(*t);
    return asked;
}

}  // namespace qs::gui_test
