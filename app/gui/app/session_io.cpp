#include "gui/app/session_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <sstream>
#include <utility>

#include "gui/app/analysis_tabs.hpp"
#include "gui/app/open_importance.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/lesson_control.hpp"
#include "gui/app/session_fields.hpp"
#include "gui/widgets/colormap.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/model_panel.hpp"
#include "gui/panels/safetensors_browser.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/stored_tensor.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

namespace fs = std::filesystem;

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

// A path the session wrote (relative to the session, or absolute) as a path to open.
std::string SessionFilePath(const std::string& value, const std::string& session_path) {
    fs::path file(value);
    if (file.is_relative() && !session_path.empty()) file = fs::path(session_path).parent_path() / file;
    return file.lexically_normal().string();
}

std::string DigestText(std::uint64_t digest) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(digest));
    return buf;
}

const std::string* ViewValue(const ViewSettings& view, const std::string& key) {
    for (const auto& [k, v] : view)
        if (k == key) return &v;
    return nullptr;
}

std::string FoldingNotice(const std::string& label, const std::string& note) {
    return note.empty() ? std::string() : label + ": " + note + " (rank above 3 is folded into the first axis)";
}

// One row a key, in the order a session writes them: the document's label and base mode, the figure, the
// View menu's panels, each analysis tab's own keys (AnalysisTabs()), presenter mode, the lesson.
std::vector<SessionField> MakeSessionFields() {
    std::vector<SessionField> f;
    f.push_back({"label", [](const AppState& app, const std::string& k, ViewSettings& v) { v.emplace_back(k, app.doc.label); },
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     if (value.empty()) return false;
                     r.label = &value;
                     return true;
                 }});
    f.push_back({"base_mode",
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     if (app.doc.base_mode != Mode::Manual) v.emplace_back(k, to_string(app.doc.base_mode));
                 },
                 // What the writer writes: cast too (a float format's downcast, a Model-tab row against B's plain
                 // values), where the session's format casts.
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     if (value != "asymmetric" && value != "symmetric" && value != "cast") return false;
                     if (value == "cast") {
                         const Document& doc = r.app.doc;
                         if (!doc.data) return false;
                         QuantConfig cast = doc.config;
                         cast.mode = Mode::Cast;
                         try {
                             check_config(cast, doc.data->shape());
                         } catch (const std::exception&) {
                             return false;
                         }
                     }
                     r.base_mode = parse_mode(value);
                     return true;
                 }});
    f.push_back({"figure.",  // FigurePanelSettings' pairs
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     for (const auto& [key, value] : FigurePanelSettingPairs(app.figure.settings)) v.emplace_back(k + key, value);
                 },
                 [](ViewRead& r, const std::string& key, const std::string& value) {
                     return ApplyFigurePanelSetting(r.app.figure.settings, key.c_str() + std::strlen("figure."), value.c_str());
                 }});
    f.push_back({"figure.slice",
                 [](const AppState& app, const std::string& k, ViewSettings& v) { v.emplace_back(k, std::to_string(app.figure.slice)); },
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     std::int64_t n = 0;
                     if (!ParseInt(value, n) || n < 0 || n >= r.slices) return false;
                     r.app.figure.slice = static_cast<int>(n);
                     return true;
                 }});
    f.push_back({"figure.selected",
                 [](const AppState& app, const std::string& k, ViewSettings& v) { v.emplace_back(k, std::to_string(app.figure.selected)); },
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     std::int64_t n = 0;
                     if (!ParseInt(value, n) || n < -1 || n >= r.numel) return false;
                     r.app.figure.selected = n;
                     return true;
                 }});
    f.push_back({"figure.view",  // "x0 y0 x1 y1" when zoomed
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     if (!app.figure.view.empty()) v.emplace_back(k, ViewText(app.figure.view));
                 },
                 [](ViewRead& r, const std::string&, const std::string& value) { return ParseViewText(value, r.app.figure.view); }});
    f.push_back(BoolField("panels.controls", [](auto& app) -> auto& { return app.panels.controls; }));
    f.push_back(BoolField("panels.figure", [](auto& app) -> auto& { return app.panels.figure; }));
    f.push_back(BoolField("panels.metrics", [](auto& app) -> auto& { return app.panels.metrics; }));
    f.push_back(BoolField("panels.histogram", [](auto& app) -> auto& { return app.panels.histogram; }));
    for (const AnalysisTabSpec& tab : AnalysisTabs())
        for (SessionField field : tab.fields) {
            field.key = std::string(tab.session) + "." + field.key;
            f.push_back(std::move(field));
        }
    // The importance file (relative to the session as the tensor's is) and whether the config weighs by it; a
    // lesson's own weights come back with its step instead.
    f.push_back({"importance",
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     if (!app.doc.importance || app.doc.importance_path.empty()) return;
                     v.emplace_back(k, app.doc.importance_path);
                     v.emplace_back("importance.weighted", BoolText(app.doc.config.importance != nullptr));
                 },
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     if (value.empty()) return false;
                     r.importance = &value;
                     return true;
                 }});
    f.push_back({"importance.weighted", [](const AppState&, const std::string&, ViewSettings&) {},  // with the file
                 [](ViewRead& r, const std::string&, const std::string& value) { return ParseBool(value, r.importance_weighted); }});
    // The Model tab: its checkpoint (A) and the one compared with it (B), relative to the session as the tensor's
    // file is; reopened (and compared again) once every key is read.
    f.push_back({"model",
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     if (!app.model.checkpoint || app.model.path.empty()) return;
                     v.emplace_back(k, app.model.path);
                     if (app.model.compare.checkpoint_b && !app.model.compare.path_b.empty())
                         v.emplace_back("model.compare", app.model.compare.path_b);
                 },
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     if (value.empty()) return false;
                     r.model = &value;
                     return true;
                 }});
    f.push_back({"model.compare", [](const AppState&, const std::string&, ViewSettings&) {},  // with the model
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     if (value.empty()) return false;
                     r.model_compare = &value;
                     return true;
                 }});
    // The tensor on show as a Model-tab row against B: B's file holding it and a digest of its stored bytes. Read
    // with the tensor (AttachSessionB), before the view: only checked here.
    f.push_back({"compare.b",
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     const TensorOrigin* origin = app.doc.data ? app.doc.origins.find(app.doc.data.get()) : nullptr;
                     if (!origin || origin->compare_b.empty() || !app.doc.data->stored) return;
                     v.emplace_back(k, origin->compare_b);
                     v.emplace_back("compare.b_digest", DigestText(stored_blocks_digest(*app.doc.data->stored)));
                 },
                 [](ViewRead&, const std::string&, const std::string& value) { return !value.empty(); }});
    f.push_back({"compare.b_digest", [](const AppState&, const std::string&, ViewSettings&) {},  // with compare.b
                 [](ViewRead&, const std::string&, const std::string& value) {
                     return value.size() == 16 && value.find_first_not_of("0123456789abcdef") == std::string::npos;
                 }});
    f.push_back(BoolField("presenter", [](auto& app) -> auto& { return app.presenter; }));
    // The lesson (a shipped name or a file's absolute path) and its step from 1, as --step; opened at that step
    // once every key is read, whatever order they come in.
    f.push_back({"lesson",
                 [](const AppState& app, const std::string& k, ViewSettings& v) {
                     const std::string lesson = LessonRefForSession(app);
                     if (lesson.empty()) return;
                     v.emplace_back(k, lesson);
                     v.emplace_back("lesson.step", std::to_string(app.lesson.step + 1));
                 },
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     if (value.empty()) return false;
                     r.lesson = &value;
                     return true;
                 }});
    f.push_back({"lesson.step", [](const AppState&, const std::string&, ViewSettings&) {},  // written with the lesson
                 [](ViewRead& r, const std::string&, const std::string& value) {
                     std::int64_t n = 0;
                     if (!ParseInt(value, n) || n < 1) return false;
                     r.lesson_step = &value;
                     return true;
                 }});
    return f;
}

