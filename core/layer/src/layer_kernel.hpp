// The integer product of the layer (SPEC "Layer": where the scales factor, integer products accumulated
// exactly in int64 and scaled once). Private to layer.cpp.
#pragma once

#include <cstdint>
#include <functional>

namespace qs::detail {

// One operand of the integer product: `rows` x `cols` codes (row-major) and the zero point of each
// (row, group) of `group` columns (a zero point is constant there for every granularity the path takes).
struct IntOperand {
    const std::int32_t* codes = nullptr;
    std::int64_t rows = 0;
    std::function<std::int32_t(std::int64_t row, std::int64_t group)> zero_point;
};

// y[t * O + o] = sx[t] * sum_g sw[o * groups + g] * S(t, o, g), where S(t, o, g) = sum over the columns k of
// group g of (x[t, k] - zx) (w[o, k] - zw), an exact integer (int32 partial sums over spans short enough
// never to overflow, added in int64), and groups = cols / group. Computed in double from there.
// Uses a blocked SIMD kernel (16-bit operands) where both centered codes fit 16 bits, else plain int64.
void integer_product(const IntOperand& x, const IntOperand& w, std::int64_t cols, std::int64_t group,
                     const double* sx, const double* sw, double* y);

}  // namespace qs::detail
