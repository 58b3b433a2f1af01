#include "gui/panels/compare_panel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "gui/document/recompute.hpp"
#include "gui/document/stopwatch.hpp"
#include "gui/widgets/colormap.hpp"
#include "gui/widgets/palette.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "quantscope/error.hpp"
#include "quantscope/histogram.hpp"

namespace qs::gui {
namespace {


ComparePanelState::Computed Compute(const std::shared_ptr<const TensorData>& data, const QuantConfig& c,
                                    const TensorKey& key) {
    const Stopwatch clock;
    ComparePanelState::Computed out;
    out.config = c;
    out.tensor = key;
    try {
        check_config(c, data->shape());
        out.params = ParamsFor(*data, c);
        out.params.keep_values_alive(data);
        out.overview = quantize_overview(data->view, out.params, c, data->values.grid);
    } catch (const std::exception& e) {
        out.error = error_text(e);
        out.params = QuantParams{};
        out.overview = QuantOverview{};
    }
    out.ms = clock.ms();
    return out;
}

// B as a view the figure's tile reader understands (the document's tensor, B's config, params and overview).
QuantView ViewOfB(const ComparePanelState& st, const QuantView& a) {
    QuantView b = a;
    b.tensor = nullptr;
    b.config = &st.shown.config;
    b.params = &st.shown.params;
    b.overview = &st.shown.overview;
    b.computed_metrics = nullptr;
    b.generation = st.b_generation;
    return b;
}

void Show(ComparePanelState& st, ComparePanelState::Computed c) {
    st.shown = std::move(c);
    st.has_shown = true;
    ++st.b_generation;
}

void InitB(ComparePanelState& st, const QuantConfig& a) {
    st.b = a;
    if (st.b.mode == Mode::Manual) {
        st.b.mode = Mode::Asymmetric;
        st.b.granularity = Granularity::Tensor;
    }
    st.b.dtype.bits = a.dtype.bits == 4 ? 8 : 4;
    st.b_initialized = true;
}

// The compact selector of B: returns true when it changed.
bool DrawSelector(ComparePanelState& st, const TensorData& t) {
    bool changed = false;
    const float font = ImGui::GetFontSize();
    QuantConfig& b = st.b;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("B:");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5.0f);
    if (ImGui::BeginCombo("##dtype", b.dtype.name().c_str())) {
        for (int sign = 1; sign >= 0; --sign) {
            for (int bits = 2; bits <= 16; ++bits) {
                IntType d;
                d.is_signed = sign == 1;
                d.bits = bits;
                if (ImGui::Selectable(d.name().c_str(), d == b.dtype)) {
                    b.dtype = d;
                    changed = true;
                }
            }
        }
        ImGui::EndCombo();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 7.0f);
    int mode = b.mode == Mode::Symmetric ? 1 : 0;
    const char* modes[] = {"asymmetric", "symmetric"};
    if (ImGui::Combo("##mode", &mode, modes, 2)) {
        b.mode = mode == 1 ? Mode::Symmetric : Mode::Asymmetric;
        changed = true;
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 5.5f);
    int gran = static_cast<int>(b.granularity);
    const char* grans[] = {"tensor", "channel", "group"};
    if (ImGui::Combo("##granularity", &gran, grans, 3)) {
        b.granularity = static_cast<Granularity>(gran);
        if (b.granularity == Granularity::Group && b.group_size < 1) b.group_size = std::min<std::int64_t>(32, t.cols());
        changed = true;
    }
    if (b.granularity == Granularity::Channel && t.rank() > 1) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(font * 4.0f);
        if (SafeSliderInt("##axis", &b.axis, 0, t.rank() - 1, "axis %d", ImGuiSliderFlags_AlwaysClamp)) changed = true;
    } else if (b.granularity == Granularity::Group) {
        // Divisors of the last dimension: any other size is an error.
        std::vector<std::int64_t> sizes;
        for (std::int64_t g = 1; g <= t.cols(); ++g)
            if (t.cols() % g == 0) sizes.push_back(g);
        ImGui::SameLine();
        ImGui::SetNextItemWidth(font * 5.5f);
        const std::string label = "size " + std::to_string(b.group_size);
        if (ImGui::BeginCombo("##group", label.c_str())) {
            for (std::int64_t g : sizes) {
                if (ImGui::Selectable(std::to_string(g).c_str(), g == b.group_size)) {
                    b.group_size = g;
                    changed = true;
                }
            }
            ImGui::EndCombo();
        }
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 8.0f);
    const std::string cal = calibration_label(b);
    if (ImGui::BeginCombo("##calibration", cal.c_str())) {
        struct Option {
            Calibration c;
            double p;
            const char* label;
        };
        const Option options[] = {{Calibration::MinMax, 0, "minmax"},
                                  {Calibration::Percentile, 99.9, "percentile:99.9"},
                                  {Calibration::Percentile, 99.99, "percentile:99.99"},
                                  {Calibration::Mse, 0, "mse"}};
        for (const Option& o : options) {
            const bool sel = b.calibration == o.c && (o.c != Calibration::Percentile || b.percentile == o.p);
            if (ImGui::Selectable(o.label, sel)) {
                b.calibration = o.c;
                if (o.c == Calibration::Percentile) b.percentile = o.p;
                changed = true;
            }
        }
        ImGui::EndCombo();
    }
    if (b.mode == Mode::Asymmetric) {
        ImGui::SameLine();
        if (ImGui::Checkbox("recompute s", &b.recompute_scale)) changed = true;
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("When z is clamped, recompute s so that [r_min, r_max] stays representable.");
    }
    return changed;
}

