// Internal to the passes that stream their results: a batch handed to the caller's sink.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parallel.hpp"
#include "quantscope/quantize.hpp"

namespace qs::detail {

// Hands each wanted output of a batch to the sink, the outputs on different threads at once: their writes
// (to different files) then overlap instead of queueing behind each other.
inline void deliver(const ResultSink& sink, std::int64_t first, std::int64_t count, const QuantOutputs& batch, int threads) {
    std::vector<QuantOutputs> parts;
    if (batch.codes) parts.push_back({batch.codes, nullptr, nullptr});
    if (batch.dequantized) parts.push_back({nullptr, batch.dequantized, nullptr});
    if (batch.error) parts.push_back({nullptr, nullptr, batch.error});
    const auto count_parts = static_cast<std::int64_t>(parts.size());
    NextIndex next(0, count_parts);
    parallel_run(nullptr, static_cast<int>(std::min<std::int64_t>(threads, count_parts)), [&](int, int) {
        for (std::int64_t k = 0; next.take(k);) sink(first, count, parts[static_cast<std::size_t>(k)]);
    });
}

}  // namespace qs::detail
