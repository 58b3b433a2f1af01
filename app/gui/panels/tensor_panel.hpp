// The tensor being quantized: presets, a seeded random generator, opening .npy/.csv files, and for small
// 2-D tensors (up to kMaxEditCells per side) a table whose cells are edited in place (double-click, type,
// Enter), resized, or pasted from the clipboard. Big tensors come from generate/open, which run as jobs.
#pragma once

#include <cstdint>
#include <string>

namespace qs::gui {

class Document;
class Intents;

// Rows and columns of the largest tensor the table edits: 63, because an ImGui 1.86 table holds at most 64
// columns (IMGUI_TABLE_MAX_COLUMNS, an assert past it) and the row index takes one.
constexpr int kMaxEditCells = 63;

struct TensorPanelState {
    // Generate
    int distribution = 0;  // 0 normal, 1 uniform
    double mean = 0.0, stddev = 1.0;
    double low = -1.0, high = 1.0;
    std::string shape_text = "64x64";
    int seed = 0;
    int outliers = 0;
    double outlier_scale = 10.0;  // outliers at the centre +- this many std
    bool pin_range = false;       // seed 001's max + 1, min - 1, 0
    // Presets and files
    int preset = 0;
    std::string open_path;
    // Table editor: the cell being typed into (-1: none) and its text.
    std::int64_t edit_row = -1, edit_col = -1;
    char edit_buffer[64] = {};
    bool edit_focus = false;  // give the edit box keyboard focus on its first frame
    int resize_rows = 3, resize_cols = 3;
    std::string typed_text;  // "Type a tensor": text as a notebook prints a tensor, or rows of numbers
    std::string message;  // last problem with a paste, typed text, a resize or a cell value
    std::uint64_t synced_revision = 0;  // the document revision the resize fields were taken from
};

// Contents only (no Begin/End).
// `model_list_hidden`: a model file's list of tensors is open but not shown (a button brings it back).
void DrawTensorPanel(TensorPanelState& state, const Document& doc, Intents& out, bool model_list_hidden);

}  // namespace qs::gui
