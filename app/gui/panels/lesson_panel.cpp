#include "gui/panels/lesson_panel.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <string>

#include <imgui.h>
#include <imgui_internal.h>  // the window's font scale, which a number too wide for the column shrinks

#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

// Decimals the notebook printed a literal with ("170.8753" -> 4); -1 for an exponent form ("2.3408e-05").
int PrintedDecimals(const std::string& literal) {
    if (literal.find_first_of("eE") != std::string::npos) return -1;
    const std::size_t dot = literal.find('.');
    return dot == std::string::npos ? 0 : static_cast<int>(literal.size() - dot - 1);
}

// Significant digits of a literal without an exponent ("0.016929134609192376" -> 17, "-14" -> 2, "0.0" -> 1).
int PrintedSignificantDigits(const std::string& literal) {
    int digits = 0;
    bool leading = true;
    for (char c : literal) {
        if (c < '0' || c > '9') continue;
        if (leading && c == '0') continue;
        leading = false;
        ++digits;
    }
    return std::max(digits, 1);
}

// The app's value written like the notebook's literal, so that agreeing numbers read the same: to as many
// decimals, or, past 17 decimals (a float's shortest round trip, 0.016929134609192376, has 18), to as many
// significant digits (FormatFixed's fallback gave 3: "notebook 0.016929134609192376  app 0.0169" read as two
// different numbers beside their check mark).
std::string LikePrinted(double app, const std::string& literal) {
    constexpr int kMaxDecimals = 17;
    const int decimals = PrintedDecimals(literal);
    if (decimals < 0) return FormatNumber(app);
    if (decimals <= kMaxDecimals) return FormatFixed(app, decimals, kMaxDecimals);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", std::min(PrintedSignificantDigits(literal), 17), app);
    if (std::string(buf).find('e') != std::string::npos) std::snprintf(buf, sizeof buf, "%.*f", decimals, app);  // as printed: no exponent
    return buf;
}

std::string CellName(const Tensor& t, std::int64_t flat) { return index_to_string(t.shape, flat); }

LessonRow RowOf(const LessonNumber& n, const QuantView& view, const QuantResult& full) {
    LessonRow row;
    row.label = n.label;
    row.note = n.note;
    const std::size_t count = n.values.size();
    constexpr std::size_t kListed = 4;  // a few values (a channel's scales) are shown; a tensor is summarised
    const auto listed = [&](auto&& text_of) {
        std::string out;
        for (std::size_t i = 0; i < count; ++i) out += (i ? ", " : "") + text_of(i);
        return out;
    };
    if (count <= kListed) row.notebook = listed([&](std::size_t i) { return n.printed[i]; });
    else row.notebook = std::to_string(count) + " values";
    if (!view.tensor) {
        row.applies = false;
        row.app = SmallTensorNote("Lessons", "check the notebook's printed numbers on the lesson's own small "
                                  "tensor (open the lesson to load it)", *view.data);
        return row;
    }
    if (full.dequantized.empty() && view.tensor->numel() > 0) {  // not this lesson's tensor: see LessonRows
        row.applies = false;
        row.app = "not checked: the open tensor (" + shape_to_string(view.tensor->shape) +
                  ") is not the lesson's; go to a step again to load it";
        return row;
    }
    if (n.at >= 0) row.label += " at " + CellName(*view.tensor, n.at);
    try {
        const LessonAgreement a = compare_printed(n, *view.tensor, *view.config, *view.params, full);
        row.agrees = a.agrees();
        if (count <= kListed) {
            row.app = listed([&](std::size_t i) { return LikePrinted(a.app[i], n.printed[i]); });
        } else if (a.agrees()) {
            row.app = "the same " + std::to_string(count);
        } else {
            const std::size_t i = static_cast<std::size_t>(a.first_disagreeing);
            const bool cells = n.at < 0 && count == static_cast<std::size_t>(view.tensor->numel());
            row.app = std::to_string(a.disagreeing) + " of " + std::to_string(count) + " differ, " +
                      (cells ? CellName(*view.tensor, static_cast<std::int64_t>(i)) : "#" + std::to_string(i)) + ": " +
                      n.printed[i] + " vs " + LikePrinted(a.app[i], n.printed[i]);
        }
    } catch (const std::exception& e) {
        row.applies = false;
        row.app = error_text(e);
    }
    return row;
}

// The widest word of `texts` at the current text size.
float WidestWord(std::initializer_list<const std::string*> texts) {
    float widest = 0.0f;
    for (const std::string* text : texts)
        for (std::size_t start = 0; start < text->size();) {
            const std::size_t end = std::min(text->find(' ', start), text->size());
            if (end > start) widest = std::max(widest, ImGui::CalcTextSize(text->data() + start, text->data() + end).x);
            start = end + 1;
        }
    return widest;
}

