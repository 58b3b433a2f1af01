// Where the values fall against the quantization grid. Top: histogram of the original values with the levels
// s (q - z) as thin lines and the representable range [s (q_min - z), s (q_max - z)] as two strong lines with
// the outside shaded, so clipped mass shows as red bars beyond them. Bottom: histogram of the codes, i.e. how
// many of the type's levels the tensor actually uses. Counting is in qs::histogram (core), redone only when
// the view's generation (or the plot width) changes; drawing is ImDrawList only. A tensor read from its file's
// mapping (too large for a float32 copy) is counted in its stored type by core's view histograms: the whole
// tensor's fine histogram is one pass over the file, on a background task with its progress on show.
#pragma once

#include <cstdint>
#include <vector>

#include <memory>

#include "gui/document/quant_view.hpp"
#include "gui/document/task.hpp"
#include "quantscope/histogram.hpp"

namespace qs::gui {

// Tensors up to this many elements are counted exactly on every change; bigger ones use the caches below.
constexpr std::int64_t kHistogramExactElements = std::int64_t{1} << 20;

struct HistogramPanelState {
    bool log_counts = false;            // log scale for the bar heights (a few clipped outliers beside a big peak)
    // Per-channel / group parameters: the panel shows one block at a time, its values against its own grid,
    // with its own clipped count. `block` is picked in the panel, or follows the block of `follow_element`
    // (a flat index; the app copies the figure's selection here) whenever that changes.
    std::int64_t follow_element = -1;
    std::int64_t block = 0;

    // [Internal state]
    std::int64_t followed = -1;         // the follow_element last applied to `block`
    // The values on show (the tensor, or one block of it), kept while only s and z change: their range and,
    // when there are many, a fine histogram over that range that the display bins are resampled from.
    TensorKey tensor_key;
    bool tensor_valid = false;
    std::int64_t values_block = -1;     // -1: the whole tensor; else the block whose elements are below
    std::int64_t values_stride = 0, values_count = 0;  // the block layout they were gathered with
    std::vector<float> block_values;
    double data_min = 0, data_max = 0;
    Histogram fine;
    // A mapped tensor's fine histogram, counted in the background (one pass over the file); `fine` is empty
    // and the bars wait until it is done.
    struct FineCount {
        TensorKey key;
        Histogram fine;
    };
    Task<FineCount> fine_task;
    bool fine_waiting = false;
    // What the plot shows for the current result: the block (-1: whole tensor), its range lines
    // s (q_min - z), s (q_max - z), and its elements that round outside [q_min, q_max].
    std::int64_t shown_block = -1;
    double rep_lo = 0, rep_hi = 0;
    std::int64_t shown_clipped = 0, shown_count = 0;
    std::uint64_t clipped_generation = 0;
    // The bars on show, per display bin (fractional when resampled from `fine`), and what they are for.
    std::vector<double> bars;
    double bars_max = 0;
    int bins = 0;
    double lo = 0, hi = 0;
    bool bars_valid = false;
    // Counts per code, q_min..q_max (of the block on show). While the result changes every frame (a slider held
    // down) a big tensor's codes are counted on a sample (code_stride > 1: one 4096-element chunk in
    // code_stride) and scaled up; the first frame without a change counts them all.
    std::vector<double> codes;
    std::uint64_t codes_generation = 0;
    std::int64_t codes_block = -1;
    bool codes_valid = false;
    std::int64_t code_stride = 1;
    std::uint64_t last_generation = 0;  // the generation of the previous draw
    bool changed_last = false;          // the previous draw saw a new generation
    bool changing = false;              // this draw and the previous one both saw a new generation
};

// Contents only: fills the available region of the current window (height: at least a few text lines).
// `data` is the shared owner of view.data: with it, a mapped tensor's whole-tensor count runs in the background
// (without it, on this thread).
void DrawHistogramPanel(HistogramPanelState& state, const QuantView& view,
                        const std::shared_ptr<const TensorData>& data = nullptr);

// Stops a mapped tensor's count when the panel is hidden (its result would never be taken); the next draw
// starts it again.
void SuspendHistogram(HistogramPanelState& state);
// True while a mapped tensor's values are being counted (or counted and not yet shown).
bool HistogramBusy(const HistogramPanelState& state);
// Blocks until the count is done and takes it (tests, scripted screenshots).
void FinishHistogram(HistogramPanelState& state);

}  // namespace qs::gui
