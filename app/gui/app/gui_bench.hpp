// --bench-frames N: the window drags the manual scale from s0/4 to 4 s0 over N frames, as a teacher would,
// and prints the medians of what a frame costs as one JSON line.
#pragma once

#include <cstdint>
#include <vector>

#include "gui/app/app_state.hpp"

namespace qs::gui {

struct Bench {
    int frames = 0;
    double s0 = 1.0;
    std::int32_t z0 = 0;
    std::vector<double> frame_ms, recompute_ms, upload_ms, histogram_ms;
};

// Manual mode at the computed per-tensor (s, z), as a teacher would start dragging.
void StartBench(AppState& app, Bench& bench);
// Frame i of bench.frames: the scale a drag would have reached.
void BenchStep(AppState& app, const Bench& bench, int i);
// The medians as JSON on stdout, and what they measure on stderr.
void PrintBench(const AppState& app, const Bench& bench);

}  // namespace qs::gui
