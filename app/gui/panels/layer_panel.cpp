#include "gui/panels/layer_panel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "gui/widgets/palette.hpp"
#include "gui/widgets/plot.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

// Layers up to this many multiply-adds are computed on the UI thread (well under a millisecond).
constexpr double kSyncMacs = 1 << 20;
// The alpha curve's points: 0, 0.05, ..., 1.
constexpr int kCurvePoints = 21;
// Above this many multiply-adds a point, the curve is of evenly spaced output rows of W (every output row's
// error has the same form, so their mean estimates the whole's): 21 points of a 4096x4096 W with 16 tokens
// took 14.6 s before the lab's screenshot; a point of this size takes a few milliseconds.
constexpr double kCurveMacs = 1 << 22;
// A panel narrower than this many font sizes lays the maps over the numbers (1280 px at font scale 2 leaves the
// right column about 23 of them); it folds its controls (DrawSettings) where it is also shorter than the
// second many (their seven rows would take more than a third of it): 1280 x 720 at the normal text size keeps
// them open.
constexpr float kCompactBelowFontWidths = 55.0f;
constexpr float kFoldBelowFontHeights = 30.0f;

// W's rows 0, k, 2k, ... with k chosen so that a point of the curve stays within kCurveMacs (W itself when it
// does already).
std::shared_ptr<const Tensor> CurveRows(const std::shared_ptr<const Tensor>& w, std::int64_t tokens) {
    const double per_row = static_cast<double>(tokens) * static_cast<double>(w->cols());
    const auto keep = std::max<std::int64_t>(1, static_cast<std::int64_t>(kCurveMacs / per_row));
    if (keep >= w->rows()) return w;
    const std::int64_t step = (w->rows() + keep - 1) / keep;
    auto sample = std::make_shared<Tensor>();
    const std::int64_t rows = (w->rows() + step - 1) / step;
    sample->shape = {rows, w->cols()};
    sample->values.reserve(static_cast<std::size_t>(rows * w->cols()));
    for (std::int64_t r = 0; r < w->rows(); r += step)
        sample->values.insert(sample->values.end(), w->values.begin() + r * w->cols(), w->values.begin() + (r + 1) * w->cols());
    return sample;
}

// The layer as the settings ask, W as a [out, in] matrix (a 1-D tensor is one output row).
// The smallest and largest of `values` and of `range` (which starts as {0, 0}: 0 is always inside).
LayerPanelState::Computed::Range RangeWithZero(const std::vector<float>& values, LayerPanelState::Computed::Range range = {}) {
    float lo = static_cast<float>(range.lo), hi = static_cast<float>(range.hi);
    for (const float v : values) lo = std::min(lo, v), hi = std::max(hi, v);
    return {std::min(range.lo, static_cast<double>(lo)), std::max(range.hi, static_cast<double>(hi))};
}

LayerPanelState::Computed Compute(const std::shared_ptr<const Tensor>& tensor, const QuantConfig& weights,
                                  const LayerSettings& settings, const TensorKey& key) {
    LayerPanelState::Computed out;
    out.settings = settings;
    out.weights = weights;
    out.tensor = key;
    try {
        if (tensor->rank() == 1) {
            auto row = std::make_shared<Tensor>(*tensor);
            row->shape = {1, tensor->numel()};
            out.w = row;
        } else if (tensor->rank() == 2) {
            out.w = tensor;
        } else {
            throw Error("the layer lab needs a 2-D tensor as W [out, in]; this one is " + shape_to_string(tensor->shape) +
                        " (open or generate a matrix)");
        }
        check_layer_size(settings.inputs.tokens, out.w->cols(), out.w->rows());
        out.x = std::make_shared<Tensor>(generate_layer_inputs(settings.inputs, out.w->cols()));
        LayerConfig config = MakeLayerConfig(settings, weights);
        config.keep_used_factors = true;
        out.result = run_layer(*out.x, *out.w, nullptr, config);
        out.error.resize(out.result.y.size());
        for (std::size_t i = 0; i < out.error.size(); ++i) out.error[i] = std::abs(out.result.y[i] - out.result.reference[i]);
        out.x_range = RangeWithZero(out.x->values);
        out.w_range = RangeWithZero(out.w->values);
        out.y_range = RangeWithZero(out.result.y, RangeWithZero(out.result.reference));
        out.error_range = RangeWithZero(out.error);
    } catch (const std::exception& e) {
        out.error_text = error_text(e);
        out.result = LayerResult{};
        out.x.reset();
    }
    return out;
}

void Show(LayerPanelState& st, LayerPanelState::Computed c) {
    st.shown = std::move(c);
    st.has_shown = true;
    ++st.generation;
}

