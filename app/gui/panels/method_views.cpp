// The Method view's comparison of every method and its RTN / AWQ / rotate views (method_panel.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gui/panels/method_panel.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

// Bins of the rotation's histograms of W and W H.
constexpr int kHistogramBins = 61;

constexpr LayerMethod kMethods[5] = {LayerMethod::Rtn, LayerMethod::Gptq, LayerMethod::Awq, LayerMethod::Rotate,
                                     LayerMethod::RotateGptq};

const MethodResult* Shown(const MethodPanelState& st) {
    return st.comparison.results[static_cast<std::size_t>(st.method)].get();
}


// A strip of one bar per input channel above a heatmap's columns (AWQ's mean |x| and scales), scaled to its
// largest value, following the heatmap's zoom.
void ChannelStrip(const std::vector<double>& values, const HeatmapView& view, float x_min, float x_max, float y0, float height,
                  ImU32 color) {
    if (values.empty()) return;
    const double n = static_cast<double>(values.size());
    const double x0 = view.empty() ? 0.0 : view.x0, x1 = view.empty() ? n : view.x1;
    double hi = 0;
    for (double v : values) hi = std::max(hi, v);
    if (!(hi > 0)) return;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(x_min, y0), ImVec2(x_max, y0 + height), ImGui::GetColorU32(ImGuiCol_FrameBg));
    for (std::int64_t k = std::max<std::int64_t>(0, static_cast<std::int64_t>(x0)); k < static_cast<std::int64_t>(values.size()) && k < x1; ++k) {
        const float a = x_min + static_cast<float>((std::max<double>(k, x0) - x0) / (x1 - x0)) * (x_max - x_min);
        const float b = x_min + static_cast<float>((std::min<double>(k + 1, x1) - x0) / (x1 - x0)) * (x_max - x_min);
        const float h = static_cast<float>(values[static_cast<std::size_t>(k)] / hi) * height;
        dl->AddRectFilled(ImVec2(std::floor(a), y0 + height - h), ImVec2(std::max(std::ceil(b), std::floor(a) + 1.0f), y0 + height), color);
    }
}

// A histogram's bars over [x0, x1] (its own range), counts on a linear axis up to `top`, with its range's ends.
void HistogramBars(const Histogram& h, std::int64_t top, float x0, float x1, float y0, float y1) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), ImGui::GetColorU32(ImGuiCol_FrameBg, 0.35f));
    std::vector<double> counts(h.counts.begin(), h.counts.end());
    const PlotAxis ay{0.0, static_cast<double>(std::max<std::int64_t>(top, 1)), y1, y0};
    DrawBars(dl, counts, ay, 0.0, x0, x1, palette::kInside, palette::kInside, -1);
    const PlotAxis ax{h.lo, h.hi, x0, x1};
    DrawTicksBelow(dl, ax, y1 + 1.0f, 3, x0, x1);
}

