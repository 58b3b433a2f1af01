#include "gui/panels/tensor_panel.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include "gui/panels/intents.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"
#include "quantscope/tensor_text.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

const ImVec4 kWarn(0.80f, 0.42f, 0.0f, 1.0f);

void Section(const char* title) { SectionHeader(title); }

void Label(const char* text) {
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(text);
    ImGui::SameLine(ImGui::GetFontSize() * 6.5f);
    ImGui::SetNextItemWidth(-1.0f);
}

static_assert(kMaxEditCells + 1 <= IMGUI_TABLE_MAX_COLUMNS, "the row index column plus the cells");

// The table edits 2-D tensors (rank 1 as one row) up to kMaxEditCells a side.
bool Editable(const Tensor& t) {
    return t.rank() <= 2 && t.rows() <= kMaxEditCells && t.cols() <= kMaxEditCells;
}

// Whole-string number: "1.5" yes, "1.5x", "", "nan", "inf" no.
bool ParseCell(const char* text, float& out) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    while (end && (*end == ' ' || *end == '\t')) ++end;
    if (end == text || !end || *end != '\0' || errno == ERANGE || !std::isfinite(v) ||
        !std::isfinite(static_cast<float>(v))) {
        return false;
    }
    out = static_cast<float>(v);
    return true;
}

std::string EditedLabel(const std::string& label) {
    const std::string suffix = " (edited)";
    if (label.size() >= suffix.size() && label.compare(label.size() - suffix.size(), suffix.size(), suffix) == 0)
        return label;
    return label + suffix;
}

void CommitCell(TensorPanelState& state, const Document& doc, Intents& out) {
    float v = 0.0f;
    if (!ParseCell(state.edit_buffer, v)) {
        state.message = quoted_text(state.edit_buffer) + " is not a finite number";
        return;
    }
    const Tensor& t = *doc.tensor;
    const std::int64_t flat = state.edit_row * t.cols() + state.edit_col;
    if (t.values[static_cast<std::size_t>(flat)] == v) return;
    auto next = std::make_shared<Tensor>(t);
    next->values[static_cast<std::size_t>(flat)] = v;
    state.message.clear();
    out.push(ApplyTensorIntent{std::move(next), EditedLabel(doc.label)});
}

void Resize(TensorPanelState& state, const Document& doc, Intents& out) {
    const Tensor& t = *doc.tensor;
    const std::int64_t rows = state.resize_rows, cols = state.resize_cols;
    if (rows < 1 || cols < 1 || rows > kMaxEditCells || cols > kMaxEditCells) {
        state.message = "rows and columns must be 1 to " + std::to_string(kMaxEditCells);
        return;
    }
    auto next = std::make_shared<Tensor>();
    next->shape = rows == 1 && t.rank() == 1 ? Shape{cols} : Shape{rows, cols};
    next->values.assign(static_cast<std::size_t>(rows * cols), 0.0f);  // new cells start at 0
    for (std::int64_t r = 0; r < std::min(rows, t.rows()); ++r)
        for (std::int64_t c = 0; c < std::min(cols, t.cols()); ++c)
            next->values[static_cast<std::size_t>(r * cols + c)] = t.values[static_cast<std::size_t>(r * t.cols() + c)];
    state.message.clear();
    out.push(ApplyTensorIntent{std::move(next), EditedLabel(doc.label)});
}

// Text typed or pasted: a notebook's printed tensor (tensor([[...]]), array([[...]]), [[...]]) or a table of
// rows (commas, spaces or tabs: a spreadsheet's copy), through the core's reader.
void UseTensorText(TensorPanelState& state, std::string_view text, const char* name, Intents& out) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        state.message = std::string("the ") + name + " is empty";
        return;
    }
    try {
        Tensor t = parse_tensor_text(text, name);
        if (t.rows() > 4096 || t.cols() > 4096) {
            state.message = "the tensor is too large for the editor; open it as a file";
            return;
        }
        state.message.clear();
        out.push(ApplyTensorIntent{std::make_shared<Tensor>(std::move(t)), std::string(name == std::string("clipboard") ? "pasted" : "typed")});
    } catch (const std::exception& e) {
        state.message = error_text(e);
    }
}

void Paste(TensorPanelState& state, Intents& out) {
    const char* clip = ImGui::GetClipboardText();
    UseTensorText(state, clip ? std::string_view(clip) : std::string_view(), "clipboard", out);
}

