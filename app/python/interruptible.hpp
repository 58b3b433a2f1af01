// Long work called from Python that Ctrl-C can stop: Python runs its signal handlers only on the main thread
// and between bytecodes, so a pass that runs on the calling thread would not see one until it ends.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace qs::python {

// Runs `work(cancel)` on a thread of its own while this one, without the GIL, looks for Ctrl-C every 50 ms.
// On KeyboardInterrupt (or any exception a signal handler raises) `cancel` is set, the work stops at its next
// check, and the exception is raised here once the work has returned; the work's own exception otherwise.
// Called with the GIL held.
template <class Result, class Work>
Result interruptible(Work work) {
    namespace py = pybind11;
    std::atomic<bool> cancel{false};
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    Result result{};
    std::exception_ptr failure;
    std::thread worker([&] {
        try {
            result = work(cancel);
        } catch (...) {
            failure = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(mutex);
        done = true;
        finished.notify_one();
    });
    bool interrupted = false;
    {
        py::gil_scoped_release release;
        std::unique_lock<std::mutex> lock(mutex);
        while (!finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
            if (interrupted) continue;
            lock.unlock();
            {
                py::gil_scoped_acquire gil;
                interrupted = PyErr_CheckSignals() != 0;  // the exception stays set on this thread
            }
            if (interrupted) cancel = true;
            lock.lock();
        }
    }
    worker.join();
    if (interrupted) throw py::error_already_set();
    if (failure) std::rethrow_exception(failure);
    return result;
}

}  // namespace qs::python
