#include "gui/document/document.hpp"

#include <exception>
#include <utility>
#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

// The settings the computed (s, z) depend on; manual scale and zero point are not among them, so
// dragging those sliders never recomputes the comparison.
bool SameComputedInputs(const QuantConfig& a, const QuantConfig& b) {
    return a.dtype == b.dtype && a.rounding == b.rounding && a.overflow == b.overflow && a.naive_norm == b.naive_norm;
}

}  // namespace

std::function<void(Document&)> RecordOrigin(TensorOrigin origin) {
    return [origin = std::move(origin)](Document& doc) { doc.origins.record(doc.data, origin); };
}

QuantView Document::view() const {
    QuantView v;
    if (!shown_data) return v;
    v.data = shown_data.get();
    v.tensor = shown_data->floats.get();
    v.config = &shown_config;
    v.params = &params;
    v.overview = &overview;
    v.computed_metrics = (shown_config.mode == Mode::Manual && has_computed) ? &computed_metrics : nullptr;
    v.importance_mse = importance_mse ? &*importance_mse : nullptr;
    v.generation = generation;
    v.tensor_generation = tensor_generation;
    return v;
}

Snapshot Document::snapshot() const { return Snapshot{data, config, base_mode, label, importance, importance_path}; }

void Document::set_data(std::shared_ptr<const TensorData> next) {
    data = std::move(next);
    tensor = data ? data->floats : nullptr;
}

void Document::mark_dirty(bool computed_too) {
    dirty_ = true;
    ++revision;
    if (computed_too) ++computed_inputs_;
}

bool Document::apply_config(const QuantConfig& next, bool continuous, std::string* message) {
    if (!data) return false;
    try {
        check_config(next, data->shape());
    } catch (const std::exception& e) {
        if (message) *message = error_text(e);
        return false;
    }
    if (message) message->clear();
    if (next == config) return true;
    if (!gesture_open_) history.push(snapshot());
    gesture_open_ = continuous;
    const bool computed_too =
        !SameComputedInputs(next, config) || (next.mode != Mode::Manual && next.mode != base_mode);
    if (next.mode != Mode::Manual) base_mode = next.mode;
    config = next;
    adopt_importance();
    mark_dirty(computed_too);
    return true;
}

bool Document::apply_tensor(std::shared_ptr<const Tensor> next, std::string next_label, const QuantConfig* next_config) {
    std::shared_ptr<const TensorData> wrapped;
    try {
        wrapped = MakeTensorData(std::move(next));  // checks it
    } catch (const std::exception& e) {
        error = error_text(e);
        return false;
    }
    return apply_data(std::move(wrapped), std::move(next_label), next_config);
}

bool Document::apply_data(std::shared_ptr<const TensorData> next, std::string next_label, const QuantConfig* next_config) {
    try {
        std::string note;
        const QuantConfig fitted = FitConfig(next_config ? *next_config : config, next->shape(), &note);
        if (data) history.push(snapshot());
        if (importance && !ImportanceFits(*importance, next->shape())) {  // another tensor's columns
            importance = nullptr;
            importance_path.clear();
        }
        gesture_open_ = false;
        set_data(std::move(next));
        label = std::move(next_label);
        config = fitted;
        adopt_importance();
        if (config.mode != Mode::Manual) base_mode = config.mode;
        notice = note;
        mark_dirty(true);
        return true;
    } catch (const std::exception& e) {
        error = error_text(e);
        return false;
    }
}

void Document::adopt_importance() {
    if (!config.importance || same_importance(config.importance, importance)) return;
    importance = config.importance;
    importance_path.clear();
}

