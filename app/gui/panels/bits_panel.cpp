#include "gui/panels/bits_panel.hpp"

#include <algorithm>
#include <cmath>
#include <exception>

#include <imgui.h>

#include "gui/panels/bits_text.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {

namespace {

ImU32 FieldColor(BitFieldKind kind) {
    switch (kind) {
        case BitFieldKind::Sign: return palette::kBitSign;
        case BitFieldKind::Exponent: return palette::kBitExponent;
        case BitFieldKind::Mantissa: return palette::kBitMantissa;
        case BitFieldKind::Code: break;
    }
    return palette::kBitCode;
}

// Boxes of 1.7 em (or as wide as `label_w`, a bit's weight, needs), narrower when `bits` of them would not fit
// the width (a float32 row at a projector's text size).
float BoxWidth(int bits, float label_w = 0.0f) {
    const float avail = std::max(ImGui::GetContentRegionAvail().x, 8.0f * static_cast<float>(bits));
    const float want = std::max(ImGui::GetFontSize() * 1.7f, label_w + ImGui::GetFontSize() * 0.5f);
    return std::floor(std::min(want, avail / static_cast<float>(std::max(bits, 1))));
}

// One box with its digit centred (when the digit fits).
void DrawBox(ImDrawList* dl, ImVec2 min, float w, float h, ImU32 fill, char digit) {
    dl->AddRectFilled(min, ImVec2(min.x + w, min.y + h), fill);
    dl->AddRect(min, ImVec2(min.x + w, min.y + h), palette::kBitOutline);
    const char text[2] = {digit, '\0'};
    const ImVec2 ts = ImGui::CalcTextSize(text);
    if (ts.x + 2.0f <= w)
        dl->AddText(ImVec2(std::round(min.x + (w - ts.x) * 0.5f), std::round(min.y + (h - ts.y) * 0.5f)),
                    palette::kBitDigit, text);
}

// The first of `labels` that fits under [x0, x1), centred there (none when none fits: the weights of narrow
// boxes are in the decoded line too).
void LabelUnder(ImDrawList* dl, const std::vector<std::string>& labels, float x0, float x1, float y) {
    for (const std::string& label : labels) {
        const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
        if (ts.x > x1 - x0 + ImGui::GetFontSize() * 0.2f) continue;
        dl->AddText(ImVec2(std::round((x0 + x1 - ts.x) * 0.5f), y), ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
        return;
    }
}

// The row's bits, most significant left, coloured by field; under them each field's name (a float) or each
// bit's weight (an integer code).
void DrawBitBoxes(const BitRow& row) {
    int bits = 0;
    for (const BitField& f : row.fields) bits += f.bits;
    std::vector<std::string> weights;
    float label_w = 0.0f;
    for (double wt : row.weights) {
        weights.push_back(FormatNumber(wt));
        label_w = std::max(label_w, ImGui::CalcTextSize(weights.back().c_str()).x);
    }
    const float w = BoxWidth(bits, label_w), h = std::round(ImGui::GetTextLineHeight() * 1.5f);
    // Every weight under its box, or none (the decoded line sums them anyway).
    if (label_w > w + ImGui::GetFontSize() * 0.2f) weights.clear();
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float label_y = at.y + h + 2.0f;
    float x = at.x;
    int bit = 0;
    const bool hover_window = ImGui::IsWindowHovered();
    for (const BitField& f : row.fields) {
        const float x0 = x;
        for (char c : f.text) {
            DrawBox(dl, ImVec2(x, at.y), w, h, FieldColor(f.kind), c);
            if (hover_window && ImGui::IsMouseHoveringRect(ImVec2(x, at.y), ImVec2(x + w, at.y + h))) {
                // Which bit this is (numbered from the lowest, as the packing and the weights count).
                const std::string what = row.weights.empty() ? FieldNames(f.kind).front()
                                                             : "weight " + FormatNumber(row.weights[static_cast<std::size_t>(bit)]);
                ImGui::SetTooltip("bit %d: %s", bits - 1 - bit, what.c_str());
            }
            if (!weights.empty()) LabelUnder(dl, {weights[static_cast<std::size_t>(bit)]}, x, x + w, label_y);
            x += w;
            ++bit;
        }
        if (row.weights.empty()) LabelUnder(dl, FieldNames(f.kind), x0, x, label_y);
        // A thicker line between fields.
        dl->AddLine(ImVec2(x0, at.y), ImVec2(x0, at.y + h), palette::kBitOutline, 2.0f);
    }
    dl->AddLine(ImVec2(x, at.y), ImVec2(x, at.y + h), palette::kBitOutline, 2.0f);
    ImGui::Dummy(ImVec2(x - at.x, h + 2.0f + ImGui::GetTextLineHeight()));
}

void DrawBitRow(const BitRow& row, const QuantConfig& config) {
    SectionHeader(BitRowTitle(row, config).c_str());
    DrawBitBoxes(row);
    TextWrappedAtSpaces(BitRowBits(row) + " " + Symbols().arrow + " " + BitRowDecoded(row));
}

// Two rows of one level side by side (d and dmin; a sub-block's sc and m), or the one there is.
void DrawBitRowPair(const BitRow* a, const BitRow* b, const QuantConfig& config) {
    if (!a || !b) {
        if (a) DrawBitRow(*a, config);
        if (b) DrawBitRow(*b, config);
        return;
    }
    if (!ImGui::BeginTable("##pair", 2, ImGuiTableFlags_SizingStretchSame)) return;
    ImGui::TableNextColumn();
    DrawBitRow(*a, config);
    ImGui::TableNextColumn();
    DrawBitRow(*b, config);
    ImGui::EndTable();
}

const BitRow* RowWithRole(const CellBits& b, BitRowRole role) {
    for (const BitRow& row : b.scales)
        if (row.role == role) return &row;
    return nullptr;
}

// A ggml type's block, outside in, each level indented under the one that holds it: the super-block's d
// (and dmin or m), the sub-block's stored scale and min with the products to_float uses, then the element's
// code and r' worked out.
void DrawGgmlNesting(const CellBits& b, const QuantConfig& config) {
    const GgmlCellBits& g = b.ggml;
    const float indent = ImGui::GetFontSize() * 1.2f;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    TextWrappedAtSpaces(GgmlBlockLine(g, b));
    ImGui::PopStyleColor();
    ImGui::PushID("super");
    DrawBitRowPair(RowWithRole(b, BitRowRole::BlockScale), RowWithRole(b, BitRowRole::Offset), config);
    ImGui::PopID();
    if (g.sub_block >= 0) {
        ImGui::Indent(indent);
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces(GgmlSubBlockLine(g));
        ImGui::PopStyleColor();
        ImGui::PushID("sub");
        DrawBitRowPair(RowWithRole(b, BitRowRole::SubScale), RowWithRole(b, BitRowRole::SubMin), config);
        ImGui::PopID();
    }
    ImGui::Indent(indent);
    DrawBitRow(b.code, config);
    TextWrappedAtSpaces(GgmlWorkedLine(g));
    ImGui::Unindent(g.sub_block >= 0 ? 2.0f * indent : indent);
}

// The packed byte, bit 7 left: each code's span outlined, the selected code in the code colour, the others
// grey, each span's code under it.
std::int64_t DrawPackedByte(const PackedByte& packed, std::int64_t selected, const Shape& shape,
                            std::vector<ImVec4>& rects) {
    SectionHeader("packed byte (--out-packed, first code in the lowest bits)");
    const float w = BoxWidth(8), h = std::round(ImGui::GetTextLineHeight() * 1.5f);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (int p = 7; p >= 0; --p) {
        const float x = at.x + static_cast<float>(7 - p) * w;
        ImU32 fill = palette::kBitOtherCode;
        for (const PackedSlot& s : packed.slots)
            if (p >= s.low_bit && p < s.low_bit + s.bits && s.element == selected) fill = palette::kBitCode;
        DrawBox(dl, ImVec2(x, at.y), w, h, fill, ((packed.value >> p) & 1) != 0 ? '1' : '0');
    }
    std::int64_t follow = -1;
    for (const PackedSlot& s : packed.slots) {
        const int hi = std::min(7, s.low_bit + s.bits - 1), lo = std::max(0, s.low_bit);
        const float x0 = at.x + static_cast<float>(7 - hi) * w, x1 = at.x + static_cast<float>(8 - lo) * w;
        dl->AddRect(ImVec2(x0, at.y), ImVec2(x1, at.y + h), palette::kBitOutline, 0.0f, 0, 2.0f);
        LabelUnder(dl, {FormatInteger(s.code)}, x0, x1, at.y + h + 2.0f);
        // A code of the byte is a button: click it to follow that element (the figure selects it).
        rects.emplace_back(x0, at.y, x1, at.y + h);
        ImGui::SetCursorScreenPos(ImVec2(x0, at.y));
        ImGui::PushID(static_cast<int>(s.element % 1000003));
        if (ImGui::InvisibleButton("##code", ImVec2(std::max(x1 - x0, 1.0f), h)) && s.element != selected) follow = s.element;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s: code %s%s", index_to_string(shape, s.element).c_str(), FormatInteger(s.code).c_str(),
                              s.element == selected ? " (selected)" : ", click to select it");
        ImGui::PopID();
    }
    ImGui::SetCursorScreenPos(at);
    ImGui::Dummy(ImVec2(8.0f * w, h + 2.0f + ImGui::GetTextLineHeight()));
    TextWrappedAtSpaces(PackedByteLine(packed, shape));
    std::string who;
    for (const PackedSlot& s : packed.slots) {
        const int hi = s.low_bit + s.bits - 1;
        who += (who.empty() ? "" : ";  ") + std::string("bits ") + FormatInteger(std::min(hi, 7)) + "-" +
               FormatInteger(std::max(s.low_bit, 0)) + (hi > 7 || s.low_bit < 0 ? " (part)" : "") + ": " +
               index_to_string(shape, s.element) + (s.element == selected ? " (selected)" : "");
    }
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    TextWrappedAtSpaces(who);
    ImGui::PopStyleColor();
    return follow;
}

// The selected cell's bits, recomputed only when the selection or the quantization changed.
void Refresh(BitsPanelState& st, const QuantView& qv, std::int64_t selected) {
    if (st.generation == qv.generation && st.flat == selected) return;
    st.generation = qv.generation;
    st.flat = selected;
    st.valid = false;
    st.error.clear();
    try {
        st.bits = cell_bits(qv.data->view, *qv.params, *qv.config, selected, qv.data->values.amax());
        st.valid = true;
    } catch (const std::exception& e) {
        st.error = error_text(e);
    }
}

}  // namespace

