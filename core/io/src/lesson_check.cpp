// The app's side of a lesson's printed numbers: each quantity computed from the quantization on show, and
// whether it agrees with what the notebook printed.
#include <algorithm>
#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/lesson.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"

namespace qs {
namespace {

// Every element's value, or the one at `at`.
template <class T, class F>
std::vector<double> per_element(std::int64_t at, std::int64_t n, F&& value_at) {
    std::vector<double> out;
    if (at >= 0) out.push_back(static_cast<double>(value_at(at)));
    else
        for (std::int64_t i = 0; i < n; ++i) out.push_back(static_cast<double>(value_at(i)));
    return out;
}

std::vector<double> app_values(const LessonNumber& number, const Tensor& tensor, const QuantConfig& config,
                               const QuantParams& params, const QuantResult& result) {
    const std::int64_t n = tensor.numel(), at = number.at;
    const auto minmax = [&] {
        const auto [lo, hi] = std::minmax_element(tensor.values.begin(), tensor.values.end());
        return std::pair<double, double>(*lo, *hi);
    };
    const Metrics& m = result.metrics;
    switch (number.quantity) {
        case LessonQuantity::Scale: return params.scale;
        case LessonQuantity::ZeroPoint: return std::vector<double>(params.zero_point.begin(), params.zero_point.end());
        case LessonQuantity::ZeroPointUnrounded:
            if (config.mode != Mode::Asymmetric || params.block_count != 1)
                throw Error("zero_point_unrounded applies to asymmetric per-tensor quantization only");
            return {config.dtype.q_min() - minmax().first / params.scale[0]};
        case LessonQuantity::RMin: return {minmax().first};
        case LessonQuantity::RMax: return {minmax().second};
        case LessonQuantity::QMin: return {static_cast<double>(config.dtype.q_min())};
        case LessonQuantity::QMax: return {static_cast<double>(config.dtype.q_max())};
        case LessonQuantity::Original:
            return per_element<float>(at, n, [&](std::int64_t i) { return tensor.values[static_cast<std::size_t>(i)]; });
        case LessonQuantity::Code:
            return per_element<int>(at, n, [&](std::int64_t i) { return result.codes[static_cast<std::size_t>(i)]; });
        case LessonQuantity::PreClamp:
            return per_element<float>(at, n, [&](std::int64_t i) {
                return trace_value(tensor.values[static_cast<std::size_t>(i)], params, config, i).rounded;
            });
        case LessonQuantity::Dequantized:
            return per_element<float>(at, n, [&](std::int64_t i) { return result.dequantized[static_cast<std::size_t>(i)]; });
        case LessonQuantity::Error:
            return per_element<float>(at, n, [&](std::int64_t i) { return result.error[static_cast<std::size_t>(i)]; });
        case LessonQuantity::Mse: return {m.mse};
        case LessonQuantity::Rmse: return {m.rmse};
        case LessonQuantity::Mae: return {m.mae};
        case LessonQuantity::MaxAbsError: return {m.max_abs_error};
        case LessonQuantity::L2Error: return {m.l2_error};
        case LessonQuantity::SqnrDb:
            if (!m.sqnr_db) throw Error("sqnr_db is undefined here (no error or no signal)");
            return {*m.sqnr_db};
        case LessonQuantity::Clipped: return {static_cast<double>(m.clipped)};
        case LessonQuantity::LevelsUsed: return {static_cast<double>(m.levels_used)};
    }
    return {};
}

}  // namespace

LessonAgreement compare_printed(const LessonNumber& number, const Tensor& tensor, const QuantConfig& config,
                                const QuantParams& params, const QuantResult& result) {
    if (result.codes.size() != tensor.values.size()) throw Error("the quantization on show is not of this tensor");
    if (number.at >= tensor.numel()) throw Error("the printed cell lies outside the tensor on show");
    LessonAgreement a;
    a.app = app_values(number, tensor, config, params, result);
    if (a.app.size() != number.values.size())
        throw Error(std::string(to_string(number.quantity)) + ": the app has " + std::to_string(a.app.size()) +
                    " values here, the notebook printed " + std::to_string(number.values.size()));
    for (std::size_t i = 0; i < a.app.size(); ++i) {
        const double printed = number.values[i];
        // The tolerance, plus the last bits of a double (a literal such as 0.1 is not exact either).
        const double slack = number.tolerance[i] + 4e-16 * std::max(std::fabs(printed), std::fabs(a.app[i]));
        if (!(std::fabs(a.app[i] - printed) <= slack)) {
            if (a.first_disagreeing < 0) a.first_disagreeing = static_cast<std::int64_t>(i);
            ++a.disagreeing;
        }
    }
    return a;
}

std::vector<LessonAgreement> check_lesson_step(const LessonStep& step) {
    if (step.printed.empty()) return {};  // nothing to compare: no quantization of a tensor nobody reads
    QuantParams params;
    const QuantResult result = quantize(*step.state.tensor, step.state.config, &params);
    std::vector<LessonAgreement> out;
    for (const LessonNumber& n : step.printed)
        out.push_back(compare_printed(n, *step.state.tensor, step.state.config, params, result));
    return out;
}

}  // namespace qs
