// Wall time of a piece of work, in milliseconds: the one timing idiom of the window (recompute times,
// panel passes, the bench).
#pragma once

#include <chrono>

namespace qs::gui {

class Stopwatch {
public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    double ms() const { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count(); }
    double seconds() const { return ms() / 1000.0; }

private:
    std::chrono::steady_clock::time_point start_;
};

}  // namespace qs::gui
