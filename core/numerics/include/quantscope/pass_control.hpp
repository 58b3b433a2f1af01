// What a caller running a long pass over a view (a mapped tensor of a billion elements takes a second or more
// per pass) gives it: a cancel flag to poll and a place to report progress. Both may be empty.
#pragma once

#include <atomic>
#include <functional>

namespace qs {

struct PassControl {
    const std::atomic<bool>* cancel = nullptr;  // true: stop at the next piece; the result is then incomplete
    std::function<void(float)> progress;        // the fraction done, in [0, 1], from one thread at a time

    bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
    void report(float fraction) const {
        if (progress) progress(fraction);
    }
};

}  // namespace qs
