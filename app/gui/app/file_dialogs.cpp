#include "gui/app/file_dialogs.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "gui/app/app_state.hpp"
#include "gui/app/open_importance.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/session_io.hpp"
#include "gui/panels/tensor_panel.hpp"
#include "gui/widgets/widgets.hpp"

namespace qs::gui {
namespace {

namespace fs = std::filesystem;

const ImVec4 kErrorColor(0.85f, 0.20f, 0.15f, 1.0f);
const ImVec4 kDoneColor(0.15f, 0.60f, 0.25f, 1.0f);

void Show(FileDialogsState& s, FileDialog which) {
    SetFileDialogDefaults(s);
    s.open = which;
    s.appearing = true;
    s.message.clear();
    s.message_is_error = false;
}

void Label(const char* text) { RowLabel(text, 7.0f); }

void Hint(const char* text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", text);
    ImGui::PopStyleColor();
}

// The path field; true when Enter was pressed in it.
bool PathField(FileDialogsState& s, const char* id, std::string& path, const char* hint) {
    if (s.appearing) ImGui::SetKeyboardFocusHere();
    return ImGui::InputTextWithHint(id, hint, &path, ImGuiInputTextFlags_EnterReturnsTrue);
}

// "Save"/"Open" and "Close" on one line; true when the first was pressed.
bool Buttons(FileDialogsState& s, const char* action, bool enabled) {
    ImGui::Spacing();
    ImGui::BeginDisabled(!enabled);
    const bool pressed = ImGui::Button(action, ImVec2(ImGui::GetFontSize() * 6.0f, 0.0f));
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::Button("Close", ImVec2(ImGui::GetFontSize() * 6.0f, 0.0f))) s.open = FileDialog::None;
    return pressed && enabled;
}

void Message(const FileDialogsState& s) {
    if (s.message.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, s.message_is_error ? kErrorColor : kDoneColor);
    ImGui::TextWrapped("%s", s.message.c_str());
    ImGui::PopStyleColor();
}

void Queued(FileDialogsState& s) {
    s.message = "Saving...";
    s.message_is_error = false;
}

void DrawSaveFigure(FileDialogsState& s, AppState& app) {
    Label("File");
    const bool enter = PathField(s, "##figure-path", s.figure.path, "figure.png");
    Label("Width (px)");
    ImGui::InputInt("##figure-width", &s.figure.width, 100, 400);
    s.figure.width = std::clamp(s.figure.width, 320, 8192);
    const bool selected = app.figure.selected >= 0;
    ImGui::BeginDisabled(!selected);
    bool pipeline = s.figure.with_pipeline && selected;
    if (ImGui::Checkbox("Print the selected element's pipeline under it", &pipeline)) s.figure.with_pipeline = pipeline;
    ImGui::EndDisabled();
    Hint("The four heatmaps with the figure settings on screen, the slice on show and one line of metrics: "
         "the image `quantscope render` writes for the same input and options.");
    if ((Buttons(s, "Save", app.doc.view().valid()) || enter) && !s.figure.path.empty()) {
        FigureExport request = s.figure;
        request.path = ExpandUserPath(request.path);
        request.with_pipeline = pipeline;
        s.queued_figure = request;
        Queued(s);
    }
}

void DrawExportTensors(FileDialogsState& s, AppState& app) {
    Label("Directory");
    const bool enter = PathField(s, "##tensor-dir", s.tensors.directory, "directory");
    Label("Base name");
    ImGui::InputText("##tensor-base", &s.tensors.base);
    Label("Format");
    int format = s.tensors.format == TensorFormat::Npy ? 0 : 1;
    if (ImGui::Combo("##tensor-format", &format, ".npy (numpy)\0.csv (text)\0"))
        s.tensors.format = format == 0 ? TensorFormat::Npy : TensorFormat::Csv;
    TensorExport request = s.tensors;
    request.directory = ExpandUserPath(request.directory);
    const bool has_codes = ExportHasCodes(app);
    for (const std::string& p : TensorExportPaths(request, has_codes)) Hint(p.c_str());
    const IntType dtype = app.doc.config.dtype;
    if (!has_codes) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Values as float32; no codes: B stores values (the Model tab's comparison).");
        ImGui::PopStyleColor();
    } else if (s.tensors.format == TensorFormat::Npy) {
        const char* codes = dtype.bits <= 8 ? (dtype.is_signed ? "int8" : "uint8") : (dtype.is_signed ? "int16" : "uint16");
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Values as float32; the %s codes as numpy %s.", dtype.name().c_str(), codes);
        ImGui::PopStyleColor();
    }
    const bool rank3 = app.doc.data && app.doc.data->rank() == 3;
    const bool csv_refused = rank3 && s.tensors.format == TensorFormat::Csv;
    if (csv_refused) {
        ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
        ImGui::TextWrapped("CSV holds 2-D data: this tensor is %s. Export it as .npy.",
                           shape_to_string(app.doc.data->shape()).c_str());
        ImGui::PopStyleColor();
    }
    // A refused CSV still goes through ExportTensors, which says why in the message.
    if (Buttons(s, "Export", app.doc.view().valid()) || enter) {
        s.queued_tensors = request;
        Queued(s);
    }
}

void DrawSaveSession(FileDialogsState& s, AppState& app) {
    Label("File");
    const bool enter = PathField(s, "##session-path", s.session_path, "session.json");
    if (app.doc.data) {
        const TensorOrigin* origin = app.doc.origins.find(app.doc.data.get());
        const char* how = origin ? "The tensor is saved as where it came from (preset, random spec or file)."
                          : app.doc.data->numel() <= kMaxInlineValues
                              ? "The tensor is edited: its values are saved in the session."
                              : "The tensor is edited and large: its values go to <session>.tensor.npy beside it.";
        Hint(how);
    }
    Hint("Every quantization setting and the figure settings are saved; `quantscope gui SESSION.json` or "
         "File > Open session reopens the same view.");
    if ((Buttons(s, "Save", app.doc.data != nullptr) || enter) && !s.session_path.empty()) {
        s.queued_session = ExpandUserPath(s.session_path);
        Queued(s);
    }
}

void DrawOpenSession(FileDialogsState& s, AppState& app) {
    Label("File");
    const bool enter = PathField(s, "##open-path", s.open_path, "session.json");
    Hint("A session (.json); a .npy, .csv or .safetensors file opens as a tensor.");
    if ((Buttons(s, "Open", !app.doc.busy()) || enter) && !s.open_path.empty() && !app.doc.busy()) {
        const std::string path = ExpandUserPath(s.open_path);
        std::error_code ec;
        if (!fs::is_regular_file(path, ec)) {
            s.message = "no such file: " + path;
            s.message_is_error = true;
            return;
        }
        OpenTensorFile(app, path);  // .json: the session; any other file opens as a tensor
        s.open = FileDialog::None;  // what follows (progress, errors) shows in the window
    }
}

// An importance vector for the open tensor: a bad file is the window's banner line (the dialog stays for another try).
void DrawOpenImportance(FileDialogsState& s, AppState& app) {
    Label("File");
    const bool enter = PathField(s, "##importance-path", s.importance_path, "importance.npy");
    Hint("A float32 .npy, one weight per column of the last axis (llama.cpp's imatrix of this tensor).");
    if ((Buttons(s, "Open", app.doc.data && !app.doc.busy()) || enter) && !s.importance_path.empty() && app.doc.data &&
        !app.doc.busy()) {
        if (OpenImportance(app, ExpandUserPath(s.importance_path))) s.open = FileDialog::None;
    }
}

const char* Title(FileDialog d) {
    switch (d) {
        case FileDialog::SaveFigure: return "Save figure as PNG###file-dialog";
        case FileDialog::ExportTensors: return "Export tensors###file-dialog";
        case FileDialog::SaveSession: return "Save session###file-dialog";
        case FileDialog::OpenSession: return "Open session###file-dialog";
        case FileDialog::OpenImportance: return "Open importance###file-dialog";
        case FileDialog::None: break;
    }
    return "###file-dialog";
}

std::string HomeFile(const char* name) {
    const std::string p = ExpandUserPath(std::string("~/") + name);
    return p[0] == '~' ? std::string(name) : p;  // no $HOME: the current directory
}

}  // namespace

