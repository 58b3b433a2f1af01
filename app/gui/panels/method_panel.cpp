#include "gui/panels/method_panel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

// Stepping toward the slider's target stops for the frame after this long (a drag over a big layer animates
// instead of freezing the window).
constexpr double kStepBudgetMs = 30.0;

std::string PrepareKey(const MethodPanelState& st, std::uint64_t layer_generation) {
    return std::to_string(layer_generation) + (st.act_order ? " act-order" : "");
}

void CopyState(MethodPanelState& st) {
    const GptqStepper& s = *st.prepared.stepper;
    const std::int64_t out = s.rows(), in = s.columns();
    const std::size_t n = static_cast<std::size_t>(out * in);
    st.original.resize(n);
    st.current.resize(n);
    st.compensation.resize(n);
    for (std::int64_t r = 0; r < out; ++r)
        for (std::int64_t k = 0; k < in; ++k) {
            const std::size_t i = static_cast<std::size_t>(r * in + k);
            const double w0 = s.original(r, k), w = s.current(r, k);
            st.original[i] = static_cast<float>(w0);
            st.current[i] = static_cast<float>(w);
            st.compensation[i] = static_cast<float>(w - w0);
        }
    ++st.generation;
}

void Request(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
             const QuantConfig& weights, std::uint64_t layer_generation) {
    const std::string key = PrepareKey(st, layer_generation);
    if (key == st.requested_key) return;
    st.requested_key = key;
    MethodConfig method;
    method.method = LayerMethod::Gptq;
    method.act_order = st.act_order;
    const LayerConfig config = make_layer_config(weights, {});
    st.prepare_task.start([x, w, config, method, key](Task<MethodPanelState::Prepared>::Context& ctx) {
        MethodPanelState::Prepared p;
        p.key = key;
        try {
            p.stepper = std::make_shared<GptqStepper>(*x, *w, config, method, MethodControl{[&ctx] { return ctx.cancelled(); }, {}});
        } catch (const MethodCancelled&) {
            return;
        } catch (const Error& e) {
            p.error_text = e.what();
        }
        if (!ctx.cancelled()) ctx.publish(std::move(p));
    });
}

void Take(MethodPanelState& st) {
    std::optional<MethodPanelState::Prepared> p = st.prepare_task.take();
    if (!p) return;
    st.prepared = std::move(*p);
    if (st.prepared.stepper) {
        st.target = std::clamp<std::int64_t>(st.target, 0, st.prepared.stepper->columns());
        CopyState(st);
    }
}

// Steps toward the target, for at most `budget_ms` (unbounded when negative).
void StepToTarget(MethodPanelState& st, double budget_ms) {
    if (!st.prepared.stepper) return;
    GptqStepper& s = *st.prepared.stepper;
    st.target = std::clamp<std::int64_t>(st.target, 0, s.columns());
    if (s.done() == st.target) return;
    const auto start = std::chrono::steady_clock::now();
    int steps = 0;
    double ms = 0;
    while (s.done() != st.target) {
        if (s.done() < st.target) s.next(); else s.previous();
        ++steps;
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (budget_ms >= 0 && ms > budget_ms) break;
    }
    st.last_step_ms = ms / steps;
    CopyState(st);
}


HeatmapStyle CompensationStyle(const std::vector<float>& c) {
    double lo = 0, hi = 0;
    for (float x : c) lo = std::min(lo, static_cast<double>(x)), hi = std::max(hi, static_cast<double>(x));
    if (!(hi > lo)) hi = lo + 1e-12;  // nothing moved yet: a valid, empty scale
    HeatmapStyle style = SharedValueStyle({});
    style.norm = ColorNorm::Centered(lo, hi, 0.0);
    style.bar_lo = lo;
    style.bar_hi = hi;
    style.reduction = Reduction::Max;
    return style;
}

