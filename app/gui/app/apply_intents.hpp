// Where the panels' requests take effect: after the panels have drawn, the frame loop applies the queued
// intents in order. Opening files and presets lives here too: the File menu, a dropped file and the
// tensor panel all open the same way.
#pragma once

#include <string>

#include "gui/app/app_state.hpp"

namespace qs::gui {

// Applies and empties app.intents. A refused config or tensor shows its reason as the document's error.
void ApplyIntents(AppState& app);

// Opens a .npy or .csv file as a background job; a .safetensors file shows its list of tensors, a .json file
// opens as a session.
void OpenTensorFile(AppState& app, const std::string& path);
// Loads one of qs::preset_names() with its settings, as a background job.
void LoadPreset(AppState& app, const std::string& name);

}  // namespace qs::gui
