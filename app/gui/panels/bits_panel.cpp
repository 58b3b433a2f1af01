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

// The boxes' size: `width_em` wide (or as wide as a bit's weight needs), `height_lines` text lines tall, with a
// line of labels under them (a float's field names, an integer's weights, a packed byte's codes) or none. The
// compact look (a short window for its text: a projector) has smaller boxes with room beside them and its
// labels folded: one legend of the field colours for the view, each bit's weight or code on hover, and the
// decoded line sums the weights anyway.
struct BoxLook {
    float width_em = 1.7f;
    float height_lines = 1.5f;
    bool labels = true;
};
constexpr BoxLook kCompactBoxes{1.35f, 1.25f, false};
constexpr float kCompactLeastBoxEm = 0.9f;

// Boxes of `look.width_em` (or as wide as `label_w`, a bit's weight, needs), narrower when `bits` of them would
// not fit the width (a float32 row at a projector's text size).
float BoxWidth(int bits, float label_w = 0.0f, BoxLook look = {}) {
    const float avail = std::max(ImGui::GetContentRegionAvail().x, 8.0f * static_cast<float>(bits));
    const float want = std::max(ImGui::GetFontSize() * look.width_em, label_w + ImGui::GetFontSize() * 0.5f);
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

// The labels under a row's boxes: each bit's weight as text (an integer code; none for a float) and the widest.
std::vector<std::string> WeightLabels(const BitRow& row, float& label_w) {
    std::vector<std::string> weights;
    label_w = 0.0f;
    for (double wt : row.weights) {
        weights.push_back(FormatNumber(wt));
        label_w = std::max(label_w, ImGui::CalcTextSize(weights.back().c_str()).x);
    }
    return weights;
}

int RowBits(const BitRow& row) {
    int bits = 0;
    for (const BitField& f : row.fields) bits += f.bits;
    return bits;
}

// The row's bits, most significant left, coloured by field; under them each field's name (a float) or each
// bit's weight (an integer code), unless `look` folds them. Returns the size taken.
ImVec2 DrawBitBoxes(const BitRow& row, BoxLook look = {}) {
    const int bits = RowBits(row);
    float label_w = 0.0f;
    std::vector<std::string> weights = WeightLabels(row, label_w);
    const float w = BoxWidth(bits, label_w, look), h = std::round(ImGui::GetTextLineHeight() * look.height_lines);
    // Every weight under its box, or none (the decoded line sums them anyway).
    if (label_w > w + ImGui::GetFontSize() * 0.2f || !look.labels) weights.clear();
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
        if (row.weights.empty() && look.labels) LabelUnder(dl, FieldNames(f.kind), x0, x, label_y);
        // A thicker line between fields.
        dl->AddLine(ImVec2(x0, at.y), ImVec2(x0, at.y + h), palette::kBitOutline, 2.0f);
    }
    dl->AddLine(ImVec2(x, at.y), ImVec2(x, at.y + h), palette::kBitOutline, 2.0f);
    const ImVec2 size(x - at.x, look.labels ? h + 2.0f + ImGui::GetTextLineHeight() : h);
    ImGui::Dummy(size);
    return size;
}

// Text in the disabled colour (a row's name, a block's extent).
void DimText(const std::string& text) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    TextWrappedAtSpaces(text);
    ImGui::PopStyleColor();
}

// Whether a compact row's name goes beside its boxes: where the boxes, `boxes_w` wide at their least, keep
// room beside it in `avail`.
bool TitleBeside(const std::string& title, float boxes_w, float avail) {
    return ImGui::CalcTextSize(title.c_str()).x + ImGui::GetFontSize() * 0.6f + boxes_w <= avail;
}