double Macs(const LayerSettings& s, const Tensor& w) {
    return static_cast<double>(s.inputs.tokens) * static_cast<double>(w.numel());
}

void Request(LayerPanelState& st, const std::shared_ptr<const Tensor>& tensor, const QuantConfig& weights, const TensorKey& key) {
    if (st.started && st.requested == st.settings && st.requested_weights == weights && st.requested_tensor == key) return;
    st.requested = st.settings;
    st.requested_weights = weights;
    st.requested_tensor = key;
    st.started = true;
    if (Macs(st.settings, *tensor) <= kSyncMacs) {
        st.task.cancel();
        Show(st, Compute(tensor, weights, st.settings, key));
        return;
    }
    const LayerSettings settings = st.settings;
    st.task.start([tensor, weights, settings, key](Task<LayerPanelState::Computed>::Context& ctx) {
        LayerPanelState::Computed out = Compute(tensor, weights, settings, key);
        if (!ctx.cancelled()) ctx.publish(std::move(out));
    });
}

// What the alpha curve depends on: everything but alpha (and whether smoothing is on).
std::string CurveKey(const LayerPanelState::Computed& c) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%p %lld %d %d %d %d %.17g %d %.17g %d %llu %.17g", static_cast<const void*>(c.w.get()),
                  static_cast<long long>(c.tensor.tensor_generation), c.settings.activation_bits,
                  static_cast<int>(c.settings.act_granularity), static_cast<int>(c.settings.act_mode), c.settings.split,
                  c.settings.threshold, static_cast<int>(c.settings.inputs.distribution), c.settings.inputs.outlier_scale,
                  static_cast<int>(c.settings.inputs.tokens),
                  static_cast<unsigned long long>(c.settings.inputs.seed * 1000 + c.settings.inputs.outlier_channels),
                  c.weights.manual_scale);
    return std::string(buf) + " " + std::to_string(c.tensor.sample_hash) + " " + c.weights.dtype.name() + " " +
           to_string(c.weights.mode) + " " + to_string(c.weights.granularity) + " " + std::to_string(c.weights.axis) + " " +
           std::to_string(c.weights.group_size) + " " + calibration_label(c.weights);
}

// Starts the MSE-against-alpha curve for the shown layer when it is out of date (activations only).
void RequestCurve(LayerPanelState& st) {
    const LayerPanelState::Computed& c = st.shown;
    if (!st.has_shown || !c.x || c.settings.activation_bits == 0) return;
    const std::string key = CurveKey(c);
    if (key == st.curve_key) return;
    st.curve_key = key;
    LayerConfig config = MakeLayerConfig(c.settings, c.weights);
    config.smooth_alpha.reset();
    const std::shared_ptr<const Tensor> x = c.x, full = c.w;
    st.curve_task.start([x, full, config, key](Task<LayerPanelState::Curve>::Context& ctx) {
        LayerPanelState::Curve curve;
        curve.key = key;
        const std::shared_ptr<const Tensor> w = CurveRows(full, x->rows());  // off the UI thread: it copies rows
        curve.rows = full->rows();
        curve.sampled_rows = w->rows();
        for (int i = 0; i < kCurvePoints; ++i) curve.alphas.push_back(static_cast<double>(i) / (kCurvePoints - 1));
        int started = 0;  // smooth_alpha_curve asks before each point: the points done, for the progress bar
        curve.mse = smooth_alpha_curve(*x, *w, nullptr, config, curve.alphas, [&ctx, &started] {
            ctx.set_progress(static_cast<float>(started++) / (kCurvePoints + 1));
            return ctx.cancelled();
        });
        if (ctx.cancelled()) return;
        curve.plain_mse = run_layer(*x, *w, nullptr, config).output.mse;
        if (!ctx.cancelled() && curve.mse.size() == curve.alphas.size()) ctx.publish(std::move(curve));
    });
}

