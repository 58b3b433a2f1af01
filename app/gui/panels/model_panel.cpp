#include "gui/panels/model_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/panels/safetensors_browser.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/text.hpp"

namespace qs::gui {
namespace {

enum Column : int { kName, kShape, kDtype, kElements, kOutlier, kMse, kSqnr, kClipped, kColumns };

// Sort key of a row in `column`; error rows sort after every number.
double NumberKey(const SweepRow& r, int column) {
    if (!r.error.empty()) return HUGE_VAL;
    switch (column) {
        case kElements: return static_cast<double>(r.elements);
        case kOutlier: return r.max_over_std.value_or(0.0);
        case kMse: return r.metrics.mse;
        case kSqnr: return r.metrics.sqnr_db.value_or(HUGE_VAL);
        case kClipped: return static_cast<double>(r.metrics.clipped);
        default: return 0.0;
    }
}

void UpdateOrder(ModelPanelState& st) {
    ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs();
    const bool resort = specs && specs->SpecsDirty;
    if (st.order_valid && !resort) return;
    const std::vector<SweepRow>& rows = st.shown.rows;
    st.order.clear();
    for (int i = 0; i < static_cast<int>(rows.size()); ++i)
        if (st.filter.PassFilter(rows[static_cast<std::size_t>(i)].name.c_str())) st.order.push_back(i);
    if (specs && specs->SpecsCount > 0) {
        const int column = specs->Specs[0].ColumnIndex;
        const bool ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
        std::stable_sort(st.order.begin(), st.order.end(), [&](int a, int b) {
            const SweepRow& x = rows[static_cast<std::size_t>(a)];
            const SweepRow& y = rows[static_cast<std::size_t>(b)];
            if (column == kName || column == kDtype || column == kShape) {
                const std::string& kx = column == kName ? x.name : column == kDtype ? x.dtype : x.name;
                const std::string& ky = column == kName ? y.name : column == kDtype ? y.dtype : y.name;
                return ascending ? kx < ky : ky < kx;
            }
            const double kx = NumberKey(x, column), ky = NumberKey(y, column);
            return ascending ? kx < ky : ky < kx;
        });
    }
    if (specs) specs->SpecsDirty = false;
    st.order_valid = true;
}

// SQNR per tensor in file order, one bar each: layers line up, so a tensor kind that loses more shows as a
// repeating dip. Hover names the tensor.
void DrawSqnrBars(const ModelPanelState& st, ImVec2 size) {
    const std::vector<SweepRow>& rows = st.shown.rows;
    ImGui::TextUnformatted("SQNR (dB) per tensor, in file order (higher is better)");
    const ImU32 hidden = ImGui::GetColorU32(ImGuiCol_TextDisabled, 0.35f);
    const int under_mouse = DrawTensorBars("##sqnr", rows.size(), [&](std::size_t i) {
        const SweepRow& r = rows[i];
        return TensorBar{!r.error.empty(), r.metrics.sqnr_db, st.filter.PassFilter(r.name.c_str()) ? palette::kInside : hidden};
    }, size);
    if (under_mouse >= 0) {
        const SweepRow& r = rows[static_cast<std::size_t>(under_mouse)];
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(printable(r.name, 120).c_str());
        if (!r.error.empty()) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", r.error.c_str());
        else ImGui::Text("SQNR %s, MSE %s", FormatSqnr(comparable_sqnr_db(r.metrics), true).c_str(),
                         FormatNumber(r.metrics.mse).c_str());
        ImGui::EndTooltip();
    }
}

// The table; a click on a row opens that tensor.
void DrawTable(ModelPanelState& st, const QuantConfig& config, Intents& out, float height) {
    const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter |
                                  ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                                  ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_SortTristate;  // unsorted: file order
    if (!ImGui::BeginTable("##model", kColumns, flags, ImVec2(0.0f, height))) return;
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("tensor", ImGuiTableColumnFlags_WidthStretch, 3.0f);
    ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_NoSort, 1.2f);
    ImGui::TableSetupColumn("dtype", 0, 0.6f);
    ImGui::TableSetupColumn("params", 0, 1.0f);
    ImGui::TableSetupColumn("max/std", 0, 0.8f);
    ImGui::TableSetupColumn("MSE", 0, 1.0f);
    ImGui::TableSetupColumn("SQNR dB", 0, 0.8f);
    ImGui::TableSetupColumn("clipped", 0, 0.7f);
    ImGui::TableHeadersRow();
    UpdateOrder(st);
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(st.order.size()));
    while (clipper.Step()) {
        for (int k = clipper.DisplayStart; k < clipper.DisplayEnd; ++k) {
            const SweepRow& r = st.shown.rows[static_cast<std::size_t>(st.order[static_cast<std::size_t>(k)])];
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::PushID(k);
            if (ImGui::Selectable(printable(r.name, 160).c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
                try {
                    out.push(ModelTensorJob(st, r.name, config));
                } catch (const std::exception& e) {
                    out.push(ErrorIntent{error_text(e)});
                }
            }
            ImGui::PopID();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(shape_to_string(r.shape).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.dtype.c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(r.elements));
            ImGui::TableNextColumn();
            if (!r.error.empty()) {
                ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", r.error.c_str());
                continue;
            }
            ImGui::TextUnformatted(r.max_over_std ? FormatNumber(*r.max_over_std).c_str() : "-");
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(FormatNumber(r.metrics.mse).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(r.metrics.sqnr_db ? FormatNumber(*r.metrics.sqnr_db).c_str()
                                                     : SqnrWord(comparable_sqnr_db(r.metrics)).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%lld", static_cast<long long>(r.metrics.clipped));
        }
    }
    ImGui::EndTable();
}

// Run / cancel, progress, the total, the filter and the export, in one row and a status line.
void DrawHeader(ModelPanelState& st, const QuantConfig& config) {
    ImGui::TextUnformatted(FitText(st.path, ImGui::GetContentRegionAvail().x * 0.5f).c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%zu tensors", st.checkpoint->tensors.size());
    ImGui::SameLine();
    if (st.task.running()) {
        if (ImGui::SmallButton("Cancel")) st.task.cancel();
        ImGui::SameLine();
        ImGui::ProgressBar(st.task.progress(), ImVec2(ImGui::GetFontSize() * 10.0f, 0.0f));
    } else if (ImGui::SmallButton(st.has_shown && st.shown.config == config ? "Sweep again" : "Sweep every tensor")) {
        StartModelSweep(st, config);
    }
    if (st.has_shown && !(st.shown.config == config)) {
        ImGui::SameLine();
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "settings changed since this sweep");
    }
    if (!st.task.error().empty()) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.task.error().c_str());
    if (!st.has_shown) return;
    const SweepTotal& t = st.shown.total;
    ImGui::TextDisabled("%lld tensors, %lld elements, MSE %s, SQNR %s dB, %.2f GB/s%s", static_cast<long long>(t.tensors),
                        static_cast<long long>(t.elements), FormatNumber(t.mse).c_str(),
                        t.sqnr_db ? FormatNumber(*t.sqnr_db).c_str() : "-", t.gb_per_s, t.cancelled ? " (cancelled)" : "");
    if (st.filter.Draw("filter", ImGui::GetFontSize() * 14.0f)) st.order_valid = false;
    ImGui::SameLine(0.0f, ImGui::GetFontSize() * 2.0f);
    ImGui::TextUnformatted("table as CSV to");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12.0f);
    char buf[1024];
    std::snprintf(buf, sizeof buf, "%s", st.export_path.c_str());
    if (ImGui::InputText("##export", buf, sizeof buf)) st.export_path = buf;
    ImGui::SameLine();
    if (ImGui::SmallButton("Export")) {
        std::string error;
        st.message_is_error = !ExportModelCsv(st, st.export_path, &error);
        st.message = st.message_is_error ? error : "wrote " + st.export_path;
    }
    if (!st.message.empty()) {
        ImGui::SameLine();
        if (st.message_is_error) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.message.c_str());
        else ImGui::TextDisabled("%s", st.message.c_str());
    }
}

}  // namespace