// Under the image: a strip with one mark per processed column, the last one in the current colour and the
// next one in the range colour, so that under act-order the jumps of the order show.
void ColumnStrip(const GptqStepper& s, const std::vector<char>& processed, const HeatmapView& view, const HeatmapResult& r, float height) {
    const std::int64_t cols = s.columns();
    const double x0 = view.empty() ? 0.0 : view.x0, x1 = view.empty() ? static_cast<double>(cols) : view.x1;
    const float w = r.image_max.x - r.image_min.x, y0 = r.image_max.y + 2.0f, y1 = y0 + height;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(r.image_min.x, y0), ImVec2(r.image_max.x, y1), ImGui::GetColorU32(ImGuiCol_FrameBg));
    const auto span = [&](std::int64_t a, std::int64_t b, ImU32 color) {
        const float xa = r.image_min.x + static_cast<float>((std::max<double>(a, x0) - x0) / (x1 - x0)) * w;
        const float xb = r.image_min.x + static_cast<float>((std::min<double>(b, x1) - x0) / (x1 - x0)) * w;
        dl->AddRectFilled(ImVec2(std::floor(xa), y0), ImVec2(std::max(std::ceil(xb), std::floor(xa) + 1.0f), y1), color);
    };
    std::int64_t run = -1;
    for (std::int64_t k = std::max<std::int64_t>(0, static_cast<std::int64_t>(x0)); k <= cols; ++k) {
        const bool on = k < cols && k < x1 && processed[static_cast<std::size_t>(k)];
        if (on && run < 0) run = k;
        if (!on && run >= 0) span(run, k, palette::kInside), run = -1;
        if (k >= x1) break;
    }
    if (s.done() > 0) {
        const std::int64_t last = s.order()[static_cast<std::size_t>(s.done() - 1)];
        if (last + 1 > x0 && last < x1) span(last, last + 1, palette::kCurrent);
    }
    if (s.done() < cols) {
        const std::int64_t next = s.order()[static_cast<std::size_t>(s.done())];
        if (next + 1 > x0 && next < x1) span(next, next + 1, palette::kRange);
    }
}

void CellTooltip(const MethodPanelState& st, std::int64_t row, std::int64_t col) {
    const GptqStepper& s = *st.prepared.stepper;
    const std::vector<std::int64_t>& position = s.position();
    const std::int64_t p = position[static_cast<std::size_t>(col)];
    const Sym sym = Symbols();
    ImGui::BeginTooltip();
    ImGui::Text("row %lld, column %lld (step %lld of the order)", static_cast<long long>(row), static_cast<long long>(col),
                static_cast<long long>(p + 1));
    ImGui::Text("W = %s, now %s, moved %s", FormatNumber(s.original(row, col)).c_str(), FormatNumber(s.current(row, col)).c_str(),
                FormatNumber(s.current(row, col) - s.original(row, col)).c_str());
    if (p < s.done()) {
        const GptqStepper::Step& step = s.history()[static_cast<std::size_t>(p)];
        ImGui::Text("quantized: code %d; e = (w %s r'(w)) / U[j, j] = %s, U[j, j] = %s", s.code(row, col), sym.minus,
                    FormatNumber(step.e[static_cast<std::size_t>(row)]).c_str(), FormatNumber(step.u_jj).c_str());
        ImGui::Text("column's squared rounding error: %s as it came (compensated), %s had it been rounded as it was",
                    FormatNumber(step.error_before).c_str(), FormatNumber(step.error_original).c_str());
        ImGui::TextDisabled("every later column l got W[:, l] %s= e U[j, l]", sym.minus);
    } else {
        ImGui::TextDisabled("not quantized yet: it holds the compensation of the columns before it in the order");
    }
    ImGui::EndTooltip();
}