// A row as a block of its own, for a short window (a projector's 1280 x 720 at font scale 2): `title` beside
// the boxes (`beside`) instead of a header with a rule above them, and `text` beside the boxes where it fits,
// else under them.
// `boxes` draws the boxes at the cursor and returns their size. A Bits row's lines took four to five text
// lines; this takes one to two.
template <class Boxes>
void CompactRow(const std::string& title, bool beside, const std::string& text, Boxes&& boxes) {
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
    const float avail = ImGui::GetContentRegionAvail().x, spacing = ImGui::GetStyle().ItemSpacing.y;
    const ImVec2 start = ImGui::GetCursorScreenPos();
    const float right = start.x + avail;
    const float title_w = ImGui::CalcTextSize(title.c_str()).x + font * 0.6f;
    const float text_w = ImGui::CalcTextSize(text.c_str()).x;
    // The name above the boxes (a float32's 32): the text on its line when both fit there.
    const bool text_above = !beside && title_w + font + text_w <= avail;
    float top = start.y;
    if (text_above) {
        ImDrawList* dl = ImGui::GetWindowDrawList();
        DrawTextAt(dl, start, ImGui::GetColorU32(ImGuiCol_TextDisabled), title, right);
        DrawTextAt(dl, ImVec2(start.x + title_w + font, start.y), ImGui::GetColorU32(ImGuiCol_Text), text, right);
        ImGui::Dummy(ImVec2(avail, line));
        top = ImGui::GetCursorScreenPos().y;
    } else if (!beside) {
        DimText(title);
        top = ImGui::GetCursorScreenPos().y;
    }
    const float h = std::round(line * kCompactBoxes.height_lines);
    const float boxes_x = beside ? start.x + title_w : start.x;
    if (beside)
        DrawTextAt(ImGui::GetWindowDrawList(), ImVec2(start.x, std::round(top + (h - line) * 0.5f)),
                   ImGui::GetColorU32(ImGuiCol_TextDisabled), title, right);
    ImGui::SetCursorScreenPos(ImVec2(boxes_x, top));
    const ImVec2 drawn = boxes();
    float bottom = top + drawn.y;
    const float text_x = boxes_x + drawn.x + font;
    if (!text_above) {  // (drawn above already otherwise)
        if (text_x + text_w <= right) {  // one line, beside the boxes
            DrawTextAt(ImGui::GetWindowDrawList(), ImVec2(text_x, std::round(top + (h - line) * 0.5f)), ImGui::GetColorU32(ImGuiCol_Text),
                       text, right);
        } else if (right - text_x >= font * 12.0f) {  // wrapped beside them
            ImGui::SetCursorScreenPos(ImVec2(text_x, top));
            TextWrappedAtSpaces(text);
            bottom = std::max(bottom, ImGui::GetCursorScreenPos().y - spacing);
        } else {  // under the boxes
            ImGui::SetCursorScreenPos(ImVec2(start.x, bottom + spacing));
            TextWrappedAtSpaces(text);
            bottom = ImGui::GetCursorScreenPos().y - spacing;
        }
    }
    ImGui::SetCursorScreenPos(ImVec2(start.x, top));
    ImGui::Dummy(ImVec2(avail, bottom - top));
}

// The compact row's name, and the least width its boxes take beside it: 0.9 em a box (a digit and its margins).
std::string CompactTitle(const BitRow& row, const QuantConfig& config) { return BitRowTitle(row, config, true); }
float LeastBoxesWidth(const BitRow& row) { return ImGui::GetFontSize() * kCompactLeastBoxEm * static_cast<float>(RowBits(row)); }

// The compact row of a code or scale: what the bits stand for without the bits again (the boxes show them).
// `beside`: the name beside the boxes (-1: where they fit; a pair of rows decides for both).
void DrawBitRowCompact(const BitRow& row, const QuantConfig& config, int beside = -1) {
    const std::string title = CompactTitle(row, config);
    CompactRow(title, beside < 0 ? TitleBeside(title, LeastBoxesWidth(row), ImGui::GetContentRegionAvail().x) : beside > 0,
               std::string(Symbols().arrow) + " " + BitRowDecoded(row), [&] { return DrawBitBoxes(row, kCompactBoxes); });
}

void DrawBitRow(const BitRow& row, const QuantConfig& config, bool compact, int beside = -1) {
    if (compact) {
        DrawBitRowCompact(row, config, beside);
        return;
    }
    SectionHeader(BitRowTitle(row, config).c_str());
    DrawBitBoxes(row);
    TextWrappedAtSpaces(BitRowBits(row) + " " + Symbols().arrow + " " + BitRowDecoded(row));
}

