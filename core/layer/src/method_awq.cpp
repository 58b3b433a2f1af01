// AWQ (Lin et al. 2023), llm-awq's auto_scale search on SPEC's definitions, and plain round-to-nearest, which
// it quantizes with at every ratio.
#include <algorithm>
#include <cmath>

#include "method_steps.hpp"

namespace qs::detail {

void poll(const MethodControl& control, double fraction) {
    if (control.cancelled && control.cancelled()) throw MethodCancelled();
    if (control.progress) control.progress(std::clamp(fraction, 0.0, 1.0));
}

QuantizedW rtn_quantize(const MatD& w, const WeightQuantizer& quantizer) {
    const std::int64_t out = w.rows(), in = w.cols(), group = quantizer.group_columns();
    QuantizedW result;
    const std::int64_t blocks = quantizer.blocks();
    result.scales.assign(static_cast<std::size_t>(blocks), 1.0);
    result.zero_points.assign(static_cast<std::size_t>(blocks), 0);
    if (quantizer.per_tensor()) {
        quantizer.pair(w.minCoeff(), w.maxCoeff(), result.scales[0], result.zero_points[0]);
    } else {
#pragma omp parallel for schedule(static)
        for (std::int64_t r = 0; r < out; ++r)
            for (std::int64_t g0 = 0; g0 < in; g0 += group) {
                const std::size_t k = static_cast<std::size_t>(quantizer.block_of(r, g0));
                const auto span = w.row(r).segment(g0, group);
                quantizer.pair(span.minCoeff(), span.maxCoeff(), result.scales[k], result.zero_points[k]);
            }
    }
    result.codes.resize(static_cast<std::size_t>(out * in));
    result.dequantized.resize(out, in);
    std::int64_t clipped = 0;
    // Column by column: W is column-major, the codes row-major.
#pragma omp parallel for schedule(static) reduction(+ : clipped)
    for (std::int64_t j = 0; j < in; ++j)
        for (std::int64_t r = 0; r < out; ++r) {
            const std::size_t k = static_cast<std::size_t>(quantizer.block_of(r, j));
            bool c = false;
            const std::int32_t q = quantizer.code(w(r, j), result.scales[k], result.zero_points[k], c);
            result.codes[static_cast<std::size_t>(r * in + j)] = q;
            result.dequantized(r, j) = WeightQuantizer::value(q, result.scales[k], result.zero_points[k]);
            clipped += c;
        }
    result.clipped = clipped;
    return result;
}

QuantizedW awq_quantize(const MatD& w, const MatD& x, const MethodConfig& method, const WeightQuantizer& quantizer,
                        const MethodControl& control, AwqDetails& details) {
    const std::int64_t in = w.cols(), tokens = x.rows();
    const Eigen::VectorXd a = x.cwiseAbs().colwise().mean().transpose();  // a_k = mean_t |x[t, k]|
    details.mean_abs_x.assign(a.data(), a.data() + in);
    const MatD y = x * w.transpose();  // x W^T, the product each ratio's is compared with
    const double count = static_cast<double>(tokens) * static_cast<double>(w.rows());
    QuantizedW best;
    Eigen::VectorXd best_m;
    double best_loss = INFINITY;
    details.losses.clear();
    for (int i = 0; i < method.grid; ++i) {
        poll(control, static_cast<double>(i) / method.grid);
        const double r = static_cast<double>(i) / method.grid;
        Eigen::VectorXd m(in);
        for (std::int64_t k = 0; k < in; ++k) m(k) = std::max(std::pow(a(k), r), 1e-4);
        m /= std::sqrt(m.maxCoeff() * m.minCoeff());
        QuantizedW q = rtn_quantize(w * m.asDiagonal(), quantizer);
        q.dequantized = q.dequantized * m.cwiseInverse().asDiagonal();  // W_r = r'(W diag(m)) diag(1/m)
        const double loss = (x * q.dequantized.transpose() - y).squaredNorm() / count;
        details.losses.push_back(loss);
        if (i == 0 || loss < best_loss) {  // the first on ties
            best_loss = loss;
            details.ratio = r;
            best = std::move(q);
            best_m = m;
        }
    }
    details.scales.assign(best_m.data(), best_m.data() + in);
    poll(control, 1.0);
    return best;
}

}  // namespace qs::detail