bool Document::apply_importance(Importance weights, std::string path, bool weighted, std::string* message) {
    if (!data) return false;
    QuantConfig next = config;
    next.importance = weighted ? weights : nullptr;
    try {
        if (weights) check_importance(*weights, data->shape().empty() ? 0 : data->shape().back());
        check_config(next, data->shape());
    } catch (const std::exception& e) {
        if (message) *message = error_text(e);
        return false;
    }
    if (message) message->clear();
    if (same_importance(weights, importance) && path == importance_path && next == config) return true;
    history.push(snapshot());
    gesture_open_ = false;
    importance = std::move(weights);
    importance_path = std::move(path);
    const bool reweighs = next != config;
    config = next;
    if (reweighs) mark_dirty(true);
    else ++revision;
    return true;
}

bool Document::apply_names(const std::string* next_label, const Mode* next_base_mode, bool new_step) {
    if ((next_label && next_label->empty()) || (next_base_mode && *next_base_mode == Mode::Manual)) return false;
    const bool rename = next_label && *next_label != label;
    const bool rebase = next_base_mode && *next_base_mode != base_mode;
    if (!rename && !rebase) return true;
    if (new_step && data) history.push(snapshot());
    gesture_open_ = false;
    if (rename) label = *next_label;
    if (rebase) base_mode = *next_base_mode;
    ++revision;
    // Manual mode's computed column is of the base mode: it is computed again (nothing else is).
    if (rebase) ++computed_inputs_;
    return true;
}

void Document::restore(const Snapshot& s) {
    importance = s.importance;
    importance_path = s.importance_path;
    set_data(s.data);
    config = s.config;
    base_mode = s.base_mode;
    label = s.label;
    gesture_open_ = false;
    mark_dirty(true);
}

void Document::undo() {
    if (busy()) return;
    if (auto s = history.undo(snapshot())) restore(*s);
}

void Document::redo() {
    if (busy()) return;
    if (auto s = history.redo(snapshot())) restore(*s);
}

void Document::start_tensor_job(std::string job_label, TensorWork work) {
    if (busy()) {
        error = "another job is still running";
        return;
    }
    jobs.start([work = std::move(work)](Task<TensorJobResult>::Context& context) { context.publish(work(context)); },
               std::move(job_label));
}

void Document::take_recompute(RecomputeJob& job) {
    if (!job.error.empty()) {
        // The config was validated when applied, so this is unexpected; keep the last good result.
        error = job.error;
        return;
    }
    std::swap(params, job.params);
    if (job.overview.blocks_only && job.data == shown_data) {
        // A drag step's heatmaps: the last whole pass's metrics, counts and worst element stay (the panels show
        // them as settling) until the drag rests; the error's largest value is the step's own.
        Metrics kept = overview.metrics;
        kept.max_abs_error = job.overview.metrics.max_abs_error;
        job.overview.metrics = kept;
        job.overview.error_argmax = overview.error_argmax;
        if (overview.code_counts.size() == static_cast<std::size_t>(job.config.dtype.levels()))
            job.overview.code_counts = overview.code_counts;
    } else {
        importance_mse = job.importance_mse;
    }
    std::swap(overview, job.overview);
    if (job.data != shown_data) ++tensor_generation;
    shown_data = job.data;
    shown_config = job.config;
    if (job.want_computed) {
        computed_params = job.computed_params;
        computed_metrics = job.computed_metrics;
        computed_done_ = job.computed_stamp;
        computed_overflow_ = job.computed_overflow;
        has_computed = true;
    }
    last_recompute_ms = job.ms;
    ++generation;
    // quantize's refusal, shown with the (infinite) numbers it explains (the user's, else manual mode's computed
    // column); it goes when they do.
    const bool computed_shown = shown_config.mode == Mode::Manual && has_computed;
    const std::string& line = !job.overflow.empty() ? job.overflow : computed_shown ? computed_overflow_ : job.overflow;
    if (!line.empty()) error = line;
    else if (!overflow_shown_.empty() && error == overflow_shown_) error.clear();
    overflow_shown_ = line;
}

