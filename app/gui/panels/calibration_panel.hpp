// Every calibrator side by side: for the current tensor, dtype, mode and granularity, the (s, z) that min/max,
// percentile 99.9 / 99.99 and the MSE search choose, with MSE, SQNR, clipped % and levels used, the smallest MSE
// highlighted and an Apply button per row. In asymmetric mode each calibrator appears twice, the lessons' way
// (a clamped zero point keeps its scale) and with "recompute s": a row whose zero point was clamped says so, and
// the clipped % beside its twin shows what the lessons' rule costs an all-positive tensor.
// The numbers are qs::compare_calibrators' (core), run on a background thread when the inputs change; a tensor
// read from its file's mapping (too large for a float32 copy) is calibrated on its view in its stored type
// (a few passes over the file per row, about a dozen for the MSE search), with the progress on show.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "gui/document/task.hpp"
#include "gui/document/quant_view.hpp"
#include "gui/panels/intents.hpp"
#include "quantscope/calibrate.hpp"
#include "quantscope/config.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

struct CalibrationPanelState {
    // [Internal state]
    struct Table {
        std::vector<CalibrationRow> rows;
        double ms = 0;
    };
    Task<Table> task;
    Table shown;
    bool has_shown = false;
    // What the shown (or running) table is for: the tensor and the config fields compare_calibrators reads.
    TensorKey tensor_key;
    QuantConfig inputs;
    bool started = false;
    bool pending = false;       // the inputs changed while a table was being computed: start again after it
    std::uint64_t requests = 0;
    int best_row = -1;          // index into shown.rows of the smallest MSE
    // Where the last frame drew each row's Apply button (screen coordinates; apply_row[i] indexes shown.rows).
    std::vector<int> apply_row;
    std::vector<ImVec2> apply_center;
};

// Contents only (a table as wide as the region). `data` is the shared owner of view.data. A row's Apply asks
// for the row's configuration (what its metrics were computed with) as a PickConfigIntent.
void DrawCalibrationPanel(CalibrationPanelState& state, const QuantView& view, const std::shared_ptr<const TensorData>& data,
                          Intents& out);

bool CalibrationBusy(const CalibrationPanelState& state);
// Blocks until the current table is complete and shows it (tests, scripted screenshots).
void FinishCalibration(CalibrationPanelState& state, const QuantView& view, const std::shared_ptr<const TensorData>& data);

// "min/max", "percentile 99.9", "MSE search": the name a row's calibrator is listed under.
std::string CalibratorName(const QuantConfig& config);
// True for a row without recompute_scale whose zero point (of any block) sits at q_min or q_max while its twin
// with recompute_scale has a different scale there: the lessons' formula clamped z and kept s.
bool ZeroPointClamped(const CalibrationRow& row, const CalibrationRow* twin);

}  // namespace qs::gui
