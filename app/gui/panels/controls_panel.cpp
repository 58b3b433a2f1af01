#include "gui/panels/controls_panel.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>

#include <imgui.h>

#include "gui/panels/intents.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/format_traits.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/number_format.hpp"
#include "quantscope/pitfalls.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/stored_blocks.hpp"

namespace qs::gui {
namespace {

// Readable on the light theme and on the dark one.
const ImVec4 kWrongRed(0.82f, 0.12f, 0.10f, 1.0f);
const ImVec4 kWarn(0.80f, 0.42f, 0.0f, 1.0f);

constexpr float kLabelColumnEm = 6.5f;
void Label(const char* text) { RowLabel(text, kLabelColumnEm); }
void Section(const char* title) { SectionHeader(title); }

void Note(const ImVec4& color, const std::string& text) {
    if (text.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, color);
    ImGui::TextWrapped("%s", text.c_str());
    ImGui::PopStyleColor();
}

// The type list's group titles, in format_kinds()' order (int, float, codebook, block).
const char* const kKindTitles[] = {"integer", "float", "codebook", "block (own scale)"};

// The type list: integers (signed, unsigned; bits below), then the table's formats by kind (float,
// codebook, block), each kind's in the table's order.
// `shown`, when not empty, names what the current entry shows instead of its format (B's plain values).
bool TypeCombo(const QuantConfig& config, QuantConfig& next, const std::string& shown = "") {
    const std::string current = !shown.empty() ? shown
                                : is_int_format(config.format)
                                    ? std::string(config.dtype.is_signed ? "int (signed)" : "uint (unsigned)")
                                    : std::string(format_name(config.format));
    Label("Type");
    ImGui::SetNextItemWidth(-1);
    bool changed = false;
    // The preview ellipsizes at a word with the whole name as a tooltip, never cut mid-word ("int (signe").
    const ImGuiStyle& style = ImGui::GetStyle();
    const std::string preview = FitText(
        current, ImGui::GetContentRegionAvail().x - style.FramePadding.x * 2.0f - ImGui::GetFrameHeight());
    if (!ImGui::BeginCombo("##type", preview.c_str())) {
        if (preview != current && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", current.c_str());
        return false;
    }
    const auto group = [](const char* title) {
        ImGui::Separator();
        ImGui::TextDisabled("%s", title);
    };
    const FormatKind int_kind = format_traits(QuantConfig{}.format).kind;  // the default format: int<N>
    for (std::size_t k = 0; k < format_kinds().size(); ++k) {
        const FormatKind kind = format_kinds()[k];
        group(k < std::size(kKindTitles) ? kKindTitles[k] : to_string(kind));
        for (int sign = 0; kind == int_kind && sign < 2; ++sign) {
            const bool is_signed = sign == 0;
            const bool selected = is_int_format(config.format) && config.dtype.is_signed == is_signed;
            if (ImGui::Selectable(is_signed ? "int (signed)" : "uint (unsigned)", selected)) {
                next = with_format(config, QuantConfig{}.format);
                next.dtype.is_signed = is_signed;
                if (!is_signed && next.mode == Mode::Symmetric) next.mode = Mode::Asymmetric;
                changed = true;
            }
        }
        for (FormatId id : formats_of_kind(kind)) {
            if (ImGui::Selectable(format_name(id), config.format == id)) {
                next = with_format(config, id);
                changed = true;
            }
        }
    }
    ImGui::EndCombo();
    return changed;
}

// One line on what the chosen format is: its range and levels, or its block recipe.
std::string FormatSummary(FormatId id) {
    const FormatTraits& info = format_traits(id);
    std::string text = std::string(info.name) + ":  " + std::to_string(info.element_bits) + "-bit codes, " +
                       std::to_string(format_levels(id)) + " levels";
    if (info.has_float_element())
        text += ",  E" + std::to_string(info.element.exponent_bits) + "M" + std::to_string(info.element.mantissa_bits) +
                " up to " + FormatNumber(info.element.largest());
    if (*info.description != '\0') text += std::string(",  ") + info.description;
    if (info.own_blocks())
        text += ",  one scale per " + std::to_string(info.block_size) + " values along the last axis";
    return text;
}

void DrawDtype(const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    // A Model-tab row against a B of plain values: the entry of its format shows B's values, not that format.
    const StoredBlocks* b = doc.data && doc.data->stored && doc.data->stored->values() &&
                                    doc.config.format == doc.data->stored->format
                                ? doc.data->stored.get()
                                : nullptr;
    std::string b_type;
    if (b) {
        b_type = b->type->name;
        for (char& c : b_type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    if (TypeCombo(doc.config, next, b ? "B's " + b_type + " values" : "")) {
        next.manual_zero_point = std::clamp(next.manual_zero_point, next.dtype.q_min(), next.dtype.q_max());
        out.apply_config(doc, next, false);
        return;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (b) {
        TextWrappedAtSpaces("B (the Model tab's comparison) stores " + b_type + " values: r' is B's values, with no "
                            "codes or scales. Another type quantizes A; " + std::string(format_name(b->format)) +
                            " shows B again.");
        ImGui::PopStyleColor();
        return;
    }
    if (!is_int_format(doc.config.format)) {
        TextWrappedAtSpaces(FormatSummary(doc.config.format));
        ImGui::PopStyleColor();
        return;
    }
    ImGui::PopStyleColor();
    Label("Bits");
    int bits = next.dtype.bits;
    const bool changed = SafeSliderInt("##bits", &bits, 2, 16, "%d bits", ImGuiSliderFlags_AlwaysClamp);
    const bool dragging = ImGui::IsItemActive();
    if (changed) {
        next.dtype.bits = std::clamp(bits, 2, 16);
        next.manual_zero_point = std::clamp(next.manual_zero_point, next.dtype.q_min(), next.dtype.q_max());
        out.apply_config(doc, next, dragging);
    }
    const IntType& t = doc.config.dtype;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    TextWrappedAtSpaces(t.name() + ":  q in [" + std::to_string(t.q_min()) + ", " + std::to_string(t.q_max()) + "],  " +
                        std::to_string(t.levels()) + " levels");
    ImGui::PopStyleColor();
}

// "Weighted by importance": the loaded importance vector (File > Open importance...) as the config's, for the
// ggml types whose quantizer weighs by it; greyed, with the reason, for the others.
void DrawImportance(const Document& doc, Intents& out) {
    const FormatTraits& info = format_traits(doc.config.format);
    if (!doc.importance && !info.ggml) return;
    Section("Importance");
    const bool takes = info.ggml && info.ggml->takes_importance;
    ImGui::BeginDisabled(!doc.importance || !takes);
    bool weighted = doc.config.importance != nullptr;
    if (ImGui::Checkbox("##weighted", &weighted)) {
        QuantConfig next = doc.config;
        next.importance = weighted ? doc.importance : nullptr;
        out.apply_config(doc, next, false);
    }
    bool hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled);
    ImGui::SameLine();
    TextWrappedAtSpaces("weighted by importance");  // wrapped: a checkbox's own label ran past a narrow column
    hovered = hovered || ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled);
    ImGui::EndDisabled();
    if (hovered) {
        const std::string why =
            !doc.importance ? "No importance loaded: File > Open importance... (a float32 .npy, one weight per column)."
            : !info.ggml    ? std::string(info.name) + " has no importance-weighted quantizer: only ggml's types (q4_0 ... iq4_xs) weigh by importance."
            : !takes        ? std::string(info.name) + " ignores importance, as in ggml: its quantizer has no weighted form."
                            : "ggml's importance-weighted quantizer: each column's error counts by its weight, as llama.cpp's imatrix.";
        ImGui::SetTooltip("%s", why.c_str());
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (doc.importance)
        TextWrappedAtSpaces(std::to_string(doc.importance->size()) + " weights" +
                            (doc.importance_path.empty() ? std::string(" (the lesson's)") : ", " + doc.importance_path));
    else
        TextWrappedAtSpaces("File > Open importance... loads one weight per column.");
    ImGui::PopStyleColor();
}

// A float or codebook format's scale: symmetric (s = max|r| / largest), the plain cast (s = 1), or manual.
void DrawFormatMode(ControlsPanelState& state, const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    int mode = static_cast<int>(next.mode);
    bool changed = ImGui::RadioButton("Symmetric", &mode, static_cast<int>(Mode::Symmetric));
    HelpTooltip(format_traits(next.format).symmetric_help);
    ImGui::BeginDisabled(!format_traits(next.format).castable);
    changed |= ImGui::RadioButton("Cast", &mode, static_cast<int>(Mode::Cast));
    ImGui::EndDisabled();
    HelpTooltip("s = 1: the plain downcast (fp32 -> bf16 is the lesson), no scale stored.");
    changed |= ImGui::RadioButton("Manual", &mode, static_cast<int>(Mode::Manual));
    HelpTooltip("Choose s yourself (per tensor).");
    if (changed && mode != static_cast<int>(next.mode)) {
        next.mode = static_cast<Mode>(mode);
        if (next.mode != Mode::Symmetric) next.granularity = Granularity::Tensor;
        if (next.mode == Mode::Manual && doc.params.scale.size() == 1) next.manual_scale = doc.params.scale[0];
        state.scale_entry = next.manual_scale;
        out.apply_config(doc, next, false, &state.manual_message);
    }
}

void DrawMode(ControlsPanelState& state, const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    int mode = static_cast<int>(next.mode);
    bool changed = ImGui::RadioButton("Asymmetric", &mode, static_cast<int>(Mode::Asymmetric));
    HelpTooltip("s = (r_max - r_min) / (q_max - q_min),  z = round(q_min - r_min / s)");
    ImGui::BeginDisabled(!next.dtype.is_signed);
    changed |= ImGui::RadioButton("Symmetric", &mode, static_cast<int>(Mode::Symmetric));
    ImGui::EndDisabled();
    HelpTooltip(next.dtype.is_signed
                    ? "s = max|r| / q_max,  z = 0"
                    : "Symmetric (absmax) maps 0 to code 0 and needs negative codes: it needs a signed type.");
    changed |= ImGui::RadioButton("Manual", &mode, static_cast<int>(Mode::Manual));
    HelpTooltip("Choose s and z yourself, as in the lesson (s = 3.5, z = -70).");
    if (changed && mode != static_cast<int>(next.mode)) {
        next.mode = static_cast<Mode>(mode);
        if (next.mode == Mode::Manual) {
            // Manual s and z are per tensor (and no calibrator chooses them). Start from the parameters on
            // screen so nothing jumps.
            next.granularity = Granularity::Tensor;
            next.calibration = Calibration::MinMax;
            if (doc.params.scale.size() == 1) {
                next.manual_scale = doc.params.scale[0];
                next.manual_zero_point = doc.params.zero_point[0];
            }
            state.scale_entry = next.manual_scale;
        }
        out.apply_config(doc, next, false, &state.manual_message);
    }
}

// How asymmetric / symmetric choose each block's range before the lessons' formulas: min/max, a percentile
// clip or the MSE search (the core's calibrators; the Calibrators tab compares them all).
void DrawCalibration(const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    int cal = static_cast<int>(next.calibration);
    const char* const calibrations[] = {"min/max (lessons)", "percentile", "MSE search"};
    bool changed = ComboRow("Range", "##calibration", &cal, calibrations, 3, kLabelColumnEm);
    HelpTooltip("min/max: the lessons' r_min and r_max (max|r| when symmetric).\n"
                "percentile: clip the tails at the P-th percentile.\n"
                "MSE search: the clipping range with the smallest error.");
    if (changed) next.calibration = static_cast<Calibration>(cal);
    if (next.calibration == Calibration::Percentile) {
        Label("P");
        double p = next.percentile;
        if (ImGui::InputDouble("##percentile", &p, 0.0, 0.0, "%.4g", ImGuiInputTextFlags_EnterReturnsTrue)) {
            next.percentile = p;
            changed = true;
        }
        HelpTooltip("Percentile in (50, 100]: 99.9 clips the 0.1% most extreme values on each side.");
        ImGui::SetCursorPosX(ImGui::GetFontSize() * 6.5f);
        for (double preset : {99.0, 99.9, 99.99}) {
            char label[16];
            std::snprintf(label, sizeof label, "%g", preset);
            if (ImGui::SmallButton(label)) {
                next.percentile = preset;
                changed = true;
            }
            ImGui::SameLine();
        }
        ImGui::NewLine();
    }
    if (next.mode == Mode::Asymmetric) {
        changed |= CheckboxWrapped("Recompute s after clamping z", &next.recompute_scale);
        HelpTooltip("The lessons clamp a zero point outside [q_min, q_max] but keep s, so an all-positive "
                    "tensor loses the top of its range. Checked: s is recomputed for the clamped z and the whole "
                    "range [r_min, r_max] stays representable.");
    }
    if (changed) {
        std::string problem;
        if (!out.apply_config(doc, next, false, &problem)) out.push(ErrorIntent{problem});
    }
}

void DrawManual(ControlsPanelState& state, const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    // The slider spans two decades either side of the computed scale; the box below takes any value.
    const double centre = (doc.has_computed && !doc.computed_params.scale.empty()) ? doc.computed_params.scale[0]
                                                                                    : next.manual_scale;
    float s = static_cast<float>(next.manual_scale);
    Label("Scale s");
    if (SafeSliderFloat("##scale", &s, centre / 100.0, centre * 100.0, "%.5g",
                        ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_NoRoundToFormat)) {
        next.manual_scale = s;
        state.scale_entry = s;
        state.manual_message.clear();
        out.apply_config(doc, next, ImGui::IsItemActive(), &state.manual_message);
    }
    Label("exact s");
    if (!state.scale_entry_active) state.scale_entry = doc.config.manual_scale;
    const bool typed = ImGui::InputDouble("##scale-exact", &state.scale_entry, 0.0, 0.0, "%.9g",
                           ImGuiInputTextFlags_EnterReturnsTrue);
    state.scale_entry_active = ImGui::IsItemActive();
    if (typed) {
        next.manual_scale = state.scale_entry;
        state.manual_message.clear();
        if (!(state.scale_entry > 0.0) || !std::isfinite(state.scale_entry)) {
            state.manual_message = "The scale must be a positive number.";
        } else {
            out.apply_config(doc, next, false, &state.manual_message);
        }
    }
    HelpTooltip("Type an exact scale and press Enter.");
    if (is_int_format(doc.config.format)) {  // a format has no zero point
        Label("Zero pt z");
        int z = next.manual_zero_point;
        if (SafeSliderInt("##zero-point", &z, next.dtype.q_min(), next.dtype.q_max(), "%d",
                          ImGuiSliderFlags_AlwaysClamp)) {
            next = doc.config;
            next.manual_zero_point = z;
            out.apply_config(doc, next, ImGui::IsItemActive(), &state.manual_message);
        }
    }
    if (doc.has_computed && doc.computed_params.scale.size() == 1) {
        char text[128];
        std::snprintf(text, sizeof text, "Use computed  (s = %.6g, z = %d)", doc.computed_params.scale[0],
                      doc.computed_params.zero_point[0]);
        if (ButtonFullWidth(text)) {
            next = doc.config;
            next.manual_scale = doc.computed_params.scale[0];
            next.manual_zero_point = doc.computed_params.zero_point[0];
            state.scale_entry = next.manual_scale;
            out.apply_config(doc, next, false, &state.manual_message);
        }
        HelpTooltip("Set s and z to what the computed mode chooses for this tensor.");
    }
    Note(kWarn, state.manual_message);
}

void DrawComputedParams(const Document& doc) {
    const QuantParams& p = doc.params;
    if (p.scale.empty() && !p.on_demand()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    if (p.block_count == 1) {
        char line[64];
        std::snprintf(line, sizeof line, "s = %.10g", p.scale_of(0));
        TextWrappedAtSpaces(line);
        TextWrappedAtSpaces("z = " + std::to_string(p.zero_point_of(0)));
    } else {
        double s_min, s_max;
        std::int32_t z_min, z_max;
        p.ranges(s_min, s_max, z_min, z_max);
        char line[96];
        TextWrappedAtSpaces(FormatInteger(p.block_count) + " blocks");
        std::snprintf(line, sizeof line, "s in [%.5g, %.5g]", s_min, s_max);
        TextWrappedAtSpaces(line);
        TextWrappedAtSpaces("z in [" + std::to_string(z_min) + ", " + std::to_string(z_max) + "]");
    }
    ImGui::PopStyleColor();
}

void DrawGranularity(ControlsPanelState& state, const Document& doc, Intents& out) {
    const bool manual = doc.config.mode == Mode::Manual;
    ImGui::BeginDisabled(manual);
    bool changed = false;
    const char* const granularities[] = {"tensor", "channel", "group"};
    changed |= ComboRow("Per", "##granularity", &state.granularity, granularities, 3, kLabelColumnEm);
    if (state.granularity == 1) {
        Label("Axis");
        changed |= ImGui::InputInt("##axis", &state.axis);
    } else if (state.granularity == 2) {
        Label("Group size");
        changed |= ImGui::InputInt("##group-size", &state.group_size, 1, 8);
    }
    ImGui::EndDisabled();
    if (manual) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::TextWrapped("Manual s and z apply to the whole tensor.");
        ImGui::PopStyleColor();
    }
    if (changed && !manual) {
        QuantConfig next = doc.config;
        next.granularity = static_cast<Granularity>(state.granularity);
        next.axis = state.axis;
        next.group_size = state.group_size;
        if (next.granularity != Granularity::Channel) next.axis = 0;
        if (next.granularity != Granularity::Group) next.group_size = 0;
        state.granularity_message.clear();
        out.apply_config(doc, next, false, &state.granularity_message);
    }
    Note(kWarn, state.granularity_message);
}

void DrawRounding(const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    int r = static_cast<int>(next.rounding);
    bool changed = ImGui::RadioButton("half-even", &r, static_cast<int>(Rounding::HalfEven));
    HelpTooltip("Ties go to the even neighbour: 2.5 -> 2, 3.5 -> 4 (torch.round, numpy.round).");
    // Side by side where both fit (large text: one under the other).
    if (ImGui::GetContentRegionAvail().x - ImGui::GetItemRectMax().x + ImGui::GetCursorScreenPos().x >
        ImGui::GetFrameHeight() + ImGui::CalcTextSize("half-away").x + ImGui::GetStyle().ItemSpacing.x * 2.0f)
        ImGui::SameLine();
    changed |= ImGui::RadioButton("half-away", &r, static_cast<int>(Rounding::HalfAway));
    HelpTooltip("Ties go away from zero: 2.5 -> 3 (std::round).");
    if (changed) {
        next.rounding = static_cast<Rounding>(r);
        out.apply_config(doc, next, false);
    }
}

// The teaching pitfall: no clamp, the rounded value is cast and wraps around.
void DrawNaiveCast(ControlsPanelState& state, const Document& doc, Intents& out) {
    QuantConfig next = doc.config;
    bool wrap = next.overflow == Overflow::Wrap;
    ImGui::PushStyleColor(ImGuiCol_Text, kWrongRed);
    ImGui::PushStyleColor(ImGuiCol_CheckMark, kWrongRed);
    const bool changed = CheckboxWrapped("Naive cast, no clamp  (WRONG)", &wrap);
    ImGui::PopStyleColor(2);
    HelpTooltip("Skips the clamp to [q_min, q_max]: a value past the range wraps around like a C cast "
                "(two's complement). Shown to teach the pitfall; never do this.");
    if (changed) {
        next.overflow = wrap ? Overflow::Wrap : Overflow::Clamp;
        out.apply_config(doc, next, false);
    }
    if (ButtonFullWidth("Lesson: /max * 255, cast to int8")) {
        next = recipe_config(Recipe::NaiveMax255, doc.data->view, doc.config);
        state.scale_entry = next.manual_scale;
        out.apply_config(doc, next, false, &state.manual_message);
    }
    HelpTooltip("One lesson's naive recipe, torch.round(r / r.abs().max() * 255).to(torch.int8): the maximum maps "
                "to 255, which int8 stores as -1 (quantscope quantize --recipe naive-max255).");
    if (doc.config.overflow != Overflow::Wrap) return;

    // What the wrap does to this tensor, and the worst element of the result traced through the formula (the
    // core finds both), once per result generation.
    const QuantView v = doc.view();
    if (!v.valid() || v.config->overflow != Overflow::Wrap) return;
    if (state.traced_generation != v.generation) {
        state.traced_index = v.overview->error_argmax;
        state.overflow_sentence = overflow_sentence(farthest_overflow(v.data->view, *v.params, *v.config), *v.config);
        state.traced_generation = v.generation;
    }
    ImGui::PushStyleColor(ImGuiCol_Text, kWrongRed);
    TextWrappedAtSpaces(state.overflow_sentence);
    ImGui::PopStyleColor();
    const ElementTrace t = TraceOf(v, state.traced_index);
    ImGui::PushStyleColor(ImGuiCol_Text, t.clipped ? kWrongRed : ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    char worst[256];
    std::snprintf(worst, sizeof worst, "Worst here %s: r = %.6g -> r/s + z = %.6g -> round %.0f -> stored %d -> r' = %.6g",
                  index_to_string(v.data->shape(), t.flat_index).c_str(), t.r, t.scaled, t.rounded, t.code, t.dequantized);
    TextWrappedAtSpaces(worst);
    ImGui::Text("%lld element(s) wrapped", static_cast<long long>(v.metrics().clipped));
    ImGui::PopStyleColor();
}

// The formula with this quantization's numbers in it (per tensor; blocks are summarised).
void DrawFormula(const Document& doc) {
    const QuantConfig& c = doc.shown_config;
    const bool wrap = c.overflow == Overflow::Wrap;
    char s_text[32] = "s", z_text[32] = "z";
    if (doc.params.scale.size() == 1) {
        std::snprintf(s_text, sizeof s_text, "%.6g", doc.params.scale[0]);
        std::snprintf(z_text, sizeof z_text, doc.params.zero_point[0] < 0 ? "(%d)" : "%d", doc.params.zero_point[0]);
    }
    ImGui::PushStyleColor(ImGuiCol_Text, wrap ? kWrongRed : ImGui::GetStyleColorVec4(ImGuiCol_Text));
    if (wrap) {
        ImGui::TextWrapped("q = wrap(round(r / %s + %s)) to %s", s_text, z_text, c.dtype.name().c_str());
    } else {
        ImGui::TextWrapped("q = clamp(round(r / %s + %s), %d, %d)", s_text, z_text, c.dtype.q_min(), c.dtype.q_max());
    }
    ImGui::PopStyleColor();
    ImGui::TextWrapped("r' = %s * (q - %s)", s_text, z_text);
    ImGui::TextWrapped("error = |r - r'|");
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("round: %s", c.rounding == Rounding::HalfEven ? "half to even" : "half away from zero");
    ImGui::PopStyleColor();
}

// Keeps the drafts in step with the applied config after an undo, a redo or a new tensor.
void SyncControlsPanel(ControlsPanelState& state, const Document& doc) {
    state.granularity = static_cast<int>(doc.config.granularity);
    state.axis = doc.config.axis;
    if (doc.config.group_size > 0) state.group_size = static_cast<int>(doc.config.group_size);
    state.scale_entry = doc.config.manual_scale;
    state.granularity_message.clear();
    state.manual_message.clear();
}

}  // namespace

void DrawControlsPanel(ControlsPanelState& state, const Document& doc, Intents& out) {
    if (!doc.data) return;
    if (state.synced_revision != doc.revision) {
        SyncControlsPanel(state, doc);
        state.synced_revision = doc.revision;
    }
    ImGui::PushID("controls");
    ImGui::BeginDisabled(doc.busy());

    Section("Number type");
    DrawDtype(doc, out);

    const FormatId format = doc.config.format;
    if (!is_int_format(format)) {
        // A format: its scale choice (none for a block format: its recipe is fixed) and granularity. B's plain
        // values (a Model-tab row) have no scale to choose.
        const bool b_values = doc.data && doc.data->stored && doc.data->stored->values() && format == doc.data->stored->format;
        if (b_values) {
        } else if (format_traits(format).own_blocks()) {
            // Wrapped: at a projector's text size one line ran past the left column's edge.
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            TextWrappedAtSpaces("The block format chooses its own scales.");
            ImGui::PopStyleColor();
        } else {
            Section("Scale");
            DrawFormatMode(state, doc, out);
            if (doc.config.mode == Mode::Manual) DrawManual(state, doc, out);
            if (doc.config.mode == Mode::Symmetric) {
                Section("Granularity");
                DrawGranularity(state, doc, out);
            }
        }
        DrawImportance(doc, out);
        ImGui::EndDisabled();
        ImGui::PopID();
        return;
    }

    Section("Scale and zero point");
    DrawMode(state, doc, out);
    if (doc.config.mode == Mode::Manual) {
        DrawManual(state, doc, out);
    } else {
        DrawCalibration(doc, out);
        DrawComputedParams(doc);
    }

    Section("Granularity");
    DrawGranularity(state, doc, out);

    Section("Rounding");
    DrawRounding(doc, out);

    Section("Pitfall");
    DrawNaiveCast(state, doc, out);

    Section("Formula");
    DrawFormula(doc);
    DrawImportance(doc, out);

    ImGui::EndDisabled();
    ImGui::PopID();
}

}  // namespace qs::gui