// A box to type (or paste into) a tensor as a notebook prints it.
void DrawTypeTensor(TensorPanelState& state, Intents& out) {
    ImGui::InputTextMultiline("##typed", &state.typed_text, ImVec2(-1.0f, ImGui::GetTextLineHeight() * 4.5f));
    if (ImGui::Button("Use this tensor", ImVec2(-1.0f, 0.0f))) UseTensorText(state, state.typed_text, "typed text", out);
    HelpTooltip("tensor([[191.6, -13.5], [92.14, 295.5]]), numpy's array([[...]]) or [[1. 2.] [3. 4.]], "
                   "or rows of numbers. A printed summary with ... is refused: it leaves values out.");
}

void DrawTable(TensorPanelState& state, const Document& doc, Intents& out) {
    // Hold the tensor: committing a cell replaces doc.tensor in the middle of this loop.
    const std::shared_ptr<const Tensor> held = doc.tensor;
    const Tensor& t = *held;
    const std::int64_t rows = t.rows(), cols = t.cols();
    const ImGuiStyle& style = ImGui::GetStyle();
    const float cell_w = ImGui::GetFontSize() * 4.6f;
    const float index_w = ImGui::GetFontSize() * 1.6f;
    const float row_h = ImGui::GetFrameHeight();
    // Small tables stretch to the column; wide ones keep readable cells and scroll sideways.
    const float natural_w =
        index_w + cell_w * static_cast<float>(cols) + style.CellPadding.x * 2.0f * static_cast<float>(cols + 1);
    const bool scroll_x = natural_w > ImGui::GetContentRegionAvail().x;
    const float max_h = ImGui::GetFontSize() * 16.0f;
    const float natural_h = ImGui::GetTextLineHeight() + (row_h + style.CellPadding.y * 2.0f) * static_cast<float>(rows) +
                            style.CellPadding.y * 2.0f +
                            (scroll_x ? style.ScrollbarSize : 0.0f) + 2.0f;
    const float height = std::min(natural_h, max_h);
    ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY;
    flags |= scroll_x ? (ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit) : ImGuiTableFlags_SizingStretchSame;
    if (!ImGui::BeginTable("##cells", static_cast<int>(cols) + 1, flags, ImVec2(-1.0f, height))) return;
    ImGui::TableSetupScrollFreeze(1, 1);
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, index_w);
    char name[32];
    for (std::int64_t c = 0; c < cols; ++c) {
        std::snprintf(name, sizeof name, "%lld", static_cast<long long>(c));
        ImGui::TableSetupColumn(name, scroll_x ? ImGuiTableColumnFlags_WidthFixed : ImGuiTableColumnFlags_WidthStretch,
                                scroll_x ? cell_w : 1.0f);
    }
    ImGui::TableHeadersRow();

    bool editing_seen = false;
    for (std::int64_t r = 0; r < rows; ++r) {
        ImGui::TableNextRow(ImGuiTableRowFlags_None, row_h);
        ImGui::TableSetColumnIndex(0);
        ImGui::AlignTextToFramePadding();
        ImGui::TextDisabled("%lld", static_cast<long long>(r));
        for (std::int64_t c = 0; c < cols; ++c) {
            ImGui::TableSetColumnIndex(static_cast<int>(c) + 1);
            ImGui::PushID(static_cast<int>(r * cols + c));
            if (r == state.edit_row && c == state.edit_col) {
                editing_seen = true;
                ImGui::SetNextItemWidth(-1.0f);
                if (state.edit_focus) ImGui::SetKeyboardFocusHere();
                const bool enter = ImGui::InputText(
                    "##edit", state.edit_buffer, sizeof state.edit_buffer,
                    ImGuiInputTextFlags_EnterReturnsTrue | ImGuiInputTextFlags_AutoSelectAll |
                        ImGuiInputTextFlags_CharsScientific);
                if (enter) {
                    CommitCell(state, doc, out);
                    state.edit_row = state.edit_col = -1;
                } else if (!state.edit_focus && !ImGui::IsItemActive()) {
                    state.edit_row = state.edit_col = -1;  // Escape or a click elsewhere: no change
                }
                state.edit_focus = false;
            } else {
                const float v = t.values[static_cast<std::size_t>(r * cols + c)];
                char text[32];
                std::snprintf(text, sizeof text, "%.6g", v);
                ImGui::AlignTextToFramePadding();
                ImGui::Selectable(text, false, ImGuiSelectableFlags_AllowDoubleClick, ImVec2(0.0f, row_h * 0.75f));
                if (ImGui::IsItemHovered() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && !doc.busy()) {
                    state.edit_row = r;
                    state.edit_col = c;
                    std::snprintf(state.edit_buffer, sizeof state.edit_buffer, "%.9g", v);
                    state.edit_focus = true;
                }
                if (ImGui::IsItemHovered()) ImGui::SetTooltip("[%lld, %lld] = %.9g  (double-click to edit)",
                                                              static_cast<long long>(r), static_cast<long long>(c), v);
            }
            ImGui::PopID();
        }
    }
    ImGui::EndTable();
    // The tensor changed under the edit box (undo, a job): drop the edit.
    if (!editing_seen) state.edit_row = state.edit_col = -1;
}