// The order under act-order: the columns around the current step, the next one highlighted.
void OrderLine(const GptqStepper& s, float width) {
    const std::int64_t n = s.columns(), done = s.done();
    const std::int64_t from = std::max<std::int64_t>(0, done - 4), to = std::min<std::int64_t>(n, done + 12);
    std::vector<std::string> parts{"order (by decreasing diag H):"};
    if (from > 0) parts.push_back("...");
    int highlight = -1;
    for (std::int64_t p = from; p < to; ++p) {
        if (p == done) highlight = static_cast<int>(parts.size());
        parts.push_back(std::to_string(s.order()[static_cast<std::size_t>(p)]));
    }
    if (to < n) parts.push_back("...");
    DrawWrappedParts(parts, width, highlight, " ");
}

bool FlowButton(const char* label) {
    SameLineOrWrap(ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().FramePadding.x);
    return ImGui::Button(label);
}

void Controls(MethodPanelState& st) {
    const float font = ImGui::GetFontSize();
    const GptqStepper* s = st.prepared.stepper.get();
    const std::int64_t in = s ? s->columns() : 0, done = s ? s->done() : 0;
    SameLineOrWrap(ImGui::GetFrameHeight() + ImGui::CalcTextSize("act-order").x + ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::Checkbox("act-order", &st.act_order);
    HelpTooltip("Process the columns by decreasing diag H = 2 sum_t x[t, k]^2: the loud input channels first, while many "
                "columns are left to take their error.");
    ImGui::BeginDisabled(!s);
    if (FlowButton("|<")) st.target = 0;
    if (FlowButton("< Prev")) st.target = std::max<std::int64_t>(0, done - 1);
    if (FlowButton("Next >")) st.target = std::min(in, done + 1);
    char label[48];
    std::snprintf(label, sizeof label, "Next block (%d) >>", st.block);
    if (FlowButton(label)) st.target = std::min<std::int64_t>(in, (done / st.block + 1) * st.block);
    if (FlowButton(">|")) st.target = in;
    int target = static_cast<int>(st.target);
    SameLineOrWrap(font * 12.0f);
    ImGui::SetNextItemWidth(std::max(font * 12.0f, ImGui::GetContentRegionAvail().x));
    if (SafeSliderInt("##column", &target, 0, std::max<std::int64_t>(in, 1), "%d columns quantized", ImGuiSliderFlags_AlwaysClamp))
        st.target = target;
    ImGui::EndDisabled();
}

// The step's lines above the maps: the last column's numbers and, under act-order, the order.
void StepLines(const MethodPanelState& st, float width) {
    const GptqStepper& s = *st.prepared.stepper;
    if (s.done() > 0) {
        const GptqStepper::Step& last = s.history().back();
        double emax = 0;
        for (double e : last.e) emax = std::max(emax, std::abs(e));
        TextWrappedAtSpaces("column " + std::to_string(last.column) + " quantized: U[j, j] = " + FormatNumber(last.u_jj) +
                            ", max |e| = " + FormatNumber(emax) + "; its squared error " + FormatNumber(last.error_before) +
                            " as compensated (" + FormatNumber(last.error_original) + " had it been rounded as it was)");
    } else {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        TextWrappedAtSpaces("Press Next: the next column (orange under W) is rounded and its error pushed into the columns after it.");
        ImGui::PopStyleColor();
    }
    if (st.act_order) OrderLine(s, width);
}

void DrawStepThrough(MethodPanelState& st, ImVec2 size) {
    const GptqStepper& s = *st.prepared.stepper;
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const std::int64_t out = s.rows(), in = s.columns(), done = s.done();
    std::vector<char> processed(static_cast<std::size_t>(in), 0);
    for (std::int64_t p = 0; p < done; ++p) processed[static_cast<std::size_t>(s.order()[static_cast<std::size_t>(p)])] = 1;
    const float top = ImGui::GetCursorScreenPos().y;
    const float gap = std::round(font * 0.8f), strip = std::round(font * 0.5f);
    const float cell_w = std::floor((size.x - 2 * gap) / 3.0f);
    const float cell_h = std::floor(size.y - (top - origin.y) - line - strip - 2 * line);
    if (cell_w < font * 4 || cell_h < font * 3) return;
    const HeatmapStyle w_style = SharedValueStyle({&st.original, &st.current});
    const HeatmapStyle c_style = CompensationStyle(st.compensation);
    const std::string dims = " [" + std::to_string(out) + " x " + std::to_string(in) + "]";
    const struct {
        const char* id;
        const std::vector<float>* data;
        const HeatmapStyle* style;
        std::string title;
    } maps[3] = {
        {"##w0", &st.original, &w_style, "W as it was" + dims},
        {"##w1", &st.current, &w_style, "W now: " + std::to_string(done) + " of " + std::to_string(in) + " done"},
        {"##dw", &st.compensation, &c_style, "W now " + std::string(Symbols().minus) + " W: moved so far"},
    };
    float image_bottom = top;
    for (int i = 0; i < 3; ++i) {
        const ImVec2 at(origin.x + static_cast<float>(i) * (cell_w + gap), top);
        ImGui::GetWindowDrawList()->AddText(at, ImGui::GetColorU32(ImGuiCol_Text), FitText(maps[i].title, cell_w).c_str());
        ImGui::SetCursorScreenPos(ImVec2(at.x, at.y + line));
        HeatmapSource src;
        src.f32 = maps[i].data->data();
        src.rows = out;
        src.cols = in;
        const HeatmapResult r = DrawHeatmap(maps[i].id, st.maps[static_cast<std::size_t>(i)], src, st.generation, *maps[i].style,
                                            st.view, HeatmapCell{}, ImVec2(cell_w, cell_h));
        ColumnStrip(s, processed, st.view, r, strip);
        if (r.hovered.valid()) CellTooltip(st, r.hovered.row, r.hovered.col);
        image_bottom = std::max(image_bottom, r.image_max.y);
    }
    const ImVec2 legend_at(origin.x, image_bottom + strip + 6.0f);
    DrawLegendRow(ImGui::GetWindowDrawList(),
                  {MarkerEntry(MarkerShape::Square, palette::kInside, "quantized"),
                   MarkerEntry(MarkerShape::Square, palette::kCurrent, "last step"),
                   MarkerEntry(MarkerShape::Square, palette::kRange, "next"),
                   TextEntry("W and W now share one colour scale; hover a cell for the step's numbers", true)},
                  legend_at, size.x);
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
}

}  // namespace

