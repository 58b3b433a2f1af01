// Internal to the passes over a TensorView: a parallel region whose every thread reads under the view's
// guard. Plain threads, not OpenMP: a pass that streams its results alternates short compute regions with
// file writes, and OpenMP's idle workers spin (burning a core for milliseconds) at every barrier and
// between regions; a joined thread waits without spinning. An exception may not leave a thread, so each
// thread's is caught and the first one is rethrown once all have ended.
#pragma once

#include <omp.h>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <system_error>
#include <thread>
#include <vector>

#include "quantscope/tensor_view.hpp"

namespace qs::detail {

// Enough elements to be worth starting a second thread (tens of microseconds, about as long as the pass
// takes over this many elements).
constexpr std::int64_t kParallelMin = std::int64_t{1} << 18;

// As many threads as OpenMP would use (OMP_NUM_THREADS is honoured), one for small work.
inline int pass_threads(std::int64_t elements) { return elements >= kParallelMin ? omp_get_max_threads() : 1; }

// `body(thread, threads)` runs once on each of `threads` threads, the calling thread being thread 0 (under
// the view's guard when `view` is given).
inline void parallel_run(const TensorView* view, int threads, const std::function<void(int, int)>& body) {
    threads = threads < 1 ? 1 : threads;
    std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
    const auto run_one = [&](int thread) {
        try {
            if (view != nullptr)
                view->guarded([&] { body(thread, threads); });
            else
                body(thread, threads);
        } catch (...) {
            errors[static_cast<std::size_t>(thread)] = std::current_exception();
        }
    };
    // A thread that cannot be started (no address space left for its stack under a memory cap) must not end
    // the program: std::thread throws, and its share runs on this thread instead.
    std::vector<std::thread> others;
    others.reserve(static_cast<std::size_t>(threads));
    int started = 1;
    try {
        for (; started < threads; ++started) others.emplace_back(run_one, started);
    } catch (const std::system_error&) {
    }
    run_one(0);
    for (int thread = started; thread < threads; ++thread) run_one(thread);
    for (std::thread& other : others) other.join();
    for (const std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
}

inline void parallel_guarded(const TensorView& view, int threads, const std::function<void(int, int)>& body) {
    parallel_run(&view, threads, body);
}

// The view's values as float32 straight from memory (aligned little-endian float32 without a guard), or null.
inline const float* direct_floats(const TensorView& view) {
    if (view.type != ElementType::F32 || view.guard != nullptr || !host_is_little_endian() ||
        reinterpret_cast<std::uintptr_t>(view.data) % alignof(float) != 0)
        return nullptr;
    return reinterpret_cast<const float*>(view.data);
}

// Thread `thread` of `threads`'s share of [0, count): contiguous, the first (count % threads) one longer.
inline void static_share(std::int64_t count, int thread, int threads, std::int64_t& begin, std::int64_t& end) {
    const std::int64_t per = count / threads, longer = count % threads;
    begin = thread * per + (thread < longer ? thread : longer);
    end = begin + per + (thread < longer ? 1 : 0);
}

// Hands out the indices [first, end) one at a time to whichever thread asks next.
class NextIndex {
public:
    NextIndex(std::int64_t first, std::int64_t end) : next_(first), end_(end) {}
    bool take(std::int64_t& index) {
        index = next_.fetch_add(1, std::memory_order_relaxed);
        return index < end_;
    }

private:
    std::atomic<std::int64_t> next_;
    std::int64_t end_;
};

}  // namespace qs::detail
