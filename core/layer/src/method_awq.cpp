// AWQ (Lin et al. 2023), llm-awq's auto_scale search on SPEC's definitions, and plain round-to-nearest, which
// gives the winning ratio its codes.
#include <algorithm>
#include <cmath>
#include <string>

#include "method_steps.hpp"
#include "quantscope/error.hpp"

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

namespace {

// One ratio's error, transposed: et[k, r] = (r'(W diag(m)) diag(1/m) - W)[r, k], with the same float64
// operations rtn_quantize(W diag(m)) and the division by m would do (so the winner re-quantized by
// rtn_quantize is the W_r its loss was taken of), but without the codes and without a copy of W diag(m):
// wt = W^T, so that a row of W, its groups and its errors are contiguous. A pair out of float32's range
// throws (after the parallel loop: an exception must not leave an OpenMP region).
void scaled_error(const MatD& wt, const Eigen::VectorXd& m, const Eigen::VectorXd& m_inv, const WeightQuantizer& quantizer,
                  MatD& et) {
    const std::int64_t in = wt.rows(), out = wt.cols(), group = quantizer.group_columns();
    double tensor_scale = 1.0;
    std::int32_t tensor_zero = 0;
    if (quantizer.per_tensor()) {
        double lo = INFINITY, hi = -INFINITY;
        for (std::int64_t r = 0; r < out; ++r)
            for (std::int64_t k = 0; k < in; ++k) {
                const double v = wt(k, r) * m(k);
                lo = std::min(lo, v), hi = std::max(hi, v);
            }
        quantizer.pair(lo, hi, tensor_scale, tensor_zero);
    }
    std::string failure;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < out; ++r) {
        const double* w_row = wt.col(r).data();
        double* e_row = et.col(r).data();
        for (std::int64_t g0 = 0; g0 < in; g0 += group) {
            double scale = tensor_scale;
            std::int32_t zero = tensor_zero;
            if (!quantizer.per_tensor()) {
                double lo = INFINITY, hi = -INFINITY;
                for (std::int64_t k = g0; k < g0 + group; ++k) {
                    const double v = w_row[k] * m(k);
                    lo = std::min(lo, v), hi = std::max(hi, v);
                }
                try {
                    quantizer.pair(lo, hi, scale, zero);
                } catch (const Error& e) {
#pragma omp critical(qs_awq_failure)
                    if (failure.empty()) failure = e.what();
                    scale = 1.0, zero = 0;
                }
            }
            for (std::int64_t k = g0; k < g0 + group; ++k) {
                bool clipped = false;
                const std::int32_t q = quantizer.code(w_row[k] * m(k), scale, zero, clipped);
                e_row[k] = WeightQuantizer::value(q, scale, zero) * m_inv(k) - w_row[k];
            }
        }
    }
    if (!failure.empty()) throw Error(failure);
}

}  // namespace

QuantizedW awq_quantize(const MatD& w, const MatD& x, const MethodConfig& method, const WeightQuantizer& quantizer,
                        const MethodControl& control, AwqDetails& details) {
    const std::int64_t in = w.cols(), out = w.rows(), tokens = x.rows();
    const Eigen::VectorXd a = x.cwiseAbs().colwise().mean().transpose();  // a_k = mean_t |x[t, k]|
    details.mean_abs_x.assign(a.data(), a.data() + in);
    // loss(r) = |x (W_r - W)^T|^2 / count depends on x through x^T x alone: with more tokens than inputs the
    // Gram matrix (in x in) makes each ratio's product out x in x in instead of out x tokens x in (llm-awq's
    // calibration is 64K tokens for 4096 inputs: 16 times less).
    const bool gram = tokens > in;
    MatD g;
    if (gram) {
        g = MatD::Zero(in, in);
        g.selfadjointView<Eigen::Lower>().rankUpdate(x.transpose());
        g.triangularView<Eigen::StrictlyUpper>() = g.transpose();
    }
    const double count = static_cast<double>(tokens) * static_cast<double>(out);
    // Made once, reused by every ratio: W^T, the error (transposed; and as W is, for the Gram matrix's product
    // in the operand order it always had, which fixes its float64 rounding) and the product the loss sums.
    const MatD wt = w.transpose();
    MatD et(in, out), e(gram ? out : 0, gram ? in : 0), product(gram ? out : tokens, gram ? in : out);
    Eigen::VectorXd best_m;
    double best_loss = INFINITY;
    details.losses.clear();
    // The search's ratios, or the one asked for (its W_r made by the same operations as the search's).
    const int ratios = method.awq_ratio ? 1 : method.grid;
    for (int i = 0; i < ratios; ++i) {
        poll(control, static_cast<double>(i) / ratios);
        const double r = method.awq_ratio ? *method.awq_ratio : static_cast<double>(i) / method.grid;
        const std::vector<double> scales = awq_scales(details.mean_abs_x, r);
        const Eigen::VectorXd m = Eigen::Map<const Eigen::VectorXd>(scales.data(), in);
        scaled_error(wt, m, m.cwiseInverse(), quantizer, et);  // e = W_r - W, W_r = r'(W diag(m)) diag(1/m)
        double loss;
        if (gram) {
            e = et.transpose();
            product.noalias() = e * g;
            loss = product.cwiseProduct(e).sum() / count;
        } else {
            product.noalias() = x * et;
            loss = product.squaredNorm() / count;
        }
        details.losses.push_back(loss);
        if (i == 0 || loss < best_loss) {  // the first on ties
            best_loss = loss;
            details.ratio = r;
            best_m = m;
        }
    }
    // The winner's codes and pairs: the same operations again, once.
    QuantizedW best = rtn_quantize(w * best_m.asDiagonal(), quantizer);
    best.dequantized = best.dequantized * best_m.cwiseInverse().asDiagonal();
    details.scales.assign(best_m.data(), best_m.data() + in);
    poll(control, 1.0);
    return best;
}

}  // namespace qs::detail

namespace qs {

std::vector<double> awq_scales(const std::vector<double>& mean_abs_x, double ratio) {
    std::vector<double> m(mean_abs_x.size());
    for (std::size_t k = 0; k < m.size(); ++k) m[k] = std::max(std::pow(mean_abs_x[k], ratio), 1e-4);
    if (m.empty()) return m;
    const double norm = std::sqrt(*std::max_element(m.begin(), m.end()) * *std::min_element(m.begin(), m.end()));
    for (double& v : m) v /= norm;
    return m;
}

}  // namespace qs
