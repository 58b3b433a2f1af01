// Internal to the window's overview pass: how it cuts the tensor into pieces (each inside one band of the
// overview's blocks, small enough that a piece's results stay in cache) and the (s, z) each piece reads.
#pragma once

#include <cstdint>
#include <vector>

#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"

namespace qs::detail {

// The grid of one cell an element: the slices, rows and columns a rank 1 to 3 shape is seen as (a rank 0
// shape: none).
OverviewGrid slices_of(const Shape& shape);

// The pass is cut into pieces of about kPiece elements, each inside one band of blocks, quantized by
// quantize_view into per-thread buffers small enough to stay in cache and folded at once: the results
// cross memory once (the input), not three more times as full arrays or streamed batches would.
constexpr std::int64_t kPiece = std::int64_t{1} << 17;

// Elements [first, first + count) of the flat array.
struct Piece {
    std::int64_t first = 0, count = 0;
};

// Appends the pieces of the band [a, b) to `out`. Returns false when the layout cannot be cut so (a period
// that does not divide the band), which the callers of overview_grid never produce.
bool cut_band(const QuantParams& p, std::int64_t a, std::int64_t b, std::vector<Piece>& out);

// The (s, z) of the piece's elements as a layout of their own: `p` itself when the piece is whole periods,
// else `scratch` filled.
const QuantParams& piece_params(const QuantParams& p, const Piece& piece, QuantParams& scratch);

}  // namespace qs::detail
