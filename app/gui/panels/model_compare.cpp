#include "gui/panels/model_compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

enum Column : int { kName, kShape, kTypeA, kTypeB, kBitsA, kBitsB, kMse, kRelRmse, kSqnr, kMaxError, kColumns };

// Sort key of a row in a numeric column; error rows sort after every number, a missing number (an all-zero
// tensor) after the numbers too.
double NumberKey(const CompareRow& r, int column) {
    switch (column) {
        case kBitsA: return r.bits_per_weight_a;
        case kBitsB: return r.bits_per_weight_b;
        default: break;
    }
    if (!r.error.empty()) return HUGE_VAL;
    switch (column) {
        case kMse: return r.mse;
        case kRelRmse: return r.relative_rmse.value_or(HUGE_VAL);
        case kSqnr: return r.sqnr_db.value_or(HUGE_VAL);
        case kMaxError: return r.max_abs_error;
        default: return 0.0;
    }
}

const std::string& TextKey(const CompareRow& r, int column) {
    return column == kTypeA ? r.dtype_a : column == kTypeB ? r.dtype_b : r.name;
}

void UpdateOrder(ModelCompareState& st, const ImGuiTextFilter& filter) {
    ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
    const bool resort = specs && specs->SpecsDirty;
    if (st.order_valid && !resort) return;
    const std::vector<CompareRow>& rows = st.shown.rows;
    st.order.clear();
    for (int i = 0; i < static_cast<int>(rows.size()); ++i)
        if (filter.PassFilter(rows[static_cast<std::size_t>(i)].name.c_str())) st.order.push_back(i);
    if (specs && specs->SpecsCount > 0) {
        const int column = specs->Specs[0].ColumnIndex;
        const bool ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
        std::stable_sort(st.order.begin(), st.order.end(), [&](int a, int b) {
            const CompareRow& x = rows[static_cast<std::size_t>(a)];
            const CompareRow& y = rows[static_cast<std::size_t>(b)];
            if (column == kName || column == kTypeA || column == kTypeB) {
                const std::string &kx = TextKey(x, column), &ky = TextKey(y, column);
                return ascending ? kx < ky : ky < kx;
            }
            const double kx = NumberKey(x, column), ky = NumberKey(y, column);
            return ascending ? kx < ky : ky < kx;
        });
    }
    if (specs) specs->SpecsDirty = false;
    st.order_valid = true;
}

// B's stored types in order of first appearance: each gets a colour of its own, so "the Q6_K tensors lose
// least" reads off the chart's colours with the legend.
std::vector<std::string> TypesOfB(const std::vector<CompareRow>& rows) {
    std::vector<std::string> types;
    for (const CompareRow& r : rows)
        if (r.error.empty() && std::find(types.begin(), types.end(), r.dtype_b) == types.end()) types.push_back(r.dtype_b);
    return types;
}

ImU32 TypeColor(std::size_t k) {
    // Distinct hues, readable on the light and the dark theme; beyond six types they repeat.
    static const ImU32 colors[] = {IM_COL32(70, 110, 170, 255), IM_COL32(225, 140, 30, 255),
                                   IM_COL32(40, 160, 110, 255), IM_COL32(160, 90, 190, 255),
                                   IM_COL32(190, 150, 30, 255), IM_COL32(90, 160, 210, 255)};
    return colors[k % (sizeof colors / sizeof colors[0])];
}

std::string Bits(double bpw) { return bpw > 0 ? FormatFixed(bpw, 2, 2) : "-"; }