// Two rows of one level side by side (d and dmin; a sub-block's sc and m), or the one there is.
void DrawBitRowPair(const BitRow* a, const BitRow* b, const QuantConfig& config, bool compact) {
    if (!a || !b) {
        if (a) DrawBitRow(*a, config, compact);
        if (b) DrawBitRow(*b, config, compact);
        return;
    }
    // Compact: both names beside their boxes or both above them, so that the two rows' boxes line up.
    const float column = (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().CellPadding.x * 4.0f) * 0.5f;
    const int beside = compact && TitleBeside(CompactTitle(*a, config), LeastBoxesWidth(*a), column) &&
                       TitleBeside(CompactTitle(*b, config), LeastBoxesWidth(*b), column);
    if (!ImGui::BeginTable("##pair", 2, ImGuiTableFlags_SizingStretchSame)) return;
    ImGui::TableNextColumn();
    DrawBitRow(*a, config, compact, beside);
    ImGui::TableNextColumn();
    DrawBitRow(*b, config, compact, beside);
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
void DrawGgmlNesting(const CellBits& b, const QuantConfig& config, bool compact) {
    const GgmlCellBits& g = b.ggml;
    const float indent = ImGui::GetFontSize() * 1.2f;
    DimText(GgmlBlockLine(g, b));
    ImGui::PushID("super");
    DrawBitRowPair(RowWithRole(b, BitRowRole::BlockScale), RowWithRole(b, BitRowRole::Offset), config, compact);
    ImGui::PopID();
    if (g.sub_block >= 0) {
        ImGui::Indent(indent);
        DimText(GgmlSubBlockLine(g));
        ImGui::PushID("sub");
        DrawBitRowPair(RowWithRole(b, BitRowRole::SubScale), RowWithRole(b, BitRowRole::SubMin), config, compact);
        ImGui::PopID();
    }
    ImGui::Indent(indent);
    DrawBitRow(b.code, config, compact);
    TextWrappedAtSpaces(GgmlWorkedLine(g));
    ImGui::Unindent(g.sub_block >= 0 ? 2.0f * indent : indent);
}

// The packed byte, bit 7 left: each code's span outlined, the selected code in the code colour, the others
// grey, each span's code under it. Compact: its name beside the boxes and its line beside or under them.
std::int64_t DrawPackedByte(const PackedByte& packed, std::int64_t selected, const Shape& shape,
                            std::vector<ImVec4>& rects, bool compact) {
    std::int64_t follow = -1;
    const auto boxes = [&](BoxLook look) {
        const float w = BoxWidth(8, 0.0f, look), h = std::round(ImGui::GetTextLineHeight() * look.height_lines);
        const ImVec2 at = ImGui::GetCursorScreenPos();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        for (int p = 7; p >= 0; --p) {
            const float x = at.x + static_cast<float>(7 - p) * w;
            ImU32 fill = palette::kBitOtherCode;
            for (const PackedSlot& s : packed.slots)
                if (p >= s.low_bit && p < s.low_bit + s.bits && s.element == selected) fill = palette::kBitCode;
            DrawBox(dl, ImVec2(x, at.y), w, h, fill, ((packed.value >> p) & 1) != 0 ? '1' : '0');
        }
        for (const PackedSlot& s : packed.slots) {
            const int hi = std::min(7, s.low_bit + s.bits - 1), lo = std::max(0, s.low_bit);
            const float x0 = at.x + static_cast<float>(7 - hi) * w, x1 = at.x + static_cast<float>(8 - lo) * w;
            dl->AddRect(ImVec2(x0, at.y), ImVec2(x1, at.y + h), palette::kBitOutline, 0.0f, 0, 2.0f);
            if (look.labels) LabelUnder(dl, {FormatInteger(s.code)}, x0, x1, at.y + h + 2.0f);
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
        const ImVec2 size(8.0f * w, look.labels ? h + 2.0f + ImGui::GetTextLineHeight() : h);
        ImGui::SetCursorScreenPos(at);
        ImGui::Dummy(size);
        return size;
    };
    if (compact) {
        CompactRow("packed byte", TitleBeside("packed byte", 8.0f * ImGui::GetFontSize() * kCompactLeastBoxEm, ImGui::GetContentRegionAvail().x),
                   PackedByteLine(packed, shape),
                   [&] { return boxes(kCompactBoxes); });
    } else {
        SectionHeader("packed byte (--out-packed, first code in the lowest bits)");
        boxes(BoxLook{});
        TextWrappedAtSpaces(PackedByteLine(packed, shape));
    }
    std::string who;
    for (const PackedSlot& s : packed.slots) {
        const int hi = s.low_bit + s.bits - 1;
        who += (who.empty() ? "" : ";  ") + std::string("bits ") + FormatInteger(std::min(hi, 7)) + "-" +
               FormatInteger(std::max(s.low_bit, 0)) + (hi > 7 || s.low_bit < 0 ? " (part)" : "") + ": " +
               index_to_string(shape, s.element) + (s.element == selected ? " (selected)" : "");
    }
    DimText(who);
    return follow;
}

// The field colours the view's rows use (a float's sign, exponent and mantissa), each a swatch and its name,
// drawn from `at`; returns their width (drawing nothing when `dl` is null).
float FieldLegend(ImDrawList* dl, ImVec2 at, const CellBits& b) {
    std::vector<BitFieldKind> kinds;
    const auto add = [&](const BitRow& row) {
        for (const BitField& f : row.fields)
            if (f.kind != BitFieldKind::Code && std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end()) kinds.push_back(f.kind);
    };
    add(b.code);
    for (const BitRow& row : b.scales) add(row);
    std::sort(kinds.begin(), kinds.end());
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeight();
    const float side = std::round(line * 0.75f);
    float x = at.x;
    for (BitFieldKind kind : kinds) {
        if (x > at.x) x += font * 0.8f;
        const std::string name = FieldNames(kind).front();
        if (dl) {
            const ImVec2 box(x, std::round(at.y + (line - side) * 0.5f));
            dl->AddRectFilled(box, ImVec2(box.x + side, box.y + side), FieldColor(kind));
            dl->AddRect(box, ImVec2(box.x + side, box.y + side), palette::kBitOutline);
            DrawTextAt(dl, ImVec2(x + side + font * 0.3f, at.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), name);
        }
        x += side + font * 0.3f + ImGui::CalcTextSize(name.c_str()).x;
    }
    return x - at.x;
}

// The compact look's first line: the element and its code's width, and the field colours' legend beside it
// where it fits, else on a line of its own (the rows have no field names under their boxes).
void HeadWithLegend(const std::string& head, const CellBits& b) {
    const float avail = ImGui::GetContentRegionAvail().x, font = ImGui::GetFontSize();
    const float legend_w = FieldLegend(nullptr, ImVec2(0.0f, 0.0f), b);
    const float head_w = ImGui::CalcTextSize(head.c_str()).x;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    if (legend_w > 0.0f && head_w + font * 1.5f + legend_w <= avail) {
        ImDrawList* dl = ImGui::GetWindowDrawList();
        DrawTextAt(dl, at, ImGui::GetColorU32(ImGuiCol_Text), head, at.x + avail);
        FieldLegend(dl, ImVec2(at.x + avail - legend_w, at.y), b);  // at the right edge
        ImGui::Dummy(ImVec2(avail, ImGui::GetTextLineHeight()));
        return;
    }
    TextWrappedAtSpaces(head);
    if (legend_w <= 0.0f) return;
    const ImVec2 next = ImGui::GetCursorScreenPos();
    FieldLegend(ImGui::GetWindowDrawList(), next, b);
    ImGui::Dummy(ImVec2(std::min(legend_w, avail), ImGui::GetTextLineHeight()));
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
            head += ": " + FormatInteger(b.code_bits) + " bits a code";
            if (st.compact) HeadWithLegend(head, b);
            else TextWrappedAtSpaces(head);
            if (b.ggml.type) {
                DrawGgmlNesting(b, *qv.config, st.compact);
            } else {
                DrawBitRow(b.code, *qv.config, st.compact);
                for (const BitRow& row : b.scales) DrawBitRow(row, *qv.config, st.compact);
            }
            if (b.packed.offset >= 0) follow = DrawPackedByte(b.packed, selected, shape, st.packed_rects, st.compact);
            st.report = BitsReportLines(b, *qv.config, shape);
        }
    }
    ImGui::PopTextWrapPos();
    if (follow >= 0) out.push(SelectElementIntent{follow});
}

}  // namespace qs::gui