enum class Better { Lower, Higher, None };

struct MetricRow {
    const char* name;
    Better better;
    bool has_a, has_b;
    double a, b;
    bool integer;
    std::string none_a = {}, none_b = {};  // shown instead of a missing value (an SQNR's word), else a dash
};

std::string Fmt(double v, bool integer) { return integer ? FormatInteger(v) : FormatNumber(v); }

void DrawMetricsTable(const Metrics& a, const Metrics& b) {
    const std::vector<MetricRow> rows = {
        {"MSE", Better::Lower, true, true, a.mse, b.mse, false},
        {"RMSE", Better::Lower, true, true, a.rmse, b.rmse, false},
        {"MAE", Better::Lower, true, true, a.mae, b.mae, false},
        {"max |e|", Better::Lower, true, true, a.max_abs_error, b.max_abs_error, false},
        {"SQNR (dB)", Better::Higher, a.sqnr_db.has_value(), b.sqnr_db.has_value(), a.sqnr_db.value_or(0),
         b.sqnr_db.value_or(0), false, SqnrWord(comparable_sqnr_db(a)), SqnrWord(comparable_sqnr_db(b))},
        {"clipped", Better::Lower, true, true, static_cast<double>(a.clipped), static_cast<double>(b.clipped), true},
        {"levels used", Better::None, true, true, static_cast<double>(a.levels_used), static_cast<double>(b.levels_used), true},
    };
    const Sym sym = Symbols();
    const ImGuiTableFlags flags = ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_RowBg |
                                  ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable("##diff", 4, flags)) return;
    ImGui::TableSetupColumn("metric");
    ImGui::TableSetupColumn("A");
    ImGui::TableSetupColumn("B");
    const std::string diff = std::string("B ") + sym.minus + " A";
    ImGui::TableSetupColumn(diff.c_str());
    ImGui::TableHeadersRow();
    for (const MetricRow& r : rows) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(r.name);
        ImGui::TableNextColumn();
        if (r.has_a) ImGui::TextUnformatted(Fmt(r.a, r.integer).c_str());
        else ImGui::TextDisabled("%s", r.none_a.empty() ? sym.dash : r.none_a.c_str());
        ImGui::TableNextColumn();
        if (r.has_b) ImGui::TextUnformatted(Fmt(r.b, r.integer).c_str());
        else ImGui::TextDisabled("%s", r.none_b.empty() ? sym.dash : r.none_b.c_str());
        ImGui::TableNextColumn();
        if (!r.has_a || !r.has_b) {
            ImGui::TextDisabled("%s", sym.dash);
            continue;
        }
        const double d = r.b - r.a;
        std::string text = (d > 0 ? "+" : d < 0 ? sym.minus : "") + Fmt(std::fabs(d), r.integer);
        if (r.better == Better::Lower && r.a > 0.0 && d != 0.0 && !r.integer) {
            // Relative change: a percentage when modest, a factor when B is several times A.
            const double ratio = r.b / r.a;
            char rel[32];
            if (ratio >= 2.0 || ratio <= 0.5) std::snprintf(rel, sizeof rel, " (%s%.3g)", sym.times, ratio);
            else std::snprintf(rel, sizeof rel, " (%+.0f%%)", 100.0 * d / r.a);
            text += rel;
        }
        const bool better = (r.better == Better::Lower && d < 0) || (r.better == Better::Higher && d > 0);
        const bool worse = (r.better == Better::Lower && d > 0) || (r.better == Better::Higher && d < 0);
        if (d == 0.0 || r.better == Better::None) ImGui::TextDisabled("%s", text.c_str());
        else ImGui::TextColored(better ? BetterTextColor() : WorseTextColor(), "%s%s", text.c_str(), better ? "  better" : worse ? "  worse" : "");
    }
    ImGui::EndTable();
}

