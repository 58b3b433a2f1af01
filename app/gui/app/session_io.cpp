#include "gui/app/session_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <sstream>
#include <utility>

#include "gui/app/app_state.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/widgets/colormap.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

namespace fs = std::filesystem;

std::string BoolText(bool b) { return b ? "1" : "0"; }

bool ParseBool(const std::string& text, bool& out) {
    if (text == "1" || text == "true") out = true;
    else if (text == "0" || text == "false") out = false;
    else return false;
    return true;
}

bool ParseInt(const std::string& text, std::int64_t& out) {
    try {
        out = cli::parse_int("", text);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

// "x0 y0 x1 y1" of a zoomed view; %.17g so that the reopened view is the same to the bit.
std::string ViewText(const HeatmapView& v) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g %.17g", v.x0, v.y0, v.x1, v.y1);
    return buf;
}

bool ParseViewText(const std::string& text, HeatmapView& out) {
    std::istringstream in(text);
    HeatmapView v;
    if (!(in >> v.x0 >> v.y0 >> v.x1 >> v.y1)) return false;
    std::string rest;
    if (in >> rest) return false;
    for (double d : {v.x0, v.y0, v.x1, v.y1})
        if (!std::isfinite(d)) return false;
    if (v.empty()) return false;
    out = v;
    return true;
}

// A file the session refers to: relative to the session's directory when it lies inside it (the two can move
// together), else absolute (load_session_tensor resolves relative paths against the session's directory).
std::string PathForSession(const std::string& file, const std::string& session_path) {
    std::error_code ec;
    const fs::path abs = fs::absolute(file, ec).lexically_normal();
    if (ec) return file;
    const fs::path dir = fs::absolute(session_path, ec).parent_path().lexically_normal();
    if (ec) return abs.string();
    const fs::path rel = abs.lexically_relative(dir);
    if (!rel.empty() && *rel.begin() != "..") return rel.string();
    return abs.string();
}

// A session's own source as an origin for the tensor it loads: file paths made absolute (they were relative to
// the session), inline values have none (they are saved inline again, or beside a new session).
bool OriginOfSession(const Session& s, const std::string& session_path, TensorOrigin& out) {
    if (s.source.kind == TensorSource::Kind::Inline) return false;
    out.source = s.source;
    if (s.source.kind == TensorSource::Kind::File) {
        fs::path p(s.source.path);
        if (p.is_relative()) p = fs::path(session_path).parent_path() / p;
        std::error_code ec;
        const fs::path abs = fs::absolute(p, ec);
        out.source.path = (ec ? p : abs).lexically_normal().string();
    }
    return true;
}

std::string JoinLines(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& p : parts) {
        if (p.empty()) continue;
        if (!out.empty()) out += "\n";
        out += p;
    }
    return out;
}

std::string FoldingNotice(const std::string& label, const std::string& note) {
    return note.empty() ? std::string() : label + ": " + note + " (rank above 3 is folded into the first axis)";
}

}  // namespace

// --------------------------------------------------------------------------------------------------- view

ViewSettings SessionView(const AppState& app) {
    ViewSettings v;
    v.emplace_back("label", app.doc.label);
    if (app.doc.base_mode != Mode::Manual) v.emplace_back("base_mode", to_string(app.doc.base_mode));
    for (const auto& [key, value] : FigurePanelSettingPairs(app.figure.settings)) v.emplace_back("figure." + key, value);
    v.emplace_back("figure.slice", std::to_string(app.figure.slice));
    v.emplace_back("figure.selected", std::to_string(app.figure.selected));
    if (!app.figure.view.empty()) v.emplace_back("figure.view", ViewText(app.figure.view));
    v.emplace_back("panels.controls", BoolText(app.panels.controls));
    v.emplace_back("panels.figure", BoolText(app.panels.figure));
    v.emplace_back("panels.metrics", BoolText(app.panels.metrics));
    v.emplace_back("panels.histogram", BoolText(app.panels.histogram));
    v.emplace_back("histogram.log_counts", BoolText(app.histogram.log_counts));
    v.emplace_back("presenter", BoolText(app.presenter));
    const std::string lesson = LessonRefForSession(app);
    if (!lesson.empty()) {
        v.emplace_back("lesson", lesson);
        v.emplace_back("lesson.step", std::to_string(app.lesson.step + 1));  // from 1, as --step
    }
    return v;
}