void DrawRow(const LessonRow& row, float width) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    TextWrappedAtSpaces(row.label);
    ImGui::Indent();
    const float inner = width - ImGui::GetStyle().IndentSpacing;
    // A number wider than the column (the scale the notebook printed with 17 digits, 0.016929134609192376, at a
    // projector's text size) is drawn smaller until it fits: it ran past the column's edge, its last digits cut
    // off, and split at a line's end it would read as two numbers.
    const float widest = WidestWord({&row.notebook, &row.app});
    const float window_scale = ImGui::GetCurrentWindow()->FontWindowScale;
    if (widest > inner && inner > 0.0f) ImGui::SetWindowFontScale(window_scale * std::max(0.5f, inner / widest * 0.98f));
    // "notebook X", "app Y" and the mark, each whole: the next on a new line when the column is narrow.
    const float start_x = ImGui::GetCursorPosX();
    const float gap = ImGui::CalcTextSize("  ").x;
    float x = 0.0f;
    const auto place = [&](float w) {
        const bool beside = x > 0.0f && x + gap + w <= inner;
        if (beside) ImGui::SameLine(start_x + x + gap);
        x = beside ? x + gap + w : w;
        return w <= inner;
    };
    for (const std::string& text : {"notebook " + row.notebook, "app " + row.app}) {
        if (place(ImGui::CalcTextSize(text.c_str()).x)) {
            ImGui::TextUnformatted(text.c_str());
        } else {
            TextWrappedAtSpaces(text);  // wider than the column: wrapped at its spaces
            x = inner;
        }
    }
    if (row.applies) {  // a number the app has not now (app says why) is no disagreement: no mark
        place(ImGui::GetTextLineHeight());
        AgreementMark(row.agrees);
    }
    ImGui::SetWindowFontScale(window_scale);
    if (!row.note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces(row.note);
        ImGui::PopStyleColor();
    }
    ImGui::Unindent();
    ImGui::PopTextWrapPos();
}

}  // namespace

std::vector<LessonRow> LessonRows(const LessonStep& step, const QuantView& view) {
    std::vector<LessonRow> rows;
    if (!view.valid()) return rows;
    // The quantization on show at full resolution, which the printed numbers are compared with: the document
    // keeps only its overview, so it is made here, for the step's own tensor, which is small. Another one (a
    // session that keeps a lesson open over its own 8192 x 8192 tensor) would cost a whole quantization on the
    // window's thread at every change, and its numbers cannot be the notebook's anyway.
    QuantResult full;
    if (view.tensor && view.tensor == step.state.tensor.get()) quantize_into(*view.tensor, *view.params, *view.config, full);
    for (const LessonNumber& n : step.printed) rows.push_back(RowOf(n, view, full));
    return rows;
}

void DrawLessonPanel(LessonPanelState& st, const QuantView& view, Intents& out, float width, bool compact) {
    if (!st.lesson || st.lesson->steps.empty()) {
        ImGui::TextDisabled("No lesson open (File > Lessons, or quantscope gui --lesson NAME).");
        return;
    }
    const Lesson& lesson = *st.lesson;
    const int n = static_cast<int>(lesson.steps.size());
    st.step = std::clamp(st.step, 0, n - 1);
    const LessonStep& step = lesson.steps[static_cast<std::size_t>(st.step)];
    if (st.rows_step != st.step || st.rows_generation != view.generation) {
        st.rows = LessonRows(step, view);
        st.rows_step = st.step;
        st.rows_generation = view.generation;
    }
    ImGui::PushID(&st);
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width);
    if (!compact) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces(lesson.title);
        ImGui::PopStyleColor();
    }

    // Step k of n, and the two buttons (on the next line when they do not fit beside it).
    const std::string counter = "Step " + std::to_string(st.step + 1) + " of " + std::to_string(n);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(counter.c_str());
    const ImGuiStyle& style = ImGui::GetStyle();
    // Presenter mode: small arrows (a clicker does the stepping); else words.
    const char* back = compact ? "<" : "< Back";
    const char* next = compact ? ">" : "Next >";
    const float buttons_w = ImGui::CalcTextSize(back).x + ImGui::CalcTextSize(next).x + style.FramePadding.x * 4 +
                            style.ItemSpacing.x;
    if (ImGui::CalcTextSize(counter.c_str()).x + style.ItemSpacing.x + buttons_w <= width) ImGui::SameLine(width - buttons_w);
    ImGui::BeginDisabled(st.step == 0);
    if (ImGui::Button(back)) out.push(LessonStepIntent{st.step - 1});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Previous step: PageUp or Left");
    ImGui::SameLine();
    ImGui::BeginDisabled(st.step + 1 >= n);
    if (ImGui::Button(next)) out.push(LessonStepIntent{st.step + 1});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Next step: PageDown or Right");

    ImGui::Separator();
    TextWrappedAtSpaces(step.title);
    ImGui::Spacing();
    TextWrappedAtSpaces(step.text);
    if (st.covers_left) {
        ImGui::Spacing();
        if (ImGui::Button("Reveal (R)")) out.push(LessonRevealIntent{});
    }
    if (!st.rows.empty()) {
        ImGui::Spacing();
        ImGui::Separator();
        ImGui::TextDisabled("The notebook printed, and the app now:");
        for (const LessonRow& row : st.rows) DrawRow(row, width);
    }
    if (!compact) {
        ImGui::Spacing();
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces("Source: " + lesson.source);
        ImGui::PopStyleColor();
    }
    ImGui::PopTextWrapPos();
    ImGui::PopID();
}

}  // namespace qs::gui
