// The tensor the document shows, immutable and shared: its values as a view in their stored type (a float32
// tensor in memory, or a file's mapping read in bf16/f16/f32/f64 without a float32 copy), and what no
// quantization setting changes: its overview at about screen resolution, its range and where the extremes are.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/stored_blocks.hpp"
#include "quantscope/tensor.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs::gui {

// Blocks in a tensor's overview (all slices): about a screen's worth, 16 MB of figures per kind at most.
constexpr std::int64_t kOverviewCells = std::int64_t{1} << 20;
// Files of up to this many elements are also decoded into a float32 tensor in memory (256 MB at most), which
// editing and the tools built for small tensors need (the layer lab, the lessons); larger ones are only
// mapped: the figure, histograms, calibrators and comparison read them in their stored type, and those tools
// say why they do not.
constexpr std::int64_t kInMemoryElements = std::int64_t{1} << 24;

struct TensorData {
    std::shared_ptr<const Tensor> floats;       // the values in memory; null for a mapped file only
    std::shared_ptr<const TensorFile> file;     // the mapping; null for a tensor in memory
    TensorView view;                            // over `floats` or the mapping
    ValueOverview values;                       // mean per overview block, range, argmin / argmax
    // Another file's quantization of these values (the Model tab's comparison: B's stored ggml blocks, this
    // tensor being A's): while the config's format is theirs, it is what the window shows (ParamsFor).
    std::shared_ptr<const StoredBlocks> stored;
    // The last per-block layout's ranges under min/max calibration (BlockRanges), read once so that the next
    // (s, z) of the same layout (a drag of the bits slider, asymmetric to symmetric) need no pass. Filled by
    // ParamsFor on whichever thread runs it.
    struct RangesCache {
        std::mutex mutex;
        std::shared_ptr<const BlockRanges> ranges;
    };
    std::shared_ptr<RangesCache> block_ranges = std::make_shared<RangesCache>();

    const Shape& shape() const { return view.shape; }
    std::int64_t numel() const { return view.numel(); }
    int rank() const { return static_cast<int>(view.shape.size()); }
    std::int64_t slices() const { return rank() == 3 ? view.shape[0] : 1; }
    std::int64_t rows() const { return rank() == 1 ? 1 : view.shape[static_cast<std::size_t>(rank() - 2)]; }
    std::int64_t cols() const { return view.shape.back(); }
    // Bytes of the values as stored (what a mapping keeps resident).
    std::int64_t stored_bytes() const { return numel() * static_cast<std::int64_t>(element_size(view.type)); }
};

// A tensor in memory (checked: finite values, rank 1..3; throws qs::Error). One pass for the overview.
std::shared_ptr<const TensorData> MakeTensorData(std::shared_ptr<const Tensor> tensor);
// A tensor file's view: decoded into memory up to kInMemoryElements, else read from the mapping (the first
// pass checks the values). Throws qs::Error naming the file.
std::shared_ptr<const TensorData> MakeTensorData(std::shared_ptr<const TensorFile> file);

// What a tool that works on small tensors only says on a mapped one: "<what> <why>; this tensor has
// 525,336,576 elements and is read from its file. The figure, the metrics, the histograms, the calibrators
// and the comparison work on it." (`why` says what the tool needs that a tensor of this size cannot give.)
std::string SmallTensorNote(const std::string& what, const std::string& why, const TensorData& data);

}  // namespace qs::gui