void Tooltip(const QuantView& qv, const ComparePanelState& st, std::int64_t flat) {
    const Sym sym = Symbols();
    ImGui::BeginTooltip();
    const ElementTrace a = TraceOf(qv, flat);
    ImGui::Text("Element %s: r = %s", index_to_string(qv.data->shape(), flat).c_str(), FormatNumber(a.r).c_str());
    ImGui::Text("A: q = %d, r%s = %s, |e| = %s", a.code, sym.prime, FormatNumber(a.dequantized).c_str(),
                FormatNumber(a.error).c_str());
    const ElementTrace b = TraceOf(ViewOfB(st, qv), flat);
    ImGui::Text("B: q = %d, r%s = %s, |e| = %s", b.code, sym.prime, FormatNumber(b.dequantized).c_str(),
                FormatNumber(b.error).c_str());
    ImGui::EndTooltip();
}

}  // namespace

std::string ConfigSummary(const QuantConfig& c) {
    std::string s = c.dtype.name() + " " + to_string(c.mode);
    if (c.mode == Mode::Manual) return s;
    if (c.granularity == Granularity::Channel) s += ", channel axis " + std::to_string(c.axis);
    else if (c.granularity == Granularity::Group) s += ", group " + std::to_string(c.group_size);
    else s += ", per tensor";
    s += ", " + calibration_label(c);
    if (c.mode == Mode::Asymmetric && c.recompute_scale) s += ", recompute s";
    return s;
}

bool CompareBusy(const ComparePanelState& st) { return st.task.running(); }

void FinishCompare(ComparePanelState& st) {
    st.task.wait();
    if (std::optional<ComparePanelState::Computed> c = st.task.take()) Show(st, std::move(*c));
}

