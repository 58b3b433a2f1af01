// The File menu's dialogs: save the figure as PNG, export the four tensors, save and open a session. There is no
// native file dialog here, so each one is a small window with a path typed into a text field (with a default in
// the home or current directory). Problems are shown in the dialog, never fatal. Writes are queued by the
// dialog and done between frames by RunQueuedFileWork: the figure renders in its own offscreen GL context,
// which must not happen in the middle of the window's frame.
#pragma once

#include <optional>
#include <string>

#include "gui/app/export.hpp"

namespace qs::gui {

struct AppState;

enum class FileDialog : int { None, SaveFigure, ExportTensors, SaveSession, OpenSession, OpenImportance };

struct FileDialogsState {
    FileDialog open = FileDialog::None;
    bool appearing = false;  // the dialog's first frame: focus it and its path field
    bool defaults_set = false;
    // What each dialog edits (kept between openings).
    FigureExport figure;
    TensorExport tensors;
    std::string session_path;
    std::string open_path;
    std::string importance_path;
    // The last outcome, shown in the dialog.
    std::string message;
    bool message_is_error = false;
    // Asked for in a frame, done after it (RunQueuedFileWork).
    std::optional<FigureExport> queued_figure;
    std::optional<TensorExport> queued_tensors;
    std::optional<std::string> queued_session;
};

// Fills empty paths with the defaults: ~/quantscope-figure.png, the current directory, ~/quantscope-session.json.
void SetFileDialogDefaults(FileDialogsState& state);

// The items of the File menu (inside BeginMenu("File")).
void DrawFileMenuItems(FileDialogsState& state, AppState& app);
// The open dialog, if any, as its own window (outside any other Begin/End).
void DrawFileDialogs(FileDialogsState& state, AppState& app);

bool HasQueuedFileWork(const FileDialogsState& state);
// Does the queued writes. Call between frames, with no ImGui frame open; afterwards the caller makes its
// window's GL context current again. Returns false (the reasons in *error and in the dialog) if any failed.
bool RunQueuedFileWork(FileDialogsState& state, AppState& app, std::string* error);

// "~/x" → "$HOME/x"; anything else unchanged.
std::string ExpandUserPath(const std::string& path);

}  // namespace qs::gui
