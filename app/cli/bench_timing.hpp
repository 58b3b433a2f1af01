// The one timer of `quantscope bench`: the median wall time of repeated runs of a piece of work.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace qs::cli {

// Median milliseconds of `repeats` runs of `work` (at least one).
template <class F>
double median_ms(int repeats, F&& work) {
    std::vector<double> times;
    for (int i = 0; i < std::max(repeats, 1); ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace qs::cli