namespace {

// (Re)computes B when its config or the tensor changed: at once for a small tensor, else in the background.
void RequestB(ComparePanelState& st, const std::shared_ptr<const TensorData>& data, const TensorKey& key) {
    if (st.started && key == st.requested_tensor && st.b == st.requested) return;
    st.requested = st.b;
    st.requested_tensor = key;
    st.started = true;
    if (data->numel() <= kCompareSyncElements) {
        st.task.cancel();
        Show(st, Compute(data, st.b, key));
        return;
    }
    std::shared_ptr<const TensorData> owner = data;
    const QuantConfig c = st.b;
    st.task.start([owner, c, key](Task<ComparePanelState::Computed>::Context& ctx) {
        ComparePanelState::Computed out = Compute(owner, c, key);
        if (!ctx.cancelled()) ctx.publish(std::move(out));
    });
}

// B's state when it is not ready to show (computing, failed); true when it is.
bool BReady(const ComparePanelState& st, const TensorData& t, const TensorKey& key) {
    if (st.task.running()) {
        ImGui::SameLine();
        if (t.floats) ImGui::TextDisabled("  computing B...");
        else ImGui::TextDisabled("  computing B: a pass over the file's %s values, %.0f s", FormatInteger(t.numel()).c_str(),
                                 st.task.elapsed_seconds());
    }
    if (st.has_shown && !st.shown.error.empty()) {
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(WarningColor()), "B: %s", st.shown.error.c_str());
        return false;
    }
    const bool ready = st.has_shown && st.shown.tensor == key && st.shown.overview.metrics.count == t.numel();
    if (!ready) ImGui::TextDisabled("Quantizing B...");
    return ready;
}

// Title over a heatmap, two lines: which setting, then what is shown.
void DrawMapTitle(const std::string& title, double max_error, float x, float width, float image_centre, float top,
                  float bottom) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->PushClipRect(ImVec2(x, top), ImVec2(x + width, bottom), true);
    const std::string shown = FitText(title, width);  // the selectors above say the rest
    const ImVec2 ts = ImGui::CalcTextSize(shown.c_str());
    dl->AddText(ImVec2(std::round(std::max(x, image_centre - ts.x * 0.5f)), std::round(top)), ImGui::GetColorU32(ImGuiCol_Text),
                shown.c_str());
    const std::string sub = std::string("error |r ") + Symbols().minus + " r" + Symbols().prime + "|, max " + FormatNumber(max_error);
    const ImVec2 ss = ImGui::CalcTextSize(sub.c_str());
    dl->AddText(ImVec2(std::round(std::max(x, image_centre - ss.x * 0.5f)), std::round(top + ImGui::GetTextLineHeightWithSpacing())),
                ImGui::GetColorU32(ImGuiCol_TextDisabled), sub.c_str());
    dl->PopClipRect();
}