// AWQ's loss against the ratio r (log), the winner marked as SmoothQuant's best alpha is; a click picks the
// nearest ratio (its scales and loss shown), as a click on SmoothQuant's curve picks alpha.
void AwqCurve(MethodPanelState& st, const AwqDetails& awq, ImVec2 size) {
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    const std::size_t n = awq.losses.size();
    if (n == 0 || size.y < font * 6) return;
    double lo = 1e300, hi = 0;
    std::size_t best = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (awq.losses[i] > 0) lo = std::min(lo, awq.losses[i]);
        hi = std::max(hi, awq.losses[i]);
        if (awq.losses[i] < awq.losses[best]) best = i;
    }
    if (!(hi > 0) || !(lo < 1e300)) return;
    if (!(hi > lo)) hi = lo * 2;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    DrawTextAt(dl, origin, ImGui::GetColorU32(ImGuiCol_Text), FitText("AWQ: output MSE against the ratio r (log)", size.x), origin.x + size.x);
    const float ylab_w = ImGui::CalcTextSize("1e-10").x + font * 0.6f;
    const ImVec2 p0(std::floor(origin.x + ylab_w), std::floor(origin.y + line * 1.3f));
    const ImVec2 p1(std::floor(origin.x + size.x - font), std::floor(origin.y + size.y - 3.4f * line));
    if (p1.y - p0.y < font * 3) return;
    const double margin = 0.08 * (std::log10(hi) - std::log10(lo));
    const PlotAxis ax{0.0, 1.0, p0.x, p1.x};
    const PlotAxis ay{lo * std::pow(10.0, -margin), hi * std::pow(10.0, margin), p1.y, p0.y, true};
    st.awq_plot_min = p0, st.awq_plot_max = p1;
    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##awq-plot", ImVec2(p1.x - p0.x, p1.y - p0.y));
    if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {  // ratio i is drawn at x = i / n; the winner's point: back to it
        const double at = std::clamp((ImGui::GetIO().MousePos.x - p0.x) / (p1.x - p0.x), 0.0f, 1.0f) * static_cast<double>(n);
        const int i = static_cast<int>(std::min<double>(std::round(at), static_cast<double>(n - 1)));
        st.awq_pick = static_cast<std::size_t>(i) == best ? -1 : i;
        st.awq_pick_after.reset();  // a pick on this curve
    }
    const bool picked = st.awq_pick >= 0 && static_cast<std::size_t>(st.awq_pick) < n;
    dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg, 0.35f));
    DrawTicksBelow(dl, ax, p1.y + 1.0f, 5, p0.x - font, p1.x + font);
    DrawTicksLeft(dl, ay, p0.x - 1.0f, std::max(2, static_cast<int>((p1.y - p0.y) / (font * 2.5f))), false, p1.x);
    dl->PushClipRect(p0, p1, true);
    std::vector<ImVec2> pts;
    for (std::size_t i = 0; i < n; ++i)
        pts.emplace_back(ax.at(static_cast<double>(i) / static_cast<double>(n)), ay.at(awq.losses[i] > 0 ? awq.losses[i] : ay.lo));
    dl->AddPolyline(pts.data(), static_cast<int>(pts.size()), palette::kCurve, 0, 2.5f);
    DrawMarker(dl, pts[best], MarkerShape::Triangle, palette::kBest, std::max(5.0f, font * 0.5f));
    const std::size_t pick = picked ? static_cast<std::size_t>(st.awq_pick) : best;
    if (picked) {
        dl->AddLine(ImVec2(pts[pick].x, p0.y), ImVec2(pts[pick].x, p1.y), palette::kCurrent, 1.5f);
        DrawMarker(dl, pts[pick], MarkerShape::Circle, palette::kCurrent, std::max(4.0f, font * 0.38f));
    }
    dl->PopClipRect();
    std::vector<LegendEntry> legend{MarkerEntry(MarkerShape::Triangle, palette::kBest,
                                                "best r = " + FormatFixed(awq.ratio, 2, 2) + ": MSE " + FormatNumber(awq.losses[best]))};
    if (picked)
        legend.push_back(MarkerEntry(MarkerShape::Circle, palette::kCurrent,
                                     "r = " + FormatFixed(static_cast<double>(pick) / static_cast<double>(n), 2, 2) + ": MSE " +
                                         FormatNumber(awq.losses[pick])));
    legend.push_back(TextEntry(picked ? "click: another r (the triangle: the best)" : "r = 0: plain RTN; click a point to see its r",
                               true));
    DrawLegendRow(dl, legend, ImVec2(origin.x, p1.y + line * 1.1f), size.x);
    ImGui::SetCursorScreenPos(origin);
}

}  // namespace

void RequestComparison(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                       const QuantConfig& weights, std::uint64_t layer_generation) {
    const std::string key = std::to_string(layer_generation) + (st.act_order ? " act-order" : "");
    if (key == st.compare_key) return;
    st.compare_key = key;
    const LayerConfig config = make_layer_config(weights, {});
    const bool act_order = st.act_order;
    st.compare_task.start([x, w, config, key, act_order, layer_generation](Task<MethodPanelState::Comparison>::Context& ctx) {
        MethodPanelState::Comparison c;
        c.key = key;
        c.layer_generation = layer_generation;
        const MethodControl control{[&ctx] { return ctx.cancelled(); }, {}};
        for (std::size_t i = 0; i < 5; ++i) {
            MethodConfig method;
            method.method = kMethods[i];
            method.act_order = act_order;  // GPTQ's and rotate+GPTQ's, as the step-through shows it
            try {
                c.results[i] = std::make_shared<const MethodResult>(run_method(*x, *w, nullptr, config, method, control));
            } catch (const MethodCancelled&) {
                return;
            } catch (const Error& e) {
                c.errors[i] = e.what();
            }
            ctx.set_progress(static_cast<float>(i + 1) / 5.0f);
            if (ctx.cancelled()) return;
            if (i == 2) ctx.publish(c);  // RTN, GPTQ and AWQ first: the rotation's wait shows as bars still to come
        }
        if (c.results[3]) {
            const std::int64_t out = w->rows(), in = w->cols();
            std::vector<double> rows(w->values.begin(), w->values.end());
            hadamard_rows(rows.data(), out, in);
            c.rotated.assign(rows.begin(), rows.end());
            float lo0, hi0, lo1, hi1;
            value_range(w->values.data(), w->numel(), lo0, hi0);
            value_range(c.rotated.data(), static_cast<std::int64_t>(c.rotated.size()), lo1, hi1);
            const double lo = std::min(lo0, lo1), hi = std::max(hi0, hi1);
            c.hist_w = histogram(w->values.data(), w->numel(), kHistogramBins, lo, hi);
            c.hist_rotated = histogram(c.rotated.data(), static_cast<std::int64_t>(c.rotated.size()), kHistogramBins, lo, hi);
        }
        if (!ctx.cancelled()) ctx.publish(std::move(c));
    });
}