const std::vector<SessionField>& SessionFields() {
    static const std::vector<SessionField> fields = MakeSessionFields();
    return fields;
}

// Whether the "figure." family reads `key` (one of the figure's settings), or a later version wrote it.
bool FigureReads(const std::string& key) {
    const std::string own = key.substr(std::strlen("figure."));
    if (own == "grid") return true;  // written before the layout had three choices
    for (const auto& [k, v] : FigurePanelSettingPairs(FigurePanelSettings{}))
        if (k == own) return true;
    return false;
}

// The row of `key`: its own, else the family that reads it; null for a key this version does not know.
const SessionField* FieldOf(const std::string& key) {
    const SessionField* family = nullptr;
    for (const SessionField& f : SessionFields()) {
        if (f.key == key) return &f;
        if (!family && f.key == "figure." && key.rfind(f.key, 0) == 0 && FigureReads(key)) family = &f;
    }
    return family;
}

}  // namespace

// --------------------------------------------------------------------------------------------------- view

ViewSettings SessionView(const AppState& app) {
    ViewSettings v;
    for (const SessionField& f : SessionFields()) f.write(app, f.key, v);
    return v;
}

std::string ApplySessionView(AppState& app, const ViewSettings& view, std::string* failure, const std::string& session_path) {
    // A key this version reads with a value it does not take is refused, as a bad option is (the file is wrong,
    // and a script must hear of it); a key it does not know comes from a later version and is only skipped.
    std::vector<std::string> skipped, refused;
    ViewRead r{app};
    r.slices = app.doc.data ? app.doc.data->slices() : 1;
    r.numel = app.doc.data ? app.doc.data->numel() : 0;
    for (const auto& [key, value] : view) {
        const SessionField* f = FieldOf(key);
        if (!f) skipped.push_back(key + "=" + value);
        else if (!f->read(r, key, value)) refused.push_back(key + "=" + value);
    }
    // The document's fields as one change of the document, part of the opening's undo step.
    app.doc.apply_names(r.label, r.base_mode == Mode::Manual ? nullptr : &r.base_mode, false);
    std::string importance_line;
    if (r.importance) {
        fs::path file(*r.importance);
        if (file.is_relative() && !session_path.empty()) file = fs::path(session_path).parent_path() / file;
        const std::string before = app.doc.error;
        if (!OpenImportance(app, file.lexically_normal().string(), &r.importance_weighted)) {
            importance_line = "the session's importance did not open: " + printable(app.doc.error, 240);
            app.doc.error = before;
        }
    }
    // The Model tab's A and B. B that does not open is the window's banner (unless the row's B already is).
    std::string model_line;
    if (r.model) {
        std::string problem;
        if (!OpenModel(app.model, SessionFilePath(*r.model, session_path), &problem)) {
            model_line = "the session's model did not open: " + printable(problem, 240);
        } else if (r.model_compare &&
                   !StartModelCompare(app.model.compare, app.model.checkpoint, SessionFilePath(*r.model_compare, session_path),
                                      &problem)) {
            if (app.doc.error.empty()) app.doc.error = "the session's B did not open: " + printable(problem, 240);
        }
    }
    const std::string* lesson = r.lesson;
    const std::string* lesson_step = r.lesson_step;
    // A lesson that does not load is named (quoted: the file's name may be anything) with its reason, on a line
    // of its own (in the list below, a long name hid the reason).
    std::string lesson_line;
    if (lesson) {
        std::int64_t step = 1;
        if (lesson_step) ParseInt(*lesson_step, step);
        std::string problem;
        std::string ref = *lesson;
        if (is_lesson_path(ref) && fs::path(ref).is_relative() && !session_path.empty()) {
            std::error_code ec;
            const fs::path beside = fs::path(session_path).parent_path() / ref;
            const fs::path abs = fs::absolute(beside, ec);
            ref = (ec ? beside : abs).lexically_normal().string();
        }
        if (!RestoreLesson(app, ref, static_cast<int>(std::min<std::int64_t>(step, 1 << 20)) - 1, &problem))
            lesson_line = "the session's lesson " + quoted_text(*lesson) + " did not open: " + printable(problem, 240);
    } else if (lesson_step) {
        refused.push_back("lesson.step=" + *lesson_step + " (no lesson)");
    }
    // The pairs come from the file: a few, escaped and shortened, keep each notice one readable line.
    const auto listed = [](const char* what, const std::vector<std::string>& pairs) {
        if (pairs.empty()) return std::string();
        constexpr std::size_t kShown = 5;
        std::string out = what;
        for (std::size_t i = 0; i < pairs.size() && i < kShown; ++i) out += " " + printable(pairs[i], 120);
        if (pairs.size() > kShown) out += " … (" + std::to_string(pairs.size()) + " in all)";
        return out;
    };
    const std::string refused_line = listed("the session's view has values its keys do not take:", refused);
    if (failure) *failure = !refused_line.empty() ? refused_line : !importance_line.empty() ? importance_line : lesson_line;
    return JoinLines({refused_line, importance_line, model_line, lesson_line,
                      listed("skipped view settings this version does not understand:", skipped)});
}