bool IsCheckpointIndexPath(const std::string& path) {
    const std::string suffix = ".safetensors.index.json";
    if (path.size() < suffix.size()) return false;
    std::string tail = path.substr(path.size() - suffix.size());
    std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return tail == suffix;
}

bool OpenModel(ModelPanelState& st, const std::string& path, std::string* error) {
    try {
        auto checkpoint = std::make_shared<const Checkpoint>(open_checkpoint(path));
        st.task.cancel();
        st.path = path;
        st.checkpoint = std::move(checkpoint);
        st.has_shown = false;
        st.started = false;
        st.shown = ModelSweep{};
        st.order_valid = false;
        st.message.clear();
        // A comparison was of the previous A: its rows, and a row clicked (this A's tensor against B), would not
        // be this A's. B stays in the field, to compare again.
        st.compare.task.cancel();
        st.compare.path_b.clear();
        st.compare.checkpoint_b.reset();
        st.compare.shown = ModelComparison{};
        st.compare.has_shown = false;
        st.compare.on_show = false;
        st.compare.error.clear();
        st.compare.order_valid = false;
        return true;
    } catch (const std::exception& e) {
        if (error) *error = error_text(e);
        return false;
    }
}

void StartModelSweep(ModelPanelState& st, const QuantConfig& config) {
    if (!st.checkpoint) return;
    st.started = true;
    std::shared_ptr<const Checkpoint> checkpoint = st.checkpoint;
    st.task.start([checkpoint, config](Task<ModelSweep>::Context& ctx) {
        ModelSweep out;
        out.config = config;
        SweepSettings settings;
        settings.config = config;
        std::atomic<bool> cancel{false};
        out.total = sweep_checkpoint(
            *checkpoint, settings, [&](const SweepRow& row) { out.rows.push_back(row); },
            [&](std::uint64_t done, std::uint64_t total) {
                ctx.set_progress(total ? static_cast<float>(static_cast<double>(done) / static_cast<double>(total)) : 1.0f);
                cancel.store(ctx.cancelled());
            },
            &cancel);
        if (!ctx.cancelled()) ctx.publish(std::move(out));
    }, "Sweeping " + st.path);
}

