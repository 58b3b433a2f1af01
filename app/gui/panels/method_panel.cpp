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
// GPTQ's damping in the step-through (SPEC's default).
constexpr double kDamp = 0.01;

std::string PrepareKey(const MethodPanelState& st, std::uint64_t layer_generation) {
    return std::to_string(layer_generation) + (st.act_order ? " act-order" : "");
}

void CopyState(MethodPanelState& st) {
    const GptqStepper& s = *st.prepared.stepper;
    const std::size_t n = s.current().size();
    st.original.resize(n);
    st.current.resize(n);
    st.compensation.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        st.original[i] = static_cast<float>(s.original()[i]);
        st.current[i] = static_cast<float>(s.current()[i]);
        st.compensation[i] = static_cast<float>(s.current()[i] - s.original()[i]);
    }
    ++st.generation;
}

void Request(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
             const QuantConfig& weights, std::uint64_t layer_generation) {
    const std::string key = PrepareKey(st, layer_generation);
    if (key == st.requested_key) return;
    st.requested_key = key;
    const GptqStepperOptions options{kDamp, std::max(1, st.block), st.act_order};
    st.prepare_task.start([x, w, weights, options, key](Task<MethodPanelState::Prepared>::Context& ctx) {
        MethodPanelState::Prepared p;
        p.key = key;
        try {
            p.stepper = std::make_shared<GptqStepper>(*x, *w, weights, options);
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

HeatmapStyle ValueStyle(const std::vector<float>& a, const std::vector<float>& b) {
    double lo = 0, hi = 0;
    for (const std::vector<float>* v : {&a, &b})
        for (float x : *v) lo = std::min(lo, static_cast<double>(x)), hi = std::max(hi, static_cast<double>(x));
    HeatmapStyle style;
    style.colormap = Colormap::Coolwarm;
    style.norm = ColorNorm::Centered(lo, hi, 0.0);
    style.bar_lo = lo;
    style.bar_hi = hi;
    style.max_cell_aspect = 4.0f;
    return style;
}

HeatmapStyle CompensationStyle(const std::vector<float>& c) {
    double lo = 0, hi = 0;
    for (float x : c) lo = std::min(lo, static_cast<double>(x)), hi = std::max(hi, static_cast<double>(x));
    if (!(hi > lo)) hi = lo + 1e-12;  // nothing moved yet: a valid, empty scale
    HeatmapStyle style = ValueStyle({}, {});
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

void CellTooltip(const MethodPanelState& st, const std::vector<std::int64_t>& position, std::int64_t row, std::int64_t col) {
    const GptqStepper& s = *st.prepared.stepper;
    const std::size_t i = static_cast<std::size_t>(row * s.columns() + col);
    const std::int64_t p = position[static_cast<std::size_t>(col)];
    const Sym sym = Symbols();
    ImGui::BeginTooltip();
    ImGui::Text("row %lld, column %lld (step %lld of the order)", static_cast<long long>(row), static_cast<long long>(col),
                static_cast<long long>(p + 1));
    ImGui::Text("W = %s, now %s, moved %s", FormatNumber(s.original()[i]).c_str(), FormatNumber(s.current()[i]).c_str(),
                FormatNumber(s.current()[i] - s.original()[i]).c_str());
    if (p < s.done()) {
        const GptqStepper::Step& step = s.history()[static_cast<std::size_t>(p)];
        ImGui::Text("quantized: code %d; e = (w %s r'(w)) / U[j, j] = %s, U[j, j] = %s", s.codes()[i], sym.minus,
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

void Controls(MethodPanelState& st) {
    const float font = ImGui::GetFontSize();
    const GptqStepper* s = st.prepared.stepper.get();
    const std::int64_t in = s ? s->columns() : 0;
    ImGui::Checkbox("act-order", &st.act_order);
    HelpTooltip("Process the columns by decreasing diag H = 2 sum_t x[t, k]^2: the loud input channels first, while many "
                "columns are left to take their error.");
    ImGui::BeginDisabled(!s);
    ImGui::SameLine();
    if (ImGui::Button("|<")) st.target = 0;
    ImGui::SameLine();
    if (ImGui::Button("< Prev")) st.target = std::max<std::int64_t>(0, (s ? s->done() : 0) - 1);
    ImGui::SameLine();
    if (ImGui::Button("Next >")) st.target = std::min(in, (s ? s->done() : 0) + 1);
    ImGui::SameLine();
    char label[48];
    std::snprintf(label, sizeof label, "Next block (%d) >>", st.block);
    if (ImGui::Button(label) && s) st.target = std::min<std::int64_t>(in, (s->done() / st.block + 1) * st.block);
    ImGui::SameLine();
    if (ImGui::Button(">|")) st.target = in;
    ImGui::SameLine();
    int target = static_cast<int>(st.target);
    ImGui::SetNextItemWidth(std::max(font * 8.0f, ImGui::GetContentRegionAvail().x));
    if (SafeSliderInt("##column", &target, 0, std::max<std::int64_t>(in, 1), "%d columns quantized", ImGuiSliderFlags_AlwaysClamp))
        st.target = target;
    ImGui::EndDisabled();
}

void DrawStepThrough(MethodPanelState& st, ImVec2 size) {
    const GptqStepper& s = *st.prepared.stepper;
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const std::int64_t out = s.rows(), in = s.columns(), done = s.done();
    // The step's line: the last column's numbers.
    if (done > 0) {
        const GptqStepper::Step& last = s.history().back();
        double emax = 0;
        for (double e : last.e) emax = std::max(emax, std::abs(e));
        ImGui::Text("column %lld quantized: U[j, j] = %s, max |e| = %s; its error %s after compensation (%s rounded as it was)",
                    static_cast<long long>(last.column), FormatNumber(last.u_jj).c_str(), FormatNumber(emax).c_str(),
                    FormatNumber(last.error_before).c_str(), FormatNumber(last.error_original).c_str());
    } else {
        ImGui::TextDisabled("Press Next: the next column (orange below W) is rounded and its error pushed into the columns after it.");
    }
    if (st.act_order) OrderLine(s, size.x);
    std::vector<char> processed(static_cast<std::size_t>(in), 0);
    std::vector<std::int64_t> position(static_cast<std::size_t>(in), 0);
    for (std::int64_t p = 0; p < in; ++p) {
        position[static_cast<std::size_t>(s.order()[static_cast<std::size_t>(p)])] = p;
        if (p < done) processed[static_cast<std::size_t>(s.order()[static_cast<std::size_t>(p)])] = 1;
    }
    const float top = ImGui::GetCursorScreenPos().y;
    const float gap = std::round(font * 0.8f), strip = std::round(font * 0.5f);
    const float cell_w = std::floor((size.x - 2 * gap) / 3.0f);
    const float cell_h = std::floor(size.y - (top - origin.y) - line - strip - line);
    if (cell_w < font * 4 || cell_h < font * 3) return;
    const HeatmapStyle w_style = ValueStyle(st.original, st.current);
    const HeatmapStyle c_style = CompensationStyle(st.compensation);
    const std::string dims = " [" + std::to_string(out) + " x " + std::to_string(in) + "]";
    const struct {
        const char* id;
        const std::vector<float>* data;
        const HeatmapStyle* style;
        std::string title;
    } maps[3] = {
        {"##w0", &st.original, &w_style, "W as it was" + dims},
        {"##w1", &st.current, &w_style, "W now: " + std::to_string(done) + " of " + std::to_string(in) + " columns quantized"},
        {"##dw", &st.compensation, &c_style, "compensation so far: W now " + std::string(Symbols().minus) + " W"},
    };
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
        if (r.hovered.valid()) CellTooltip(st, position, r.hovered.row, r.hovered.col);
    }
    const ImVec2 legend_at(origin.x, top + line + cell_h + strip + 4.0f);
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

const char* MethodLabel(MethodChoice method) {
    switch (method) {
        case MethodChoice::Rtn: return "RTN";
        case MethodChoice::Gptq: return "GPTQ";
        case MethodChoice::Awq: return "AWQ";
        case MethodChoice::Rotate: return "rotate";
        case MethodChoice::RotateGptq: return "rotate+GPTQ";
    }
    return "";
}

bool MethodBusy(const MethodPanelState& st) {
    return st.prepare_task.running() || (st.prepared.stepper && st.prepared.stepper->done() != st.target);
}

void FinishMethod(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                  const QuantConfig& weights, std::uint64_t layer_generation) {
    if (st.method != MethodChoice::Gptq) return;
    Request(st, x, w, weights, layer_generation);
    st.prepare_task.wait();
    Take(st);
    StepToTarget(st, -1.0);
}

void DrawMethodPanel(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                     const QuantConfig& weights, std::uint64_t layer_generation) {
    ImGui::PushID(&st);
    const float font = ImGui::GetFontSize();
    int method = static_cast<int>(st.method);
    const char* names[] = {MethodLabel(MethodChoice::Rtn), MethodLabel(MethodChoice::Gptq), MethodLabel(MethodChoice::Awq),
                           MethodLabel(MethodChoice::Rotate), MethodLabel(MethodChoice::RotateGptq)};
    ImGui::SetNextItemWidth(font * 9.0f);
    if (ImGui::Combo("##method", &method, names, 5)) st.method = static_cast<MethodChoice>(method);
    if (st.method != MethodChoice::Gptq) {
        ImGui::PopID();
        return;
    }
    ImGui::SameLine();
    if (x && w) Request(st, x, w, weights, layer_generation);
    Take(st);
    Controls(st);
    StepToTarget(st, kStepBudgetMs);
    if (st.prepare_task.running()) {
        ImGui::TextDisabled("preparing H = 2 x^T x and its inverse's Cholesky factor...");
    } else if (!st.prepare_task.error().empty()) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.prepare_task.error().c_str());
    } else if (!st.prepared.error_text.empty()) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.prepared.error_text.c_str());
    }
    if (st.prepared.stepper && st.prepared.key == st.requested_key) DrawStepThrough(st, ImGui::GetContentRegionAvail());
    ImGui::PopID();
}

}  // namespace qs::gui
