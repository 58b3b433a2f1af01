#include "gui/document/jobs.hpp"

#include <exception>
#include <utility>

namespace qs::gui {

JobRunner::~JobRunner() {
    if (thread_.joinable()) {
        progress_->cancel = true;
        thread_.join();
    }
}

bool JobRunner::start(std::string label, TensorWork work) {
    if (thread_.joinable()) return false;
    progress_ = std::make_shared<JobProgress>();
    done_ = std::make_shared<std::atomic<bool>>(false);
    result_ = std::make_shared<TensorJobResult>();
    label_ = std::move(label);
    started_ = std::chrono::steady_clock::now();
    // The worker owns shared references only, so nothing it touches can dangle.
    thread_ = std::thread([work = std::move(work), progress = progress_, done = done_, result = result_]() {
        try {
            *result = work(*progress);
        } catch (const std::exception& e) {
            *result = TensorJobResult{};
            result->error = e.what();
        } catch (...) {
            *result = TensorJobResult{};
            result->error = "unknown error";
        }
        progress->progress = 1.0f;
        done->store(true, std::memory_order_release);
    });
    return true;
}

std::optional<TensorJobResult> JobRunner::poll() {
    if (!thread_.joinable() || !done_->load(std::memory_order_acquire)) return std::nullopt;
    thread_.join();
    TensorJobResult out = std::move(*result_);
    result_.reset();
    return out;
}

double JobRunner::elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace qs::gui
