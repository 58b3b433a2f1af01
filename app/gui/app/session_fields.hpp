// The keys of a session's "view": one row per key says how it is written from the window's state, and how a
// value read back is checked and applied. The session (session_io.cpp) and the analysis tabs (analysis_tabs.hpp:
// a tab's own keys) list their fields here once; writer and reader both walk the same rows.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "gui/app/figure_options.hpp"
#include "quantscope/config.hpp"

namespace qs::gui {

struct AppState;

// What reading a session's view collects before it applies what must go together: the document's fields (one
// step through the document), and the lesson, opened at its step once every key has been read.
struct ViewRead {
    AppState& app;
    std::int64_t slices = 1;  // of the tensor the view is applied to
    std::int64_t numel = 0;
    const std::string* label = nullptr;
    Mode base_mode = Mode::Manual;  // Manual: not given
    const std::string* lesson = nullptr;
    const std::string* importance = nullptr;  // the importance file, as the session wrote it
    bool importance_weighted = true;
    const std::string* lesson_step = nullptr;
    const std::string* model = nullptr;          // the Model tab's checkpoint (A), as the session wrote it
    const std::string* model_compare = nullptr;  // and the checkpoint compared with it (B)
};

struct SessionField {
    std::string key;  // the key, or a prefix ending in '.' for a family of keys ("figure.": the figure's settings)
    // Appends its pairs to the view (none: nothing to keep); `key` is the row's.
    std::function<void(const AppState&, const std::string& key, ViewSettings&)> write;
    // Checks `value` (of `key`) and applies it, or keeps it in the ViewRead; false: refused, nothing changed.
    std::function<bool(ViewRead&, const std::string& key, const std::string& value)> read;
};

std::string BoolText(bool b);                             // "1" / "0"
bool ParseBool(const std::string& text, bool& out);       // "1" "true" / "0" "false"; false: neither, out unchanged
bool ParseInt(const std::string& text, std::int64_t& out);

// A field of one bool of the window's state, "1" / "0": `at` returns that bool of an AppState (const or not),
// e.g. [](auto& app) -> auto& { return app.presenter; }.
template <class At>
SessionField BoolField(std::string key, At at) {
    SessionField f;
    f.key = std::move(key);
    f.write = [at](const AppState& app, const std::string& k, ViewSettings& view) { view.emplace_back(k, BoolText(at(app))); };
    f.read = [at](ViewRead& r, const std::string&, const std::string& value) { return ParseBool(value, at(r.app)); };
    return f;
}

}  // namespace qs::gui