const char* MethodLabel(LayerMethod method) {
    switch (method) {
        case LayerMethod::Rtn: return "RTN";
        case LayerMethod::Gptq: return "GPTQ";
        case LayerMethod::Awq: return "AWQ";
        case LayerMethod::Rotate: return "rotate";
        case LayerMethod::RotateGptq: return "rotate+GPTQ";
    }
    return "";
}

bool MethodBusy(const MethodPanelState& st) {
    // busy(): a result not taken yet counts too, so a screenshot waits for the frame that shows it.
    return st.prepare_task.busy() || st.compare_task.busy() || st.awq_task.busy() ||
           (st.prepared.stepper && st.prepared.stepper->done() != st.target);
}

void FinishMethod(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                  const QuantConfig& weights, std::uint64_t layer_generation) {
    RequestComparison(st, x, w, weights, layer_generation);
    st.compare_task.wait();
    TakeComparison(st);
    if (st.method == LayerMethod::Awq) {
        RequestAwqPick(st, x, w, weights, layer_generation);
        st.awq_task.wait();
        RequestAwqPick(st, x, w, weights, layer_generation);  // takes it
    }
    if (st.method != LayerMethod::Gptq) return;
    Request(st, x, w, weights, layer_generation);
    st.prepare_task.wait();
    Take(st);
    StepToTarget(st, -1.0);
}