std::string ApplySessionView(AppState& app, const ViewSettings& view, std::string* failure) {
    std::vector<std::string> skipped;
    // The lesson is opened after the loop, at its step, whatever order the keys come in.
    const std::string* lesson = nullptr;
    const std::string* lesson_step = nullptr;
    const std::int64_t slices = app.doc.data ? app.doc.data->slices() : 1;
    const std::int64_t numel = app.doc.data ? app.doc.data->numel() : 0;
    for (const auto& [key, value] : view) {
        bool ok = true;
        std::int64_t n = 0;
        if (key == "label") {
            ok = !value.empty();
            if (ok) app.doc.label = value;
        } else if (key == "base_mode") {
            ok = value == "asymmetric" || value == "symmetric";
            if (ok) app.doc.base_mode = parse_mode(value);
        } else if (key == "figure.slice") {
            ok = ParseInt(value, n) && n >= 0 && n < slices;
            if (ok) app.figure.slice = static_cast<int>(n);
        } else if (key == "figure.selected") {
            ok = ParseInt(value, n) && n >= -1 && n < numel;
            if (ok) app.figure.selected = n;
        } else if (key == "figure.view") {
            ok = ParseViewText(value, app.figure.view);
        } else if (key.rfind("figure.", 0) == 0) {
            ok = ApplyFigurePanelSetting(app.figure.settings, key.c_str() + 7, value.c_str());
        } else if (key == "panels.controls") {
            ok = ParseBool(value, app.panels.controls);
        } else if (key == "panels.figure") {
            ok = ParseBool(value, app.panels.figure);
        } else if (key == "panels.metrics") {
            ok = ParseBool(value, app.panels.metrics);
        } else if (key == "panels.histogram") {
            ok = ParseBool(value, app.panels.histogram);
        } else if (key == "histogram.log_counts") {
            ok = ParseBool(value, app.histogram.log_counts);
        } else if (key == "presenter") {
            ok = ParseBool(value, app.presenter);
        } else if (key == "lesson") {
            ok = !value.empty();
            if (ok) lesson = &value;
        } else if (key == "lesson.step") {
            ok = ParseInt(value, n) && n >= 1;
            if (ok) lesson_step = &value;
        } else {
            ok = false;
        }
        if (!ok) skipped.push_back(key + "=" + value);
    }
    // A lesson that does not load is named (quoted: the file's name may be anything) with its reason, on a line
    // of its own: it is understood, it just did not open (in the list below, a long name hid the reason).
    std::string lesson_line;
    if (lesson) {
        std::int64_t step = 1;
        if (lesson_step) ParseInt(*lesson_step, step);
        std::string problem;
        if (!RestoreLesson(app, *lesson, static_cast<int>(std::min<std::int64_t>(step, 1 << 20)) - 1, &problem))
            lesson_line = "the session's lesson " + quoted_text(*lesson) + " did not open: " + printable(problem, 240);
    } else if (lesson_step) {
        skipped.push_back("lesson.step=" + *lesson_step + " (no lesson)");
    }
    if (failure) *failure = lesson_line;
    if (skipped.empty()) return lesson_line;
    // The pairs come from the file: a few, escaped and shortened, keep the notice one readable line.
    constexpr std::size_t kShown = 5;
    std::string out = "skipped view settings this version does not understand:";
    for (std::size_t i = 0; i < skipped.size() && i < kShown; ++i) out += " " + printable(skipped[i]);
    if (skipped.size() > kShown) out += " … (" + std::to_string(skipped.size()) + " in all)";
    return JoinLines({lesson_line, out});
}

// ------------------------------------------------------------------------------------------------ sessions

Session MakeSession(const AppState& app, const std::string& session_path, std::string* side_tensor) {
    if (side_tensor) side_tensor->clear();
    if (!app.doc.data) throw Error("nothing to save: no tensor is open");
    Session s;
    s.config = app.doc.config;
    s.view = SessionView(app);
    if (const TensorOrigin* origin = app.doc.origins.find(app.doc.data.get())) {
        s.source = origin->source;
        if (s.source.kind == TensorSource::Kind::File) s.source.path = PathForSession(s.source.path, session_path);
    } else if (!app.doc.tensor) {
        throw Error("the tensor is read from a file it no longer matches: open the file again to save a session");
    } else if (app.doc.tensor->numel() <= kMaxInlineValues) {
        s.source.kind = TensorSource::Kind::Inline;
        s.tensor = *app.doc.tensor;
    } else {
        // Edited and too big to inline: the values go to a .npy beside the session.
        const std::string side = session_path + ".tensor.npy";
        if (side_tensor) *side_tensor = side;
        s.source.kind = TensorSource::Kind::File;
        s.source.path = fs::path(side).filename().string();
    }
    return s;
}