float CheckboxWidth(const char* label) {
    return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

// The inputs' controls, and the activations' unless `weights_only` (the Method view quantizes W alone).
void DrawControls(LayerSettings& s, std::int64_t in, double max_abs_x, bool weights_only) {
    const float font = ImGui::GetFontSize();
    int dist = static_cast<int>(s.inputs.distribution);
    const char* dists[] = {"x ~ N(0, 1)", "x = ReLU(N(0, 1))", "x = 1, 2, ..., in"};
    ImGui::SetNextItemWidth(font * 10.0f);
    if (ImGui::Combo("##dist", &dist, dists, 3)) s.inputs.distribution = static_cast<InputDistribution>(dist);
    int tokens = static_cast<int>(s.inputs.tokens);
    SameLineOrWrap(font * 8.0f);
    ImGui::SetNextItemWidth(font * 8.0f);
    if (SafeSliderInt("##tokens", &tokens, 1, 256, "%d tokens", ImGuiSliderFlags_AlwaysClamp)) s.inputs.tokens = tokens;
    int seed = static_cast<int>(s.inputs.seed);
    SameLineOrWrap(font * 6.0f);
    ImGui::SetNextItemWidth(font * 6.0f);
    if (SafeSliderInt("##seed", &seed, 0, 99, "seed %d", ImGuiSliderFlags_AlwaysClamp)) s.inputs.seed = static_cast<std::uint64_t>(seed);
    int k = static_cast<int>(std::min<std::int64_t>(s.inputs.outlier_channels, in));
    SameLineOrWrap(font * 8.0f);
    ImGui::SetNextItemWidth(font * 8.0f);
    if (SafeSliderInt("##k", &k, 0, std::min<std::int64_t>(in, 32), "%d outlier ch.", ImGuiSliderFlags_AlwaysClamp))
        s.inputs.outlier_channels = k;
    HelpTooltip("Input channels (chosen from the seed) multiplied by the factor in every token, as LLM activations have.");
    float f = static_cast<float>(s.inputs.outlier_scale);
    SameLineOrWrap(font * 7.0f);
    ImGui::SetNextItemWidth(font * 7.0f);
    if (SafeSliderFloat("##f", &f, 1.0, 200.0, "x %.1f", ImGuiSliderFlags_Logarithmic)) s.inputs.outlier_scale = f;
    s.inputs.outlier_channels = std::min<std::int64_t>(s.inputs.outlier_channels, in);
    if (weights_only) return;

    int act = s.activation_bits == 8 ? 1 : s.activation_bits == 4 ? 2 : 0;
    const char* acts[] = {"activations: none (W8A16)", "activations: int8", "activations: int4"};
    ImGui::SetNextItemWidth(font * 12.0f);
    if (ImGui::Combo("##act", &act, acts, 3)) s.activation_bits = act == 1 ? 8 : act == 2 ? 4 : 0;
    ImGui::BeginDisabled(s.activation_bits == 0);
    int gran = static_cast<int>(s.act_granularity);
    const char* grans[] = {"per tensor", "per token"};
    SameLineOrWrap(font * 7.0f);
    ImGui::SetNextItemWidth(font * 7.0f);
    if (ImGui::Combo("##gran", &gran, grans, 2)) s.act_granularity = static_cast<ActGranularity>(gran);
    int mode = s.act_mode == Mode::Asymmetric ? 1 : 0;
    const char* modes[] = {"symmetric", "asymmetric"};
    SameLineOrWrap(font * 7.5f);
    ImGui::SetNextItemWidth(font * 7.5f);
    if (ImGui::Combo("##mode", &mode, modes, 2)) s.act_mode = mode == 1 ? Mode::Asymmetric : Mode::Symmetric;
    SameLineOrWrap(CheckboxWidth("LLM.int8 split"));
    ImGui::Checkbox("LLM.int8 split", &s.split);
    HelpTooltip("Input columns where some |x| reaches the threshold stay float32 (in x and in W); the rest are quantized "
                "with scales over the kept columns only.");
    float t = static_cast<float>(s.threshold);
    SameLineOrWrap(font * 8.0f);
    ImGui::SetNextItemWidth(font * 8.0f);
    ImGui::BeginDisabled(!s.split);
    if (SafeSliderFloat("##threshold", &t, 0.1, std::max(1.0, max_abs_x * 1.5), "|x| >= %.2f", ImGuiSliderFlags_Logarithmic))
        s.threshold = t;
    ImGui::EndDisabled();
    SameLineOrWrap(CheckboxWidth("SmoothQuant"));
    ImGui::Checkbox("SmoothQuant", &s.smooth);
    HelpTooltip("m_k = max|x_k|^alpha / max|W_k|^(1 - alpha): x_k / m_k and W_k * m_k before both are quantized.");
    float a = static_cast<float>(s.alpha);
    SameLineOrWrap(font * 8.0f);
    ImGui::SetNextItemWidth(font * 8.0f);
    ImGui::BeginDisabled(!s.smooth);
    if (SafeSliderFloat("##alpha", &a, 0.0, 1.0, "alpha %.2f", ImGuiSliderFlags_AlwaysClamp)) s.alpha = a;
    ImGui::EndDisabled();
    ImGui::EndDisabled();
}

// The settings in words, for the folded controls: the inputs, and the activations' quantization (empty in the
// Method view, which quantizes W alone).
std::string InputsSummary(const LayerSettings& s) {
    const char* dists[] = {"x ~ N(0, 1)", "x = ReLU(N(0, 1))", "x = 1, 2, ..., in"};
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s, %lld tokens, %lld outlier ch. x %.1f, seed %llu",
                  dists[std::clamp(static_cast<int>(s.inputs.distribution), 0, 2)], static_cast<long long>(s.inputs.tokens),
                  static_cast<long long>(s.inputs.outlier_channels), s.inputs.outlier_scale,
                  static_cast<unsigned long long>(s.inputs.seed));
    return buf;
}

