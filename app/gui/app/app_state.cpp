#include "gui/app/app_state.hpp"

#include <chrono>
#include <exception>
#include <set>
#include <utility>

#include "quantscope/error.hpp"

namespace qs::gui {
namespace {

constexpr std::size_t kMaxUndoSteps = 200;
// Undo keeps old tensors alive; past this many bytes of distinct tensors the oldest steps are dropped.
constexpr std::size_t kMaxUndoBytes = std::size_t{768} << 20;

bool same_config(const QuantConfig& a, const QuantConfig& b) {
    return a.dtype == b.dtype && a.mode == b.mode && a.granularity == b.granularity && a.axis == b.axis &&
           a.group_size == b.group_size && a.rounding == b.rounding && a.overflow == b.overflow &&
           a.manual_scale == b.manual_scale && a.manual_zero_point == b.manual_zero_point;
}

// The settings the computed (s, z) depend on; manual scale and zero point are not among them, so
// dragging those sliders never recomputes the comparison.
bool same_computed_inputs(const QuantConfig& a, const QuantConfig& b) {
    return a.dtype == b.dtype && a.rounding == b.rounding && a.overflow == b.overflow;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// ---------------------------------------------------------------------------------------------- undo

void UndoHistory::push(Snapshot before) {
    undo_.push_back(std::move(before));
    redo_.clear();
    trim();
}

std::optional<Snapshot> UndoHistory::undo(Snapshot current) {
    if (undo_.empty()) return std::nullopt;
    Snapshot s = std::move(undo_.back());
    undo_.pop_back();
    redo_.push_back(std::move(current));
    return s;
}

std::optional<Snapshot> UndoHistory::redo(Snapshot current) {
    if (redo_.empty()) return std::nullopt;
    Snapshot s = std::move(redo_.back());
    redo_.pop_back();
    undo_.push_back(std::move(current));
    return s;
}

void UndoHistory::trim() {
    while (undo_.size() > kMaxUndoSteps) undo_.pop_front();
    auto bytes = [this] {
        std::set<const Tensor*> seen;
        std::size_t total = 0;
        for (const auto* side : {&undo_, &redo_}) {
            for (const Snapshot& s : *side) {
                if (s.tensor && seen.insert(s.tensor.get()).second) total += s.tensor->values.size() * sizeof(float);
            }
        }
        return total;
    };
    while (!undo_.empty() && bytes() > kMaxUndoBytes) undo_.pop_front();
}

// ----------------------------------------------------------------------------------------- recompute

void run_recompute(RecomputeJob& job) {
    const auto t0 = std::chrono::steady_clock::now();
    job.error.clear();
    try {
        if (job.want_computed) {
            // The comparison of manual mode: the base mode's own (s, z) on the same tensor. Its pass goes
            // through job.result first; the manual pass below overwrites those buffers.
            QuantConfig computed = job.config;
            computed.mode = job.base_mode;
            if (computed.mode == Mode::Symmetric && !computed.dtype.is_signed) computed.mode = Mode::Asymmetric;
            job.computed_params = compute_params(*job.tensor, computed);
            quantize_into(*job.tensor, job.computed_params, computed, job.result);
            job.computed_metrics = job.result.metrics;
        }
        job.params = compute_params(*job.tensor, job.config);
        quantize_into(*job.tensor, job.params, job.config, job.result);
    } catch (const std::exception& e) {
        job.error = e.what();
    }
    job.ms = ms_since(t0);
}

TensorJobResult FinishTensorJob(Tensor tensor, QuantConfig config, std::string label, JobProgress& progress) {
    progress.stage = "checking";
    progress.progress = 0.4f;
    check_tensor(tensor);
    TensorJobResult out;
    out.config = FitConfig(config, tensor.shape, &out.notice);
    out.label = std::move(label);
    auto shared = std::make_shared<Tensor>(std::move(tensor));
    progress.stage = "scale and zero point";
    progress.progress = 0.55f;
    out.params = compute_params(*shared, out.config);
    progress.stage = "quantizing";
    progress.progress = 0.7f;
    quantize_into(*shared, out.params, out.config, out.result);
    progress.stage = "done";
    progress.progress = 1.0f;
    out.tensor = std::move(shared);
    return out;
}

AppState::~AppState() {
    if (worker_.joinable()) worker_.join();
}

QuantView AppState::view() const {
    QuantView v;
    if (!shown_tensor) return v;
    v.tensor = shown_tensor.get();
    v.config = &shown_config;
    v.params = &params;
    v.result = &result;
    v.computed_metrics = (shown_config.mode == Mode::Manual && has_computed) ? &computed_metrics : nullptr;
    v.generation = generation;
    v.tensor_generation = tensor_generation;
    return v;
}

Snapshot AppState::snapshot() const { return Snapshot{tensor, config, base_mode, label}; }

void AppState::mark_dirty(bool computed_too) {
    dirty_ = true;
    if (computed_too) ++computed_inputs_;
}

bool AppState::apply_config(const QuantConfig& next, bool continuous, std::string* message) {
    if (!tensor) return false;
    try {
        check_config(next, tensor->shape);
    } catch (const std::exception& e) {
        if (message) *message = e.what();
        return false;
    }
    if (same_config(next, config)) return true;
    if (!gesture_open_) history.push(snapshot());
    gesture_open_ = continuous;
    const bool computed_too =
        !same_computed_inputs(next, config) || (next.mode != Mode::Manual && next.mode != base_mode);
    if (next.mode != Mode::Manual) base_mode = next.mode;
    config = next;
    mark_dirty(computed_too);
    return true;
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

bool AppState::apply_tensor(std::shared_ptr<const Tensor> next, std::string next_label,
                            const QuantConfig* next_config) {
    try {
        check_tensor(*next);
        std::string note;
        const QuantConfig fitted = FitConfig(next_config ? *next_config : config, next->shape, &note);
        if (tensor) history.push(snapshot());
        gesture_open_ = false;
        tensor = std::move(next);
        label = std::move(next_label);
        config = fitted;
        if (config.mode != Mode::Manual) base_mode = config.mode;
        notice = note;
        mark_dirty(true);
        SyncControlsPanel(controls, *this);
        SyncTensorPanel(tensor_panel, *this);
        return true;
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
}

void AppState::restore(const Snapshot& s) {
    tensor = s.tensor;
    config = s.config;
    base_mode = s.base_mode;
    label = s.label;
    gesture_open_ = false;
    mark_dirty(true);
    SyncControlsPanel(controls, *this);
    SyncTensorPanel(tensor_panel, *this);
}

void AppState::undo() {
    if (busy()) return;
    if (auto s = history.undo(snapshot())) restore(*s);
}

void AppState::redo() {
    if (busy()) return;
    if (auto s = history.redo(snapshot())) restore(*s);
}

void AppState::start_tensor_job(std::string job_label, TensorWork work) {
    if (!jobs.start(std::move(job_label), std::move(work))) error = "another job is still running";
}

void AppState::take_recompute(RecomputeJob& job) {
    if (!job.error.empty()) {
        // The config was validated when applied, so this is unexpected; keep the last good result.
        error = job.error;
        return;
    }
    std::swap(params, job.params);
    std::swap(result, job.result);
    if (job.tensor != shown_tensor) ++tensor_generation;
    shown_tensor = job.tensor;
    shown_config = job.config;
    if (job.want_computed) {
        computed_params = job.computed_params;
        computed_metrics = job.computed_metrics;
        computed_done_ = job.computed_stamp;
        has_computed = true;
    }
    last_recompute_ms = job.ms;
    ++generation;
}

void AppState::start_recompute() {
    std::unique_ptr<RecomputeJob> job = spare_ ? std::move(spare_) : std::make_unique<RecomputeJob>();
    job->tensor = tensor;
    job->config = config;
    job->base_mode = base_mode;
    job->want_computed = config.mode == Mode::Manual && computed_done_ != computed_inputs_;
    job->computed_stamp = computed_inputs_;
    dirty_ = false;
    const bool sync = force_sync || tensor->numel() <= kSyncElements;
    if (sync) {
        run_recompute(*job);
        take_recompute(*job);
        spare_ = std::move(job);
        return;
    }
    work_ = std::move(job);
    worker_done_ = false;
    worker_ = std::thread([this, job = work_.get()] {
        run_recompute(*job);
        worker_done_.store(true, std::memory_order_release);
    });
}

void AppState::finish_recompute_now() {
    if (worker_.joinable()) {
        worker_.join();
        if (work_->tensor == tensor) take_recompute(*work_);
        spare_ = std::move(work_);
    }
    if (dirty_ && tensor) {
        const bool was = force_sync;
        force_sync = true;
        start_recompute();
        force_sync = was;
    }
}

void AppState::update() {
    if (auto done = jobs.poll()) {
        if (!done->error.empty()) {
            error = done->error;
        } else {
            if (tensor) history.push(snapshot());
            gesture_open_ = false;
            tensor = done->tensor;
            label = done->label;
            config = done->config;
            if (config.mode != Mode::Manual) base_mode = config.mode;
            // The job quantized its tensor already: show that result without another pass.
            RecomputeJob handed;
            handed.tensor = tensor;
            handed.config = config;
            handed.params = std::move(done->params);
            handed.result = std::move(done->result);
            take_recompute(handed);
            has_computed = false;
            ++computed_inputs_;
            dirty_ = config.mode == Mode::Manual;  // the computed comparison still has to run
            error.clear();
            notice = done->notice;
            SyncControlsPanel(controls, *this);
            SyncTensorPanel(tensor_panel, *this);
            if (done->then) done->then(*this);
        }
    }
    if (worker_.joinable() && worker_done_.load(std::memory_order_acquire)) {
        worker_.join();
        // A result for a tensor that has since been replaced (a job finished meanwhile) is stale.
        if (work_->tensor == tensor) take_recompute(*work_);
        spare_ = std::move(work_);
    }
    // Entering manual mode, or a change made while the worker ran, may still need the comparison.
    if (worker_.joinable() || !tensor) return;
    if (config.mode == Mode::Manual && computed_done_ != computed_inputs_) dirty_ = true;
    if (dirty_) start_recompute();
}

void AppState::end_frame(bool any_item_active) {
    if (!any_item_active) gesture_open_ = false;
}

}  // namespace qs::gui
