// The methods lesson (assets/lessons/methods.json) tells a true story: what each step asks students to predict
// and then reveals (the output SQNRs, the columns GPTQ changes, AWQ's ratio, the rotation's outlier ratio) is
// what the layer of its state gives, pinned here so that a change of a method or of the lesson's layer that
// turns the story shows; and the lesson format's "method", "act_order" and "columns" keys are strict.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "quantscope/gptq_stepper.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/lesson.hpp"
#include "test_helpers.hpp"

namespace {

qs::MethodConfig step_method(const qs::LessonStep& step) {
    qs::MethodConfig m;
    m.method = *step.state.layer->method;
    m.act_order = step.state.layer->act_order;
    return m;
}

qs::Tensor step_inputs(const qs::LessonStep& step) {
    return qs::generate_layer_inputs(step.state.layer->inputs, step.state.tensor->cols());
}

qs::MethodResult run_step(const qs::LessonStep& step) {
    REQUIRE(step.state.layer.has_value());
    REQUIRE(step.state.layer->method.has_value());
    return qs::run_method(step_inputs(step), *step.state.tensor, nullptr, qs::lesson_layer_config(*step.state.layer, step.state.config),
                          step_method(step));
}

double sqnr(const qs::MethodResult& r) { return *r.layer.output.sqnr_db; }

// How far each column of W moved under GPTQ run to the end: sum over rows of (W now - W)^2.
std::vector<double> column_moves(const qs::LessonStep& step) {
    const qs::Tensor& w = *step.state.tensor;
    qs::GptqStepper s(step_inputs(step), w, qs::lesson_layer_config(*step.state.layer, step.state.config), step_method(step));
    while (s.done() < s.columns()) s.next();
    std::vector<double> moved(static_cast<std::size_t>(w.cols()), 0.0);
    for (std::int64_t r = 0; r < w.rows(); ++r)
        for (std::int64_t k = 0; k < w.cols(); ++k) moved[static_cast<std::size_t>(k)] += std::pow(s.current(r, k) - s.original(r, k), 2);
    return moved;
}

std::string lesson_json(const std::string& layer) {
    return R"({"quantscope_lesson": 1, "title": "t", "source": "s", "steps": [{"title": "a", "text": "b", "state": {"preset": "layer-64x128", "dtype": "int4", "layer": )" +
           layer + "}}]}";
}

}  // namespace