bool SaveSession(AppState& app, const std::string& session_path, std::string* error) {
    try {
        // `quantscope gui FILE` knows a session by its extension.
        if (lower_extension(session_path) != ".json") throw Error("a session file name must end in .json: " + session_path);
        std::string side;
        const Session s = MakeSession(app, session_path, &side);
        const std::string text = session_to_json(s);  // refuses, before any file is made, what would not reopen
        // The session and its side tensor appear together or not at all.
        OutputFiles files;
        if (!side.empty()) save_floats(files.add(side), app.doc.tensor->shape, app.doc.tensor->values.data());
        files.add(session_path).write(text);
        files.commit();
        return true;
    } catch (const std::exception& e) {
        if (error) *error = e.what();
        return false;
    }
}

void OpenSession(AppState& app, const std::string& session_path) {
    Session s;
    try {
        s = read_session(session_path);
    } catch (const std::exception& e) {
        app.doc.error = e.what();
        return;
    }
    TensorOrigin origin;
    const bool has_origin = OriginOfSession(s, session_path, origin);
    const QuantConfig config = s.config;
    ViewSettings view = std::move(s.view);
    auto session = std::make_shared<const Session>(std::move(s));
    app.doc.start_tensor_job("Opening " + session_path, [session, session_path, origin, has_origin, config,
                                                      view = std::move(view), &app](TaskProgress& p) {
        p.set_stage("reading");
        p.set_progress(0.05f);
        std::string note;
        Tensor t = load_session_tensor(*session, session_path, &note);
        TensorJobResult r = FinishTensorJob(std::move(t), config, session_path, p);
        r.then = [origin, has_origin, note, view, &app](Document&) {
            AppState& a = app;
            if (has_origin) {
                TensorOrigin o = origin;
                o.note = note;
                a.doc.origins.record(a.doc.data, std::move(o));
            }
            a.lesson.lesson.reset();  // the session's lesson, or none
            const std::string problems = ApplySessionView(a, view);
            a.doc.notice = JoinLines({a.doc.notice, FoldingNotice(a.doc.label, note), problems});
        };
        return r;
    });
}

std::string StartWithInput(AppState& app, cli::Input& input, const GuiFileOptions& files) {
    std::shared_ptr<const TensorData> data;
    try {
        data = input.file ? MakeTensorData(std::shared_ptr<const TensorFile>(std::move(input.file)))
                          : MakeTensorData(std::make_shared<const Tensor>(std::move(input.tensor)));
    } catch (const std::exception& e) {
        app.doc.error = e.what();
        return app.doc.error;
    }
    if (!app.doc.apply_data(std::move(data), input.label, &input.config)) return app.doc.error;
    if (input.source.kind != TensorSource::Kind::Inline) app.doc.origins.record(app.doc.data, {input.source, input.note});
    std::string problems, failure;
    if (input.from_session) problems = ApplySessionView(app, input.view, &failure);
    const std::string override_problems = ApplySessionView(app, files.view);
    app.doc.notice = JoinLines({app.doc.notice, FoldingNotice(app.doc.label, input.note), problems, override_problems});
    if (!files.browse.empty()) {
        std::string problem;
        if (!OpenSafetensorsBrowser(app.safetensors, files.browse, &problem)) app.doc.error = failure = problem;
    }
    if (!files.model.empty()) {
        std::string problem;
        if (!OpenModel(app.model, files.model, &problem)) app.doc.error = failure = problem;
        else if (files.browse.empty()) app.request_tab = kTabModel;  // an index has no tensor list to show instead
    }
    if (!files.save_figure.empty()) app.files.queued_figure = FigureExport{files.save_figure};
    if (!files.save_session.empty()) app.files.queued_session = files.save_session;
    app.doc.history = UndoHistory{};
    return failure;
}

}  // namespace qs::gui