namespace {

// The view where the session's B did not attach: a label naming the comparison ("a.gguf : w against B's stored
// Q4_K", as a row opens it) loses that part, which is not on show; a label of the user's own stays.
ViewSettings WithoutB(ViewSettings view) {
    for (auto& [key, value] : view) {
        const std::size_t at = key == "label" ? value.find(" against B's ") : std::string::npos;
        if (at != std::string::npos && at > 0) value.resize(at);
    }
    return view;
}

}  // namespace

std::string AttachSessionB(std::shared_ptr<const TensorData>& data, const ViewSettings& view,
                           const std::string& session_path, const std::string& tensor_name, std::string* b_path) {
    const std::string* b = ViewValue(view, "compare.b");
    if (!b || b->empty() || !data) return {};
    const std::string path = SessionFilePath(*b, session_path);
    const std::string head = "the session's B (" + printable(path, 160) + ")";
    try {
        // A's shape checked from B's header, before B's bytes are read (the file may hold gigabytes under that name).
        std::shared_ptr<const StoredBlocks> stored;
        try {
            stored = read_stored_blocks(path, tensor_name, &data->shape());
        } catch (const StoredShapeMismatch& e) {
            throw Error("its tensor " + quoted_text(tensor_name) + " is now " + shape_to_string(e.found) + ", A's " +
                        shape_to_string(data->shape()));
        }
        const std::string* digest = ViewValue(view, "compare.b_digest");
        if (digest && *digest != DigestText(stored_blocks_digest(*stored)))
            throw Error("its tensor " + quoted_text(tensor_name) + " changed since the session was saved");
        auto with_b = std::make_shared<TensorData>(*data);
        with_b->stored = std::move(stored);
        data = std::move(with_b);
        if (b_path) *b_path = path;
        return {};
    } catch (const std::exception& e) {
        return head + ": " + printable(error_text(e), 240) + "; A's tensor is shown with the session's settings instead";
    }
}

