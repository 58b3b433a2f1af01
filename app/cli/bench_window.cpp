// `quantscope bench`'s window rows and `quantscope bench --make-large` (issue 10, item 2): a tensor the size
// of an 8B model's embedding (128256 x 4096 bf16, 1 GB) written in bounded memory, and the window on it timed
// as a child process against a plain read pass of the same bytes.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/bench_file.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"

namespace qs::cli {
namespace {

std::uint64_t splitmix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// bf16 of a float: round to nearest even on the dropped 16 bits (finite inputs only).
std::uint16_t to_bf16(float v) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits += 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

double field(const JsonValue& json, const char* key) {
    const JsonValue* v = json.find(key);
    if (!v || !v->is_number()) throw Error(std::string("bench: the window's report has no number ") + key);
    return v->number;
}

}  // namespace

std::uint64_t write_large_tensor(const std::string& path, const Shape& shape, std::uint64_t seed) {
    if (shape.size() != 2) throw Error("--make-large: the shape must be ROWSxCOLS");
    const std::int64_t rows = shape[0], cols = shape[1];
    const std::string header = "{\"model.embed_tokens.weight\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(rows) +
                               "," + std::to_string(cols) + "],\"data_offsets\":[0," +
                               std::to_string(static_cast<std::uint64_t>(rows * cols) * 2) + "]}}";
    std::string length(8, '\0');
    for (int i = 0; i < 8; ++i) length[static_cast<std::size_t>(i)] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
    AtomicFileWriter out(path);
    out.write(length + header);
    std::vector<std::uint16_t> band;
    constexpr std::int64_t kBandRows = 256;
    for (std::int64_t r0 = 0; r0 < rows; r0 += kBandRows) {
        const std::int64_t r1 = std::min(rows, r0 + kBandRows);
        band.resize(static_cast<std::size_t>((r1 - r0) * cols));
        std::uint64_t state = seed * 0x100000001b3ULL + static_cast<std::uint64_t>(r0);
        for (std::size_t i = 0; i < band.size(); ++i) {
            // A sum of four uniforms: about normal, std 0.02, cheap enough for half a billion values.
            const std::uint64_t u = splitmix(state);
            double s = 0;
            for (int k = 0; k < 4; ++k) s += static_cast<double>((u >> (16 * k)) & 0xffff) / 65536.0;
            band[i] = to_bf16(static_cast<float>((s - 2.0) * std::sqrt(3.0) * 0.02));
        }
        for (std::int64_t r = r0; r < r1; ++r)
            if (r % 1000 == 7) band[static_cast<std::size_t>((r - r0) * cols + (r * 31) % cols)] = to_bf16(1.5f);
        out.write(band.data(), band.size() * 2);
    }
    out.commit();
    return 8 + header.size() + static_cast<std::uint64_t>(rows * cols) * 2;
}

WindowFigures measure_window_rows(const Shape& shape, int frames) {
    WindowFigures f;
    f.shape = shape;
    const char* display = std::getenv("DISPLAY");
    if (display == nullptr || *display == '\0') return f;  // the window needs a display (xvfb-run)
    const ScratchFolder folder;
    const std::string path = folder / "embedding.safetensors";
    f.tensor_mib = static_cast<double>(write_large_tensor(path, shape, 1)) / (1024.0 * 1024.0);
    const std::vector<std::string> gui = {own_executable(), "gui", path, "--no-settings", "--size", "1280x720",
                                          "--bench-frames", std::to_string(frames)};
    std::string report;
    const ProcessRun run = run_process(gui, &report);
    const JsonValue json = parse_json(report, "the window's bench report");
    f.measured = true;
    f.whole_process_ms = run.wall_ms;
    f.open_ms = field(json, "open_ms");
    f.recompute_ms = field(json, "recompute_ms_median");
    f.read_pass_ms = field(json, "read_pass_ms_median");
    f.ratio = field(json, "recompute_to_read_pass");
    f.peak_mib = run.peak_mib;
    f.peak_target_mib = 1.5 * f.tensor_mib + 300.0;
    return f;
}

void add_window_rows(JsonObject& json, const WindowFigures& f) {
    if (!f.measured) {
        json.raw("window", "null");  // no display: run the bench under xvfb-run for these rows
        return;
    }
    json.raw("window_shape", shape_to_json(f.shape))
        .number("window_tensor_mib", f.tensor_mib)
        .number("window_process_ms", f.whole_process_ms)
        .number("window_open_ms", f.open_ms)
        .number("window_recompute_ms", f.recompute_ms)
        .number("window_read_pass_ms", f.read_pass_ms)
        .number("window_recompute_to_read_pass", f.ratio)
        .number("window_peak_mib", f.peak_mib)
        .number("window_peak_target_mib", f.peak_target_mib);
}

}  // namespace qs::cli