std::string ActivationsSummary(const LayerSettings& s) {
    if (s.activation_bits == 0) return "activations: none (W8A16)";
    std::string out = "activations: int" + std::to_string(s.activation_bits) +
                      (s.act_granularity == ActGranularity::Token ? " per token" : " per tensor") +
                      (s.act_mode == Mode::Asymmetric ? ", asymmetric" : ", symmetric");
    char buf[80];
    if (s.split) {
        std::snprintf(buf, sizeof buf, ", LLM.int8 split at |x| >= %.2f", s.threshold);
        out += buf;
    }
    if (s.smooth) {
        std::snprintf(buf, sizeof buf, ", SmoothQuant alpha %.2f", s.alpha);
        out += buf;
    }
    return out;
}

// The controls, open where the panel is wide or tall for its text; narrow and short (a projector's big font,
// where their seven rows pushed the maps to the bottom of the first screen) folded under a header that says what they are set
// to (the activations, what a layer lesson's steps change, then the inputs under it), which a click opens.
void DrawSettings(LayerSettings& s, std::int64_t in, double max_abs_x, bool weights_only) {
    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (avail.x >= font * kCompactBelowFontWidths || avail.y >= font * kFoldBelowFontHeights) {
        DrawControls(s, in, max_abs_x, weights_only);
        return;
    }
    const std::string inputs = InputsSummary(s);
    const std::string head = weights_only ? inputs : ActivationsSummary(s);
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetFrameHeight() - ImGui::GetStyle().FramePadding.x * 2.0f;
    const bool open = ImGui::CollapsingHeader((FitText(head, room) + "###layer-settings").c_str());
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s%s%s\n(click to %s the controls)", head.c_str(), weights_only ? "" : "\n", weights_only ? "" : inputs.c_str(),
                          open ? "fold" : "open");
    if (open) {
        DrawControls(s, in, max_abs_x, weights_only);
    } else if (!weights_only) {
        ImGui::TextDisabled("%s", FitText(inputs, ImGui::GetContentRegionAvail().x).c_str());  // one line (the seed last)
    }
}

}  // namespace

LayerSettings LayerSettingsFromLesson(const LessonLayer& layer) {
    LayerSettings s;
    s.inputs = layer.inputs;
    s.activation_bits = layer.activation_bits;
    s.act_granularity = layer.act_granularity;
    s.act_mode = layer.act_mode;
    s.split = layer.outlier_threshold.has_value();
    s.threshold = layer.outlier_threshold.value_or(s.threshold);
    s.smooth = layer.smooth_alpha.has_value();
    s.alpha = layer.smooth_alpha.value_or(s.alpha);
    return s;
}

void ApplyLessonMethod(LayerPanelState& st, const LessonLayer& layer) {
    st.show_method = layer.method.has_value();
    st.method.covered = layer.method.has_value();
    if (!layer.method) return;
    st.method.method = *layer.method;
    st.method.act_order = layer.act_order;
    st.method.target = layer.columns;
    st.method.awq_pick = -1;  // AWQ's winner, covered until R
    st.method.awq_pick_after.reset();
}

void HoldAwqPick(LayerPanelState& st, int pick) {
    st.method.awq_pick = pick;
    st.method.awq_pick_after = st.generation;
    st.started = false;  // the layer is run again (a new generation) even where the session's is the same
}

LayerConfig MakeLayerConfig(const LayerSettings& s, const QuantConfig& weights) {
    ActivationSettings a{s.activation_bits, s.act_granularity, s.act_mode, std::nullopt, std::nullopt};
    if (s.split) a.outlier_threshold = s.threshold;
    if (s.smooth) a.smooth_alpha = s.alpha;
    return make_layer_config(weights, a);
}

bool LayerBusy(const LayerPanelState& st) {
    return st.task.running() || st.curve_task.running() || (st.show_method && MethodBusy(st.method));
}

