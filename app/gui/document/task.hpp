// The one way the window runs work that would hold up a frame: opening or generating a tensor, a big
// recompute, a panel's landscape, calibrator table or comparison. Each request runs on its own std::thread;
// the UI thread polls once a frame (take()) and gets the newest result the work published, on its own thread.
// Starting a request cancels the running one without waiting for it: the old thread stops at its next cancel
// check, what it publishes is dropped, and it is joined once it has finished (or in the destructor). The work
// may publish several results (a coarse map, then the exact one). What it throws is kept as error(). The work
// must own (or share) everything it reads: it can outlive the frame that started it.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include "quantscope/error.hpp"

namespace qs::gui {

// Lowers the calling thread's priority (nice 10) where the system keeps one per thread (Linux; the OpenMP
// threads it starts inherit it); elsewhere it does nothing. The OS-specific part lives in task.cpp.
void LowerThreadPriority();

// What every piece of work sees, whatever it produces: a cancel flag to poll and its progress for the UI.
class TaskProgress {
public:
    bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }
    const std::atomic<bool>& cancel_flag() const { return cancel_; }
    void set_progress(float p) { progress_.store(p, std::memory_order_relaxed); }
    // A string literal ("reading", "quantizing"): the pointer swap is atomic and needs no lock.
    void set_stage(const char* stage) { stage_.store(stage, std::memory_order_relaxed); }

protected:
    std::atomic<bool> cancel_{false};
    std::atomic<float> progress_{0.0f};
    std::atomic<const char*> stage_{""};
};

// Number crunching for a panel yields the cores to the UI thread's own work; a tensor job or a recompute,
// which the user waits for, does not.
enum class TaskPriority { Normal, Background };

template <typename Result>
class Task {
public:
    class Context : public TaskProgress {
    public:
        void publish(Result result) {
            std::lock_guard<std::mutex> lock(mutex_);
            latest_ = std::move(result);
        }

    private:
        friend class Task;
        std::atomic<bool> done_{false};
        mutable std::mutex mutex_;
        std::optional<Result> latest_;  // published and not yet taken
        std::string error_;             // what the work threw
    };
    using Work = std::function<void(Context&)>;

    explicit Task(TaskPriority priority = TaskPriority::Background) : priority_(priority) {}
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() {
        cancel();
        for (Worker& w : workers_)
            if (w.thread.joinable()) w.thread.join();
    }

    // Cancels the running request (if any) and starts `work` on a new thread; `label` names it for the UI.
    void start(Work work, std::string label = {}) {
        cancel();
        reap();
        auto context = std::make_shared<Context>();
        current_ = context;
        error_.clear();
        label_ = std::move(label);
        started_ = std::chrono::steady_clock::now();
        Worker w;
        w.context = context;
        w.thread = std::thread([context, work = std::move(work), background = priority_ == TaskPriority::Background] {
            if (background) LowerThreadPriority();
            try {
                work(*context);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(context->mutex_);
                context->error_ = error_text(e);
            } catch (...) {
                std::lock_guard<std::mutex> lock(context->mutex_);
                context->error_ = "unknown error";
            }
            context->done_.store(true, std::memory_order_release);
        });
        workers_.push_back(std::move(w));
    }

    // Asks the running request to stop; what it publishes from now on is dropped.
    void cancel() {
        if (current_) current_->cancel_.store(true, std::memory_order_relaxed);
        current_.reset();
    }

    // The newest result the current request published since the last take(), if any; a failure shows as
    // error(). Also joins finished threads: call it once a frame.
    std::optional<Result> take() {
        reap();
        if (!current_) return std::nullopt;
        std::lock_guard<std::mutex> lock(current_->mutex_);
        if (!current_->error_.empty()) error_ = std::move(current_->error_), current_->error_.clear();
        std::optional<Result> out = std::move(current_->latest_);
        current_->latest_.reset();
        return out;
    }

    bool running() const { return current_ && !current_->done_.load(std::memory_order_acquire); }
    // Running, or finished with a result or an error that take() has not handed out yet.
    bool busy() const {
        if (!current_) return false;
        if (running()) return true;
        std::lock_guard<std::mutex> lock(current_->mutex_);
        return current_->latest_.has_value() || !current_->error_.empty();
    }
    float progress() const { return current_ ? current_->progress_.load(std::memory_order_relaxed) : 0.0f; }
    const char* stage() const { return current_ ? current_->stage_.load(std::memory_order_relaxed) : ""; }
    const std::string& label() const { return label_; }
    double elapsed_seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    }
    // What the last request threw (empty: nothing), as seen by take().
    const std::string& error() const { return error_; }
    void clear_error() { error_.clear(); }

    // Blocks until the current request has finished (tests, scripted screenshots and saves that must show
    // the final state). take() then returns its last result.
    void wait() {
        if (!current_) return;
        for (Worker& w : workers_) {
            if (w.context == current_ && w.thread.joinable()) w.thread.join();
        }
    }

private:
    struct Worker {
        std::thread thread;
        std::shared_ptr<Context> context;
    };

    void reap() {
        for (std::size_t i = 0; i < workers_.size();) {
            Worker& w = workers_[i];
            if (w.context->done_.load(std::memory_order_acquire) || !w.thread.joinable()) {
                if (w.thread.joinable()) w.thread.join();
                if (w.context != current_) {
                    workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(i));
                    continue;
                }
            }
            ++i;
        }
    }

    TaskPriority priority_;
    std::shared_ptr<Context> current_;
    std::vector<Worker> workers_;
    std::string error_;
    std::string label_;
    std::chrono::steady_clock::time_point started_{};
};

}  // namespace qs::gui