TEST_CASE("methods lesson: what each step reveals") {
    const qs::Lesson l = qs::read_lesson(std::string(QS_TESTS_DIR) + "/../assets/lessons/methods.json");
    REQUIRE(l.steps.size() == 6);
    const qs::MethodResult rtn = run_step(l.steps[0]), gptq = run_step(l.steps[1]), act = run_step(l.steps[2]);
    const qs::MethodResult awq = run_step(l.steps[3]), rot = run_step(l.steps[4]), rot_gptq = run_step(l.steps[5]);
    CHECK(sqnr(rtn) == doctest::Approx(19.2).epsilon(0.01));
    CHECK(sqnr(gptq) - sqnr(rtn) == doctest::Approx(1.0).epsilon(0.15));      // GPTQ gains about 1 dB ...
    CHECK(sqnr(act) == doctest::Approx(21.6).epsilon(0.01));
    CHECK(sqnr(act) - sqnr(gptq) == doctest::Approx(1.5).epsilon(0.1));       // ... and act-order 1.5 dB more
    REQUIRE(awq.awq.has_value());
    CHECK(awq.awq->ratio == 0.25);
    CHECK(awq.awq->losses.size() == 20);                                      // "r = 0, 0.05, ..., 0.95"
    CHECK(sqnr(awq) == doctest::Approx(22.8).epsilon(0.01));
    CHECK(sqnr(awq) > sqnr(act));                                             // better than GPTQ here, without H
    REQUIRE(rot.rotate.has_value());
    CHECK(rot.rotate->max_over_std_before == doctest::Approx(4.0).epsilon(0.01));  // "about 4.0, a normal's"
    CHECK(rot.rotate->max_over_std_after == doctest::Approx(5.0).epsilon(0.01));   // a normal W has no outlier to spread
    CHECK(sqnr(rot) == doctest::Approx(18.1).epsilon(0.01));                  // and the rotation alone loses a little
    CHECK(sqnr(rot) < sqnr(rtn));
    CHECK(sqnr(rot_gptq) == doctest::Approx(29.0).epsilon(0.01));             // the best of the five, by 5 dB and more
    for (const qs::MethodResult* r : {&rtn, &gptq, &act, &awq, &rot}) CHECK(sqnr(rot_gptq) > sqnr(*r) + 5);
    CHECK(sqnr(rtn) == *rot_gptq.rtn_output.sqnr_db);

    // GPTQ in index order: the columns rounded last move most, the loud channels least; act-order takes the loud
    // channels first.
    const qs::Tensor x = step_inputs(l.steps[1]);
    std::vector<double> mean_abs(128, 0.0);
    for (std::int64_t t = 0; t < x.rows(); ++t)
        for (std::size_t k = 0; k < 128; ++k) mean_abs[k] += std::fabs(x.values[static_cast<std::size_t>(t) * 128 + k]) / static_cast<double>(x.rows());
    std::vector<std::int64_t> loud;
    for (std::size_t k = 0; k < 128; ++k)
        if (mean_abs[k] > 5.0) loud.push_back(static_cast<std::int64_t>(k));
    REQUIRE(loud.size() == 4);
    const std::vector<double> moved = column_moves(l.steps[1]);
    std::vector<std::int64_t> by_move(128);
    for (std::int64_t k = 0; k < 128; ++k) by_move[static_cast<std::size_t>(k)] = k;
    std::sort(by_move.begin(), by_move.end(), [&](auto a, auto b) { return moved[static_cast<std::size_t>(a)] > moved[static_cast<std::size_t>(b)]; });
    for (std::size_t i = 0; i < 8; ++i) CHECK(by_move[i] >= 64);  // the most moved: rounded in the second half
    CHECK(std::find(loud.begin(), loud.end(), by_move.back()) != loud.end());
    qs::GptqStepper ordered(x, *l.steps[2].state.tensor, qs::lesson_layer_config(*l.steps[2].state.layer, l.steps[2].state.config),
                            step_method(l.steps[2]));
    std::vector<std::int64_t> first(ordered.order().begin(), ordered.order().begin() + 4);
    std::sort(first.begin(), first.end());
    CHECK(first == loud);
    CHECK(l.steps[2].state.layer->columns == 8);
}

TEST_CASE("methods lesson: the layer's method keys are strict") {
    const qs::Lesson ok = qs::parse_lesson(lesson_json(R"({"method": "gptq", "act_order": true, "columns": 3})"), "t.json", "t");
    REQUIRE(ok.steps[0].state.layer->method.has_value());
    CHECK(*ok.steps[0].state.layer->method == qs::LayerMethod::Gptq);
    CHECK(ok.steps[0].state.layer->act_order);
    CHECK(ok.steps[0].state.layer->columns == 3);
    const qs::Lesson none = qs::parse_lesson(lesson_json(R"({"method": null})"), "t.json", "t");
    CHECK_FALSE(none.steps[0].state.layer->method.has_value());
    const auto refused = [](const std::string& layer, const std::string& part) {
        try {
            qs::parse_lesson(lesson_json(layer), "t.json", "t");
            FAIL("accepted " << layer);
        } catch (const qs::Error& e) {
            CHECK_MESSAGE(std::string(e.what()).find(part) != std::string::npos, e.what());
        }
    };
    refused(R"({"method": "gptqq"})", "state.layer.method");
    refused(R"({"method": 3})", "method");
    refused(R"({"act_order": "yes"})", "act_order");
    refused(R"({"method": "gptq", "columns": 129})", "columns");
    refused(R"({"method": "gptq", "columns": -1})", "columns");
    refused(R"({"method": "gptq", "activations": "int8"})", "activations");
}
