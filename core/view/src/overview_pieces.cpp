// Cutting the overview pass into pieces (overview_pieces.hpp).
#include "overview_pieces.hpp"

#include <algorithm>

namespace qs::detail {

OverviewGrid slices_of(const Shape& shape) {
    OverviewGrid g;
    const std::size_t rank = shape.size();
    if (rank == 0) return g;
    g.cols = shape[rank - 1];
    g.rows = rank >= 2 ? shape[rank - 2] : 1;
    g.slices = rank == 3 ? shape[0] : 1;
    return g;
}

bool cut_band(const QuantParams& p, std::int64_t a, std::int64_t b, std::vector<Piece>& out) {
    const std::int64_t period = p.block_stride * p.block_count;
    std::int64_t step = 0;
    const bool one_run = a / p.block_stride == (b - 1) / p.block_stride;
    if (period <= kPiece && a % period == 0 && (b - a) % period == 0) step = std::max<std::int64_t>(1, kPiece / period) * period;
    else if (p.block_stride >= kPiece || one_run) step = kPiece;  // cut at run ends too: each piece has one (s, z)
    else if (a % p.block_stride == 0 && (b - a) % p.block_stride == 0) step = (kPiece / p.block_stride) * p.block_stride;
    else return false;
    for (std::int64_t at = a; at < b;) {
        std::int64_t end = std::min(b, at + step);
        if (p.block_stride >= kPiece || one_run) end = std::min(end, (at / p.block_stride + 1) * p.block_stride);
        out.push_back({at, end - at});
        at = end;
    }
    return true;
}

// The (s, z) of elements [first, first + count) of `p` as a layout of their own.
const QuantParams& piece_params(const QuantParams& p, const Piece& piece, QuantParams& scratch) {
    const std::int64_t period = p.block_stride * p.block_count;
    if (piece.first % period == 0 && piece.count % period == 0) return p;
    const std::int64_t run0 = piece.first / p.block_stride;
    if (p.block_stride >= kPiece || (piece.first + piece.count - 1) / p.block_stride == run0) {
        const auto b = static_cast<std::size_t>(run0 % p.block_count);
        scratch.scale.assign(1, p.scale_of(static_cast<std::int64_t>(b)));
        scratch.zero_point.assign(1, p.zero_point_of(static_cast<std::int64_t>(b)));
        scratch.block_stride = piece.count;
        scratch.block_count = 1;
        return scratch;
    }
    scratch.block_stride = p.block_stride;
    scratch.block_count = piece.count / p.block_stride;
    scratch.scale.resize(static_cast<std::size_t>(scratch.block_count));
    scratch.zero_point.resize(static_cast<std::size_t>(scratch.block_count));
    for (std::int64_t j = 0; j < scratch.block_count; ++j) {
        const auto b = static_cast<std::size_t>((run0 + j) % p.block_count);
        scratch.scale[static_cast<std::size_t>(j)] = p.scale_of(static_cast<std::int64_t>(b));
        scratch.zero_point[static_cast<std::size_t>(j)] = p.zero_point_of(static_cast<std::int64_t>(b));
    }
    return scratch;
}

}  // namespace qs::detail