void FinishLayer(LayerPanelState& st) {
    st.task.wait();
    if (std::optional<LayerPanelState::Computed> c = st.task.take()) Show(st, std::move(*c));
    RequestCurve(st);
    st.curve_task.wait();
    if (std::optional<LayerPanelState::Curve> c = st.curve_task.take()) st.curve = std::move(*c);
    if (st.show_method && st.has_shown && st.shown.x) FinishMethod(st.method, st.shown.x, st.shown.w, st.shown.weights, st.generation);
}

void DrawLayerPanel(LayerPanelState& st, const QuantView& view, const std::shared_ptr<const Tensor>& tensor) {
    ImGui::PushID(&st);
    if (view.valid() && !view.tensor) {
        // y = x W^T is computed densely: W's float32 copy and its dequantized twin, and one more per alpha of
        // the SmoothQuant sweep, 4 bytes an element each, are what a mapped tensor must not be copied into.
        ImGui::TextWrapped("%s", SmallTensorNote("The layer lab",
                                                 "multiplies dense float32 copies of W (the weights, their "
                                                 "dequantized twin, one more per alpha of the SmoothQuant sweep: "
                                                 "4 bytes an element each), so it takes tensors of up to " +
                                                     std::to_string(kInMemoryElements) + " elements",
                                                 *view.data).c_str());
        ImGui::PopID();
        return;
    }
    if (!view.valid() || !tensor || tensor.get() != view.tensor) {
        ImGui::TextDisabled("No tensor yet.");
        ImGui::PopID();
        return;
    }
    const std::int64_t in = tensor->cols();
    double max_abs_x = 1.0;
    if (st.has_shown && st.shown.x)
        for (float v : st.shown.x->values) max_abs_x = std::max(max_abs_x, static_cast<double>(std::abs(v)));
    if (ImGui::RadioButton("outputs", !st.show_method)) st.show_method = false;
    ImGui::SameLine();
    if (ImGui::RadioButton("method: GPTQ, AWQ, rotation", st.show_method)) st.show_method = true;
    HelpTooltip("The methods that 4-bit models are made with, on this layer's W with x as calibration data (weights only).");
    DrawSettings(st.settings, in, max_abs_x, st.show_method);
    Request(st, tensor, *view.config, TensorKeyOf(view));
    if (std::optional<LayerPanelState::Computed> c = st.task.take()) Show(st, std::move(*c));
    RequestCurve(st);
    if (std::optional<LayerPanelState::Curve> c = st.curve_task.take()) st.curve = std::move(*c);
    if (st.task.running()) {
        ImGui::SameLine();
        ImGui::TextDisabled("computing...");
    }
    if (!st.has_shown || !st.shown.error_text.empty()) {
        if (st.has_shown) ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "%s", st.shown.error_text.c_str());
        ImGui::PopID();
        return;
    }
    if (st.show_method) {
        DrawMethodPanel(st.method, st.shown.x, st.shown.w, st.shown.weights, st.generation);
        ImGui::PopID();
        return;
    }
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    if (avail.x >= font * kCompactBelowFontWidths && avail.y >= font * 16.0f) {
        // Wide: the heatmaps, and the numbers with the alpha curve at their right.
        const float side_w = std::max(font * 24.0f, std::floor(avail.x * 0.34f));
        const ImVec2 origin = ImGui::GetCursorScreenPos();
        DrawLayerMaps(st, ImVec2(avail.x - side_w - font, avail.y));
        ImGui::SetCursorScreenPos(ImVec2(origin.x + avail.x - side_w, origin.y));
        DrawLayerSide(st, ImVec2(side_w, avail.y));
        ImGui::SetCursorScreenPos(origin);
        ImGui::Dummy(ImVec2(avail.x, std::max(avail.y, 1.0f)));
    } else {
        // Narrow (a projector's big font): one under the other, scrolled. The maps take what the first screen
        // leaves the metrics table, so that it shows whole under them; where the two do not fit, the maps take
        // the whole screen and the table starts at its edge (a table cut in half at the fold hid its numbers).
        ImGui::BeginChild("##layer-scroll", ImVec2(0, 0), false);
        const ImVec2 room = ImGui::GetContentRegionAvail();
        const float table_h = LayerTableHeight(st) + ImGui::GetStyle().ItemSpacing.y;
        const float maps_h = room.y - table_h >= LayerMapsMinHeight() ? room.y - table_h : std::max(LayerMapsMinHeight(), room.y);
        DrawLayerMaps(st, ImVec2(room.x, std::floor(maps_h)));
        DrawLayerSide(st, ImVec2(room.x, font * 18.0f));
        ImGui::EndChild();
    }
    ImGui::PopID();
}

}  // namespace qs::gui