void TakeComparison(MethodPanelState& st) {
    std::optional<MethodPanelState::Comparison> c = st.compare_task.take();
    if (!c) return;
    // Another layer's curve: its winner. (A pick read from a session waits for the first curve; act-order, which
    // AWQ does not use, keeps it.)
    if (st.awq_pick_after) {
        if (c->layer_generation > *st.awq_pick_after) st.awq_pick_after.reset();  // the session's layer: its pick stays
    } else if (st.comparison.results[2] && c->layer_generation != st.comparison.layer_generation) {
        st.awq_pick = -1;
    }
    st.comparison = std::move(*c);
    ++st.method_generation;
}

void RequestAwqPick(MethodPanelState& st, const std::shared_ptr<const Tensor>& x, const std::shared_ptr<const Tensor>& w,
                    const QuantConfig& weights, std::uint64_t layer_generation) {
    if (std::optional<MethodPanelState::AwqPicked> p = st.awq_task.take()) {
        st.awq_picked = std::move(*p);
        ++st.method_generation;
    }
    // Only for the curve of this layer on show (a new one resets the pick when it comes).
    const MethodResult* awq = st.comparison.results[2].get();
    if (st.method != LayerMethod::Awq || st.covered || !awq || !awq->awq || st.comparison.key != st.compare_key) return;
    const std::size_t n = awq->awq->losses.size();
    if (st.awq_pick < 0 || static_cast<std::size_t>(st.awq_pick) >= n) return;
    const std::string key = std::to_string(layer_generation) + " r " + std::to_string(st.awq_pick) + "/" + std::to_string(n);
    if (key == st.awq_key) return;
    st.awq_key = key;
    MethodConfig method;
    method.method = LayerMethod::Awq;
    method.grid = static_cast<int>(n);
    method.awq_ratio = static_cast<double>(st.awq_pick) / static_cast<double>(n);  // the curve's r, as the search made it
    const LayerConfig config = make_layer_config(weights, {});
    const int pick = st.awq_pick;
    st.awq_task.start([x, w, config, method, key, pick](Task<MethodPanelState::AwqPicked>::Context& ctx) {
        MethodPanelState::AwqPicked p;
        p.key = key;
        p.pick = pick;
        try {
            p.result = std::make_shared<const MethodResult>(
                run_method(*x, *w, nullptr, config, method, MethodControl{[&ctx] { return ctx.cancelled(); }, {}}));
        } catch (const MethodCancelled&) {
            return;
        } catch (const Error& e) {
            p.error_text = e.what();
        }
        if (!ctx.cancelled()) ctx.publish(std::move(p));
    });
}

