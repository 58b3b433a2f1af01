#include "gui/panels/safetensors_browser.hpp"

#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <utility>

#include "gui/panels/intents.hpp"
#include "quantscope/error.hpp"
#include "quantscope/stored_tensor.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs::gui {
namespace {

namespace fs = std::filesystem;

std::string ShapeText(const Shape& shape) {
    if (shape.empty()) return "scalar";
    std::string out;
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "x" : "") + std::to_string(shape[i]);
    return out;
}

std::string SizeText(std::uint64_t bytes) {
    char buf[32];
    if (bytes < (1u << 10)) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else if (bytes < (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
    else if (bytes < (1u << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024.0));
    else std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

void UpdateVisible(SafetensorsBrowserState& s) {
    if (s.visible_valid) return;
    s.visible.clear();
    if (s.checkpoint) {
        const std::vector<CheckpointTensor>& list = s.checkpoint->tensors;
        for (int i = 0; i < static_cast<int>(list.size()); ++i)
            if (s.filter.PassFilter(list[static_cast<std::size_t>(i)].name.data(), list[static_cast<std::size_t>(i)].name.data() + list[static_cast<std::size_t>(i)].name.size())) s.visible.push_back(i);
    }
    s.visible_valid = true;
}

}  // namespace

bool IsModelFilePath(const std::string& path) {
    const std::string extension = lower_extension(path);
    return extension == ".safetensors" || extension == ".gguf";
}

bool TensorLoadable(const CheckpointTensor& e, std::string* why) {
    auto no = [&](const std::string& reason) {
        if (why) *why = reason;
        return false;
    };
    if (!e.readable)
        return no(std::string(e.dtype) + " is not a type QuantScope reads (F32, F16, BF16, F64, and in a GGUF the ggml types it decodes)");
    if (e.shape.empty()) return no("a scalar has nothing to show");
    std::int64_t n = 1;
    for (std::int64_t d : e.shape) {
        if (d == 0) return no("the tensor is empty");
        if (d > kMaxViewElements || n > kMaxViewElements / d) return no("more than 2^31 values");
        n *= d;
    }
    return true;
}

bool OpenSafetensorsBrowser(SafetensorsBrowserState& s, const std::string& path, std::string* error) {
    try {
        // The header only; throws naming the file.
        s.checkpoint = std::make_shared<const Checkpoint>(open_checkpoint(path));
    } catch (const std::exception& e) {
        if (error) *error = error_text(e);
        return false;
    }
    s.path = path;
    s.loaded.clear();
    s.visible_valid = false;
    s.open = true;
    s.appearing = true;
    return true;
}

TensorJobIntent ModelFileTensorJob(const std::string& path, const std::string& name, const QuantConfig& config,
                                   const std::string& stored_in) {
    std::error_code ec;
    const fs::path abs = fs::absolute(path, ec);
    TensorOrigin origin;
    origin.source.kind = TensorSource::Kind::File;
    origin.source.path = (ec ? fs::path(path) : abs).lexically_normal().string();
    origin.source.tensor_name = name;
    const std::string label = path + " : " + name;
    return TensorJobIntent{"Reading " + name, [path, name, label, origin, config, stored_in](TaskProgress& p) {
        p.set_stage("reading");
        p.set_progress(0.05f);
        // Only this tensor's bytes are read, in their stored type (decoded into memory when small enough).
        auto tensor = std::make_shared<const TensorFile>(path, name);
        const std::string note = tensor->note();
        std::shared_ptr<const TensorData> data = MakeTensorData(std::move(tensor));
        QuantConfig shown = config;
        std::string shown_label = label, against;
        if (!stored_in.empty()) {
            p.set_stage("reading B's blocks");
            // A's shape checked from B's header, before B's bytes are read (a B of another shape may be huge).
            std::shared_ptr<const StoredBlocks> stored;
            try {
                stored = read_stored_blocks(stored_in, name, &data->shape());
            } catch (const StoredShapeMismatch& e) {
                throw Error(quoted_text(name) + ": B's tensor is " + shape_to_string(e.found) + ", A's " +
                            shape_to_string(data->shape()) + " (not compared)");
            }
            auto with_b = std::make_shared<TensorData>(*data);
            with_b->stored = stored;
            data = std::move(with_b);
            shown = stored_config(*stored, config);
            std::string type = stored->type->name;  // as compare's table names it: "Q4_K"
            for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            if (stored->values()) {
                shown_label = label + " against B's " + type + " values";
                against = "r' is B's " + type + " values (" + stored_in + "), the error |A - B|; B stores values, not "
                          "quantized blocks, so there are no codes or scales to show; another type quantizes A.";
            } else {
                shown_label = label + " against B's stored " + type;
                against = "r' is B's stored " + type + " (" + stored_in + ", decoded by ggml's to_float), the error "
                          "|A - B|, the codes and scales B's blocks'; another type quantizes A.";
            }
        }
        TensorJobResult r = FinishTensorJob(std::move(data), shown, shown_label, p);
        if (!against.empty()) r.notice += std::string(r.notice.empty() ? "" : "\n") + against;
        TensorOrigin o = origin;
        o.note = note;
        if (!stored_in.empty()) {
            std::error_code abs_ec;
            const fs::path b = fs::absolute(stored_in, abs_ec);
            o.compare_b = (abs_ec ? fs::path(stored_in) : b).lexically_normal().string();
        }
        if (!note.empty()) {
            r.notice += std::string(r.notice.empty() ? "" : "\n") + name + ": " + note +
                        " (rank above 3 is folded into the first axis)";
        }
        r.then = RecordOrigin(std::move(o));
        return r;
    }};
}

void DrawSafetensorsBrowser(SafetensorsBrowserState& s, const Document& doc, Intents& out) {
    if (!s.open || !s.checkpoint) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    const float fs_px = ImGui::GetFontSize();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                            ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSize(ImVec2(fs_px * 44.0f, fs_px * 26.0f), ImGuiCond_Appearing);
    if (s.appearing) ImGui::SetNextWindowFocus();
    s.appearing = false;
    const std::string title = "Tensors in " + fs::path(s.path).filename().string() + "###safetensors-browser";
    if (!ImGui::Begin(title.c_str(), &s.open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
        ImGui::End();
        return;
    }
    ImGui::PushID("safetensors");
    const std::vector<CheckpointTensor>& list = s.checkpoint->tensors;
    ImGui::TextDisabled("%s", s.path.c_str());
    if (s.filter.Draw("Filter##names", -fs_px * 9.0f)) s.visible_valid = false;
    UpdateVisible(s);
    ImGui::SameLine();
    ImGui::TextDisabled("%d of %d", static_cast<int>(s.visible.size()), static_cast<int>(list.size()));
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Part of a name; several separated by commas; a leading '-' excludes.");

    const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_BordersV |
                                  ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
    const float table_h = -ImGui::GetFrameHeightWithSpacing() * 1.2f;
    if (ImGui::BeginTable("##tensors", 4, flags, ImVec2(0.0f, table_h))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        ImGui::TableSetupColumn("Name", ImGuiTableColumnFlags_WidthStretch);
        ImGui::TableSetupColumn("dtype", ImGuiTableColumnFlags_WidthFixed, fs_px * 4.5f);
        ImGui::TableSetupColumn("shape", ImGuiTableColumnFlags_WidthFixed, fs_px * 8.0f);
        ImGui::TableSetupColumn("size", ImGuiTableColumnFlags_WidthFixed, fs_px * 5.0f);
        ImGui::TableHeadersRow();
        // A model has thousands of tensors: only the rows in view are laid out.
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(s.visible.size()));
        while (clipper.Step()) {
            for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
                const CheckpointTensor& e = list[static_cast<std::size_t>(s.visible[static_cast<std::size_t>(row)])];
                std::string why;
                const bool loadable = TensorLoadable(e, &why);
                ImGui::TableNextRow();
                ImGui::TableSetColumnIndex(0);
                ImGui::PushID(s.visible[static_cast<std::size_t>(row)]);
                ImGui::BeginDisabled(!loadable || doc.busy());
                const bool picked = ImGui::Selectable(std::string(e.name).c_str(), e.name == s.loaded,
                                                      ImGuiSelectableFlags_SpanAllColumns);
                ImGui::EndDisabled();
                if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                    ImGui::SetTooltip("%s", loadable ? "Click to load this tensor" : why.c_str());
                if (picked && loadable && !doc.busy()) {
                    s.loaded = e.name;
                    out.push(ModelFileTensorJob(s.path, std::string(e.name), doc.config));
                }
                ImGui::PopID();
                ImGui::TableSetColumnIndex(1);
                ImGui::TextUnformatted(e.dtype.data(), e.dtype.data() + e.dtype.size());
                ImGui::TableSetColumnIndex(2);
                ImGui::TextUnformatted(ShapeText(e.shape).c_str());
                ImGui::TableSetColumnIndex(3);
                ImGui::TextUnformatted(SizeText(e.end - e.begin).c_str());
            }
        }
        ImGui::EndTable();
    }
    ImGui::TextDisabled("Only the tensor you pick is read. Rank above 3 is folded into the first axis.");
    ImGui::PopID();
    ImGui::End();
}

}  // namespace qs::gui
