// --bench-frames N: the window drags the manual scale from s0/4 to 4 s0 over N frames, as a teacher would
// (with --granularity channel or group, which have no manual scale: the bits slider, one bit up and down), and prints the medians of what a frame costs as one JSON line, beside its yardstick: a plain read pass over
// the same bytes (the tensor in its stored type, decoded to float32 and summed), so "a slider step costs about
// one read pass" is a ratio on any machine; also the time to the first figure and the peak resident memory.
#pragma once

#include <cstdint>
#include <vector>

#include "gui/app/app_state.hpp"

namespace qs::gui {

struct Bench {
    int frames = 0;
    double s0 = 1.0;
    std::int32_t z0 = 0;
    int bits0 = 8;
    bool drag_bits = false;  // a per-channel or per-group view: the bits slider is what a teacher drags
    std::vector<double> frame_ms, recompute_ms, upload_ms, histogram_ms;
    double open_ms = 0;  // process start to the first figure on screen
    // Where the opening's time went (process-clock milliseconds at each step): the window is up, the values
    // pass (min/max, finiteness, the values' overview) and the first quantized overview are done.
    double window_ready_ms = 0, values_done_ms = 0, overview_done_ms = 0;
};

// Manual mode at the computed per-tensor (s, z), as a teacher would start dragging; a per-channel or
// per-group int view keeps its layout and mode (its steps drag the bits).
void StartBench(AppState& app, Bench& bench);
// Frame i of bench.frames: the scale (or the bits) a drag would have reached.
void BenchStep(AppState& app, const Bench& bench, int i);
// The medians as JSON on stdout (after the whole pass where the drag rests, timed), and what they measure on stderr.
void PrintBench(AppState& app, const Bench& bench);

}  // namespace qs::gui
