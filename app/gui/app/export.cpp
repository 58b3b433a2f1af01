#include "gui/app/export.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <memory>
#include <vector>

#include "gui/app/app_state.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/app/figure_png.hpp"
#include "gui/app/session_io.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/stored_blocks.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::gui {
namespace {

namespace fs = std::filesystem;

// SPEC's code files: numpy int8/uint8 for N <= 8, int16/uint16 up to N = 16.
NpyDtype CodeDtype(const IntType& t) {
    if (t.bits <= 8) return t.is_signed ? NpyDtype::I1 : NpyDtype::U1;
    return t.is_signed ? NpyDtype::I2 : NpyDtype::U2;
}

// The values as float32, a chunk at a time straight from the view.
void WriteValues(const TensorView& view, TensorWriter& out) {
    constexpr std::int64_t kChunk = std::int64_t{1} << 16;
    std::vector<float> scratch(static_cast<std::size_t>(kChunk));
    const std::int64_t n = view.numel();
    view.guarded([&] {
        for (std::int64_t at = 0; at < n; at += kChunk) {
            const std::int64_t len = std::min(kChunk, n - at);
            out.append(floats_at(view, at, len, scratch.data()), len);
        }
    });
}

}  // namespace

bool ExportFigurePng(AppState& app, const FigureExport& request, std::string* error) {
    auto fail = [&](const std::string& what) {
        if (error) *error = what;
        return false;
    };
    if (request.path.empty()) return fail("the figure needs a file name");
    if (lower_extension(request.path) != ".png") return fail("the figure's file name must end in .png: " + request.path);
    if (request.width < 320 || request.width > 8192) return fail("the figure width must be 320 to 8192 pixels");
    app.doc.finish_recompute_now();
    const QuantView view = app.doc.view();
    if (!view.valid()) return fail("nothing to save: no quantized tensor");
    // What `quantscope render` sets up: the user's figure settings without the toolbar, the slice on show.
    FigurePanelSettings settings = app.figure.settings;
    settings.show_toolbar = false;
    FigurePngOptions options;
    options.slice = app.figure.slice;
    if (request.with_pipeline) options.selected = app.figure.selected;
    return RenderFigurePng(view, settings, options, request.width, request.path, error);
}

std::vector<std::string> TensorExportPaths(const TensorExport& request, bool codes) {
    const std::string ext = request.format == TensorFormat::Npy ? ".npy" : ".csv";
    std::vector<std::string> out;
    for (const std::string what : {"original", "codes", "dequantized", "error"})
        if (codes || what != "codes") out.push_back((fs::path(request.directory) / (request.base + "_" + what + ext)).string());
    return out;
}

bool ExportHasCodes(const AppState& app) {
    const TensorData* data = app.doc.data.get();
    return !(data && data->stored && data->stored->values() && app.doc.config.format == data->stored->format);
}

bool ExportTensors(AppState& app, const TensorExport& request, std::vector<std::string>* written, std::string* error) {
    if (written) written->clear();
    auto fail = [&](const std::string& what) {
        if (error) *error = what;
        return false;
    };
    if (request.base.empty()) return fail("the files need a base name");
    if (request.base.find('/') != std::string::npos) return fail("the base name must not contain '/'");
    std::error_code ec;
    if (request.directory.empty() || !fs::is_directory(request.directory, ec))
        return fail("not a directory: " + request.directory);
    app.doc.finish_recompute_now();
    const QuantView view = app.doc.view();
    if (!view.valid()) return fail("nothing to export: no quantized tensor");
    const TensorData& t = *view.data;
    // Checked before the first file so that a refusal leaves nothing behind.
    if (request.format == TensorFormat::Csv && t.rank() == 3)
        return fail("CSV holds 2-D data: this tensor is " + shape_to_string(t.shape()) + "; export it as .npy");
    // B's plain values (a Model-tab row) have no codes: no file of zeros for them.
    const bool with_codes = !(view.params->stored && view.params->stored->values());
    const std::vector<std::string> paths = TensorExportPaths(request, with_codes);
    try {
        // The file the tensor was read from is not an export target, whatever the names.
        std::vector<FileRole> inputs;
        const TensorOrigin* origin = app.doc.origins.find(view.data);
        if (origin != nullptr && origin->source.kind == TensorSource::Kind::File)
            inputs.push_back({"the tensor's file", origin->source.path});
        std::vector<FileRole> outputs;
        for (const std::string& path : paths) outputs.push_back({"the export", path});
        check_distinct_files(inputs, outputs);
        // All four or none, streamed: the values as they are read, the results as one pass computes them.
        OutputFiles files;
        std::size_t next = 0;
        TensorWriter original(files.add(paths[next++]), t.shape(), NpyDtype::F4);
        std::unique_ptr<TensorWriter> codes;
        if (with_codes) codes = std::make_unique<TensorWriter>(files.add(paths[next++]), t.shape(), CodeDtype(view.config->dtype));
        TensorWriter dequantized(files.add(paths[next++]), t.shape(), NpyDtype::F4);
        TensorWriter errors(files.add(paths[next++]), t.shape(), NpyDtype::F4);
        WriteValues(t.view, original);
        OutputSelection all;
        all.codes = with_codes;
        all.dequantized = all.error = true;
        quantize_view(t.view, *view.params, *view.config, all,
                      [&](std::int64_t, std::int64_t count, const QuantOutputs& batch) {
                          if (batch.codes && codes) codes->append(batch.codes, count);
                          if (batch.dequantized) dequantized.append(batch.dequantized, count);
                          if (batch.error) errors.append(batch.error, count);
                      });
        for (const TensorWriter* w : {&original, codes.get(), &dequantized, &errors})
            if (w) w->finish();
        files.commit();
    } catch (const std::exception& e) {
        return fail(error_text(e));
    }
    if (written) *written = paths;
    return true;
}

}  // namespace qs::gui
