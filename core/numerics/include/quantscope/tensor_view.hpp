// A read-only tensor in its stored element type, e.g. straight from a file's mapping: what the one-pass
// functions (compute_params, quantize_view) read, chunk by chunk, without a float32 copy of the whole tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "quantscope/element_type.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

// Reading a view's bytes may need protection on every thread that reads them (a memory-mapped file can
// shrink under its mapping). The passes call run() once per worker thread around their reads.
class ReadGuard {
public:
    virtual ~ReadGuard() = default;
    // Runs `work` on the calling thread; may throw once it has returned (e.g. the file shrank meanwhile).
    virtual void run(const std::function<void()>& work) const = 0;
};

struct TensorView {
    Shape shape;                          // rank 1..3, every dimension >= 1
    ElementType type = ElementType::F32;
    const std::uint8_t* data = nullptr;   // little-endian elements, row-major, any alignment
    const ReadGuard* guard = nullptr;     // null: the bytes are plain memory
    std::string name;                     // prefixes error messages ("data.npy"); may be empty

    std::int64_t numel() const;
    // Runs `work` under the guard (directly when there is none).
    void guarded(const std::function<void()>& work) const;
};

// A float32 view of a tensor's values (no copy; the tensor must outlive it).
TensorView view_of(const Tensor& tensor);

// Elements [first, first + count) as float32: a pointer straight into the view when it holds aligned
// little-endian float32, else decoded into `scratch` (room for `count` floats). Read under the guard.
const float* floats_at(const TensorView& view, std::int64_t first, std::int64_t count, float* scratch);

// Throws qs::Error "<name>: NaN at index [1, 2]: values must be finite" for element `index` (which is not
// finite once decoded); a float64 that is finite but beyond float32's range is named as such instead.
[[noreturn]] void throw_nonfinite(const TensorView& view, std::int64_t index);

// The first element that is not finite once decoded, or -1. One sequential pass (the error path).
std::int64_t first_nonfinite(const TensorView& view);

// The whole tensor decoded into float32 (checked: finite, with the same messages as above), for the few
// algorithms that need every value in memory at once (percentile and MSE calibrators).
Tensor materialize(const TensorView& view);

}  // namespace qs
