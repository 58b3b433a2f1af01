// GPTQ one column at a time, as the window's step-through shows it (issue 24, SPEC "Methods"): the eager
// algorithm, where every later column is updated after each step, so that after any step W's processed
// columns hold their rounded values and the columns still to come their compensated ones. Stepping to the end
// gives the method's codes up to float64 rounding; the blocked run of the command line is the fast way to the
// same result, this is the one a student can stop after any column.
#pragma once

#include <cstdint>
#include <vector>

#include "quantscope/config.hpp"
#include "quantscope/tensor.hpp"

namespace qs {

struct GptqStepperOptions {
    double damp = 0.01;         // H += damp * mean(diag H) * I; finite and > 0
    std::int64_t block = 128;   // next_block() steps to the end of the current block of this many columns
    bool act_order = false;     // columns by decreasing diag H (stable)
};

class GptqStepper {
public:
    // Prepares H = 2 x^T x (dead columns: H[k, k] = 1, W[:, k] = 0), the damping, the order and U, the upper
    // Cholesky factor of H^-1 in processing order. x is [tokens, in], W [out, in], both finite float32; the
    // weights' config is int<N> with tensor, channel (axis 0) or group granularity. Throws qs::Error with one
    // line for anything else and for a Hessian that is singular even after damping.
    GptqStepper(const Tensor& x, const Tensor& w, const QuantConfig& config, const GptqStepperOptions& options);

    std::int64_t rows() const { return out_; }                   // out
    std::int64_t columns() const { return in_; }                 // in
    std::int64_t done() const { return done_; }                  // columns processed so far, 0..in
    const std::vector<std::int64_t>& order() const { return order_; }  // processing order
    std::int64_t dead_columns() const { return dead_; }
    // W as it is now, [out, in] float64: processed columns hold r'(w), later ones their compensated values.
    const std::vector<double>& current() const { return current_; }
    const std::vector<double>& original() const { return original_; }  // W with dead columns zeroed
    // The codes of the processed columns ([out, in]; 0 for a column not processed yet).
    const std::vector<std::int32_t>& codes() const { return codes_; }

    struct Step {
        std::int64_t column = 0;       // j
        double u_jj = 0;               // U[j, j] (of j's position in the order)
        double error_before = 0;       // sum over rows of (w - r'(w))^2 of the column as it came (compensated)
        double error_original = 0;     // the same for the original column rounded as it was (plain RTN)
        std::vector<double> e;         // (w - r'(w)) / U[j, j], one per row
    };
    // Processes the next column (done() < columns()).
    const Step& next();
    // Processes columns up to the end of the current block (of options.block columns, in processing order).
    void next_block();
    // Undoes the last column (done() > 0) by the inverse update: out x in, as cheap as a step (the values
    // come back up to float64 rounding).
    void previous();
    void reset();
    // One step per processed column, in processing order.
    const std::vector<Step>& history() const { return history_; }

private:
    double round_trip(double w, std::int64_t row, std::int64_t column, std::int32_t* code) const;
    void group_params(std::int64_t column);

    QuantConfig config_;
    GptqStepperOptions options_;
    std::int64_t out_ = 0, in_ = 0, done_ = 0, dead_ = 0;
    std::vector<double> original_, current_;
    std::vector<std::int32_t> codes_;
    std::vector<std::int64_t> order_;
    std::vector<double> u_;                 // [in, in] by position in the order, upper triangle
    std::int64_t blocks_per_row_ = 1, group_ = 0;
    std::vector<double> scale_, zero_;      // per (row, block): blocks_per_row_ per row
    std::vector<char> block_ready_;         // per group: its (s, z) taken from the current values
    std::vector<Step> history_;
};

}  // namespace qs
