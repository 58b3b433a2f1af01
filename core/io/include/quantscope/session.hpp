// A session file: the tensor and every setting, as JSON, so that `quantscope gui SESSION.json` reopens
// exactly the same view. The core knows the tensor and the quantization; the GUI's own settings travel
// as opaque key/value strings it writes and reads itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

// Where the session's tensor comes from.
struct TensorSource {
    enum class Kind { Inline, File, Preset, Random };
    Kind kind = Kind::Inline;
    std::string path;          // File: relative paths are relative to the session file's directory
    std::string tensor_name;   // File: the .safetensors tensor, or empty
    std::string preset;        // Preset
    RandomSpec random;         // Random
};

struct Session {
    TensorSource source;
    Tensor tensor;             // Inline: the values themselves (other kinds: empty until loaded)
    QuantConfig config;
    std::vector<std::pair<std::string, std::string>> view;  // the GUI's settings, in its own words
};

// What a session may hold, for the writer and the reader alike (the reader's JSON limits are derived from
// these, so whatever session_to_json writes, parse_session reads): at most this many inline values (the GUI
// stores bigger edited tensors as a .npy beside the session and refers to it as a File), this many view
// pairs, and this many bytes of JSON.
constexpr std::int64_t kMaxInlineValues = std::int64_t{1} << 20;
constexpr std::size_t kMaxSessionViewEntries = 4096;
constexpr std::size_t kMaxSessionBytes = std::size_t{100} << 20;

// Any bytes in names, paths and view strings (a Latin-1 file name too) read back as the same bytes (see
// JsonObject::quote). Throws qs::Error, writing nothing, when the session exceeds a limit above or holds a
// number that is not finite.
std::string session_to_json(const Session& session);
// Strict: unknown keys, wrong types, a version other than 1, bad enum names, shapes that do not match
// their values and invalid configurations are errors "<name>: ..." (qs::Error).
Session parse_session(const std::string& text, const std::string& name);
Session read_session(const std::string& path);
// Atomic (temporary file, then rename).
void write_session(const std::string& path, const Session& session);
// The session's tensor: inline, or loaded from its source (relative file paths resolved against
// `session_path`'s directory). Passed check_tensor.
Tensor load_session_tensor(const Session& session, const std::string& session_path, std::string* note = nullptr);

}  // namespace qs
