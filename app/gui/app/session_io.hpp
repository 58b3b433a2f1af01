// Sessions from the window's side: which source each tensor on screen came from, the window's own settings as
// the session's "view" key/value pairs, saving the whole state and opening it again. The command line
// (`quantscope gui SESSION.json`) and File > Open session... apply a session through the same functions, so
// both reopen the same view.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/options.hpp"
#include "gui/app/figure_options.hpp"
#include "gui/app/gui_options.hpp"
#include "gui/document/tensor_data.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

struct AppState;

// The window's settings a session keeps: label, base_mode, figure.* (FigurePanelSettings' key=value lines,
// plus figure.slice, figure.selected and figure.view = "x0 y0 x1 y1" when zoomed), panels.*, histogram.*,
// presenter, and with a lesson open lesson (a shipped name or a file's path) and lesson.step (from 1). A
// session without them (older ones too) opens no lesson.
ViewSettings SessionView(const AppState& app);
// Applies SessionView's pairs (both walk one table of fields, session_io.cpp). Unknown keys (a later version's)
// are skipped and named in the returned text, so that a newer session still opens; a value a known key does not
// take is refused: named in the text and, as the first problem, in `*failure` (a scripted screenshot refuses it:
// see StartWithInput), as is a lesson that does not open. The label and base mode change the document through
// Document::apply_names, as part of the undo step that opened the session's tensor. A relative lesson path is
// relative to `session_path`'s folder (as the session's tensor is).
std::string ApplySessionView(AppState& app, const ViewSettings& view, std::string* failure = nullptr,
                             const std::string& session_path = {});

// The session of the current state for a file at `session_path`. The tensor is referred to by its origin
// when it has one (file paths relative to the session's directory when inside it), else stored inline when
// it has at most kMaxInlineValues values; otherwise `*side_tensor` is set to the path of the .npy beside the
// session (`<session>.tensor.npy`) that the caller must write, and the session refers to it.
Session MakeSession(const AppState& app, const std::string& session_path, std::string* side_tensor);
// MakeSession, then writes the side tensor (if any) and the session, both or neither (OutputFiles). Waits for
// a running recompute first so that what is saved is what the controls show. False with *error on failure.
bool SaveSession(AppState& app, const std::string& session_path, std::string* error);
// A session saved on a Model-tab row against B keeps B's file (view key compare.b, relative to the session like
// the tensor's) and a digest of B's stored tensor (compare.b_digest), and the Model tab's A and B (model,
// model.compare). Reopening attaches B's stored tensor of the session tensor's name to `data` (the same
// comparison on screen); a B that is missing, no longer holds that tensor, or changed since is returned as one
// line (the window's banner) and `data` stays A's alone. "" also when the session has no B; *b_path: B's file.
std::string AttachSessionB(std::shared_ptr<const TensorData>& data, const ViewSettings& view,
                           const std::string& session_path, const std::string& tensor_name, std::string* b_path);
// Reads the session now (a bad file is reported in app.doc.error), then loads its tensor as a job and, once it is
// on screen, applies its view.
void OpenSession(AppState& app, const std::string& session_path);

// The window's start: shows `input` (its tensor is moved out; the rest stays), records where it came from,
// applies a session's view and then the command line's, opens the model file's list, queues the scripted
// saves, and clears the undo history (opening is not a step). Problems with the view go to app.doc.notice.
// Returns what asked for did not open, as one line (empty: all of it opened): the tensor refused (NaN in a
// mapped file, ...), the session's lesson, the model file. The window shows it too (banner or notice) and stays;
// --screenshot and --bench-frames print it and exit 2, as for an input the command line refuses.
std::string StartWithInput(AppState& app, cli::Input& input, const GuiFileOptions& files);


}  // namespace qs::gui
