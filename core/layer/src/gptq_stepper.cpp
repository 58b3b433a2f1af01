// GPTQ's eager loop, one column a step (gptq_stepper.hpp), on the preparation and the quantizer the blocked
// loop uses (method_steps.hpp, method_quantizer.hpp). A step is one column's rounding and one rank-1 update of
// the columns still to come: out x (in - done) multiply-adds, about a millisecond on a 1024 x 1024 layer.
// Stepping back is the inverse update plus the column's stored values, so no snapshot of W is kept.
#include "quantscope/gptq_stepper.hpp"

#include <algorithm>
#include <cmath>

#include "method_steps.hpp"

namespace qs {

using detail::MatD;
using detail::WeightQuantizer;

struct GptqStepper::State {
    State(const QuantConfig& weights, std::int64_t out, std::int64_t in) : quantizer(weights, out, in) {}
    WeightQuantizer quantizer;
    detail::GptqPrepared prepared;  // w: W now, columns in processing order
    MatD original;                  // the same as the loop started
    std::int64_t out = 0, in = 0, done = 0;
    std::vector<std::int32_t> codes;      // [out, in] row-major, by W's column
    std::vector<double> scales;           // one pair per block of the quantizer
    std::vector<std::int32_t> zero_points;
    std::vector<char> group_set;          // per group: its pairs taken (grouped only)
    std::vector<Step> history;
    std::vector<Eigen::VectorXd> before;  // per step: the column as it came
    std::vector<char> set_group;          // per step: it took its group's pairs
    bool grouped() const { return quantizer.group_columns() < in; }
};

GptqStepper::GptqStepper(const Tensor& x, const Tensor& w, const LayerConfig& config, const MethodConfig& method,
                         const MethodControl& control) {
    check_method(x, w, nullptr, config, method);
    const std::int64_t out = w.rows(), in = w.cols(), tokens = x.numel() / in;
    using RowMatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    MatD wd = Eigen::Map<const RowMatF>(w.values.data(), out, in).cast<double>();
    const MatD xd = Eigen::Map<const RowMatF>(x.values.data(), tokens, in).cast<double>();
    s_ = std::make_unique<State>(config.weights, out, in);
    s_->out = out;
    s_->in = in;
    s_->prepared = detail::prepare_gptq(std::move(wd), xd, method.damp, method.act_order, control);
    s_->original = s_->prepared.w;
    s_->scales.assign(static_cast<std::size_t>(s_->quantizer.blocks()), 1.0);
    s_->zero_points.assign(s_->scales.size(), 0);
    // Per tensor and per channel: the pairs from W (dead columns zeroed) before the loop.
    if (!s_->grouped()) {
        const MatD& wp = s_->original;
        const bool whole = s_->quantizer.per_tensor();
        for (std::int64_t r = 0; r < (whole ? 1 : out); ++r)
            s_->quantizer.pair(whole ? wp.minCoeff() : wp.row(r).minCoeff(), whole ? wp.maxCoeff() : wp.row(r).maxCoeff(),
                               s_->scales[static_cast<std::size_t>(r)], s_->zero_points[static_cast<std::size_t>(r)]);
    }
    reset();
}

GptqStepper::~GptqStepper() = default;
GptqStepper::GptqStepper(GptqStepper&&) noexcept = default;

std::int64_t GptqStepper::rows() const { return s_->out; }
std::int64_t GptqStepper::columns() const { return s_->in; }
std::int64_t GptqStepper::done() const { return s_->done; }
const std::vector<std::int64_t>& GptqStepper::order() const { return s_->prepared.order; }
const std::vector<std::int64_t>& GptqStepper::position() const { return s_->prepared.position; }
std::int64_t GptqStepper::dead_columns() const { return s_->prepared.dead_columns; }
double GptqStepper::current(std::int64_t row, std::int64_t column) const {
    return s_->prepared.w(row, s_->prepared.position[static_cast<std::size_t>(column)]);
}
double GptqStepper::original(std::int64_t row, std::int64_t column) const {
    return s_->original(row, s_->prepared.position[static_cast<std::size_t>(column)]);
}
std::int32_t GptqStepper::code(std::int64_t row, std::int64_t column) const {
    return s_->codes[static_cast<std::size_t>(row * s_->in + column)];
}
const std::vector<std::int32_t>& GptqStepper::codes() const { return s_->codes; }
const std::vector<GptqStepper::Step>& GptqStepper::history() const { return s_->history; }

void GptqStepper::reset() {
    s_->prepared.w = s_->original;
    s_->codes.assign(static_cast<std::size_t>(s_->out * s_->in), 0);
    s_->done = 0;
    s_->history.clear();
    s_->before.clear();
    s_->set_group.clear();
    if (s_->grouped()) s_->group_set.assign(static_cast<std::size_t>(s_->in / s_->quantizer.group_columns()), 0);
}

const GptqStepper::Step& GptqStepper::next() {
    State& s = *s_;
    if (s.done >= s.in) throw Error("gptq: every column is processed");
    MatD& wp = s.prepared.w;
    const MatD& u = s.prepared.u;
    const std::int64_t p = s.done, j = s.prepared.order[static_cast<std::size_t>(p)], group = s.quantizer.group_columns();
    // A group's pairs from its columns' current values, when the loop reaches the first of them.
    bool sets_group = false;
    if (s.grouped() && !s.group_set[static_cast<std::size_t>(j / group)]) {
        sets_group = true;
        s.group_set[static_cast<std::size_t>(j / group)] = 1;
        const std::int64_t g0 = j / group * group;
        for (std::int64_t r = 0; r < s.out; ++r) {
            double lo = INFINITY, hi = -INFINITY;
            for (std::int64_t c = g0; c < g0 + group; ++c) {
                const double v = wp(r, s.prepared.position[static_cast<std::size_t>(c)]);
                lo = std::min(lo, v);
                hi = std::max(hi, v);
            }
            const std::size_t k = static_cast<std::size_t>(s.quantizer.block_of(r, j));
            s.quantizer.pair(lo, hi, s.scales[k], s.zero_points[k]);
        }
    }
    Step step;
    step.column = j;
    step.u_jj = u(p, p);
    step.e.resize(static_cast<std::size_t>(s.out));
    s.before.push_back(wp.col(p));
    for (std::int64_t r = 0; r < s.out; ++r) {
        const std::size_t k = static_cast<std::size_t>(s.quantizer.block_of(r, j));
        bool clipped = false;
        const double w = wp(r, p), orig = s.original(r, p);
        const std::int32_t q = s.quantizer.code(w, s.scales[k], s.zero_points[k], clipped);
        const double v = WeightQuantizer::value(q, s.scales[k], s.zero_points[k]);
        const double vo = WeightQuantizer::value(s.quantizer.code(orig, s.scales[k], s.zero_points[k], clipped), s.scales[k],
                                                 s.zero_points[k]);
        s.codes[static_cast<std::size_t>(r * s.in + j)] = q;
        step.error_before += (w - v) * (w - v);
        step.error_original += (orig - vo) * (orig - vo);
        step.e[static_cast<std::size_t>(r)] = (w - v) / step.u_jj;
        wp(r, p) = v;
    }
    // Every later column l: W[:, l] -= e U[j, l].
    if (p + 1 < s.in) {
        const Eigen::Map<const Eigen::VectorXd> e(step.e.data(), s.out);
        wp.rightCols(s.in - p - 1).noalias() -= e * u.row(p).tail(s.in - p - 1);
    }
    s.set_group.push_back(sets_group);
    s.history.push_back(std::move(step));
    ++s.done;
    return s.history.back();
}

void GptqStepper::next_block(std::int64_t block) {
    if (block < 1) block = 1;
    const std::int64_t end = std::min(s_->in, (s_->done / block + 1) * block);
    while (s_->done < end) next();
}

void GptqStepper::previous() {
    State& s = *s_;
    if (s.done == 0) return;
    const std::int64_t p = s.done - 1;
    const Step& step = s.history.back();
    MatD& wp = s.prepared.w;
    if (p + 1 < s.in) {
        const Eigen::Map<const Eigen::VectorXd> e(step.e.data(), s.out);
        wp.rightCols(s.in - p - 1).noalias() += e * s.prepared.u.row(p).tail(s.in - p - 1);
    }
    wp.col(p) = s.before.back();
    for (std::int64_t r = 0; r < s.out; ++r) s.codes[static_cast<std::size_t>(r * s.in + step.column)] = 0;
    if (s.set_group.back()) s.group_set[static_cast<std::size_t>(step.column / s.quantizer.group_columns())] = 0;
    s.before.pop_back();
    s.set_group.pop_back();
    s.history.pop_back();
    --s.done;
}

}  // namespace qs
