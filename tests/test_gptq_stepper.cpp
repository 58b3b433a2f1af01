// The GPTQ step-through (core/layer gptq_stepper.hpp): stepped to the end it gives run_method(gptq)'s codes
// (tensor, channel, group, act-order), with H a multiple of I it is round-to-nearest (SPEC's golden case), the
// first step compensates the later columns, and stepping back then forward again ends where going straight
// through does.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "quantscope/error.hpp"
#include "quantscope/gptq_stepper.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/quantize.hpp"

namespace {

qs::Tensor matrix(std::int64_t rows, std::int64_t cols, std::vector<float> values) {
    qs::Tensor t;
    t.shape = {rows, cols};
    t.values = std::move(values);
    return t;
}

qs::Tensor random_w(std::int64_t out, std::int64_t in, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(out * in));
    for (float& x : v) x = n(rng);
    return matrix(out, in, std::move(v));
}

// Tokens whose channels are correlated (a shared factor per token) with two loud channels.
qs::Tensor correlated_x(std::int64_t tokens, std::int64_t in, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(tokens * in));
    for (std::int64_t t = 0; t < tokens; ++t) {
        const float shared = n(rng);
        for (std::int64_t k = 0; k < in; ++k)
            v[static_cast<std::size_t>(t * in + k)] = (0.8f * shared + 0.6f * n(rng)) * (k % 7 == 3 ? 8.0f : 1.0f);
    }
    return matrix(tokens, in, std::move(v));
}

qs::QuantConfig int4(qs::Granularity g, std::int64_t group = 0) {
    qs::QuantConfig c;
    c.dtype = qs::IntType::parse("int4");
    c.mode = qs::Mode::Symmetric;
    c.granularity = g;
    c.group_size = group;
    return c;
}

qs::LayerConfig layer(const qs::QuantConfig& weights) { return qs::make_layer_config(weights, {}); }

qs::MethodConfig gptq(bool act_order, std::int64_t block = 128) {
    qs::MethodConfig m;
    m.method = qs::LayerMethod::Gptq;
    m.act_order = act_order;
    m.block = block;
    return m;
}

void run_to_end(qs::GptqStepper& s) {
    while (s.done() < s.columns()) s.next();
}

}  // namespace

TEST_CASE("gptq stepper: stepped to the end it gives run_method's codes") {
    const qs::Tensor w = random_w(20, 32, 11), x = correlated_x(96, 32, 12);
    for (const qs::QuantConfig& c : {int4(qs::Granularity::Tensor), int4(qs::Granularity::Channel), int4(qs::Granularity::Group, 8)}) {
        for (bool act_order : {false, true}) {
            qs::GptqStepper s(x, w, layer(c), gptq(act_order, 8));
            run_to_end(s);
            CHECK(s.codes() == qs::run_method(x, w, nullptr, layer(c), gptq(act_order, 8)).codes);
        }
    }
}

TEST_CASE("gptq stepper: with H a multiple of I the codes are round-to-nearest's") {
    const std::int64_t in = 16, out = 6;
    // x = I / sqrt(2): x^T x = I / 2, so H = I before damping and no column compensates another.
    std::vector<float> xv(static_cast<std::size_t>(in * in), 0.0f);
    for (std::int64_t k = 0; k < in; ++k) xv[static_cast<std::size_t>(k * in + k)] = static_cast<float>(1.0 / std::sqrt(2.0));
    const qs::Tensor x = matrix(in, in, xv), w = random_w(out, in, 3);
    for (const qs::QuantConfig& c : {int4(qs::Granularity::Tensor), int4(qs::Granularity::Channel), int4(qs::Granularity::Group, 4)}) {
        for (bool act_order : {false, true}) {
            qs::GptqStepper s(x, w, layer(c), gptq(act_order, 4));
            run_to_end(s);
            CHECK(s.codes() == qs::quantize(w, c).codes);
        }
    }
}

TEST_CASE("gptq stepper: the first step compensates the later columns only") {
    const qs::Tensor w = random_w(24, 32, 5), x = correlated_x(128, 32, 6);
    qs::GptqStepper s(x, w, layer(int4(qs::Granularity::Channel)), gptq(true));
    const qs::GptqStepper::Step& first = s.next();
    CHECK(first.column == s.order()[0]);
    CHECK(first.error_before == first.error_original);  // the first column comes as it was
    std::int64_t changed = 0;
    for (std::int64_t r = 0; r < 24; ++r)
        for (std::int64_t k = 0; k < 32; ++k) {
            if (k == first.column) CHECK(s.code(r, k) == qs::quantize(w, int4(qs::Granularity::Channel)).codes[static_cast<std::size_t>(r * 32 + k)]);
            else CHECK(s.code(r, k) == 0);
            changed += k != first.column && s.current(r, k) != s.original(r, k);
        }
    CHECK(changed > 24 * 31 / 2);  // the rank-1 update reaches the columns still to come
}

TEST_CASE("gptq stepper: previous then next ends with the codes of a straight run") {
    const qs::Tensor w = random_w(12, 16, 8), x = correlated_x(64, 16, 9);
    const qs::QuantConfig c = int4(qs::Granularity::Group, 4);
    qs::GptqStepper straight(x, w, layer(c), gptq(true));
    run_to_end(straight);
    qs::GptqStepper back(x, w, layer(c), gptq(true));
    back.next_block(4);
    CHECK(back.done() == 4);
    back.next();
    back.next();
    back.previous();
    back.previous();
    back.previous();  // back into the first group: its (s, z) are taken again
    CHECK(back.done() == 3);
    for (std::int64_t k = 3; k < 16; ++k)  // columns not processed yet hold no code
        CHECK(back.codes()[static_cast<std::size_t>(back.order()[static_cast<std::size_t>(k)])] == 0);
    run_to_end(back);
    CHECK(back.codes() == straight.codes());
    for (std::int64_t r = 0; r < 12; ++r)
        for (std::int64_t k = 0; k < 16; ++k) CHECK(back.current(r, k) == doctest::Approx(straight.current(r, k)).epsilon(1e-12));
    back.reset();
    CHECK(back.done() == 0);
    CHECK(back.current(3, 5) == back.original(3, 5));
}

TEST_CASE("gptq stepper: refuses what GPTQ cannot take") {
    const qs::Tensor w = random_w(4, 8, 1), x = correlated_x(8, 8, 2);
    qs::MethodConfig damp0 = gptq(false), nan = gptq(false);
    damp0.damp = 0;
    nan.damp = std::nan("");
    CHECK_THROWS_AS(qs::GptqStepper(x, w, layer(int4(qs::Granularity::Group, 3)), gptq(false)), qs::Error);
    CHECK_THROWS_AS(qs::GptqStepper(x, w, layer(int4(qs::Granularity::Tensor)), damp0), qs::Error);
    CHECK_THROWS_AS(qs::GptqStepper(x, w, layer(int4(qs::Granularity::Tensor)), nan), qs::Error);
    CHECK_THROWS_AS(qs::GptqStepper(random_w(8, 4, 1), w, layer(int4(qs::Granularity::Tensor)), gptq(false)), qs::Error);
}
