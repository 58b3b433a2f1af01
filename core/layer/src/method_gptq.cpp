// GPTQ (Frantar et al. 2022) as IST-DASLab/gptq's gptq.py computes it, on SPEC's definitions: blocked, the
// updates inside a block column by column and to the later columns once per block as one product.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "method_steps.hpp"
#include "quantscope/error.hpp"

namespace qs::detail {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// H = 2 x^T x with dead columns (H[k, k] = 0: no token uses input k) set to H[k, k] = 1 and W[:, k] = 0, then
// damped by damp * mean(diag H).
MatD hessian(const MatD& x, MatD& w, double damp, std::int64_t& dead) {
    const std::int64_t in = x.cols();
    MatD h = MatD::Zero(in, in);
    h.selfadjointView<Eigen::Lower>().rankUpdate(x.transpose(), 2.0);
    h.triangularView<Eigen::StrictlyUpper>() = h.transpose();
    dead = 0;
    for (std::int64_t k = 0; k < in; ++k)
        if (h(k, k) == 0.0) {
            h(k, k) = 1.0;
            w.col(k).setZero();
            ++dead;
        }
    h.diagonal().array() += damp * h.diagonal().mean();
    return h;
}

// Columns by decreasing diag H, ties in index order; or index order.
std::vector<std::int64_t> processing_order(const MatD& h, bool act_order) {
    std::vector<std::int64_t> order(static_cast<std::size_t>(h.cols()));
    std::iota(order.begin(), order.end(), 0);
    if (act_order)
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return h(a, a) > h(b, b); });
    return order;
}

}  // namespace

GptqPrepared prepare_gptq(MatD w, const MatD& x, double damp, bool act_order, const MethodControl& control) {
    const std::int64_t out = w.rows(), in = w.cols();
    GptqPrepared g;
    auto start = std::chrono::steady_clock::now();
    MatD h = hessian(x, w, damp, g.dead_columns);
    g.hessian_ms = ms_since(start);
    start = std::chrono::steady_clock::now();
    g.order = processing_order(h, act_order);
    g.position.assign(static_cast<std::size_t>(in), 0);
    for (std::int64_t p = 0; p < in; ++p) g.position[static_cast<std::size_t>(g.order[static_cast<std::size_t>(p)])] = p;
    // In processing order: W's columns and H's rows and columns permuted; U upper with H^-1 = U^T U.
    g.w.resize(out, in);
    MatD hp(in, in);
    for (std::int64_t p = 0; p < in; ++p) g.w.col(p) = w.col(g.order[static_cast<std::size_t>(p)]);
    for (std::int64_t p = 0; p < in; ++p)
        for (std::int64_t q = 0; q < in; ++q) hp(q, p) = h(g.order[static_cast<std::size_t>(q)], g.order[static_cast<std::size_t>(p)]);
    h.resize(0, 0);
    poll(control, 0.05);
    // U without forming H^-1: with J the reversal, J H J = L L^T gives H = V V^T with V = J L J upper, so
    // H^-1 = V^-T V^-1 and U = V^-1 (upper, positive diagonal: the Cholesky factor). One factorization and one
    // triangular inverse instead of gptq.py's factorization, inverse and second factorization.
    const MatD reversed = hp.reverse();  // J H J
    hp.resize(0, 0);
    Eigen::LLT<MatD> llt(reversed);
    if (llt.info() != Eigen::Success)
        throw Error("gptq: the inputs' Hessian 2 x^T x is singular even after damping (raise --damp)");
    const MatD v = MatD(llt.matrixL()).reverse();  // J L J, upper
    g.u = MatD::Identity(in, in);
    v.triangularView<Eigen::Upper>().solveInPlace(g.u);
    for (std::int64_t p = 0; p < in; ++p)
        if (!(g.u(p, p) > 0.0) || !std::isfinite(g.u(p, p)))
            throw Error("gptq: the inverse Hessian is singular even after damping (raise --damp)");
    g.inverse_ms = ms_since(start);  // with the permutation, which is small beside it
    poll(control, 0.15);
    return g;
}

