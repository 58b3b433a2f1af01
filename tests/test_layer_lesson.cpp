// The layer lab's lesson (assets/lessons/layer-lab.json) tells a true story: each step's claim about the output
// error holds for the layer its state describes; and the lesson format's "layer" key is strict.
#include <doctest/doctest.h>

#include "quantscope/layer.hpp"
#include "quantscope/lesson.hpp"
#include "test_helpers.hpp"

namespace {

double step_mse(const qs::LessonStep& step) {
    REQUIRE(step.state.layer.has_value());
    const qs::Tensor& w = *step.state.tensor;
    const qs::Tensor x = qs::generate_layer_inputs(step.state.layer->inputs, w.cols());
    return qs::run_layer(x, w, nullptr, qs::lesson_layer_config(*step.state.layer, step.state.config)).output.mse;
}

std::string lesson_json(const std::string& layer) {
    return R"({"quantscope_lesson": 1, "title": "t", "source": "s", "steps": [{"title": "a", "text": "b", "state": {"preset": "layer-64x128", "layer": )" +
           layer + "}}]}";
}

}  // namespace

TEST_CASE("layer lesson: every step's claim about the output error holds") {
    const qs::Lesson l = qs::read_lesson(std::string(QS_TESTS_DIR) + "/../assets/lessons/layer-lab.json");
    REQUIRE(l.steps.size() == 6);
    // Step 1: the course's example, y' = [-2.9965, 3.8768, 9.3957].
    const qs::LessonStep& course = l.steps[0];
    const qs::Tensor x = qs::generate_layer_inputs(course.state.layer->inputs, 3);
    CHECK(x.values == std::vector<float>{1, 2, 3});
    const qs::LayerResult y = qs::run_layer(x, *course.state.tensor, nullptr, qs::lesson_layer_config(*course.state.layer, course.state.config));
    CHECK(y.y[0] == doctest::Approx(-2.9965).epsilon(2e-5));
    CHECK(y.y[1] == doctest::Approx(3.8768).epsilon(2e-5));
    CHECK(y.y[2] == doctest::Approx(9.3957).epsilon(2e-5));
    const double w16 = step_mse(l.steps[1]), tensor = step_mse(l.steps[2]), token = step_mse(l.steps[3]);
    const double split = step_mse(l.steps[4]), smooth = step_mse(l.steps[5]);
    CHECK(tensor > 20 * w16);      // "jumps about 30-fold"
    CHECK(token < tensor / 2 * 1.2);  // "falls by half" ...
    CHECK(token > 10 * w16);       // ... "but not enough"
    CHECK(split < w16);            // "below even W8A16's"
    CHECK(smooth < tensor / 8);    // "about 12 times lower"
    CHECK(!l.steps[5].state.layer->outlier_threshold.has_value());  // null ended the split
    CHECK(l.steps[5].state.layer->act_granularity == qs::ActGranularity::Tensor);
}

TEST_CASE("layer lesson: a bad layer state is one line naming the step and key") {
    const auto fails = [](const std::string& layer, const std::string& part) {
        CAPTURE(layer);
        const std::string e = qs::test::error_of([&] { qs::parse_lesson(lesson_json(layer), "l.json", "l"); });
        CHECK(qs::test::contains(e, "step 1"));
        CHECK(qs::test::contains(e, part));
        CHECK(e.find('\n') == std::string::npos);
    };
    fails(R"({"inputs": "cauchy"})", "cauchy");
    fails(R"({"activations": "uint8"})", "signed");
    fails(R"({"activations": "none", "smooth_alpha": 0.5})", "need quantized activations");
    fails(R"({"activations": "int8", "smooth_alpha": 2})", "[0, 1]");
    fails(R"({"outlier_channels": 500})", "--outlier-channels");
    fails(R"({"tokens": 0})", "tokens");
    fails(R"({"colour": 1})", "unknown key");
    fails("true", "false to leave it");
    const std::string e = qs::test::error_of([] {
        qs::parse_lesson(R"({"quantscope_lesson": 1, "title": "t", "source": "s", "steps": [{"title": "a", "text": "b",
            "state": {"preset": "outliers-4x128x256", "layer": {"activations": "none"}}}]})", "l.json", "l");
    });
    CHECK(qs::test::contains(e, "must be 2-D"));
}

TEST_CASE("layer lesson: turning the activations off drops an earlier step's threshold and alpha") {
    // Step 1 splits and smooths W8A8; step 2 only says "activations": "none". The window runs step 2 W-only;
    // the lesson (and `lesson check`) must build the same layer, not refuse the file.
    const qs::Lesson l = qs::parse_lesson(R"({"quantscope_lesson": 1, "title": "t", "source": "s", "steps": [
        {"title": "a", "text": "b", "state": {"preset": "layer-64x128",
            "layer": {"activations": "int8", "outlier_threshold": 6, "smooth_alpha": 0.5}}},
        {"title": "c", "text": "d", "state": {"layer": {"activations": "none"}}}]})", "l.json", "l");
    REQUIRE(l.steps.size() == 2);
    const qs::LessonLayer& layer = *l.steps[1].state.layer;
    CHECK(layer.outlier_threshold == 6.0);  // kept in the state: a later step that turns int8 back on splits again
    const qs::LayerConfig config = qs::lesson_layer_config(layer, l.steps[1].state.config);
    CHECK(!config.quantize_activations);
    CHECK(!config.outlier_threshold.has_value());
    CHECK(!config.smooth_alpha.has_value());
    qs::LayerConfig w_only;
    w_only.weights = l.steps[1].state.config;
    CHECK(step_mse(l.steps[1]) == qs::run_layer(qs::generate_layer_inputs(layer.inputs, 128), *l.steps[1].state.tensor,
                                                nullptr, w_only).output.mse);
}