bool ModelSweepBusy(const ModelPanelState& st) { return st.task.running(); }

void FinishModelSweep(ModelPanelState& st) {
    st.task.wait();
    if (std::optional<ModelSweep> r = st.task.take()) {
        st.shown = std::move(*r);
        st.has_shown = true;
        st.order_valid = false;
    }
}

TensorJobIntent ModelTensorJob(const ModelPanelState& st, const std::string& name, const QuantConfig& config) {
    if (!st.checkpoint) throw Error("no model is open");
    return CheckpointTensorJob(*st.checkpoint, st.path, name, config);
}

TensorJobIntent CheckpointTensorJob(const Checkpoint& checkpoint, const std::string& path, const std::string& name,
                                    const QuantConfig& config) {
    for (const CheckpointTensor& t : checkpoint.tensors) {
        if (t.name != name) continue;
        std::string why;
        if (!TensorLoadable(t, &why)) throw Error(quoted_text(name) + ": " + why);
        return ModelFileTensorJob(checkpoint.shards[t.shard], name, config);
    }
    throw Error(quoted_text(name) + " is not in " + quoted_text(path));
}

TensorJobIntent CompareTensorJob(const ModelPanelState& st, const std::string& name, const QuantConfig& config) {
    const std::shared_ptr<const Checkpoint>& b = st.compare.checkpoint_b;
    if (!st.checkpoint || !b) throw Error("no second checkpoint to compare with");
    const auto in_b = std::find_if(b->tensors.begin(), b->tensors.end(), [&](const CheckpointTensor& t) { return t.name == name; });
    if (in_b == b->tensors.end()) throw Error(quoted_text(name) + " is not in " + quoted_text(st.compare.path_b));
    for (const CheckpointTensor& t : st.checkpoint->tensors) {
        if (t.name != name) continue;
        std::string why;
        if (!TensorLoadable(t, &why)) throw Error(quoted_text(name) + ": " + why);
        return ModelFileTensorJob(st.checkpoint->shards[t.shard], name, config, b->shards[in_b->shard]);
    }
    throw Error(quoted_text(name) + " is not in " + quoted_text(st.path));
}

bool ExportModelCsv(const ModelPanelState& st, const std::string& path, std::string* error) {
    try {
        if (!st.has_shown) throw Error("nothing to export: sweep the model first");
        std::string text = sweep_csv_header() + "\n";
        for (const SweepRow& r : st.shown.rows) text += sweep_csv_line(r) + "\n";
        OutputFiles files;
        files.add(path).write(text);
        files.commit();
        return true;
    } catch (const std::exception& e) {
        if (error) *error = error_text(e);
        return false;
    }
}

void DrawModelPanel(ModelPanelState& st, const QuantConfig& config, Intents& out) {
    ImGui::PushID(&st);
    if (!st.checkpoint) {
        ImGui::TextDisabled("Open a .safetensors checkpoint or a sharded *.safetensors.index.json (File > Open) to see "
                            "every tensor under the current settings.");
        ImGui::PopID();
        return;
    }
    if (std::optional<ModelSweep> r = st.task.take()) {
        st.shown = std::move(*r);
        st.has_shown = true;
        st.order_valid = false;
    }
    DrawHeader(st, config);
    ImGui::Separator();
    DrawModelCompare(st.compare, st.checkpoint, st.filter, [&](const std::string& name, CompareOpen what) {
        try {
            out.push(what == CompareOpen::BAgainstA ? CompareTensorJob(st, name, config)
                     : what == CompareOpen::B       ? CheckpointTensorJob(*st.compare.checkpoint_b, st.compare.path_b, name, config)
                                                    : ModelTensorJob(st, name, config));
        } catch (const std::exception& e) {
            out.push(ErrorIntent{error_text(e)});
        }
    });
    if (st.compare.on_show && st.compare.has_shown) {
        ImGui::PopID();
        return;  // the comparison in place of the sweep's chart and table
    }
    if (st.has_shown) {
        const ImVec2 avail = ImGui::GetContentRegionAvail();
        const float chart_h = std::max(ImGui::GetFontSize() * 4.0f, avail.y * 0.3f);
        DrawSqnrBars(st, ImVec2(avail.x, chart_h));
        DrawTable(st, config, out, std::max(ImGui::GetFontSize() * 4.0f, ImGui::GetContentRegionAvail().y));
    }
    ImGui::PopID();
}

}  // namespace qs::gui