// SQNR per tensor in file order, one bar each coloured by B's type; an error row is a red foot. Hover names
// the tensor with its relative RMSE.
void DrawChart(const ModelCompareState& st, const ImGuiTextFilter& filter, ImVec2 size) {
    const std::vector<CompareRow>& rows = st.shown.rows;
    const std::vector<std::string> types = TypesOfB(rows);
    ImGui::TextUnformatted("SQNR of B against A (dB) per tensor, in file order (higher: B is closer to A)");
    // The legend: B's types, in the bars' colours.
    for (std::size_t k = 0; k < types.size(); ++k) {
        ImGui::SameLine(0.0f, ImGui::GetFontSize() * (k ? 0.8f : 1.5f));
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const float s = ImGui::GetFontSize() * 0.8f, dy = (ImGui::GetTextLineHeight() - s) * 0.5f;
        ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + dy), ImVec2(p.x + s, p.y + dy + s), TypeColor(k));
        ImGui::Dummy(ImVec2(s, s));
        ImGui::SameLine(0.0f, ImGui::GetFontSize() * 0.3f);
        ImGui::TextUnformatted(types[k].c_str());
    }
    const ImU32 hidden = ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.35f);
    const int under_mouse = DrawTensorBars("##compare_sqnr", rows.size(), [&](std::size_t i) {
        const CompareRow& r = rows[i];
        const std::size_t k = static_cast<std::size_t>(std::find(types.begin(), types.end(), r.dtype_b) - types.begin());
        return TensorBar{!r.error.empty(), r.sqnr_db, filter.PassFilter(r.name.c_str()) ? TypeColor(k) : hidden};
    }, size);
    if (under_mouse >= 0) {
        const CompareRow& r = rows[static_cast<std::size_t>(under_mouse)];
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(printable(r.name, 120).c_str());
        if (!r.error.empty()) {
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", r.error.c_str());
        } else {
            ImGui::Text("%s -> %s: SQNR %s dB, relative RMSE %s", r.dtype_a.c_str(), r.dtype_b.c_str(),
                        r.sqnr_db ? FormatFixed(*r.sqnr_db, 2, 4).c_str() : "-",
                        r.relative_rmse ? FormatNumber(*r.relative_rmse).c_str() : "-");
        }
        ImGui::EndTooltip();
    }
}

void DrawTable(ModelCompareState& st, const ImGuiTextFilter& filter,
               const std::function<void(const std::string&, CompareOpen)>& open_row, float height) {
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                  ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_SortTristate;  // unsorted: file order
    if (!ImGui::BeginTable("##compare", kColumns, flags, ImVec2(0.0f, height))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("tensor", ImGuiTableColumnFlags_WidthStretch, 2.6f);
    ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_NoSort, 1.0f);
    ImGui::TableSetupColumn("A", 0, 0.55f);
    ImGui::TableSetupColumn("B", 0, 0.55f);
    ImGui::TableSetupColumn("bpw A", 0, 0.6f);
    ImGui::TableSetupColumn("bpw B", 0, 0.6f);
    ImGui::TableSetupColumn("MSE", 0, 0.9f);
    ImGui::TableSetupColumn("rel. RMSE", 0, 0.9f);
    ImGui::TableSetupColumn("SQNR dB", 0, 0.75f);
    ImGui::TableSetupColumn("max |A-B|", 0, 0.9f);
    ImGui::TableHeadersRow();
    UpdateOrder(st, filter);
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(st.order.size()));
    while (clipper.Step()) {
        for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
            const CompareRow& r = st.shown.rows[static_cast<std::size_t>(st.order[static_cast<std::size_t>(k)])];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(k);
            if (ImGui::Selectable(printable(r.name, 160).c_str(), false, ImGuiSelectableFlags_SpanAllColumns))
                open_row(r.name, CompareOpen::BAgainstA);
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("click: A's values as the original, B's stored values as r'; right-click: either alone");
            if (ImGui::BeginPopupContextItem("##row")) {
                if (ImGui::MenuItem("Open A against B's stored values")) open_row(r.name, CompareOpen::BAgainstA);
                if (ImGui::MenuItem("Open A's values")) open_row(r.name, CompareOpen::A);
                if (ImGui::MenuItem("Open B's values (its stored values, decoded)")) open_row(r.name, CompareOpen::B);
                ImGui::EndPopup();
            }
            ImGui::PopID();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(shape_to_string(r.shape).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.dtype_a.empty() ? "-" : r.dtype_a.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.dtype_b.empty() ? "-" : r.dtype_b.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(Bits(r.bits_per_weight_a).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(Bits(r.bits_per_weight_b).c_str());
            ImGui::TableNextColumn();
            if (!r.error.empty()) {
                ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", r.error.c_str());
                continue;
            }
            ImGui::TextUnformatted(FormatNumber(r.mse).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.relative_rmse ? FormatNumber(*r.relative_rmse).c_str() : "-");
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.sqnr_db ? FormatFixed(*r.sqnr_db, 2, 4).c_str() : "-");
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatNumber(r.max_abs_error).c_str());
        }
    }
    ImGui::EndTable();
}

