#include "gui/panels/figure_tooltip.hpp"

#include <string>
#include <vector>

#include <imgui.h>

#include "gui/panels/figure_panel.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {

void DrawTraceTooltip(const QuantView& qv, std::int64_t flat, const HeatmapState& hs, int panel, bool hide_pipeline) {
    const ElementTrace t = TraceOf(qv, flat);
    const Sym sym = Symbols();
    ImGui::BeginTooltip();
    ImGui::Text("Element %s", index_to_string(qv.data->shape(), flat).c_str());
    if (hide_pipeline) {  // s, z, the code, r' and the error are what the class is predicting
        ImGui::Separator();
        ImGui::Text("r = %s", FormatNumber(t.r).c_str());
        ImGui::TextDisabled("the rest: predict, then R");
        ImGui::EndTooltip();
        return;
    }
    if (qv.params->block_count > 1)
        ImGui::TextDisabled("%s %lld of %lld:  %s", BlockKind(*qv.config).c_str(), static_cast<long long>(t.block),
                            static_cast<long long>(qv.params->block_count), StoredPairText(qv, t.block).c_str());
    ImGui::Separator();
    const std::vector<std::string> lines = PipelineLines(qv, t);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        // Line 3 is the clamp: the step a clipped element goes wrong in.
        if (i == 3 && t.clipped) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", lines[i].c_str());
        else ImGui::TextUnformatted(lines[i].c_str());
    }
    if (hs.fx > 1 || hs.fy > 1) {
        ImGui::Separator();
        ImGui::TextDisabled("each pixel of this panel shows the %s of %lld %s %lld cells",
                            panel == kError ? "max" : "mean", static_cast<long long>(hs.fy), sym.times,
                            static_cast<long long>(hs.fx));
    }
    ImGui::EndTooltip();
}

}  // namespace qs::gui
