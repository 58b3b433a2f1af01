#include "gui/app/gui_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <sys/resource.h>

#include "gui/document/stopwatch.hpp"
#include "quantscope/overview.hpp"

namespace qs::gui {
namespace {

double Median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void StartBench(AppState& app, Bench& bench) {
    QuantConfig c = app.doc.config;
    if (c.granularity != Granularity::Tensor && is_int_format(c.format) && c.mode != Mode::Manual) {
        bench.drag_bits = true;
        bench.bits0 = std::min(c.dtype.bits, 15);
        app.doc.finish_recompute_now();
        return;
    }
    c.granularity = Granularity::Tensor;
    c.axis = 0;
    c.group_size = 0;
    if (c.mode == Mode::Manual) c.mode = app.doc.base_mode;
    app.doc.apply_config(c, false);
    app.doc.finish_recompute_now();
    app.doc.params.pair(0, bench.s0, bench.z0);
    c.mode = Mode::Manual;
    c.manual_scale = bench.s0;
    c.manual_zero_point = bench.z0;
    app.doc.apply_config(c, false);
    app.doc.finish_recompute_now();
}

// Geometric, as a drag of the slider over a log range would be.
void BenchStep(AppState& app, const Bench& bench, int i) {
    QuantConfig c = app.doc.config;
    if (bench.drag_bits) {  // b0, b0 + 1, b0, ...: every step a new (s, z) per block and a new pass
        c.dtype.bits = bench.bits0 + i % 2;
        app.doc.apply_config(c, true);
        return;
    }
    const double t = bench.frames > 1 ? static_cast<double>(i) / (bench.frames - 1) : 0.5;
    c.manual_scale = bench.s0 * std::pow(4.0, 2.0 * t - 1.0);
    app.doc.apply_config(c, true);
}

void PrintBench(AppState& app, const Bench& bench) {
    // Where the drag rests: the whole pass (metrics and code counts) the last steps left out, if they did.
    const bool settled = app.doc.overview.blocks_only;
    const Stopwatch settle_clock;
    app.doc.end_frame(false);
    app.doc.update();
    app.doc.finish_recompute_now();
    const double settle_ms = settled ? settle_clock.ms() : 0.0;
    // The yardstick, measured now in the same process on the same (page-cached) bytes.
    std::vector<double> read_ms;
    double sink = 0;
    if (app.doc.shown_data) {
        for (int i = 0; i < 5; ++i) {
            const Stopwatch clock;
            sink += read_pass(app.doc.shown_data->view);
            read_ms.push_back(clock.ms());
        }
    }
    const double recompute = Median(bench.recompute_ms), read = Median(read_ms);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("{\"frames\":%d,\"frame_ms_median\":%.3f,\"recompute_ms_median\":%.3f,\"upload_ms_median\":%.3f,"
                "\"read_pass_ms_median\":%.3f,\"recompute_to_read_pass\":%.3f,\"open_ms\":%.1f,"
                "\"open_window_ms\":%.1f,\"open_values_ms\":%.1f,\"open_overview_ms\":%.1f,"
                "\"settle_ms\":%.3f,\"elements\":%lld,\"tensor_bytes\":%lld,\"mapped\":%s,\"peak_rss_mib\":%.1f}\n",
                bench.frames, Median(bench.frame_ms), recompute, Median(bench.upload_ms), read,
                read > 0 ? recompute / read : 0.0, bench.open_ms, bench.window_ready_ms,
                bench.values_done_ms - bench.window_ready_ms, bench.overview_done_ms - bench.values_done_ms, settle_ms,
                static_cast<long long>(app.doc.shown_data ? app.doc.shown_data->numel() : 0),
                static_cast<long long>(app.doc.shown_data ? app.doc.shown_data->stored_bytes() : 0),
                app.doc.shown_data && !app.doc.shown_data->floats ? "true" : "false",
                static_cast<double>(usage.ru_maxrss) / 1024.0);
    std::fflush(stdout);
    if (sink == 12345.678) std::fputc(' ', stderr);  // keeps the read passes from being optimised away
    // What the keys measure, and the rest of the frame, for a person reading the numbers.
    std::fprintf(stderr,
                 "quantscope: bench: recompute = (s, z) + one pass on the UI thread or its worker (on %lld "
                 "elements or more the heatmaps alone, while dragging); settle = the whole pass (metrics, code "
                 "counts) once the drag rests; read pass = the tensor's bytes summed once as 64-bit words, on the pass's threads; upload = the "
                 "figure panel's draw (reduce + colormap + texture upload of 4 heatmaps + draw list); histograms "
                 "%.3f ms median; frame = poll to swap\n",
                 static_cast<long long>(kDragBlocksElements), Median(bench.histogram_ms));
}

}  // namespace qs::gui
