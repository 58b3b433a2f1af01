// GPTQ one column at a time, as the window's step-through shows it (issue 24, SPEC "Methods"): the eager
// algorithm, where every later column is updated after each step, so that after any step W's processed
// columns hold their rounded values and the columns still to come their compensated ones. It shares GPTQ's
// preparation (H, dead columns, damping, order, U) and W's quantizer with run_method, whose blocked loop is
// the fast way to the same result: stepping to the end gives its codes up to float64 rounding.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "quantscope/layer_methods.hpp"

namespace qs {

class GptqStepper {
public:
    // Prepares H, the damping, dead columns, the order and U (the upper Cholesky factor of H^-1 in processing
    // order) for method.damp and method.act_order; throws what check_method and run_method throw.
    GptqStepper(const Tensor& x, const Tensor& w, const LayerConfig& config, const MethodConfig& method,
                const MethodControl& control = {});
    ~GptqStepper();
    GptqStepper(GptqStepper&&) noexcept;

    std::int64_t rows() const;     // out
    std::int64_t columns() const;  // in
    std::int64_t done() const;     // columns processed so far, 0..in
    const std::vector<std::int64_t>& order() const;     // order[p]: the column processed p-th
    const std::vector<std::int64_t>& position() const;  // position[j]: when column j is processed
    std::int64_t dead_columns() const;
    // W as it is now at (row, column): a processed column holds r'(w), a later one its compensated value.
    double current(std::int64_t row, std::int64_t column) const;
    // W as the loop started (dead columns zeroed).
    double original(std::int64_t row, std::int64_t column) const;
    // The code at (row, column) of a processed column (0 for one not processed yet).
    std::int32_t code(std::int64_t row, std::int64_t column) const;
    // Every code, [out, in] row-major (what run_method reports once done() == columns()).
    const std::vector<std::int32_t>& codes() const;

    struct Step {
        std::int64_t column = 0;      // j
        double u_jj = 0;              // U[j, j] (at j's position in the order)
        double error_before = 0;      // sum over rows of (w - r'(w))^2 of the column as it came (compensated)
        double error_original = 0;    // the same for the original column, rounded with the same (s, z)
        std::vector<double> e;        // (w - r'(w)) / U[j, j], one per row
    };
    // Processes the next column (done() < columns()), updating every later column.
    const Step& next();
    // Processes columns up to the end of the current block of `block` columns in processing order.
    void next_block(std::int64_t block);
    // Undoes the last step (done() > 0) by the inverse update: as cheap as a step; the column itself comes back
    // exactly, the later ones up to float64 rounding.
    void previous();
    void reset();
    const std::vector<Step>& history() const;  // one per processed column, in processing order

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace qs
