// The selected element's pipeline under the figure's images (see figure_pipeline.hpp).
#include "gui/panels/figure_pipeline.hpp"

#include <imgui.h>

#include "gui/panels/figure_cover.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/widgets/text.hpp"

namespace qs::gui {

std::vector<std::string> SelectedPipelineParts(const FigurePanelState& st, const QuantView& qv, int* highlight) {
    if (st.selected < 0 || !qv.valid() || st.selected >= qv.data->numel() || FigureHidesPipeline(st, st.selected)) return {};
    const ElementTrace tr = TraceOf(qv, st.selected);
    std::string head = "Selected " + index_to_string(qv.data->shape(), st.selected);
    if (qv.params->block_count > 1) head += "  (block " + std::to_string(tr.block) + ")";
    std::vector<std::string> parts{head + ":"};
    for (const std::string& s : PipelineLines(qv, tr)) parts.push_back(s);
    if (highlight) *highlight = tr.clipped ? 4 : -1;
    return parts;
}

void DrawFigurePipeline(const FigurePanelState& st, const QuantView& qv, float x, float y, float width) {
    ImGui::SetCursorScreenPos(ImVec2(x, y));
    if (st.selected < 0) {
        const Sym y = Symbols();
        const std::string hint = std::string("Click a cell to follow one element through r ") + y.arrow + " r/s + z " +
                                 y.arrow + " round " + y.arrow + " clamp " + y.arrow + " s(q " + y.minus + " z) " + y.arrow +
                                 " |r " + y.minus + " r'|.";
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        ImGui::PushTextWrapPos(x + width);
        TextWrappedAtSpaces(hint);  // large text on a projector: the hint wraps instead of running off the panel
        ImGui::PopTextWrapPos();
        ImGui::PopStyleColor();
        return;
    }
    if (FigureHidesPipeline(st, st.selected)) {  // the pipeline would print what is being guessed
        ImGui::PushTextWrapPos(x + width);
        TextWrappedAtSpaces("Selected " + index_to_string(qv.data->shape(), st.selected) + ": predict its code, then press R.");
        ImGui::PopTextWrapPos();
        return;
    }
    int highlight = -1;
    const std::vector<std::string> parts = SelectedPipelineParts(st, qv, &highlight);
    DrawWrappedParts(parts, width, highlight, Symbols().arrow);
}

}  // namespace qs::gui