// A's and B's error heatmaps side by side on one color scale, `width` wide from `origin`; returns the bottom.
float DrawErrorMaps(ComparePanelState& st, const QuantView& qv, ImVec2 origin, float width, float height) {
    const TensorData& t = *qv.data;
    const float font = ImGui::GetFontSize();
    const float gap = std::round(font * 1.0f);
    const float title_h = ImGui::GetTextLineHeightWithSpacing() * 2.0f;
    float slider_h = 0.0f;
    if (t.rank() == 3) {
        const SliderIntLimits slices = SafeSliderIntLimits(0, t.slices() - 1);
        st.slice = std::clamp(st.slice, slices.lo, slices.hi);
        ImGui::SetNextItemWidth(font * 10.0f);
        SafeSliderInt("##slice", &st.slice, slices.lo, slices.hi, "slice %d", ImGuiSliderFlags_AlwaysClamp);
        slider_h = ImGui::GetFrameHeightWithSpacing();
    }
    const float heat_h = std::max(font * 4.0f, height - title_h - slider_h - font * 0.5f);

    // One color scale for both: 0 .. the larger max error.
    const double max_a = qv.metrics().max_abs_error, max_b = st.shown.overview.metrics.max_abs_error;
    st.shared_max = std::max(max_a, max_b);
    HeatmapStyle style;
    style.colormap = Colormap::Coolwarm;
    style.norm = ColorNorm::Centered(0.0, st.shared_max, 0.0);
    style.bar_lo = 0.0;
    style.bar_hi = st.shared_max;
    style.reduction = Reduction::Max;  // an outlier's error survives zooming out
    style.annotate = AnnotateMode::Auto;  // a small tensor's errors are printed, as in the figure
    const float cb_w = HeatmapColorbarWidth(style, heat_h);
    const float col_w = std::floor((width - gap - cb_w) * 0.5f);

    const std::int64_t rows = t.rows(), cols = t.cols(), off = static_cast<std::int64_t>(st.slice) * rows * cols;
    std::array<HeatmapSource, 2> src;
    st.a_tiles.bind(qv, st.slice);
    st.b_tiles.bind(ViewOfB(st, qv), st.slice);
    src[0].tiles = st.a_tiles.tiles(FigureTiles::Error);
    src[1].tiles = st.b_tiles.tiles(FigureTiles::Error);
    for (HeatmapSource& s : src) {
        s.rows = rows;
        s.cols = cols;
    }
    const std::string titles[2] = {"A: " + ConfigSummary(*qv.config), "B: " + ConfigSummary(st.shown.config)};
    const std::uint64_t gens[2] = {qv.generation, st.b_generation};
    const float heat_top = origin.y + slider_h + title_h;
    std::int64_t hovered = -1;
    for (int i = 0; i < 2; ++i) {
        HeatmapStyle s = style;
        s.colorbar = i == 1 ? ColorbarMode::Show : ColorbarMode::None;
        const float x = std::floor(origin.x + i * (col_w + gap));
        const float w = col_w + (i == 1 ? cb_w : 0.0f);
        ImGui::SetCursorScreenPos(ImVec2(x, heat_top));
        const HeatmapResult r = DrawHeatmap(i == 0 ? "##errA" : "##errB", st.maps[static_cast<std::size_t>(i)], src[i], gens[i], s,
                                            st.view, HeatmapCell{}, ImVec2(w, heat_h));
        st.image_min[static_cast<std::size_t>(i)] = r.image_min;
        st.image_max[static_cast<std::size_t>(i)] = r.image_max;
        if (r.hovered.valid()) hovered = off + r.hovered.row * cols + r.hovered.col;
        DrawMapTitle(titles[i], i == 0 ? max_a : max_b, x, w, (r.image_min.x + r.image_max.x) * 0.5f, heat_top - title_h,
                     heat_top);
    }
    if (hovered >= 0) Tooltip(qv, st, hovered);
    return heat_top + heat_h;
}

}  // namespace

void DrawComparePanel(ComparePanelState& st, const QuantView& qv, const std::shared_ptr<const TensorData>& data) {
    ImGui::PushID(&st);
    if (!qv.valid() || !data || data.get() != qv.data) {
        ImGui::TextDisabled("No result yet.");
        ImGui::PopID();
        return;
    }
    const TensorData& t = *data;
    if (!st.b_initialized) InitB(st, *qv.config);
    st.b.rounding = qv.config->rounding;
    st.b.overflow = qv.config->overflow;
    DrawSelector(st, t);
    const TensorKey key = TensorKeyOf(qv);
    RequestB(st, data, key);
    if (std::optional<ComparePanelState::Computed> c = st.task.take()) Show(st, std::move(*c));
    if (!BReady(st, t, key)) {
        ImGui::PopID();
        return;
    }

    const float font = ImGui::GetFontSize();
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float table_w = std::max(font * 33.0f, std::floor(avail.x * 0.33f));  // "+0.0225 (×293) worse" fits
    const float maps_w = std::max(font * 16.0f, avail.x - table_w - font);
    const float bottom = DrawErrorMaps(st, qv, origin, maps_w, avail.y);

    ImGui::SetCursorScreenPos(ImVec2(origin.x + maps_w + font, origin.y));
    ImGui::BeginGroup();
    ImGui::TextUnformatted("Metrics: B against A");
    ImGui::TextDisabled("one color scale: 0 .. %s", FormatNumber(st.shared_max).c_str());
    DrawMetricsTable(qv.metrics(), st.shown.overview.metrics);
    ImGui::EndGroup();

    ImGui::SetCursorScreenPos(origin);
    ImGui::Dummy(ImVec2(avail.x, std::max(bottom - origin.y, 1.0f)));
    ImGui::PopID();
}

}  // namespace qs::gui
