#include "gui/panels/figure_styles.hpp"

#include <algorithm>
#include <cmath>

#include "gui/widgets/text.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/histogram.hpp"
#include "quantscope/quantize.hpp"

namespace qs::gui {
void UpdateRanges(FigurePanelState& st, const QuantView& qv) {
    const TensorKey key = TensorKeyOf(qv);
    if (!st.orig_valid || key != st.tensor_key) {
        // The tensor's range and where its extremes first occur came with its overview pass.
        st.orig_lo = qv.data->values.lo;
        st.orig_hi = qv.data->values.hi;
        st.orig_argmin = qv.data->values.argmin;
        st.orig_argmax = qv.data->values.argmax;
        st.tensor_key = key;
        ++st.tensor_gen;
        st.orig_valid = true;
        st.ranges_valid = false;
    }
    if (st.ranges_valid && st.ranges_generation == qv.generation) return;
    // The range of r' came with the quantization's pass (for one (s, z): r' of the smallest and largest code).
    st.deq_lo = qv.overview->dequantized_lo;
    st.deq_hi = qv.overview->dequantized_hi;
    st.err_hi = qv.metrics().max_abs_error;
    st.ranges_generation = qv.generation;
    st.ranges_valid = true;
}

namespace {

// Value range -> colormap normalisation. A diverging map over data of both signs is centered on 0 (two
// slopes): neutral means zero, blue negative, red positive, and the extremes get the full colors. Data of one
// sign uses the whole map over its range (as seaborn does), or a block of values around 100 would be one flat
// red.
void SetValueScale(HeatmapStyle& s, Colormap map, double lo, double hi) {
    s.colormap = map;
    s.bar_lo = lo;
    s.bar_hi = hi;
    s.norm = IsDiverging(map) && lo < 0.0 && hi > 0.0 ? ColorNorm::Centered(lo, hi, 0.0) : ColorNorm::Linear(lo, hi);
}

// Decimals for printed reals: the lessons' 2, or enough for two significant digits of the largest magnitude
// (errors of a randn tensor are ~0.01: ".2f" would print a wall of "0.01" and "0.00"). At most 5, then
// kMaxCellDecimals + 1, which prints in "%.3g".
int DecimalsFor(double max_abs) {
    if (!(max_abs > 0.0) || max_abs >= 0.1) return 2;
    return std::min(kMaxCellDecimals + 1, std::max(2, 1 - static_cast<int>(std::floor(std::log10(max_abs)))));
}

}  // namespace

PanelStyles MakeStyles(const FigurePanelState& st, const FigureLook& look, const QuantView& qv, bool white_readable) {
    const FigurePanelSettings& set = st.settings;
    std::int32_t code_lo = 0, code_hi = 0;
    code_range(*qv.config, code_lo, code_hi);  // int<N>: [q_min, q_max]; a format: its codes' range
    const double qmin = code_lo, qmax = code_hi;
    double olo = st.orig_lo, ohi = st.orig_hi, dlo = st.deq_lo, dhi = st.deq_hi;
    if (set.shared_range) {
        olo = dlo = std::min(st.orig_lo, st.deq_lo);
        ohi = dhi = std::max(st.orig_hi, st.deq_hi);
    }
    PanelStyles p;
    BlockGrid blocks;
    if (look.block_outlines && qv.params->block_count > 1) {
        blocks.offset = static_cast<std::int64_t>(st.slice) * qv.data->rows() * qv.data->cols();
        blocks.stride = qv.params->block_stride;
        blocks.count = qv.params->block_count;
    }
    for (HeatmapStyle& s : p.styles) {
        s.max_cell_aspect = FigureCellAspect(qv.data->rows(), qv.data->cols(), look.max_cell_aspect);
        s.annotation_height_share = look.annotation_height_share;
        s.annotate = set.annotate;
        s.annotation_font = st.annotation_font;
        s.annotation_rule = look.annotation_rule;
        s.annotation_min_px = look.annotation_min_px;
        s.blocks = blocks;
    }
    HeatmapStyle& o = p.styles[kOriginal];
    HeatmapStyle& q = p.styles[kQuantized];
    HeatmapStyle& d = p.styles[kDequantized];
    HeatmapStyle& e = p.styles[kError];
    q.format = CellFormat::Integer;
    e.reduction = Reduction::Max;  // an outlier's error must survive zooming out

    if (set.lesson_look) {
        // The helper's figure. It draws original and error white with printed values; white carries no
        // information once the cells are too small to print, so then those two fall back to coolwarm.
        if (white_readable) {
            o.colormap = e.colormap = Colormap::White;
            o.colorbar = e.colorbar = ColorbarMode::Reserve;
            if (o.annotate == AnnotateMode::Off) o.annotate = e.annotate = AnnotateMode::Auto;
        } else {
            SetValueScale(o, Colormap::Coolwarm, olo, ohi);
            e.colormap = Colormap::Coolwarm;
            e.norm = ColorNorm::Centered(0.0, st.err_hi, 0.0);
            e.bar_lo = 0.0;
            e.bar_hi = st.err_hi;
        }
        q.colormap = Colormap::Coolwarm;
        q.norm = ColorNorm::Linear(qmin, qmax);
        q.bar_lo = qmin;
        q.bar_hi = qmax;
        // The helper leaves vmin=0, vmax=1 here (every value above 1 saturates red); the original's range is
        // what the figure means to show, so use that.
        SetValueScale(d, Colormap::Coolwarm, dlo, dhi);
        return p;
    }

    const Colormap map = set.colormap;
    o.decimals = d.decimals = DecimalsFor(std::max(std::fabs(olo), std::fabs(ohi)));
    e.decimals = DecimalsFor(st.err_hi);
    SetValueScale(o, map, olo, ohi);
    SetValueScale(d, map, dlo, dhi);
    q.colormap = map;
    q.bar_lo = qmin;
    q.bar_hi = qmax;
    q.norm = ColorNorm::Linear(qmin, qmax);
    if (IsDiverging(map) && qv.params->zero_point.size() == 1) {
        // Code z stands for the real 0: make it the neutral color, so that a code has the color of the value
        // it stands for in the original panel.
        q.norm = ColorNorm::Centered(qmin, qmax, qv.params->zero_point[0]);
    }
    // Error >= 0: with a diverging map 0 is the neutral middle and the largest error the full red.
    e.colormap = map;
    e.norm = IsDiverging(map) ? ColorNorm::Centered(0.0, st.err_hi, 0.0) : ColorNorm::Linear(0.0, st.err_hi);
    e.bar_lo = 0.0;
    e.bar_hi = st.err_hi;
    return p;
}

bool HasCenteredLegend(const HeatmapStyle& s) {
    return s.colorbar == ColorbarMode::Show && s.norm.centered && s.bar_lo < s.norm.center && s.norm.center < s.bar_hi;
}

std::string CenteredLegend(const HeatmapStyle& s, int panel, bool short_form) {
    const std::string on = panel == kQuantized ? "centred on z = " + FormatInteger(s.norm.center) : "centred on 0";
    return short_form ? on : on + ": each side scaled to its extreme";
}

std::vector<std::string> ColorbarLegendParts(const PanelStyles& ps, const std::array<bool, 4>& covered) {
    const char* names[4] = {"original", "quantized", "dequantized", "error"};
    std::vector<std::string> centres;            // each distinct centre, in panel order
    std::vector<std::vector<std::string>> whose;  // the panels centred there
    for (int i = 0; i < 4; ++i) {
        const HeatmapStyle& s = ps.styles[static_cast<std::size_t>(i)];
        if (!HasCenteredLegend(s) || covered[static_cast<std::size_t>(i)]) continue;  // its centre (z) is covered
        const std::string on = CenteredLegend(s, i, true);
        const std::size_t k = static_cast<std::size_t>(std::find(centres.begin(), centres.end(), on) - centres.begin());
        if (k == centres.size()) {
            centres.push_back(on);
            whose.emplace_back();
        }
        whose[k].push_back(names[i]);
    }
    std::vector<std::string> parts;
    for (std::size_t k = 0; k < centres.size(); ++k) {
        std::string p;
        for (std::size_t j = 0; j < whose[k].size(); ++j)
            p += (j == 0 ? "" : j + 1 == whose[k].size() ? " and " : ", ") + whose[k][j];
        parts.push_back(p + (whose[k].size() > 1 ? " bars " : " bar ") + centres[k] + ";");
    }
    if (!parts.empty()) parts.push_back("each side of a bar scaled to its extreme");
    return parts;
}

}  // namespace qs::gui