void DrawBitsPanel(BitsPanelState& st, const QuantView& qv, std::int64_t selected, bool hidden, Intents& out) {
    st.report.clear();
    st.packed_rects.clear();
    if (!qv.valid()) return;
    std::int64_t follow = -1;
    const Shape& shape = qv.data->shape();
    ImGui::PushTextWrapPos(0.0f);
    if (selected < 0 || selected >= qv.data->numel()) {
        TextWrappedAtSpaces("Click a cell in the figure to see its code bit by bit: a float's sign, exponent and "
                            "mantissa, an integer's two's complement, the block's stored scale and the packed byte.");
    } else if (hidden) {
        TextWrappedAtSpaces("Selected " + index_to_string(shape, selected) + ": predict its code, then press R.");
    } else if (ShowsStoredValues(qv)) {
        // A Model-tab row against a B of plain values: nothing to show bit by bit, and the view says so.
        const std::string type = StoredTypeName(*qv.params->stored);
        try {
            const ElementTrace t = TraceOf(qv, selected);
            const std::string line = "Element " + index_to_string(shape, selected) + ": B stores " + type +
                                     " values, not codes. There is no code, block or scale to show bit by bit: A = " +
                                     FormatNumber(t.r) + ", B's " + type + " value r' = " + FormatNumber(t.dequantized) +
                                     ", |A - B| = " + FormatNumber(t.error) + ".";
            TextWrappedAtSpaces(line);
            st.report = {line};
        } catch (const std::exception& e) {
            TextWrappedAtSpaces(error_text(e));
        }
    } else {
        Refresh(st, qv, selected);
        if (!st.valid) {
            TextWrappedAtSpaces(st.error);
        } else {
            const CellBits& b = st.bits;
            std::string head = "Element " + index_to_string(shape, selected);
            if (!b.scales.empty()) head += ", block " + FormatInteger(static_cast<double>(b.block));
            TextWrappedAtSpaces(head + ": " + FormatInteger(b.code_bits) + " bits a code");
            if (b.ggml.type) {
                DrawGgmlNesting(b, *qv.config);
            } else {
                DrawBitRow(b.code, *qv.config);
                for (const BitRow& row : b.scales) DrawBitRow(row, *qv.config);
            }
            if (b.packed.offset >= 0) follow = DrawPackedByte(b.packed, selected, shape, st.packed_rects);
            st.report = BitsReportLines(b, *qv.config, shape);
        }
    }
    ImGui::PopTextWrapPos();
    if (follow >= 0) out.push(SelectElementIntent{follow});
}

}  // namespace qs::gui
