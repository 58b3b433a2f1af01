// The MSE calibrator's search (issue 8, items 6 and 14): cost linear in the element count whatever the block
// count, never worse than min/max in any block, the same answer on any thread count.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "quantscope/calibrate.hpp"
#include "quantscope/random.hpp"

using namespace qs;

namespace {

Tensor normal_with_outliers(Shape shape, std::uint64_t seed, std::int64_t outliers) {
    RandomSpec spec;
    spec.shape = std::move(shape);
    spec.seed = seed;
    spec.pin_range = outliers;  // the lesson's max + 1, min - 1, 0 pattern
    return generate_random(spec);
}

// Each block's exact mean squared error under `params`.
std::vector<double> block_mse(const Tensor& t, const QuantParams& params, const QuantConfig& config) {
    std::vector<double> out;
    std::vector<float> values;
    for (std::int64_t b = 0; b < params.block_count; ++b) {
        gather_block(t, params, b, values);
        out.push_back(values_mse(values.data(), static_cast<std::int64_t>(values.size()),
                                 params.scale[static_cast<std::size_t>(b)],
                                 params.zero_point[static_cast<std::size_t>(b)], config));
    }
    return out;
}

QuantParams params_on_threads(const Tensor& t, const QuantConfig& config, int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    QuantParams p = compute_params(t, config);
    omp_set_num_threads(before);
    return p;
}

}  // namespace

TEST_CASE("mse on blocks of a few values is never worse than min/max in any block") {
    for (Mode mode : {Mode::Asymmetric, Mode::Symmetric})
        for (int bits : {2, 4, 8})
            for (std::int64_t group : {1, 2, 3, 5, 30}) {
                const Tensor t = normal_with_outliers({16, 30}, static_cast<std::uint64_t>(bits + group), 3);
                QuantConfig minmax;
                minmax.mode = mode;
                minmax.dtype = {true, bits};
                minmax.granularity = Granularity::Group;
                minmax.group_size = group;
                QuantConfig mse = minmax;
                mse.calibration = Calibration::Mse;
                const std::vector<double> a = block_mse(t, compute_params(t, minmax), minmax);
                const std::vector<double> b = block_mse(t, compute_params(t, mse), mse);
                CAPTURE(bits);
                CAPTURE(group);
                for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i] <= a[i] * (1 + 1e-12));
            }
}

TEST_CASE("a small block's mse answer is at least as good as a dense scan of its shrink factors") {
    // The search space of the row: the min/max range shrunk by c in [0.05, 1] around 0. A dense scan of 4000
    // factors must not find a better point than the calibrator in any block (a coarse grid plus a
    // golden-section search can settle in the wrong valley of this piecewise function).
    const Tensor t = normal_with_outliers({64, 32}, 11, 0);
    QuantConfig config;
    config.mode = Mode::Symmetric;
    config.dtype = {true, 3};
    config.granularity = Granularity::Group;
    config.group_size = 32;
    config.calibration = Calibration::Mse;
    const QuantParams p = compute_params(t, config);
    const std::vector<double> found = block_mse(t, p, config);
    std::vector<float> values;
    for (std::int64_t b = 0; b < p.block_count; ++b) {
        gather_block(t, p, b, values);
        double m = 0;
        for (float v : values) m = std::max(m, static_cast<double>(std::abs(v)));
        double dense = found[static_cast<std::size_t>(b)] * 2 + 1;
        for (int i = 0; i < 4000; ++i) {
            const double c = 0.05 + 0.95 * i / 3999.0;
            double s;
            std::int32_t z;
            params_from_range(ValueRange{-c * m, c * m}, config, s, z);
            dense = std::min(dense, values_mse(values.data(), static_cast<std::int64_t>(values.size()), s, z, config));
        }
        CAPTURE(b);
        CAPTURE(found[static_cast<std::size_t>(b)] / dense - 1);
        CHECK(found[static_cast<std::size_t>(b)] <= dense * (1 + 1e-6));  // float32 rounds s
    }
}

TEST_CASE("mse gives the same parameters on one thread and on several") {
    for (std::int64_t group : {0, 1, 32, 4096}) {  // 0: per tensor, one block of 64K values (its histogram path)
        const Tensor t = normal_with_outliers({16, 4096}, 3, 2);
        QuantConfig config;
        config.calibration = Calibration::Mse;
        if (group > 0) {
            config.granularity = Granularity::Group;
            config.group_size = group;
        }
        const QuantParams one = params_on_threads(t, config, 1), several = params_on_threads(t, config, 3);
        CAPTURE(group);
        CHECK(one.scale == several.scale);
        CHECK(one.zero_point == several.zero_point);
    }
}

TEST_CASE("a block's measured mse has the same bits on any thread count") {
    // The exact measure decides between close candidates: its sum must not depend on how the chunks were
    // shared among threads (an OpenMP reduction adds per-thread partial sums in a thread-count order).
    const Tensor t = normal_with_outliers({64, 4096}, 3, 5);
    QuantConfig config;
    const auto n = static_cast<std::int64_t>(t.values.size());
    for (int threads : {2, 3, 5}) {
        const int before = omp_get_max_threads();
        omp_set_num_threads(1);
        const double one = values_mse(t.values.data(), n, 0.0123, 3, config);
        omp_set_num_threads(threads);
        const double several = values_mse(t.values.data(), n, 0.0123, 3, config);
        omp_set_num_threads(before);
        CAPTURE(threads);
        CHECK(std::memcmp(&one, &several, sizeof one) == 0);
    }
}