void DrawMethodPanel(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                     const QuantConfig& weights, std::uint64_t layer_generation) {
    if (!x || !w) return;
    ImGui::PushID(&st);
    const float font = ImGui::GetFontSize();
    int method = static_cast<int>(st.method);
    const char* names[] = {MethodLabel(LayerMethod::Rtn), MethodLabel(LayerMethod::Gptq), MethodLabel(LayerMethod::Awq),
                           MethodLabel(LayerMethod::Rotate), MethodLabel(LayerMethod::RotateGptq)};
    ImGui::SetNextItemWidth(font * 8.0f);
    if (ImGui::Combo("##method", &method, names, 5)) st.method = static_cast<LayerMethod>(method);
    RequestComparison(st, x, w, weights, layer_generation);
    TakeComparison(st);  // once, before anything draws: the chart and the view show the same results this frame
    const bool gptq = st.method == LayerMethod::Gptq;
    if (gptq) {
        Request(st, x, w, weights, layer_generation);
        Take(st);
        Controls(st);
        StepToTarget(st, kStepBudgetMs);
        if (st.prepare_task.running()) {
            ImGui::TextDisabled("preparing H and U...");
        } else if (!st.prepare_task.error().empty()) {
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.prepare_task.error().c_str());
        } else if (!st.prepared.error_text.empty()) {
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.prepared.error_text.c_str());
        }
    }
    // A projector's big font leaves the view narrow: there the step's lines go under the maps, which would
    // otherwise start below the first screen (the controls and four wrapped lines fill it at font scale 2).
    const bool narrow = ImGui::GetContentRegionAvail().x < font * 50.0f;
    const bool step_lines = gptq && st.prepared.stepper && st.prepared.key == st.requested_key;
    if (step_lines && !narrow) StepLines(st, ImGui::GetContentRegionAvail().x);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const bool wide = !narrow && avail.y >= font * 14.0f;
    const float gap = std::round(font * 0.8f);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    ImVec2 chart_size, view_size;
    if (wide) {
        // The chart at the left, the method's maps beside it.
        chart_size = ImVec2(std::max(font * 18.0f, std::floor(avail.x * 0.3f)), std::min(avail.y, font * 20.0f));
        view_size = ImVec2(avail.x - chart_size.x - gap, avail.y);
    } else {
        // Narrow (a projector's big font): one under the other, scrolled; measured inside, beside the scrollbar.
        // The method's maps first, filling the child's first screen (what a step asks the class to watch),
        // then GPTQ's step lines and the chart. At least 8 lines: GPTQ's controls can leave the window
        // nothing below them (its own scrollbar then brings the child into view).
        const float child_h = std::max(avail.y, font * 8.0f);
        ImGui::BeginChild("##method-scroll", ImVec2(0, child_h), false, ImGuiWindowFlags_AlwaysVerticalScrollbar);
        const float inner = ImGui::GetContentRegionAvail().x;
        chart_size = ImVec2(inner, font * 10.0f);
        // AWQ's loss curve goes under its maps here: room for it too.
        // GPTQ's three maps fit the first screen; the other views' numbers, maps and histograms need 18 lines
        // (they start on the first screen and the scrollbar shows the rest).
        view_size = ImVec2(inner, std::max(gptq ? font * 8.0f : font * 18.0f, child_h - ImGui::GetStyle().WindowPadding.y * 2.0f) +
                                      (st.method == LayerMethod::Awq ? font * 14.0f : 0.0f));
    }
    const auto draw_view = [&] {
        if (gptq) {
            if (step_lines) DrawStepThrough(st, view_size);
        } else {
            DrawMethodView(st, *w, view_size);
        }
    };
    if (wide) {
        DrawMethodComparison(st, chart_size);
        RequestAwqPick(st, x, w, weights, layer_generation);
        ImGui::SetCursorScreenPos(ImVec2(origin.x + chart_size.x + gap, origin.y));
        draw_view();
    } else {
        RequestAwqPick(st, x, w, weights, layer_generation);
        draw_view();
        if (step_lines && narrow) StepLines(st, ImGui::GetContentRegionAvail().x);
        ImGui::Spacing();
        DrawMethodComparison(st, chart_size);
        ImGui::EndChild();
    }
    ImGui::PopID();
}

}  // namespace qs::gui