void SetFileDialogDefaults(FileDialogsState& s) {
    if (s.defaults_set) return;
    s.defaults_set = true;
    if (s.figure.path.empty()) s.figure.path = HomeFile("quantscope-figure.png");
    if (s.tensors.directory.empty()) {
        std::error_code ec;
        const fs::path cwd = fs::current_path(ec);
        s.tensors.directory = ec ? "." : cwd.string();
    }
    if (s.session_path.empty()) s.session_path = HomeFile("quantscope-session.json");
    if (s.open_path.empty()) s.open_path = s.session_path;
}

void DrawFileMenuItems(FileDialogsState& s, AppState& app) {
    const bool shown = app.doc.view().valid();
    if (ImGui::MenuItem("Open session...", nullptr, false, !app.doc.busy())) Show(s, FileDialog::OpenSession);
    if (ImGui::MenuItem("Save session...", nullptr, false, app.doc.data != nullptr)) Show(s, FileDialog::SaveSession);
    if (ImGui::MenuItem("Open importance...", nullptr, false, app.doc.data && !app.doc.busy()))
        Show(s, FileDialog::OpenImportance);
    ImGui::Separator();
    if (ImGui::MenuItem("Save figure as PNG...", nullptr, false, shown)) Show(s, FileDialog::SaveFigure);
    if (ImGui::MenuItem("Export tensors...", nullptr, false, shown)) Show(s, FileDialog::ExportTensors);
}

