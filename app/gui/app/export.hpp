// Writing what the window shows to files: the figure as a PNG (the same bytes `quantscope render` writes for the
// same tensor, settings and width) and the four tensors (original, codes, dequantized, error) as .npy or .csv.
// Every file goes to a temporary name first and is renamed into place (the core's writers and
// WritePngAtomic), so a failure never leaves half a file.
#pragma once

#include <string>
#include <vector>

namespace qs::gui {

struct AppState;

struct FigureExport {
    std::string path;             // must end in .png
    int width = 1600;             // pixels, 320..8192 (render's --width); the height follows the figure
    bool with_pipeline = false;   // print the selected element's pipeline under the figure (render has none)
};

// Renders the figure of the current state offscreen (its own EGL and ImGui contexts; the caller's ImGui
// context is current again afterwards, its GL context is not: a window must make its own current again).
// Waits for a running recompute first so that the PNG shows the controls' settings. Returns false with a
// one-line *error on failure.
bool ExportFigurePng(AppState& app, const FigureExport& request, std::string* error);

enum class TensorFormat { Npy, Csv };

struct TensorExport {
    std::string directory;       // must exist
    std::string base = "quantscope";  // files <base>_original, _codes, _dequantized, _error
    TensorFormat format = TensorFormat::Npy;
};

// The four files' paths, in the order original, codes, dequantized, error (without codes: the three others).
std::vector<std::string> TensorExportPaths(const TensorExport& request, bool codes = true);
// Whether the state on show has codes to export: not a Model-tab row against a B that stores plain values.
bool ExportHasCodes(const AppState& app);

// Writes the four tensors of the current state (codes as int8/uint8 for up to 8 bits, else int16/uint16 in
// .npy; as integers in .csv). CSV holds 2-D data only: a rank-3 tensor is refused before anything is written.
// All four files or none (three, without codes: ExportHasCodes); the file the tensor was read from is never
// overwritten. Returns false with *error
// on failure; *written lists the files written (none on failure).
bool ExportTensors(AppState& app, const TensorExport& request, std::vector<std::string>* written, std::string* error);

}  // namespace qs::gui