// ------------------------------------------------------------------------------------------------ sessions

Session MakeSession(const AppState& app, const std::string& session_path, std::string* side_tensor) {
    if (side_tensor) side_tensor->clear();
    if (!app.doc.data) throw Error("nothing to save: no tensor is open");
    Session s;
    s.config = app.doc.config;
    s.view = SessionView(app);
    // A lesson file and the importance file are stored as the tensor is: relative to the session when beside or below it (they move together).
    for (auto& [key, value] : s.view)
        if ((key == "lesson" && is_lesson_path(value)) || key == "importance" || key == "model" || key == "model.compare" ||
            key == "compare.b")
            value = PathForSession(value, session_path);
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
        if (error) *error = error_text(e);
        return false;
    }
}

void OpenSession(AppState& app, const std::string& session_path) {
    Session s;
    try {
        s = read_session(session_path);
    } catch (const std::exception& e) {
        app.doc.error = error_text(e);
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
        std::shared_ptr<const TensorData> data = MakeTensorData(std::make_shared<const Tensor>(std::move(t)));
        // A Model-tab row against B: B's stored tensor comes with it (or the banner says why not).
        std::string b_path;
        const std::string b_problem = AttachSessionB(data, view, session_path, session->source.tensor_name, &b_path);
        TensorJobResult r = FinishTensorJob(std::move(data), config, session_path, p);
        r.then = [origin, has_origin, note, view, session_path, b_path, b_problem, &app](Document&) {
            AppState& a = app;
            if (has_origin) {
                TensorOrigin o = origin;
                o.note = note;
                o.compare_b = b_path;
                a.doc.origins.record(a.doc.data, std::move(o));
            }
            if (!b_problem.empty()) a.doc.error = b_problem;
            a.lesson.lesson.reset();  // the session's lesson, or none
            const std::string problems = ApplySessionView(a, b_problem.empty() ? view : WithoutB(view), nullptr, session_path);
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
        app.doc.error = error_text(e);
        return app.doc.error;
    }
    // A session's Model-tab row against B: B's stored tensor comes with it (or the banner says why not).
    std::string b_path, b_problem;
    if (input.from_session)
        b_problem = AttachSessionB(data, input.view, input.session, input.source.tensor_name, &b_path);
    if (!app.doc.apply_data(std::move(data), input.label, &input.config)) return app.doc.error;
    if (input.source.kind != TensorSource::Kind::Inline)
        app.doc.origins.record(app.doc.data, {input.source, input.note, b_path});
    std::string problems, failure;
    if (!b_problem.empty()) app.doc.error = b_problem;
    if (input.from_session)
        problems = ApplySessionView(app, b_problem.empty() ? input.view : WithoutB(input.view), &failure, input.session);
    const std::string override_problems = ApplySessionView(app, files.view);
    app.doc.notice = JoinLines({app.doc.notice, FoldingNotice(app.doc.label, input.note), problems, override_problems});
    if (!files.browse.empty()) {
        std::string problem;
        if (!OpenSafetensorsBrowser(app.safetensors, files.browse, &problem)) app.doc.error = failure = problem;
    }
    if (!files.model.empty()) {
        std::string problem;
        if (!OpenModel(app.model, files.model, &problem)) app.doc.error = failure = problem;
        // An index has no tensor list to show instead; a row opened against B (--tensor with --compare) is
        // what was asked for, in the tab --tab names.
        else if (files.browse.empty() && files.compare_tensor.empty()) app.request_tab = AnalysisTabIndex("model");
        if (app.model.checkpoint && !files.compare.empty() &&
            !StartModelCompare(app.model.compare, app.model.checkpoint, files.compare, &problem))
            app.doc.error = failure = problem;
        if (app.model.compare.checkpoint_b && !files.compare_tensor.empty()) {
            try {
                TensorJobIntent job = CompareTensorJob(app.model, files.compare_tensor, app.doc.config);
                app.doc.start_tensor_job(std::move(job.label), std::move(job.work));
            } catch (const std::exception& e) {
                app.doc.error = failure = error_text(e);
            }
        }
    }
    if (!files.save_figure.empty()) app.files.queued_figure = FigureExport{files.save_figure};
    if (!files.save_session.empty()) app.files.queued_session = files.save_session;
    app.doc.history = UndoHistory{};
    return failure;
}

}  // namespace qs::gui
