// A lesson: a notebook's story retold as guided steps (assets/lessons/*.json, format in the README). Each
// step sets the app's state (tensor, quantization, selected cell, what is hidden until revealed) and lists
// the numbers the notebook printed at that point, so the app can show its own beside them. A step's state
// is the previous step's with the step's own fields applied, so a teacher writes only what changes.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_inputs.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

// The four panels of the figure, in its order.
enum class LessonPanel : int { Original = 0, Quantized = 1, Dequantized = 2, Error = 3 };

// What a printed number is, as the app computes it.
enum class LessonQuantity {
    Scale, ZeroPoint,            // per block: one value, or one per channel/group
    ZeroPointUnrounded,          // q_min - r_min / s (asymmetric, one block), before the clamp and the rounding
    RMin, RMax, QMin, QMax,      // of the whole tensor / the type
    Original, Code, PreClamp, Dequantized, Error,  // per element: a cell ("at") or the whole tensor
    Mse, Rmse, Mae, MaxAbsError, L2Error, SqnrDb, Clipped, LevelsUsed,  // the metrics (SPEC)
};
const char* to_string(LessonQuantity quantity);  // the JSON name: "scale", "pre_clamp", "l2_error", ...

// A number (or a tensor of them) the notebook printed at a step.
struct LessonNumber {
    std::string label;                 // what the notebook called it ("MSE", "q", "torch.norm")
    LessonQuantity quantity = LessonQuantity::Mse;
    std::int64_t at = -1;              // per-element quantities: the flat index of one cell; -1: every element
    std::vector<double> values;        // row-major; one unless a whole tensor or every block's s / z
    std::vector<std::string> printed;  // each value as the notebook printed it (the JSON literal)
    std::vector<double> tolerance;     // per value, absolute: half a unit of its last printed digit unless given
    std::string note;                  // why a tolerance was given, shown beside the number
};

// The layer lab at a step (the window's View > Layer lab): the step's tensor is W [out, in] of y = x W^T + 0, x is
// generated as `inputs` says, and the activations are quantized as given (0 bits: W-only).
struct LessonLayer {
    LayerInputSpec inputs;
    int activation_bits = 0;
    ActGranularity act_granularity = ActGranularity::Tensor;
    Mode act_mode = Mode::Symmetric;
    std::optional<double> outlier_threshold, smooth_alpha;
    // Set: the lab's Method view with this method on W (weights only, x as calibration data); empty: its outputs.
    std::optional<LayerMethod> method;
    bool act_order = false;      // GPTQ's columns by decreasing diag H
    std::int64_t columns = 0;    // the GPTQ step-through's columns quantized on show (0..in)
};
// The layer configuration of a lesson's layer with W quantized as `weights`.
LayerConfig lesson_layer_config(const LessonLayer& layer, const QuantConfig& weights);

// The app's state at a step (the previous step's plus this step's fields).
struct LessonState {
    std::shared_ptr<const Tensor> tensor;
    std::string tensor_label;          // "lesson-randn-4x4" (a preset) or "lesson tensor 3x3"
    QuantConfig config;                // checked against the tensor's shape
    std::string recipe;                // "naive-max255" when the config came from a recipe
    std::int64_t selected = -1;        // flat index of the followed cell, -1: none
    // This step only (not carried to the next): hidden until revealed, so students guess first.
    std::array<bool, 4> hidden{};      // by LessonPanel
    std::int64_t hidden_code = -1;     // a cell whose code (and r', e) is hidden; -1: none
    // This step only: the window's analysis tab to bring to the front ("bits": the selected cell's bits), one of
    // lesson_tab_words(); empty: the tab stays.
    std::string tab;
    // Set: the step shows the layer lab with these settings (carried to the next steps; "layer": false ends it).
    std::optional<LessonLayer> layer;
};

struct LessonStep {
    std::string title;
    std::string text;                  // a few sentences, with the formula
    LessonState state;
    std::vector<LessonNumber> printed;
};

struct Lesson {
    std::string name;                  // the file's name without .json: what --lesson takes
    std::string title;
    std::string source;                // the seed notebook it retells
    std::vector<LessonStep> steps;     // at least one
};

// Bounds a lesson file (a teacher's file is read in full) and a lessons folder.
constexpr std::size_t kMaxLessonBytes = std::size_t{4} << 20;
constexpr std::size_t kMaxLessonSteps = 200;
constexpr std::size_t kMaxLessonFiles = 100000;

// A lesson file's name: it ends in .json, in any case (a.JSON too).
bool is_lesson_path(const std::string& path);

// The window's analysis tabs a step's "tab" may name (app/gui/app/analysis_tabs.cpp lists the same words).
const std::vector<std::string>& lesson_tab_words();
// Parses and checks a lesson (a UTF-8 byte order mark before it is allowed, as editors write one): every step's state must apply (a known preset, a config that fits the tensor,
// a cell inside it) and every printed number must name a known quantity with as many values as it has.
// Throws qs::Error "<name>: step K: <what>" (K from 1), or "<name>: <what>" for the file as a whole.
Lesson parse_lesson(std::string_view text, const std::string& name, const std::string& lesson_name);
// read_small_file + parse_lesson; the lesson's name is the file's stem.
Lesson read_lesson(const std::string& path);

// What `lesson list` shows of a lesson: its name, title, source and step count, read from the file's top
// level without applying any step (read_lesson checks the steps). Throws qs::Error as read_lesson does for
// the file as a whole.
struct LessonHeader {
    std::string name, title, source;
    std::size_t steps = 0;
};
LessonHeader read_lesson_header(const std::string& path);

// The lesson files in `dir` (is_lesson_path), sorted. Throws qs::Error naming the folder when it cannot be read
// (it does not exist, is a file) or holds more than kMaxLessonFiles.
std::vector<std::string> lesson_files(const std::string& dir);

// ---------------------------------------------------------------------------------------- comparison

struct QuantParams;
struct QuantResult;

// One printed number beside the app's.
struct LessonAgreement {
    std::vector<double> app;           // the app's values, one per printed value
    std::int64_t disagreeing = 0;      // how many differ by more than their tolerance
    std::int64_t first_disagreeing = -1;  // the index of the first that does, -1: none
    bool agrees() const { return disagreeing == 0; }
};

// The app's value(s) for `number` from the quantization on show (tensor, config, params, result of the same
// state) and whether each agrees with the printed one. Throws qs::Error when the quantity does not apply (a
// zero point before rounding of a channel-wise quantization, a block count that differs).
LessonAgreement compare_printed(const LessonNumber& number, const Tensor& tensor, const QuantConfig& config,
                                const QuantParams& params, const QuantResult& result);

// Quantizes the step's state headless (as the window would show it) and compares every printed number: what
// `quantscope lesson check` and the tests run.
std::vector<LessonAgreement> check_lesson_step(const LessonStep& step);

}  // namespace qs