void DrawGenerate(TensorPanelState& state, const Document& doc, Intents& out) {
    Label("Values");
    ImGui::Combo("##distribution", &state.distribution, "normal\0uniform\0");
    if (state.distribution == 0) {
        Label("Mean");
        ImGui::InputDouble("##mean", &state.mean, 0.0, 0.0, "%.6g");
        Label("Std");
        ImGui::InputDouble("##std", &state.stddev, 0.0, 0.0, "%.6g");
    } else {
        Label("Low");
        ImGui::InputDouble("##low", &state.low, 0.0, 0.0, "%.6g");
        Label("High");
        ImGui::InputDouble("##high", &state.high, 0.0, 0.0, "%.6g");
    }
    Label("Shape");
    ImGui::InputText("##shape", &state.shape_text, ImGuiInputTextFlags_CharsNoBlank);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("rows x cols, or depth x rows x cols: 64x64, 4x128x256");
    Label("Seed");
    ImGui::InputInt("##seed", &state.seed);
    Label("Outliers");
    ImGui::InputInt("##outliers", &state.outliers);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("How many elements (positions and signs from the seed) become outliers");
    Label("at x std");
    ImGui::InputDouble("##outlier-scale", &state.outlier_scale, 0.0, 0.0, "%.6g");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each outlier is the centre +- this many standard deviations");
    ImGui::Checkbox("Pin the range (seed 001)", &state.pin_range);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("As seed 001 does: the first three elements become max + 1, min - 1 and 0 (no outliers:\n"
                          "they only fix the range)");
    if (ImGui::Button("Generate", ImVec2(-1.0f, 0.0f))) {
        RandomSpec spec;
        try {
            spec.distribution = state.distribution == 0 ? Distribution::Normal : Distribution::Uniform;
            spec.shape = parse_shape(state.shape_text);
            spec.seed = static_cast<std::uint64_t>(std::max(0, state.seed));
            spec.mean = state.mean;
            spec.std = state.stddev;
            spec.low = state.low;
            spec.high = state.high;
            spec.outliers = std::max(0, state.outliers);
            spec.outlier_scale = state.outlier_scale;
            spec.pin_range = state.pin_range ? 3 : 0;
            state.message.clear();
        } catch (const std::exception& e) {
            state.message = error_text(e);
            return;
        }
        const std::string label = std::string("random ") + (state.distribution == 0 ? "normal " : "uniform ") +
                                  shape_to_string(spec.shape) + " seed " + std::to_string(spec.seed);
        out.push(TensorJobIntent{"Generating " + label, [spec, config = doc.config, label](TaskProgress& p) {
            p.set_stage("generating");
            p.set_progress(0.05f);
            TensorJobResult r = FinishTensorJob(generate_random(spec), config, label, p);
            TensorOrigin origin;
            origin.source.kind = TensorSource::Kind::Random;
            origin.source.random = spec;
            r.then = RecordOrigin(std::move(origin));
            return r;
        }});
    }
}

