// QuaRot-style rotation: the normalized Walsh-Hadamard transform, fast (n log n per row), and its signs.
#include <cmath>
#include <random>

#include "quantscope/error.hpp"
#include "quantscope/layer_methods.hpp"

namespace qs {
namespace {

void check_power_of_two(std::int64_t n) {
    if (n < 1 || (n & (n - 1)) != 0)
        throw Error("rotation needs in = 2^k, got in = " + std::to_string(n));
}

// One row's unnormalized transform in place: butterflies of growing span (Sylvester's H_n = H_2 (x) H_{n/2}).
void fwht(double* v, std::int64_t n) {
    for (std::int64_t span = 1; span < n; span *= 2)
        for (std::int64_t i = 0; i < n; i += 2 * span)
            for (std::int64_t j = i; j < i + span; ++j) {
                const double a = v[j], b = v[j + span];
                v[j] = a + b;
                v[j + span] = a - b;
            }
}

}  // namespace

void hadamard_rows(double* rows, std::int64_t row_count, std::int64_t n, const std::vector<double>* signs) {
    check_power_of_two(n);
    const double norm = 1.0 / std::sqrt(static_cast<double>(n));
    for (std::int64_t r = 0; r < row_count; ++r) {
        double* v = rows + r * n;
        fwht(v, n);
        for (std::int64_t j = 0; j < n; ++j) v[j] *= norm * (signs ? (*signs)[static_cast<std::size_t>(j)] : 1.0);
    }
}

void inverse_hadamard_rows(double* rows, std::int64_t row_count, std::int64_t n, const std::vector<double>* signs) {
    check_power_of_two(n);
    const double norm = 1.0 / std::sqrt(static_cast<double>(n));
    for (std::int64_t r = 0; r < row_count; ++r) {
        double* v = rows + r * n;
        if (signs)
            for (std::int64_t j = 0; j < n; ++j) v[j] *= (*signs)[static_cast<std::size_t>(j)];
        fwht(v, n);
        for (std::int64_t j = 0; j < n; ++j) v[j] *= norm;
    }
}

std::vector<double> rotation_signs(std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> signs(static_cast<std::size_t>(n));
    for (double& s : signs) s = (rng() >> 63) ? -1.0 : 1.0;
    return signs;
}

}  // namespace qs
