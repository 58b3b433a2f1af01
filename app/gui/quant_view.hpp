// What every panel draws: a borrowed, read-only view of the current tensor and its quantization.
// Panels never compute quantization themselves; they read this. The owner (the app state) recomputes
// when a control changes and bumps `generation`, which is what textures key their re-upload on.
#pragma once

#include <cstdint>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor.hpp"

namespace qs::gui {

struct QuantView {
    const Tensor* tensor = nullptr;
    const QuantConfig* config = nullptr;
    const QuantParams* params = nullptr;
    const QuantResult* result = nullptr;
    // Manual mode only: the metrics of the computed (asymmetric/symmetric) s and z for the same tensor,
    // shown beside the manual ones; nullptr otherwise.
    const Metrics* computed_metrics = nullptr;
    // Increments whenever tensor, params or result change (any of them).
    std::uint64_t generation = 0;

    bool valid() const { return tensor && config && params && result && !result->codes.empty(); }
};

}  // namespace qs::gui