void DrawSource(TensorPanelState& state, Intents& out) {
    const std::vector<std::string> names = preset_names();
    if (state.preset < 0 || state.preset >= static_cast<int>(names.size())) state.preset = 0;
    Label("Preset");
    const float button_w = ImGui::CalcTextSize("Load").x + ImGui::GetStyle().FramePadding.x * 2.0f;
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - button_w - ImGui::GetStyle().ItemSpacing.x);
    if (ImGui::BeginCombo("##preset", names.empty() ? "" : names[static_cast<std::size_t>(state.preset)].c_str())) {
        for (int i = 0; i < static_cast<int>(names.size()); ++i) {
            if (ImGui::Selectable(names[static_cast<std::size_t>(i)].c_str(), i == state.preset)) state.preset = i;
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    if (ImGui::Button("Load") && !names.empty()) out.push(LoadPresetIntent{names[static_cast<std::size_t>(state.preset)]});

    Label("File");
    const float open_w = ImGui::CalcTextSize("Open").x + ImGui::GetStyle().FramePadding.x * 2.0f;
    ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - open_w - ImGui::GetStyle().ItemSpacing.x);
    const bool enter = ImGui::InputTextWithHint("##path", ".npy, .csv or .safetensors path", &state.open_path,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    if ((ImGui::Button("Open") || enter) && !state.open_path.empty()) out.push(OpenFileIntent{state.open_path});
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("Or drop a .npy / .csv / .safetensors file on the window.");
    ImGui::PopStyleColor();
}


// Keeps the resize fields in step with the tensor after an undo, a redo or a new tensor.
void SyncTensorPanel(TensorPanelState& state, const Document& doc) {
    if (!doc.data) return;
    state.resize_rows = static_cast<int>(std::min<std::int64_t>(doc.data->rows(), kMaxEditCells));
    state.resize_cols = static_cast<int>(std::min<std::int64_t>(doc.data->cols(), kMaxEditCells));
    state.edit_row = state.edit_col = -1;
}

}  // namespace

void DrawTensorPanel(TensorPanelState& state, const Document& doc, Intents& out, bool model_list_hidden) {
    if (!doc.data) return;
    if (state.synced_revision != doc.revision) {
        SyncTensorPanel(state, doc);
        state.synced_revision = doc.revision;
    }
    const std::shared_ptr<const TensorData> held = doc.data;  // null floats: a mapped file, never edited
    const TensorData& t = *held;
    ImGui::PushID("tensor");
    ImGui::BeginDisabled(doc.busy());

    Section("Tensor");
    ImGui::TextWrapped("%s", doc.label.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::Text("shape %s,  %lld values", shape_to_string(t.shape()).c_str(), static_cast<long long>(t.numel()));
    ImGui::PopStyleColor();
    // A file's tensor of rank above 3 is shown folded: say so for as long as it is on screen.
    if (const TensorOrigin* origin = doc.origins.find(held.get()); origin && !origin->note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
        ImGui::TextWrapped("In the file: %s (leading axes folded into the first)", origin->note.c_str());
        ImGui::PopStyleColor();
    }
    if (model_list_hidden && ImGui::SmallButton("Show the model file's tensors")) out.push(ShowModelListIntent{});

    if (t.floats && Editable(*t.floats)) {
        DrawTable(state, doc, out);
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Double-click a cell, type, Enter.");
        ImGui::PopStyleColor();
        const float w = ImGui::GetFontSize() * 5.0f;
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted("Size");
        ImGui::SameLine();
        ImGui::SetNextItemWidth(w);
        ImGui::InputInt("##rows", &state.resize_rows, 0, 0);
        ImGui::SameLine();
        ImGui::TextUnformatted("x");
        ImGui::SameLine();
        ImGui::SetNextItemWidth(w);
        ImGui::InputInt("##cols", &state.resize_cols, 0, 0);
        ImGui::SameLine();
        if (ImGui::Button("Resize")) Resize(state, doc, out);
        if (ImGui::Button("Paste from clipboard", ImVec2(-1.0f, 0.0f))) Paste(state, out);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("A notebook's printed tensor(...), array(...) or [[...]], or numbers separated by commas,\n"
                              "spaces or tabs, one row a line.");
    } else {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Too large to edit cell by cell (the table edits up to %dx%d): generate or open one.",
                           kMaxEditCells, kMaxEditCells);
        ImGui::PopStyleColor();
        if (ImGui::Button("Paste from clipboard", ImVec2(-1.0f, 0.0f))) Paste(state, out);
    }
    if (!state.message.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kWarn);
        ImGui::TextWrapped("%s", state.message.c_str());
        ImGui::PopStyleColor();
    }

    Section("Type a tensor");
    DrawTypeTensor(state, out);

    Section("Open");
    DrawSource(state, out);

    Section("Generate");
    DrawGenerate(state, doc, out);

    ImGui::EndDisabled();
    ImGui::PopID();
}

}  // namespace qs::gui