QuantizedW gptq_quantize(MatD w, const MatD& x, const MethodConfig& method, const WeightQuantizer& quantizer,
                         const MethodControl& control, GptqDetails& details) {
    const std::int64_t out = w.rows(), in = w.cols();
    details.damp = method.damp;
    details.block = method.block;
    details.act_order = method.act_order;
    GptqPrepared prepared = prepare_gptq(std::move(w), x, method.damp, method.act_order, control);
    details.dead_columns = prepared.dead_columns;
    details.hessian_ms = prepared.hessian_ms;
    details.inverse_ms = prepared.inverse_ms;
    const auto loop_start = std::chrono::steady_clock::now();
    details.order = prepared.order;
    const std::vector<std::int64_t>& order = prepared.order;
    const std::vector<std::int64_t>& position = prepared.position;
    MatD& wp = prepared.w;
    const MatD& u = prepared.u;

    QuantizedW result;
    result.codes.assign(static_cast<std::size_t>(out * in), 0);
    result.dequantized.resize(out, in);
    const std::int64_t blocks = quantizer.blocks();
    result.scales.assign(static_cast<std::size_t>(blocks), 1.0);
    result.zero_points.assign(static_cast<std::size_t>(blocks), 0);
    const std::int64_t group = quantizer.group_columns();
    const bool grouped = group < in;
    // Per tensor and per channel: the pairs from W (dead columns zeroed) before the loop.
    if (!grouped) {
        for (std::int64_t r = 0; r < (quantizer.per_tensor() ? 1 : out); ++r) {
            const double lo = quantizer.per_tensor() ? wp.minCoeff() : wp.row(r).minCoeff();
            const double hi = quantizer.per_tensor() ? wp.maxCoeff() : wp.row(r).maxCoeff();
            quantizer.pair(lo, hi, result.scales[static_cast<std::size_t>(r)], result.zero_points[static_cast<std::size_t>(r)]);
        }
    }
    std::vector<char> group_done(static_cast<std::size_t>(grouped ? in / group : 0), 0);
    const std::int64_t block = std::min<std::int64_t>(method.block, in);
    MatD err(out, block);
    Eigen::VectorXd lo(out), hi(out), current(out);
    for (std::int64_t b0 = 0; b0 < in; b0 += block) {
        const std::int64_t b1 = std::min(b0 + block, in);
        for (std::int64_t p = b0; p < b1; ++p) {
            const std::int64_t j = order[static_cast<std::size_t>(p)];
            if (grouped && !group_done[static_cast<std::size_t>(j / group)]) {
                // The group's pairs from its columns' current values: inside this block they are up to date,
                // past it they still owe the block's updates so far.
                group_done[static_cast<std::size_t>(j / group)] = 1;
                lo.setConstant(INFINITY);
                hi.setConstant(-INFINITY);
                const std::int64_t g0 = j / group * group;
                for (std::int64_t c = g0; c < g0 + group; ++c) {
                    const std::int64_t q = position[static_cast<std::size_t>(c)];
                    current = wp.col(q);
                    if (q >= b1 && p > b0) current.noalias() -= err.leftCols(p - b0) * u.block(b0, q, p - b0, 1);
                    lo = lo.cwiseMin(current);
                    hi = hi.cwiseMax(current);
                }
                for (std::int64_t r = 0; r < out; ++r) {
                    const std::int64_t k = quantizer.block_of(r, j);
                    quantizer.pair(lo(r), hi(r), result.scales[static_cast<std::size_t>(k)],
                                   result.zero_points[static_cast<std::size_t>(k)]);
                }
            }
            for (std::int64_t r = 0; r < out; ++r) {
                const std::size_t k = static_cast<std::size_t>(quantizer.block_of(r, j));
                bool clipped = false;
                const std::int32_t q = quantizer.code(wp(r, p), result.scales[k], result.zero_points[k], clipped);
                const double v = WeightQuantizer::value(q, result.scales[k], result.zero_points[k]);
                result.codes[static_cast<std::size_t>(r * in + j)] = q;
                result.dequantized(r, j) = v;
                result.clipped += clipped;
                err(r, p - b0) = (wp(r, p) - v) / u(p, p);
            }
            // Inside the block: every later column of it, now.
            if (p + 1 < b1) wp.middleCols(p + 1, b1 - p - 1).noalias() -= err.col(p - b0) * u.row(p).segment(p + 1, b1 - p - 1);
        }
        // The columns after the block: its errors at once.
        if (b1 < in) wp.rightCols(in - b1).noalias() -= err.leftCols(b1 - b0) * u.block(b0, b1, b1 - b0, in - b1);
        poll(control, 0.15 + 0.85 * static_cast<double>(b1) / static_cast<double>(in));
    }
    details.loop_ms = ms_since(loop_start);
    return result;
}

}  // namespace qs::detail