void DrawFileDialogs(FileDialogsState& s, AppState& app) {
    if (s.open == FileDialog::None) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.35f),
                            ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 34.0f, 0.0f), ImGuiCond_Always);
    if (s.appearing) ImGui::SetNextWindowFocus();
    bool open = true;
    if (ImGui::Begin(Title(s.open), &open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
        ImGui::PushID(static_cast<int>(s.open));
        switch (s.open) {
            case FileDialog::SaveFigure: DrawSaveFigure(s, app); break;
            case FileDialog::ExportTensors: DrawExportTensors(s, app); break;
            case FileDialog::SaveSession: DrawSaveSession(s, app); break;
            case FileDialog::OpenSession: DrawOpenSession(s, app); break;
            case FileDialog::OpenImportance: DrawOpenImportance(s, app); break;
            case FileDialog::None: break;
        }
        Message(s);
        ImGui::PopID();
    }
    ImGui::End();
    s.appearing = false;
    if (!open) s.open = FileDialog::None;
}

bool HasQueuedFileWork(const FileDialogsState& s) {
    return s.queued_figure || s.queued_tensors || s.queued_session;
}

bool RunQueuedFileWork(FileDialogsState& s, AppState& app, std::string* error) {
    std::vector<std::string> done, failed;
    if (s.queued_figure) {
        std::string problem;
        if (ExportFigurePng(app, *s.queued_figure, &problem)) done.push_back("Saved " + s.queued_figure->path);
        else failed.push_back(problem);
        s.queued_figure.reset();
    }
    if (s.queued_tensors) {
        std::vector<std::string> written;
        std::string problem;
        if (ExportTensors(app, *s.queued_tensors, &written, &problem)) {
            std::string text = "Wrote";
            for (const std::string& p : written) text += "\n" + p;
            done.push_back(text);
        } else {
            failed.push_back(problem);
        }
        s.queued_tensors.reset();
    }
    if (s.queued_session) {
        std::string problem;
        if (SaveSession(app, *s.queued_session, &problem)) done.push_back("Saved " + *s.queued_session);
        else failed.push_back(problem);
        s.queued_session.reset();
    }
    const std::vector<std::string>& shown = failed.empty() ? done : failed;
    s.message.clear();
    for (const std::string& m : shown) s.message += (s.message.empty() ? "" : "\n") + m;
    s.message_is_error = !failed.empty();
    if (!failed.empty() && error) *error = s.message;
    return failed.empty();
}

std::string ExpandUserPath(const std::string& path) {
    if (path == "~" || path.rfind("~/", 0) == 0) {
        const char* home = std::getenv("HOME");
        if (home && *home) return std::string(home) + path.substr(1);
    }
    return path;
}

}  // namespace qs::gui
