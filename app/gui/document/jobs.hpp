// Background work that would freeze a frame (opening or generating a big tensor and its first
// quantization) runs on one std::thread. The UI thread polls once a frame: it reads the progress
// (0..1, atomic) and, once the work is done, takes the result. One job at a time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

struct AppState;

// What a tensor job hands back: a checked tensor quantized with `config`, or an error message.
struct TensorJobResult {
    std::shared_ptr<const Tensor> tensor;
    QuantConfig config;
    QuantParams params;
    QuantResult result;
    std::string label;
    std::string notice;  // what fitting the config to the new shape changed, if anything
    std::string error;   // non-empty: the job failed, nothing else is set
    // Runs on the UI thread once the tensor is on screen (e.g. a session's view settings, where it came from).
    std::function<void(AppState&)> then;
};

// Shared between the UI thread and the worker. The worker only writes `progress` and `stage`
// (stage is a string literal, so the pointer swap is atomic and needs no lock).
struct JobProgress {
    std::atomic<float> progress{0.0f};
    std::atomic<const char*> stage{""};
    std::atomic<bool> cancel{false};
};

using TensorWork = std::function<TensorJobResult(JobProgress&)>;

class JobRunner {
public:
    JobRunner() = default;
    ~JobRunner();  // joins: a running job finishes (its result is dropped)
    JobRunner(const JobRunner&) = delete;
    JobRunner& operator=(const JobRunner&) = delete;

    // Starts `work` on a worker thread. Returns false (and does nothing) if a job is still running.
    bool start(std::string label, TensorWork work);
    bool running() const { return thread_.joinable(); }
    // If the job has finished: joins the thread and returns its result; otherwise nothing.
    std::optional<TensorJobResult> poll();

    float progress() const { return progress_ ? progress_->progress.load() : 0.0f; }
    const char* stage() const { return progress_ ? progress_->stage.load() : ""; }
    const std::string& label() const { return label_; }
    double elapsed_seconds() const;

private:
    std::thread thread_;
    std::shared_ptr<JobProgress> progress_;
    std::shared_ptr<std::atomic<bool>> done_;
    std::shared_ptr<TensorJobResult> result_;
    std::string label_;
    std::chrono::steady_clock::time_point started_{};
};

}  // namespace qs::gui
