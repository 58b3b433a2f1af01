// Small layout helpers shared by the side panels and dialogs, so they look alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <imgui.h>

namespace qs::gui {

// A dimmed title with a separator under it.
void SectionHeader(const char* title);
// A label in a fixed first column (`column_em` font sizes wide); the next widget fills the rest of the line.
void RowLabel(const char* text, float column_em);
// A combo after a RowLabel whose entries are never cut mid-word: on the label's line when the longest entry
// fits there, else full width on the line below the label, and only when even that is too narrow shortened at
// a word with the whole entry in a tooltip. Returns true when *current changed.
bool ComboRow(const char* label, const char* id, int* current, const char* const items[], int count, float column_em);
// A checkbox whose label wraps at spaces beside the box when the line is too narrow for it (a click on the
// text toggles it too). Returns true when *v changed.
bool CheckboxWrapped(const char* label, bool* v);
// Puts the next item, `width` pixels wide, on this line when it fits, else on the next one: a row of controls
// wraps on a narrow window or a big font instead of running off the panel.
void SameLineOrWrap(float width);
// A button as wide as the line; a label wider than that is shortened at a word with "..." and shown whole in
// a tooltip (ImGui would clip it mid-letter).
bool ButtonFullWidth(const char* label);
// Windows drawn this frame whose contents are wider than what they show, with no horizontal scrollbar: a
// label or value in them runs past the edge and is cut. Their names in `names` (may be null). What the window
// tests count; call after the frame's windows have ended (it reads the sizes ImGui measured last frame).
int CountOverflowingWindows(std::vector<std::string>* names);
// Columns of the tables drawn this frame whose cells hold text or items wider than the column: a window can
// fit its table while a cell of it is cut at the column's border. Their "window / column" names in `names`.
int CountClippedTableColumns(std::vector<std::string>* names);
// Tables drawn this frame that their window shows only in part: cut by its visible region's edge (a screen's
// fold, a child's bottom), some rows or columns shown and the rest not, as a screenshot shows them. (A
// scrolling window can bring the rest into view, but a layout that cuts its numbers in half on the first screen
// is what a class sees.) A table wholly out of view is not counted. Their "window / table" names in `names`.
int CountCutTables(std::vector<std::string>* names);

// A wrapped tooltip for the last item, also when it is disabled (to say why it is).
void HelpTooltip(const char* text);

// A check mark (agrees) or a cross (differs), one text line high, drawn as lines in the better / worse text
// colour: no glyph of the font is needed, so the font atlas (and every rendered figure) stays as it is.
void AgreementMark(bool agrees);

// Limits for ImGui::SliderFloat / DragFloat, whatever the data: finite, lo < hi, both within
// [-FLT_MAX/2, FLT_MAX/2] (ImGui 1.86 asserts that, and aborts beyond it). NaN and +-Inf are replaced, a
// reversed pair is swapped, an empty or denormal span is widened around its centre. `logarithmic` also keeps
// both limits at or above FLT_MIN (a log slider needs positive, normal ends).
struct SliderLimits {
    float lo = 0.0f, hi = 1.0f;
};
SliderLimits SafeSliderLimits(double lo, double hi, bool logarithmic = false);

// Limits for ImGui::SliderInt / DragInt: within [INT_MIN/2, INT_MAX/2] (ImGui's contract) and lo <= hi (a
// slider over one value is valid and lets nothing outside it be picked).
struct SliderIntLimits {
    int lo = 0, hi = 0;
};
SliderIntLimits SafeSliderIntLimits(std::int64_t lo, std::int64_t hi);

// The window's only sliders (tests/check_gui_sliders.sh fails on a direct ImGui::Slider*/Drag* elsewhere):
// ImGui's own with limits made admissible by SafeSliderLimits / SafeSliderIntLimits, so no tensor can make
// them abort. ImGuiSliderFlags_Logarithmic in `flags` also keeps the float limits positive and normal.
bool SafeSliderFloat(const char* label, float* v, double lo, double hi, const char* format, ImGuiSliderFlags flags = 0);
bool SafeSliderInt(const char* label, int* v, std::int64_t lo, std::int64_t hi, const char* format,
                   ImGuiSliderFlags flags = 0);

}  // namespace qs::gui
