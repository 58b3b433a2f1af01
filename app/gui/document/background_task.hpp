// Work of the analysis panels that must not hold up a frame (an MSE landscape, every calibrator side by side):
// one std::thread per request, at a lower CPU priority than the UI thread. Starting a request cancels the
// running one without waiting for it: the old thread stops at its next cancel check, its results are dropped,
// and it is joined once it has finished (or in the destructor). The worker may publish several results (a
// coarse map, then the exact one); the UI thread takes the newest once a frame. The work must own (or share)
// everything it reads: it can outlive the frame that started it.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace qs::gui {

template <typename Result>
class BackgroundTask {
public:
    // What the worker sees: a cancel flag to poll, a progress value for the panel, and publish().
    class Context {
    public:
        bool cancelled() const { return cancel_.load(std::memory_order_relaxed); }
        const std::atomic<bool>& cancel_flag() const { return cancel_; }
        void set_progress(float p) { progress_.store(p, std::memory_order_relaxed); }
        void publish(Result result) {
            std::lock_guard<std::mutex> lock(mutex_);
            latest_ = std::move(result);
        }

    private:
        friend class BackgroundTask;
        std::atomic<bool> cancel_{false};
        std::atomic<bool> done_{false};
        std::atomic<float> progress_{0.0f};
        std::mutex mutex_;
        std::optional<Result> latest_;  // published and not yet taken
        std::string error_;             // what the work threw
    };
    using Work = std::function<void(Context&)>;

    BackgroundTask() = default;
    BackgroundTask(const BackgroundTask&) = delete;
    BackgroundTask& operator=(const BackgroundTask&) = delete;
    ~BackgroundTask() {
        cancel();
        for (Worker& w : workers_)
            if (w.thread.joinable()) w.thread.join();
    }

    // Cancels the running request (if any) and starts `work` on a new thread.
    void start(Work work) {
        cancel();
        reap();
        auto context = std::make_shared<Context>();
        current_ = context;
        error_.clear();
        Worker w;
        w.context = context;
        w.thread = std::thread([context, work = std::move(work)] {
            // Linux keeps a nice value per thread, and the OpenMP threads this one starts inherit it: the
            // panels' number crunching yields the cores to the UI thread's recompute when both want them.
            setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
            try {
                work(*context);
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(context->mutex_);
                context->error_ = e.what();
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

    // The newest result the current request published since the last take(), if any. Also joins finished
    // threads: call it once a frame.
    std::optional<Result> take() {
        reap();
        if (!current_) return std::nullopt;
        std::lock_guard<std::mutex> lock(current_->mutex_);
        if (!current_->error_.empty()) error_ = current_->error_;
        std::optional<Result> out = std::move(current_->latest_);
        current_->latest_.reset();
        return out;
    }

    bool running() const { return current_ && !current_->done_.load(std::memory_order_acquire); }
    float progress() const { return current_ ? current_->progress_.load(std::memory_order_relaxed) : 0.0f; }
    // What the last request threw (empty: nothing), as seen by take().
    const std::string& error() const { return error_; }

    // Blocks until the current request has finished (tests, and scripted screenshots that must show the
    // final figure). take() then returns its last result.
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

    std::shared_ptr<Context> current_;
    std::vector<Worker> workers_;
    std::string error_;
};

}  // namespace qs::gui