void Document::start_recompute(bool may_drag) {
    std::shared_ptr<RecomputeJob> job = spare_ ? std::move(spare_) : std::make_shared<RecomputeJob>();
    job->data = data;
    job->config = config;
    job->base_mode = base_mode;
    job->grid = OverviewGridFor(*data, shown_fy_, shown_fx_);
    job->want_computed = config.mode == Mode::Manual && computed_done_ != computed_inputs_;
    job->drag = may_drag && gesture_open_ && data == shown_data;  // a step of the tensor on show
    job->computed_stamp = computed_inputs_;
    dirty_ = false;
    if (force_sync || data->numel() <= kSyncElements) {
        RunRecompute(*job);
        take_recompute(*job);
        spare_ = std::move(job);
        return;
    }
    recompute_.start([job](Task<std::shared_ptr<RecomputeJob>>::Context& context) {
        RunRecompute(*job);
        context.publish(job);
    });
}

void Document::finish_recompute_now() {
    recompute_.wait();
    if (auto done = recompute_.take()) {
        // A result for a tensor that has since been replaced (a job finished meanwhile) is stale.
        if ((*done)->data == data) take_recompute(**done);
        spare_ = std::move(*done);
    }
    // A drag step's heatmaps alone (blocks_only) are not what an export or a script saves: the whole pass runs.
    if ((dirty_ || overview.blocks_only) && data) {
        const bool was = force_sync;
        force_sync = true;
        start_recompute(false);  // the whole result, metrics included
        force_sync = was;
    }
}

void Document::take_tensor_job(TensorJobResult& done) {
    if (data) history.push(snapshot());
    gesture_open_ = false;
    set_data(done.data);
    label = done.label;
    config = done.config;
    if (config.mode != Mode::Manual) base_mode = config.mode;
    // The job quantized its tensor already: show that result without another pass.
    RecomputeJob handed;
    handed.data = data;
    handed.config = config;
    handed.params = std::move(done.params);
    handed.overview = std::move(done.overview);
    handed.importance_mse = done.importance_mse;
    if (importance && !ImportanceFits(*importance, data->shape())) {  // another tensor's columns
        importance = nullptr;
        importance_path.clear();
    }
    adopt_importance();
    take_recompute(handed);
    has_computed = false;
    ++computed_inputs_;
    ++revision;
    dirty_ = config.mode == Mode::Manual;  // the computed comparison still has to run
    error = done.overflow;
    overflow_shown_ = done.overflow;
    notice = done.notice;
    if (done.then) done.then(*this);
}

void Document::update() {
    if (auto done = jobs.take()) take_tensor_job(*done);
    if (!jobs.error().empty()) {
        error = jobs.error();
        jobs.clear_error();
    }
    if (auto done = recompute_.take()) {
        if ((*done)->data == data) take_recompute(**done);
        spare_ = std::move(*done);
    }
    // Entering manual mode, or a change made while the worker ran, may still need the comparison.
    if (recompute_.running() || !data) return;
    if (config.mode == Mode::Manual && computed_done_ != computed_inputs_) dirty_ = true;
    // A drag's heatmaps on show: the whole pass (metrics, counts) once the drag rests: when it ends, or, where
    // the pass runs on this thread (a few ms), as soon as a frame brings no new step.
    const bool rest = !dirty_ && overview.blocks_only && (!gesture_open_ || data->numel() <= kSyncElements);
    if (rest) dirty_ = true;
    if (dirty_) start_recompute(!rest);
}

void Document::show_blocks(std::int64_t fy, std::int64_t fx) {
    shown_fy_ = fy;
    shown_fx_ = fx;
    // A recompute to come or under way: it reads these (or the figure asks again when its result is drawn).
    if (!data || data != shown_data || dirty_ || recompute_.running()) return;
    const OverviewGrid want = OverviewGridFor(*data, fy, fx);
    if (want.fy != overview.grid.fy || want.fx != overview.grid.fx) dirty_ = true;
}

void Document::end_frame(bool any_item_active) {
    if (!any_item_active) gesture_open_ = false;
}

}  // namespace qs::gui
