#include "gui/app/gui_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

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
    const double t = bench.frames > 1 ? static_cast<double>(i) / (bench.frames - 1) : 0.5;
    c.manual_scale = bench.s0 * std::pow(4.0, 2.0 * t - 1.0);
    app.doc.apply_config(c, true);
}

void PrintBench(const AppState& app, const Bench& bench) {
    std::printf("{\"frames\":%d,\"frame_ms_median\":%.3f,\"recompute_ms_median\":%.3f,\"upload_ms_median\":%.3f,"
                "\"elements\":%lld}\n",
                bench.frames, Median(bench.frame_ms), Median(bench.recompute_ms), Median(bench.upload_ms),
                static_cast<long long>(app.doc.tensor ? app.doc.tensor->numel() : 0));
    std::fflush(stdout);
    // What the keys measure, and the rest of the frame, for a person reading the numbers.
    std::fprintf(stderr,
                 "quantscope: bench: recompute = compute_params + quantize_into on the UI thread; upload = the "
                 "figure panel's draw (reduce + colormap + texture upload of 4 heatmaps + draw list); histograms "
                 "%.3f ms median; frame = poll to swap\n",
                 Median(bench.histogram_ms));
}

}  // namespace qs::gui