void DrawMethodComparison(MethodPanelState& st, ImVec2 size) {
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    DrawTextAt(dl, origin, ImGui::GetColorU32(ImGuiCol_Text), FitText("output SQNR (dB), this quantizer", size.x - font), origin.x + size.x);
    std::vector<double> sqnr(5, 0.0);
    double hi = 1.0;
    for (std::size_t i = 0; i < 5; ++i)
        if (const MethodResult* r = st.comparison.results[i].get(); r && r->layer.output.sqnr_db)
            sqnr[i] = *r->layer.output.sqnr_db, hi = std::max(hi, sqnr[i]);
    const float ylab_w = ImGui::CalcTextSize("100").x + font * 0.6f;
    const ImVec2 p0(std::floor(origin.x + ylab_w), std::floor(origin.y + line * 2.3f));
    const ImVec2 p1(std::floor(origin.x + size.x - font * 0.5f), std::floor(origin.y + size.y - 2.2f * line));
    if (p1.y - p0.y < font * 3 || p1.x - p0.x < font * 10) return;
    const PlotAxis ay{0.0, hi * 1.12, p1.y, p0.y};
    dl->AddRectFilled(p0, p1, ImGui::GetColorU32(ImGuiCol_FrameBg, 0.35f));
    DrawTicksLeft(dl, ay, p0.x - 1.0f, std::max(2, static_cast<int>((p1.y - p0.y) / (font * 2.5f))), false, p1.x);
    const float slot = (p1.x - p0.x) / 5.0f;
    for (std::size_t i = 0; i < 5; ++i) {
        const float a = std::floor(p0.x + slot * (static_cast<float>(i) + 0.18f)), b = std::floor(p0.x + slot * (static_cast<float>(i) + 0.82f));
        const MethodResult* r = st.comparison.results[i].get();
        const bool current = kMethods[i] == st.method;
        const std::string label = FitText(MethodLabel(kMethods[i]), slot - 4.0f);
        const float lw = ImGui::CalcTextSize(label.c_str()).x;
        DrawTextAt(dl, ImVec2(std::floor((a + b) / 2 - lw / 2), p1.y + 2.0f), current ? palette::kCurrent : ImGui::GetColorU32(ImGuiCol_Text),
                   label, p0.x + slot * static_cast<float>(i + 1));
        if (st.covered) {
            dl->AddRectFilled(ImVec2(a, p0.y + line), ImVec2(b, p1.y), palette::kCover);
            DrawTextAt(dl, ImVec2(a + 3.0f, (p0.y + p1.y) / 2 - font / 2), palette::kCoverText, "?", b);
            continue;
        }
        if (!r) {
            const std::string& why = st.comparison.errors[i];
            DrawTextAt(dl, ImVec2(a, p1.y - line * 1.2f), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                       FitText(why.empty() ? "..." : "n/a", b - a), b);
            continue;
        }
        const float top = std::round(ay.at(sqnr[i]));
        dl->AddRectFilled(ImVec2(a, top), ImVec2(b, p1.y), current ? palette::kCurrent : palette::kInside);
        const std::string v = FormatFixed(sqnr[i], 1, 1);
        DrawTextAt(dl, ImVec2(std::floor((a + b) / 2 - ImGui::CalcTextSize(v.c_str()).x / 2), top - line), ImGui::GetColorU32(ImGuiCol_Text), v,
                   p0.x + slot * static_cast<float>(i + 1));
    }
    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##method-bars", ImVec2(p1.x - p0.x, line + p1.y - p0.y));
    if (ImGui::IsItemHovered()) {
        const int i = std::clamp(static_cast<int>((ImGui::GetIO().MousePos.x - p0.x) / slot), 0, 4);
        ImGui::BeginTooltip();
        ImGui::Text("%s", MethodLabel(kMethods[static_cast<std::size_t>(i)]));
        if (st.covered) ImGui::TextDisabled("covered: predict, then press R");
        else if (const MethodResult* r = st.comparison.results[static_cast<std::size_t>(i)].get())
            ImGui::Text("output MSE %s, SQNR %s dB (RTN: MSE %s)", FormatNumber(r->layer.output.mse).c_str(),
                        FormatFixed(sqnr[static_cast<std::size_t>(i)], 2, 2).c_str(), FormatNumber(r->rtn_output.mse).c_str());
        else if (!st.comparison.errors[static_cast<std::size_t>(i)].empty()) ImGui::TextUnformatted(st.comparison.errors[static_cast<std::size_t>(i)].c_str());
        else ImGui::TextDisabled("computing...");
        ImGui::EndTooltip();
    }
    if (st.covered) {
        DrawTextAt(dl, ImVec2(p0.x, p1.y + line * 1.1f), palette::kRange, FitText("Predict, then press R to reveal", origin.x + size.x - p0.x), origin.x + size.x);
    } else if (const MethodResult* r = Shown(st)) {
        // AWQ's bar is its winner's, whatever ratio the view shows (the view's line says which).
        const std::string text = std::string(MethodLabel(st.method)) + ": output MSE " + FormatNumber(r->layer.output.mse) + " (RTN " +
                                 FormatNumber(r->rtn_output.mse) + ")";
        DrawTextAt(dl, ImVec2(p0.x, p1.y + line * 1.1f), ImGui::GetColorU32(ImGuiCol_Text), FitText(text, origin.x + size.x - p0.x),
                   origin.x + size.x);
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(size);
}

void DrawMethodView(MethodPanelState& st, const Tensor& w, ImVec2 size) {
    const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    // The view's right edge for ImGui's wrapped text, which takes it in window coordinates: a screen x would
    // wrap past the scrolled child by the child's own offset.
    const float wrap_x = ImGui::GetCursorPosX() + size.x;
    const MethodResult* r = Shown(st);
    const std::string& why = st.comparison.errors[static_cast<std::size_t>(st.method)];
    if (!r) {
        if (!why.empty()) {
            ImGui::PushTextWrapPos(wrap_x);
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", why.c_str());
            ImGui::PopTextWrapPos();
        } else {
            ImGui::TextDisabled("computing %s...", MethodLabel(st.method));
        }
        return;
    }
    const bool rotate = st.method == LayerMethod::Rotate || st.method == LayerMethod::RotateGptq;
    const bool awq = st.method == LayerMethod::Awq && r->awq;
    // A ratio picked on the curve (not while a lesson covers it): the quantization at it, once computed, in the
    // maps, the scales' strip and the numbers; the winner's until then.
    const bool picked = awq && !st.covered && st.awq_pick >= 0 && static_cast<std::size_t>(st.awq_pick) < r->awq->losses.size();
    const double picked_r = picked ? static_cast<double>(st.awq_pick) / static_cast<double>(r->awq->losses.size()) : 0.0;
    const MethodPanelState::AwqPicked& p = st.awq_picked;
    const bool current_pick = picked && p.key == st.awq_key && p.pick == st.awq_pick;
    const MethodResult* at_pick = current_pick && p.result && p.result->awq ? p.result.get() : nullptr;
    const MethodResult& m = at_pick ? *at_pick : *r;  // what the maps show
    static const std::vector<double> kNone;
    const std::vector<double>& scales = awq ? m.awq->scales : kNone;
    // What the method starts from (W, or W H) and the weight it ends with.
    const std::vector<float>& before = w.values;
    const std::vector<float>& after = rotate ? st.comparison.rotated : m.dequantized;
    if (before.size() != after.size()) return;
    // Above the maps: the method's numbers; AWQ: its strips; rotate: the outlier ratio. A group, so that each
    // line starts at the view's left, not at the window's (beside the chart, that is under it).
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(wrap_x);
    // A lesson's step covers what it asks to predict (the ratio after the rotation, AWQ's winner) until R.
    const std::string hidden = "? (predict, then R)";
    if (rotate && r->rotate) {
        TextWrappedAtSpaces("outlier ratio max|W|/std: " + FormatFixed(r->rotate->max_over_std_before, 2, 2) + " for W, " +
                            (st.covered ? hidden : FormatFixed(r->rotate->max_over_std_after, 2, 2)) + " for W H; kurtosis " +
                            FormatFixed(r->rotate->kurtosis_before, 2, 2) + " " + Symbols().arrow + " " +
                            (st.covered ? std::string("?") : FormatFixed(r->rotate->kurtosis_after, 2, 2)) + " (3: a normal's)");
        ImGui::TextDisabled("x' = x H and W' = W H give x' W'^T = x W^T: only the rounding of W' changes y.");
    } else if (awq && st.covered) {
        TextWrappedAtSpaces("AWQ: the best ratio r " + hidden + "; W's column k is multiplied by m_k = mean|x_k|^r before rounding "
                            "and divided after.");
    } else if (awq && picked) {
        const std::string best = "the best r = " + FormatFixed(r->awq->ratio, 2, 2);
        if (ImGui::SmallButton(("Back to " + best).c_str())) st.awq_pick = -1;
        if (at_pick) {
            const std::string sqnr = at_pick->layer.output.sqnr_db ? ", SQNR " + FormatFixed(*at_pick->layer.output.sqnr_db, 2, 2) + " dB" : "";
            TextWrappedAtSpaces("AWQ at the picked ratio r = " + FormatFixed(picked_r, 2, 2) + ": output MSE " +
                                FormatNumber(at_pick->layer.output.mse) + sqnr + " (" + best + ": MSE " + FormatNumber(r->layer.output.mse) +
                                "); scales m_k from " + FormatNumber(*std::min_element(scales.begin(), scales.end())) + " to " +
                                FormatNumber(*std::max_element(scales.begin(), scales.end())) + ".");
        } else if (current_pick && !p.error_text.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(WarningColor()));
            TextWrappedAtSpaces(p.error_text);
            ImGui::PopStyleColor();
        } else {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            TextWrappedAtSpaces("computing AWQ at r = " + FormatFixed(picked_r, 2, 2) + "... (the maps show " + best + " until then)");
            ImGui::PopStyleColor();
        }
    } else if (awq) {
        TextWrappedAtSpaces("AWQ: ratio r = " + FormatFixed(r->awq->ratio, 2, 2) + ", scales m_k = mean|x_k|^r from " +
                            FormatNumber(*std::min_element(r->awq->scales.begin(), r->awq->scales.end())) + " to " +
                            FormatNumber(*std::max_element(r->awq->scales.begin(), r->awq->scales.end())) +
                            ": W's column k is multiplied by m_k before rounding and divided after.");
    } else {
        ImGui::TextDisabled("RTN: every weight rounded to the nearest level of its block's (s, z), on its own.");
    }
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    const float top = ImGui::GetCursorScreenPos().y;
    const float gap = std::round(font * 0.8f), strip = awq ? std::round(font * 1.6f) : 0.0f;
    // AWQ's loss curve beside the maps, or under them where it and two legible maps do not fit in a row (a
    // projector's font): the maps then take the whole width and give the curve some of their height.
    const float side_w = std::max(font * 18.0f, std::floor(size.x * 0.32f));
    const bool curve_below = awq && size.x - side_w - gap < font * 24.0f;
    const float side = awq && !curve_below ? side_w : 0.0f;
    const float curve_h = curve_below ? std::round(font * 13.0f) : 0.0f;
    const float maps_w = size.x - (side > 0 ? side + gap : 0.0f);
    const float cell_w = std::floor((maps_w - gap) / 2.0f);
    const float hist_h = rotate && !st.comparison.hist_w.counts.empty() ? std::round(font * 4.0f) : 0.0f;
    // AWQ's legend under the maps, whole: a line of it is in the 2 lines below, more (wrapped) come off the maps.
    const std::vector<LegendEntry> awq_legend{MarkerEntry(MarkerShape::Square, palette::kRange, "mean |x| per input channel"),
                                              MarkerEntry(MarkerShape::Square, palette::kInside, "AWQ's scale m_k")};
    const float legend_more = awq ? std::max(0.0f, LegendRowHeight(awq_legend, maps_w) - ImGui::GetTextLineHeight()) : 0.0f;
    const float cell_h = std::floor(size.y - (top - origin.y) - 2 * line - 2 * strip - (hist_h > 0 ? hist_h + 2 * line : 0.0f) - curve_h -
                                    legend_more);
    if (cell_w < font * 4 || cell_h < font * 3) return;
    const HeatmapStyle style = SharedValueStyle({&before, &after});
    float image_bottom = top;
    const std::string dims = " [" + std::to_string(w.rows()) + " x " + std::to_string(w.cols()) + "]";
    const std::string awq_name = at_pick ? "AWQ at r = " + FormatFixed(picked_r, 2, 2) + ": r'(W diag m) diag(1/m)"
                                    : st.covered ? "AWQ's r'(W diag m) diag(1/m)"
                                                 : "AWQ at the best r: r'(W diag m) diag(1/m)";
    const std::string names[2] = {"W" + dims, rotate ? "W H, same colour scale" : awq ? awq_name : "r'(W)"};
    const std::vector<float>* data[2] = {&before, &after};
    for (int i = 0; i < 2; ++i) {
        const ImVec2 at(origin.x + static_cast<float>(i) * (cell_w + gap), top);
        DrawTextAt(ImGui::GetWindowDrawList(), at, ImGui::GetColorU32(ImGuiCol_Text), FitText(names[i], cell_w), at.x + cell_w);
        ImGui::SetCursorScreenPos(ImVec2(at.x, at.y + line + 2 * strip));
        HeatmapSource src;
        src.f32 = data[i]->data();
        src.rows = w.rows();
        src.cols = w.cols();
        // The texture's key: the results' generation, the method and which ratio's weight (0: the winner's).
        const std::uint64_t key = (st.method_generation * 8 + static_cast<std::uint64_t>(st.method)) * 2048 +
                                  (at_pick ? static_cast<std::uint64_t>(st.awq_pick) + 1 : 0);
        const HeatmapResult hr = DrawHeatmap(i == 0 ? "##mw0" : "##mw1", st.method_maps[static_cast<std::size_t>(i)], src, key, style,
                                             st.method_view, HeatmapCell{}, ImVec2(cell_w, cell_h));
        image_bottom = std::max(image_bottom, hr.image_max.y);
        if (awq) {
            // Above W's columns: the inputs' mean |x| (what AWQ looks at) and the scales it chose.
            ChannelStrip(m.awq->mean_abs_x, st.method_view, hr.image_min.x, hr.image_max.x, at.y + line, strip - 2.0f, palette::kRange);
            if (!st.covered)
                ChannelStrip(scales, st.method_view, hr.image_min.x, hr.image_max.x, at.y + line + strip, strip - 2.0f,
                             palette::kInside);
        }
        if (hr.hovered.valid()) {
            const std::size_t k = static_cast<std::size_t>(hr.hovered.row * w.cols() + hr.hovered.col);
            ImGui::BeginTooltip();
            ImGui::Text("row %lld, column %lld: %s %s %s", static_cast<long long>(hr.hovered.row), static_cast<long long>(hr.hovered.col),
                        FormatNumber(before[k]).c_str(), Symbols().arrow, FormatNumber(after[k]).c_str());
            if (awq && !st.covered)
                ImGui::Text("mean |x| of channel %lld: %s, scale m = %s", static_cast<long long>(hr.hovered.col),
                            FormatNumber(m.awq->mean_abs_x[static_cast<std::size_t>(hr.hovered.col)]).c_str(),
                            FormatNumber(scales[static_cast<std::size_t>(hr.hovered.col)]).c_str());
            ImGui::EndTooltip();
        }
    }
    if (hist_h > 0) {
        // Under each map its values' histogram, on one range and one count axis: the rotation's effect on the tails.
        const std::int64_t peak = std::max(st.comparison.hist_w.max_count, st.comparison.hist_rotated.max_count);
        const Histogram* hists[2] = {&st.comparison.hist_w, &st.comparison.hist_rotated};
        for (int i = 0; i < 2; ++i) {
            const float x0 = origin.x + static_cast<float>(i) * (cell_w + gap);
            const float y0 = image_bottom + line * 0.5f;
            HistogramBars(*hists[i], peak, x0, x0 + cell_w * 0.8f, y0, y0 + hist_h);
        }
    }
    float bottom = origin.y + size.y;
    if (awq) {
        const float legend_h = DrawLegendRow(ImGui::GetWindowDrawList(), awq_legend, ImVec2(origin.x, image_bottom + 4.0f), maps_w);
        const ImVec2 curve_at = curve_below ? ImVec2(origin.x, std::floor(image_bottom + 4.0f + legend_h + line * 0.5f))
                                            : ImVec2(origin.x + maps_w + gap, top);
        const ImVec2 curve_size = curve_below ? ImVec2(size.x, curve_h) : ImVec2(side, std::min(size.y - (top - origin.y), font * 22.0f));
        ImGui::SetCursorScreenPos(curve_at);
        if (st.covered) ImGui::TextDisabled("%s", FitText("the loss against r: after R", curve_size.x).c_str());
        else AwqCurve(st, *r->awq, curve_size);
        // Under the maps, the curve is drawn after a legend that may wrap: the view reaches as far as it does.
        if (curve_below) bottom = std::max(bottom, curve_at.y + curve_size.y);
    }
    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(size.x, bottom - origin.y));
}

HeatmapStyle SharedValueStyle(const std::vector<const std::vector<float>*>& arrays) {
    double lo = 0, hi = 0;
    for (const std::vector<float>* a : arrays)
        for (float v : *a) lo = std::min(lo, static_cast<double>(v)), hi = std::max(hi, static_cast<double>(v));
    HeatmapStyle style;
    style.colormap = Colormap::Coolwarm;
    style.norm = ColorNorm::Centered(lo, hi, 0.0);
    style.bar_lo = lo;
    style.bar_hi = hi;
    style.max_cell_aspect = 4.0f;
    return style;
}

}  // namespace qs::gui
