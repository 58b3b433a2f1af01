#include "gui/document/recompute.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include "gui/document/stopwatch.hpp"
#include "quantscope/error.hpp"
#include "quantscope/ggml_blocks.hpp"
#include "quantscope/overflow_message.hpp"

namespace qs::gui {

namespace {

// `quantize` refuses a quantization whose r' overflows float32 with a line naming the element; the window
// shows its (infinite) numbers with that same line, not infinities alone. (Formats report their own.)
std::string OverflowLine(const TensorData& data, const QuantParams& params, const QuantConfig& config,
                         const Metrics& metrics) {
    if (!is_int_format(config.format) || std::isfinite(metrics.max_abs_error)) return {};
    return float32_overflow_message(data.view, params, config);
}

bool SameCells(const OverviewGrid& a, const OverviewGrid& b) {
    return a.slices == b.slices && a.rows == b.rows && a.cols == b.cols;
}

}  // namespace

OverviewGrid OverviewGridFor(const TensorData& data, std::int64_t fy, std::int64_t fx) {
    OverviewGrid g = data.values.grid;
    g.fy = std::max(g.fy, std::min(fy, g.rows));
    g.fx = std::max(g.fx, std::min(fx, g.cols));
    return g;
}

QuantParams ParamsFor(const TensorData& data, const QuantConfig& config) {
    if (data.stored && config.format == data.stored->format) return stored_params(data.shape(), data.stored);
    // A format's scale has its own rule (format_quant_params): compute_params applies it.
    const bool whole_range = config.granularity == Granularity::Tensor && config.calibration == Calibration::MinMax &&
                             is_int_format(config.format);
    if (config.mode != Mode::Manual && !whole_range) {
        // Per-block min/max ranges: read once per layout, then every (s, z) of that layout without a pass.
        if (is_int_format(config.format) && config.calibration == Calibration::MinMax) {
            TensorData::RangesCache& cache = *data.block_ranges;
            std::shared_ptr<const BlockRanges> ranges;
            {
                const std::lock_guard<std::mutex> lock(cache.mutex);
                ranges = cache.ranges;
            }
            if (!ranges || !ranges_fit(*ranges, data.shape(), config)) {
                ranges = block_ranges_for(data.view, config);
                const std::lock_guard<std::mutex> lock(cache.mutex);
                if (ranges) cache.ranges = ranges;
            }
            if (ranges) return params_from_ranges(*ranges, data.shape(), config);
        }
        // A calibrator, or pairs computed on demand: their own pass (the calibrators need the float32 values).
        return data.floats ? compute_params(*data.floats, config) : compute_params(data.view, config);
    }
    check_config(config, data.shape());
    QuantParams params;
    set_block_layout(data.shape(), config, params);
    params.scale.assign(static_cast<std::size_t>(params.block_count), 1.0);
    params.zero_point.assign(static_cast<std::size_t>(params.block_count), 0);
    if (config.mode == Mode::Manual) {
        params.scale[0] = config.manual_scale;
        params.zero_point[0] = config.manual_zero_point;
    } else if (config.mode == Mode::Asymmetric) {
        asymmetric_params(data.values.lo, data.values.hi, config.dtype, params.scale[0], params.zero_point[0],
                          config.recompute_scale);
    } else {
        symmetric_params(data.values.amax(), config.dtype, params.scale[0], params.zero_point[0]);
    }
    return params;
}

void RunRecompute(RecomputeJob& job) {
    const Stopwatch clock;
    job.error.clear();
    job.overflow.clear();
    job.computed_overflow.clear();
    try {
        const TensorData& data = *job.data;
        if (job.want_computed) {
            // The comparison of manual mode: the base mode's own (s, z) on the same tensor, metrics only.
            QuantConfig computed = job.config;
            computed.mode = job.base_mode;
            if (computed.mode == Mode::Symmetric && !computed.dtype.is_signed) computed.mode = Mode::Asymmetric;
            if (!is_int_format(computed.format)) computed.mode = Mode::Symmetric;  // a format's computed scale
            job.computed_params = ParamsFor(data, computed);
            job.computed_params.keep_values_alive(job.data);
            job.computed_metrics = quantize_view(data.view, job.computed_params, computed);
            // Its column would show inf with no word of why: quantize's line for that mode, said to be the computed one.
            job.computed_overflow = OverflowLine(data, job.computed_params, computed, job.computed_metrics);
            if (!job.computed_overflow.empty())
                job.computed_overflow = std::string("the computed s, z (") + to_string(computed.mode) + "): " + job.computed_overflow;
        }
        job.params = ParamsFor(data, job.config);
        job.params.keep_values_alive(job.data);
        const OverviewGrid& grid = SameCells(job.grid, data.values.grid) ? job.grid : data.values.grid;
        job.importance_mse.reset();
        // The layout's cached ranges (those ParamsFor took the pairs from) spare most rows the per-element checks.
        std::shared_ptr<const BlockRanges> ranges;
        if (job.drag) {
            const std::lock_guard<std::mutex> lock(data.block_ranges->mutex);
            ranges = data.block_ranges->ranges;
        }
        if (ranges && !ranges_fit(*ranges, data.shape(), job.config)) ranges.reset();
        if (job.drag && data.numel() >= kDragBlocksElements &&
            quantize_overview_blocks(data.view, job.params, job.config, grid, data.values, job.overview, ranges.get())) {
            job.overflow = OverflowLine(data, job.params, job.config, job.overview.metrics);
        } else {
            job.overview = quantize_overview(data.view, job.params, job.config, grid, &data.values);
            job.overflow = OverflowLine(data, job.params, job.config, job.overview.metrics);
            if (job.config.importance) job.importance_mse = ImportanceMse(data, job.params, job.config);
        }
    } catch (const std::exception& e) {
        job.error = error_text(e);
    }
    job.ms = clock.ms();
}

TensorJobResult FinishTensorJob(Tensor tensor, QuantConfig config, std::string label, TaskProgress& progress) {
    progress.set_stage("checking");
    progress.set_progress(0.4f);
    return FinishTensorJob(MakeTensorData(std::make_shared<const Tensor>(std::move(tensor))), std::move(config),
                           std::move(label), progress);
}

TensorJobResult FinishTensorJob(std::shared_ptr<const TensorData> data, QuantConfig config, std::string label,
                                TaskProgress& progress) {
    TensorJobResult out;
    out.config = FitConfig(config, data->shape(), &out.notice);
    out.label = std::move(label);
    progress.set_stage("scale and zero point");
    progress.set_progress(0.55f);
    out.params = ParamsFor(*data, out.config);
    out.params.keep_values_alive(data);
    progress.set_stage("quantizing");
    progress.set_progress(0.7f);
    out.overview = quantize_overview(data->view, out.params, out.config, data->values.grid, &data->values);
    out.overflow = OverflowLine(*data, out.params, out.config, out.overview.metrics);
    if (out.config.importance) out.importance_mse = ImportanceMse(*data, out.params, out.config);
    progress.set_stage("done");
    progress.set_progress(1.0f);
    out.data = std::move(data);
    return out;
}

bool ImportanceFits(const std::vector<float>& weights, const Shape& shape) {
    return !shape.empty() && static_cast<std::int64_t>(weights.size()) == shape.back();
}

double ImportanceMse(const TensorData& data, const QuantParams& params, const QuantConfig& config) {
    ImportanceError weighted(config.importance);
    OutputSelection wanted;
    wanted.error = true;
    quantize_view(data.view, params, config, wanted,
                  [&](std::int64_t, std::int64_t count, const QuantOutputs& batch) { weighted.add(batch.error, count); });
    return weighted.mean();
}

QuantConfig FitConfig(QuantConfig c, const Shape& shape, std::string* note) {
    std::string dropped;
    if (c.importance && !ImportanceFits(*c.importance, shape)) {
        dropped = "importance dropped: it has " + std::to_string(c.importance->size()) + " weights for " +
                  std::to_string(shape.empty() ? 0 : shape.back()) + " columns";
        c.importance = nullptr;
        if (note) *note = dropped;
    }
    try {
        check_config(c, shape);
        return c;
    } catch (const std::exception& e) {
        if (note) *note = (dropped.empty() ? "" : dropped + "; ") + std::string("granularity reset to tensor: ") + error_text(e);
    }
    c.granularity = Granularity::Tensor;
    c.axis = 0;
    check_config(c, shape);  // anything still wrong is not about the shape: let it surface
    return c;
}

}  // namespace qs::gui
