#include "gui/document/recompute.hpp"

#include <exception>
#include <utility>

#include "gui/document/stopwatch.hpp"

namespace qs::gui {

void RunRecompute(RecomputeJob& job) {
    const Stopwatch clock;
    job.error.clear();
    try {
        if (job.want_computed) {
            // The comparison of manual mode: the base mode's own (s, z) on the same tensor. Its pass goes
            // through job.result first; the manual pass below overwrites those buffers.
            QuantConfig computed = job.config;
            computed.mode = job.base_mode;
            if (computed.mode == Mode::Symmetric && !computed.dtype.is_signed) computed.mode = Mode::Asymmetric;
            if (computed.format != FormatId::Int) computed.mode = Mode::Symmetric;  // a format's computed scale
            job.computed_params = compute_params(*job.tensor, computed);
            job.computed_params.keep_values_alive(job.tensor);
            quantize_into(*job.tensor, job.computed_params, computed, job.result);
            job.computed_metrics = job.result.metrics;
        }
        job.params = compute_params(*job.tensor, job.config);
        job.params.keep_values_alive(job.tensor);
        quantize_into(*job.tensor, job.params, job.config, job.result);
    } catch (const std::exception& e) {
        job.error = e.what();
    }
    job.ms = clock.ms();
}

TensorJobResult FinishTensorJob(Tensor tensor, QuantConfig config, std::string label, TaskProgress& progress) {
    progress.set_stage("checking");
    progress.set_progress(0.4f);
    check_tensor(tensor);
    TensorJobResult out;
    out.config = FitConfig(config, tensor.shape, &out.notice);
    out.label = std::move(label);
    auto shared = std::make_shared<Tensor>(std::move(tensor));
    progress.set_stage("scale and zero point");
    progress.set_progress(0.55f);
    out.params = compute_params(*shared, out.config);
    out.params.keep_values_alive(shared);
    progress.set_stage("quantizing");
    progress.set_progress(0.7f);
    quantize_into(*shared, out.params, out.config, out.result);
    progress.set_stage("done");
    progress.set_progress(1.0f);
    out.tensor = std::move(shared);
    return out;
}

QuantConfig FitConfig(QuantConfig c, const Shape& shape, std::string* note) {
    try {
        check_config(c, shape);
        return c;
    } catch (const std::exception& e) {
        if (note) *note = std::string("granularity reset to tensor: ") + e.what();
    }
    c.granularity = Granularity::Tensor;
    c.axis = 0;
    check_config(c, shape);  // anything still wrong is not about the shape: let it surface
    return c;
}

}  // namespace qs::gui
