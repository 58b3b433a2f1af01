// What every panel draws: a borrowed, read-only view of the current tensor and its quantization.
// Panels never compute quantization themselves; they read this. The owner (the app state) recomputes
// when a control changes and bumps `generation`, which is what textures key their re-upload on.
// There are no full-size result arrays: the quantization is its metrics and its overview (one pass, about
// screen resolution); full-resolution values of a window of cells come from core's quantize_window.
#pragma once

#include <cstdint>

#include "gui/document/tensor_data.hpp"
#include "quantscope/config.hpp"
#include "quantscope/fnv1a.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

struct QuantView {
    const TensorData* data = nullptr;
    // The float32 values in memory (data->floats), which whole-tensor tools need; nullptr for a tensor that
    // is only mapped (above kInMemoryElements): those tools then say so instead.
    const Tensor* tensor = nullptr;
    const QuantConfig* config = nullptr;
    const QuantParams* params = nullptr;
    const QuantOverview* overview = nullptr;  // its metrics, reduced images, code counts
    // Manual mode only: the metrics of the computed (asymmetric/symmetric) s and z for the same tensor,
    // shown beside the manual ones; nullptr otherwise.
    const Metrics* computed_metrics = nullptr;
    // When the config weighs by importance: importance_weighted_mse (Σ w·e² / Σ w per row, averaged); else null.
    const double* importance_mse = nullptr;
    // Increments whenever tensor, params or result change (any of them).
    std::uint64_t generation = 0;
    // Increments whenever the tensor changes (not its quantization): what caches of the original values key
    // on. 0: the owner does not count tensors; TensorKeyOf then identifies the tensor by address and content.
    std::uint64_t tensor_generation = 0;

    bool valid() const { return data && config && params && overview; }
    const Metrics& metrics() const { return overview->metrics; }
};

// The one-element pipeline of flat element `flat` (exact, read from the view).
inline ElementTrace TraceOf(const QuantView& v, std::int64_t flat) {
    return trace_element(v.data->view, *v.params, *v.config, flat);
}

// Identifies the tensor of a view for a cache of its values (range, histogram, reduced image). Without a
// tensor_generation, a new tensor allocated where a freed one was is told apart by its size and a sample of
// its values (two tensors that agree on all of these share cached figures).
struct TensorKey {
    std::uint64_t tensor_generation = 0;
    const void* data = nullptr;
    std::int64_t numel = 0;
    std::uint64_t sample_hash = 0;
    friend bool operator==(const TensorKey& a, const TensorKey& b) {
        return a.tensor_generation == b.tensor_generation && a.data == b.data && a.numel == b.numel &&
               a.sample_hash == b.sample_hash;
    }
    friend bool operator!=(const TensorKey& a, const TensorKey& b) { return !(a == b); }
};

inline TensorKey TensorKeyOf(const QuantView& view) {
    TensorKey k;
    if (!view.data) return k;
    k.tensor_generation = view.tensor_generation;
    k.data = view.data->view.data;
    k.numel = view.data->numel();
    if (view.tensor_generation == 0) {
        // The shape and 257 evenly spaced values (first and last included).
        Fnv1a h;
        for (std::int64_t d : view.data->shape()) h.add(d);
        const std::int64_t n = k.numel;
        for (std::int64_t i = 0; n > 0 && i <= 256; ++i) {
            const std::int64_t at = static_cast<std::int64_t>((static_cast<double>(n - 1) * i) / 256.0);
            float v = 0;
            view.data->view.guarded([&] { v = *floats_at(view.data->view, at, 1, &v); });
            h.add(v);
        }
        k.sample_hash = h.value();
    }
    return k;
}

}  // namespace qs::gui
