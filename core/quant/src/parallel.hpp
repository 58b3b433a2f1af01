// Internal to the passes over a TensorView: an OpenMP parallel region whose every thread reads under the
// view's guard. An exception may not leave an OpenMP region, so each thread's is caught and the first one
// is rethrown once the region has ended.
#pragma once

#include <omp.h>

#include <cstdint>
#include <exception>
#include <functional>

#include "quantscope/tensor_view.hpp"

namespace qs::detail {

// Enough elements to be worth a second thread.
constexpr std::int64_t kParallelMin = std::int64_t{1} << 13;

inline int pass_threads(std::int64_t elements) { return elements >= kParallelMin ? omp_get_max_threads() : 1; }

// `body` runs once on each of `threads` threads (under the view's guard when `view` is given); it may use
// orphaned `omp for ... nowait` loops (with nowait: a thread that fails must not leave the others waiting
// at a barrier).
inline void parallel_run(const TensorView* view, int threads, const std::function<void()>& body) {
    std::exception_ptr error;
#pragma omp parallel num_threads(threads)
    {
        try {
            if (view != nullptr)
                view->guarded(body);
            else
                body();
        } catch (...) {
#pragma omp critical(qs_parallel_run)
            if (!error) error = std::current_exception();
        }
    }
    if (error) std::rethrow_exception(error);
}

inline void parallel_guarded(const TensorView& view, int threads, const std::function<void()>& body) {
    parallel_run(&view, threads, body);
}

}  // namespace qs::detail
