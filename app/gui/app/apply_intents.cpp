#include "gui/app/apply_intents.hpp"

#include <cstdint>
#include <filesystem>
#include <numeric>
#include <type_traits>
#include <utility>

#include "gui/app/analysis_tabs.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/app/session_io.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::gui {
namespace {

// A tool's result picked (PickConfigIntent, PickManualIntent): applied as one undo step unless a tensor job runs.
void PickConfig(Document& doc, const QuantConfig& config, bool checked) {
    if (doc.busy()) return;
    QuantConfig next = config;
    std::string problem;
    if (checked && !CheckedConfig(doc, config, next, &problem)) {
        doc.error = problem;
        return;
    }
    if (!doc.apply_config(next, false, &problem)) doc.error = problem;
}

// Manual s and z for the whole tensor (a click on the error landscape), with no calibrator.
QuantConfig ManualConfig(QuantConfig next, const PickManualIntent& pick) {
    next.mode = Mode::Manual;
    next.granularity = Granularity::Tensor;
    next.axis = 0;
    next.group_size = 0;
    next.calibration = Calibration::MinMax;
    next.manual_scale = pick.scale;
    next.manual_zero_point = pick.zero_point;
    return next;
}

void SelectElement(AppState& app, std::int64_t flat) {
    if (!app.doc.shown_data) return;
    app.figure.selected = flat;
    app.figure.slice = static_cast<int>(flat / (app.doc.shown_data->rows() * app.doc.shown_data->cols()));
}

// The blocks the figure's textures (and the comparison's map of A's errors, which reads the same overview) were
// reduced to this frame: the document's next overview is computed at them, so that each texel is one of its blocks.
void ShowFigureBlocks(AppState& app) {
    std::int64_t fy = 0, fx = 0, compare_fy = 0, compare_fx = 0;
    app.figure.tiles.take_asked_blocks(fy, fx);
    app.compare.a_tiles.take_asked_blocks(compare_fy, compare_fx);
    fy = std::gcd(fy, compare_fy);
    fx = std::gcd(fx, compare_fx);
    if (fy > 0 && fx > 0) app.doc.show_blocks(fy, fx);
}

}  // namespace

void ApplyIntents(AppState& app) {
    Document& doc = app.doc;
    for (Intent& intent : app.intents.take()) {
        std::visit(
            [&](auto& i) {
                using T = std::decay_t<decltype(i)>;
                if constexpr (std::is_same_v<T, ApplyConfigIntent>) {
                    std::string problem;
                    if (!doc.apply_config(i.config, i.continuous, &problem)) doc.error = problem;
                } else if constexpr (std::is_same_v<T, ApplyTensorIntent>) {
                    doc.apply_tensor(std::move(i.tensor), std::move(i.label));
                } else if constexpr (std::is_same_v<T, TensorJobIntent>) {
                    doc.start_tensor_job(std::move(i.label), std::move(i.work));
                } else if constexpr (std::is_same_v<T, OpenFileIntent>) {
                    OpenTensorFile(app, i.path);
                } else if constexpr (std::is_same_v<T, LoadPresetIntent>) {
                    LoadPreset(app, i.name);
                } else if constexpr (std::is_same_v<T, ShowModelListIntent>) {
                    app.safetensors.open = app.safetensors.checkpoint != nullptr;
                } else if constexpr (std::is_same_v<T, LessonStepIntent>) {
                    GoToLessonStep(app, i.step);
                } else if constexpr (std::is_same_v<T, LessonRevealIntent>) {
                    RevealLesson(app);
                } else if constexpr (std::is_same_v<T, ErrorIntent>) {
                    doc.error = i.message;
                } else if constexpr (std::is_same_v<T, PickConfigIntent>) {
                    PickConfig(doc, i.config, i.checked);
                } else if constexpr (std::is_same_v<T, PickManualIntent>) {
                    PickConfig(doc, ManualConfig(doc.config, i), false);
                } else if constexpr (std::is_same_v<T, SelectElementIntent>) {
                    SelectElement(app, i.flat);
                }
            },
            intent);
    }
    ShowFigureBlocks(app);
}

void OpenTensorFile(AppState& app, const std::string& path) {
    if (IsCheckpointIndexPath(path)) {  // a sharded checkpoint: every tensor in the Model tab
        std::string problem;
        if (OpenModel(app.model, path, &problem)) app.request_tab = AnalysisTabIndex("model");
        else app.doc.error = problem;
        return;
    }
    if (lower_extension(path) == ".json") {
        OpenSession(app, path);  // a saved session: its tensor and every setting
        return;
    }
    // A model file holds many tensors: list them and let the user pick one (only that one is read).
    if (IsModelFilePath(path)) {
        std::string problem;
        if (!OpenSafetensorsBrowser(app.safetensors, path, &problem)) app.doc.error = problem;
        else if (!OpenModel(app.model, path, &problem)) app.doc.error = problem;
        return;
    }
    std::error_code ec;
    TensorOrigin origin;
    origin.source.kind = TensorSource::Kind::File;
    origin.source.path = std::filesystem::absolute(path, ec).lexically_normal().string();
    if (ec) origin.source.path = path;
    app.doc.start_tensor_job("Opening " + path, [path, origin, config = app.doc.config](TaskProgress& p) {
        p.set_stage("reading");
        p.set_progress(0.05f);
        TensorOrigin o = origin;
        // Read in its stored type from the mapping (decoded into memory when small enough).
        auto file = std::make_shared<const TensorFile>(path, "");
        o.note = file->note();
        TensorJobResult r = FinishTensorJob(MakeTensorData(std::move(file)), config, path, p);
        if (!o.note.empty())
            r.notice += std::string(r.notice.empty() ? "" : "\n") + path + ": " + o.note +
                        " (rank above 3 is folded into the first axis)";
        r.then = RecordOrigin(std::move(o));
        return r;
    });
}

void LoadPreset(AppState& app, const std::string& name) {
    app.doc.start_tensor_job("Loading preset " + name, [name](TaskProgress& p) {
        p.set_stage("building");
        Preset preset = make_preset(name);
        TensorJobResult r = FinishTensorJob(std::move(preset.tensor), preset.config, preset.name, p);
        TensorOrigin origin;
        origin.source.kind = TensorSource::Kind::Preset;
        origin.source.preset = preset.name;
        r.then = RecordOrigin(std::move(origin));
        return r;
    });
}

}  // namespace qs::gui