void DrawTotal(const CompareTotal& t) {
    ImGui::Text("Total of %lld tensors (%lld elements): %s -> %s bits per weight, MSE %s, relative RMSE %s, SQNR %s dB, "
                "max |A-B| %s",
                static_cast<long long>(t.tensors), static_cast<long long>(t.elements),
                Bits(t.bits_per_weight_a).c_str(), Bits(t.bits_per_weight_b).c_str(), FormatNumber(t.mse).c_str(),
                t.relative_rmse ? FormatNumber(*t.relative_rmse).c_str() : "-",
                t.sqnr_db ? FormatFixed(*t.sqnr_db, 2, 4).c_str() : "-", FormatNumber(t.max_abs_error).c_str());
    if (t.error_rows > 0 || t.cancelled) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%lld rows not compared (their reason in the "
                           "table)%s", static_cast<long long>(t.error_rows), t.cancelled ? "; cancelled before the end" : "");
    }
}

}  // namespace

bool StartModelCompare(ModelCompareState& st, std::shared_ptr<const Checkpoint> a, const std::string& path_b,
                       std::string* error) {
    std::shared_ptr<const Checkpoint> b;
    try {
        if (!a) throw Error("open a checkpoint first (File > Open)");
        b = std::make_shared<const Checkpoint>(open_checkpoint(path_b));
    } catch (const std::exception& e) {
        st.error = error_text(e);
        if (error) *error = st.error;
        return false;
    }
    st.error.clear();
    st.path_b = st.field = path_b;
    st.checkpoint_b = b;
    st.on_show = true;
    st.has_shown = false;
    st.shown = ModelComparison{};
    st.order_valid = false;
    st.task.start([a, b](Task<ModelComparison>::Context& ctx) {
        ModelComparison out;
        std::atomic<bool> cancel{false};
        out.total = compare_checkpoints(
            *a, *b, [&](const CompareRow& row) { out.rows.push_back(row); },
            [&](std::uint64_t done, std::uint64_t total) {
                ctx.set_progress(total ? static_cast<float>(static_cast<double>(done) / static_cast<double>(total)) : 1.0f);
                cancel.store(ctx.cancelled());
            },
            &cancel);
        if (!ctx.cancelled()) ctx.publish(std::move(out));
    }, "Comparing with " + path_b);
    return true;
}

bool ModelCompareBusy(const ModelCompareState& st) { return st.task.running(); }

void FinishModelCompare(ModelCompareState& st) {
    st.task.wait();
    if (std::optional<ModelComparison> r = st.task.take()) {
        st.shown = std::move(*r);
        st.has_shown = true;
        st.order_valid = false;
    }
}

void DrawModelCompare(ModelCompareState& st, const std::shared_ptr<const Checkpoint>& a, ImGuiTextFilter& filter,
                      const std::function<void(const std::string&, CompareOpen)>& open_row) {
    if (std::optional<ModelComparison> r = st.task.take()) {
        st.shown = std::move(*r);
        st.has_shown = true;
        st.order_valid = false;
    }
    // The second checkpoint: a path field like the window's other pickers, and the button.
    ImGui::TextUnformatted("Compare with");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 10.0f, ImGui::GetContentRegionAvail().x * 0.45f));
    char buf[2048];
    std::snprintf(buf, sizeof buf, "%s", st.field.c_str());
    const bool entered = ImGui::InputTextWithHint("##compare_with", "B: .gguf, .safetensors or *.safetensors.index.json",
                                                  buf, sizeof buf, ImGuiInputTextFlags_EnterReturnsTrue);
    st.field = buf;
    ImGui::SameLine();
    if (st.task.running()) {
        if (ImGui::SmallButton("Cancel")) st.task.cancel();
        ImGui::SameLine();
        ImGui::ProgressBar(st.task.progress(), ImVec2(ImGui::GetFontSize() * 10.0f, 0.0f));
    } else if ((ImGui::SmallButton("Compare") || entered) && !st.field.empty()) {
        StartModelCompare(st, a, st.field, nullptr);
    }
    if (!st.error.empty()) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.error.c_str());
    if (!st.task.error().empty())
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.task.error().c_str());
    if (!st.has_shown) {
        if (!st.task.running() && st.path_b.empty())
            ImGui::TextDisabled("B's tensors are matched to A's by name; each row says what B did to that tensor "
                                "(an F16 model against its Q4_K_M, say).");
        return;
    }
    DrawTotal(st.shown.total);
    if (filter.IsActive()) st.order_valid = false;  // the filter box is the sweep header's: follow it
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float chart_h = std::max(ImGui::GetFontSize() * 4.0f, avail.y * 0.3f);
    DrawChart(st, filter, ImVec2(avail.x, chart_h));
    DrawTable(st, filter, open_row, std::max(ImGui::GetFontSize() * 4.0f, ImGui::GetContentRegionAvail().y));
}

}  // namespace qs::gui
