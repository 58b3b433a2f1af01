// The lessons' formulas as a plain scalar loop: `quantscope bench`'s baseline (naive_ms).
#include <algorithm>
#include <cmath>
#include <vector>

#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"

namespace qs {

// Deliberately scalar: the baseline that shows what vectorisation and threads buy.
__attribute__((optimize("no-tree-vectorize"))) void naive_pipeline(const Tensor& tensor, const IntType& dtype,
                                                                   QuantResult& out) {
    const std::size_t n = tensor.values.size();
    out.codes.resize(n);
    out.dequantized.resize(n);
    out.error.resize(n);
    float r_min = tensor.values[0], r_max = tensor.values[0];
    for (float v : tensor.values) {
        r_min = std::min(r_min, v);
        r_max = std::max(r_max, v);
    }
    double s = 1;
    std::int32_t z = 0;
    asymmetric_params(r_min, r_max, dtype, s, z);
    const float sf = static_cast<float>(s), zf = static_cast<float>(z);
    double sum_sq = 0, sum_abs = 0, sum_r2 = 0;
    float max_err = 0;
    std::int64_t clipped = 0;
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(dtype.levels()), 0);
    for (std::size_t i = 0; i < n; ++i) {
        const float r = tensor.values[i];
        float q = std::nearbyint(r / sf + zf);
        if (q < dtype.q_min() || q > dtype.q_max()) ++clipped;
        q = std::min(std::max(q, static_cast<float>(dtype.q_min())), static_cast<float>(dtype.q_max()));
        out.codes[i] = static_cast<std::int32_t>(q);
        out.dequantized[i] = sf * (q - zf);
        const float e = std::abs(r - out.dequantized[i]);
        out.error[i] = e;
        sum_sq += static_cast<double>(e) * e;
        sum_abs += e;
        sum_r2 += static_cast<double>(r) * r;
        max_err = std::max(max_err, e);
        seen[static_cast<std::size_t>(out.codes[i] - dtype.q_min())] = 1;
    }
    Metrics& m = out.metrics;
    m.count = static_cast<std::int64_t>(n);
    m.mse = sum_sq / static_cast<double>(n);
    m.rmse = std::sqrt(m.mse);
    m.mae = sum_abs / static_cast<double>(n);
    m.max_abs_error = max_err;
    m.l2_error = std::sqrt(sum_sq);
    m.sqnr_db.reset();
    if (sum_r2 > 0 && sum_sq > 0) m.sqnr_db = 10.0 * std::log10(sum_r2 / sum_sq);
    m.clipped = clipped;
    m.levels_used = std::count(seen.begin(), seen.end(), std::uint8_t{1});
    m.levels_total = dtype.levels();
}

}  // namespace qs
