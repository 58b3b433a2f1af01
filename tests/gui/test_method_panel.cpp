// The layer lab's Method view (issue 24): drawn offscreen, its comparison of the five methods is the core's
// run_method, the GPTQ step-through reaches the slider's target with the stepper's codes (and goes back), a
// lesson's method covers the bars until R, rotation names why it cannot run on in = 48; and every step of the
// lesson opens the window on it under Xvfb (a projector's font: every step), nothing wider than its window.
#include <doctest/doctest.h>

#include "drawn_text.hpp"
#include "gui/panels/layer_panel.hpp"
#include "gui/widgets/text.hpp"
#include "gui_test_support.hpp"
#include "quantscope/gptq_stepper.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/random.hpp"

#include <optional>
#include <vector>

namespace {

using Shared = qs::gui_test::SharedQuant;
using Window = qs::gui_test::PanelWindow;

Shared MakeShared(qs::Shape shape) {
    qs::RandomSpec spec;
    spec.shape = std::move(shape);
    spec.seed = 7;
    qs::QuantConfig config;
    config.dtype = qs::IntType::parse("int4");
    config.mode = qs::Mode::Symmetric;
    config.granularity = qs::Granularity::Channel;
    return qs::gui_test::MakeSharedQuant(qs::generate_random(spec), config);
}

void Draw(Window& win, qs::gui::LayerPanelState& st, const Shared& s) {
    for (int i = 0; i < 2; ++i) win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
    qs::gui::FinishLayer(st);
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
}

}  // namespace

TEST_CASE("method panel: the comparison is run_method's and the step-through reaches its target") {
    Window win;
    const Shared s = MakeShared({16, 32});
    qs::gui::LayerPanelState st;
    st.settings.inputs.tokens = 64;
    st.show_method = true;
    st.method.method = qs::LayerMethod::Gptq;
    st.method.act_order = true;
    st.method.target = 5;
    Draw(win, st, s);
    REQUIRE(st.has_shown);
    const qs::Tensor x = qs::generate_layer_inputs(st.settings.inputs, 32);
    const qs::LayerConfig config = qs::make_layer_config(s.config, {});
    const qs::LayerMethod methods[5] = {qs::LayerMethod::Rtn, qs::LayerMethod::Gptq, qs::LayerMethod::Awq, qs::LayerMethod::Rotate,
                                        qs::LayerMethod::RotateGptq};
    for (std::size_t i = 0; i < 5; ++i) {
        CAPTURE(i);
        REQUIRE(st.method.comparison.results[i]);
        qs::MethodConfig m;
        m.method = methods[i];
        m.act_order = true;
        const qs::MethodResult want = qs::run_method(x, *s.tensor, nullptr, config, m);
        CHECK(st.method.comparison.results[i]->codes == want.codes);
        CHECK(*st.method.comparison.results[i]->layer.output.sqnr_db == *want.layer.output.sqnr_db);
    }
    // The rotation's histograms: every value of W and of W H counted, on one range.
    std::int64_t counted = 0, counted_rotated = 0;
    for (std::int64_t c : st.method.comparison.hist_w.counts) counted += c;
    for (std::int64_t c : st.method.comparison.hist_rotated.counts) counted_rotated += c;
    CHECK(counted == 16 * 32);
    CHECK(counted_rotated == 16 * 32);
    CHECK(st.method.comparison.hist_w.lo == st.method.comparison.hist_rotated.lo);
    REQUIRE(st.method.prepared.stepper);
    const qs::GptqStepper& stepper = *st.method.prepared.stepper;
    CHECK(stepper.done() == 5);
    qs::MethodConfig m;
    m.method = qs::LayerMethod::Gptq;
    m.act_order = true;
    qs::GptqStepper want(x, *s.tensor, config, m);
    for (int i = 0; i < 5; ++i) want.next();
    CHECK(stepper.codes() == want.codes());
    // The maps show W now and the compensation so far.
    CHECK(st.method.current[3] == static_cast<float>(want.current(0, 3)));
    CHECK(st.method.compensation[3] == static_cast<float>(want.current(0, 3) - want.original(0, 3)));
    // To the end, then back to 2 columns.
    st.method.target = 32;
    Draw(win, st, s);
    CHECK(stepper.codes() == st.method.comparison.results[1]->codes);
    st.method.target = 2;
    Draw(win, st, s);
    CHECK(stepper.done() == 2);
    CHECK(!qs::gui::LayerBusy(st));
    // act-order off: a new stepper, and the GPTQ bar recomputed in index order.
    st.method.act_order = false;
    Draw(win, st, s);
    REQUIRE(st.method.prepared.stepper);
    CHECK(st.method.prepared.stepper->order()[3] == 3);
    m.act_order = false;
    CHECK(st.method.comparison.results[1]->codes == qs::run_method(x, *s.tensor, nullptr, config, m).codes);
}

TEST_CASE("method panel: a lesson step covers the bars and rotation says in must be 2^k") {
    Window win;
    const Shared s = MakeShared({8, 48});
    qs::gui::LayerPanelState st;
    qs::LessonLayer layer;
    layer.inputs.tokens = 32;
    layer.method = qs::LayerMethod::Rotate;
    qs::gui::ApplyLessonMethod(st, layer);
    CHECK(st.show_method);
    CHECK(st.method.covered);
    CHECK(st.method.method == qs::LayerMethod::Rotate);
    Draw(win, st, s);
    CHECK(!st.method.comparison.results[3]);
    CHECK(st.method.comparison.errors[3].find("2^k") != std::string::npos);
    CHECK(st.method.comparison.results[0]);
    layer.method.reset();
    qs::gui::ApplyLessonMethod(st, layer);
    CHECK(!st.show_method);
    CHECK(!st.method.covered);
}

TEST_CASE("gui: the methods lesson opens the Method view at both font scales") {
    using namespace qs::gui_test;
    REQUIRE(have_xvfb());
    TempDir dir;
    // The normal window: GPTQ with act-order, AWQ and rotate; a projector's: every step.
    const struct {
        const char* extra;
        std::vector<const char*> steps;
    } runs[] = {{" --size 1600x900", {"3", "4", "5"}}, {" --size 1280x720 --font-scale 2", {"1", "2", "3", "4", "5", "6"}}};
    for (const auto& [extra, steps] : runs) {
        for (const char* step : steps) {
            INFO("step " << std::string(step) << std::string(extra));
            const std::string png = dir.path + "/methods.png";
            const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --no-settings --lesson '" QS_TESTS_DIR
                                       "/../assets/lessons/methods.json' --step " + step + extra + " --screenshot '" + png +
                                       "' --layout-report");
            INFO("stderr: " << r.err);
            INFO("layout report: " << r.out);
            CHECK(r.exit_code == 0);
            CHECK(file_exists(png));
            // Every view fits its width at a projector's font too: RTN, rotate and rotate+GPTQ's wrapped lines
            // inside ##method-scroll, GPTQ's hint above it.
            CHECK(r.out.find("\"overflowing\": []") != std::string::npos);
            CHECK(r.out.find("\"cut_text\": []") != std::string::npos);
        }
    }
}

namespace {

// What the last frame drew (read in the renderer's ImGui context).
std::string Text(Window& win) {
    std::string text;
    win.r.run([&] { text = qs::gui_test::DrawnText(); });
    return text;
}

void Click(Window& win, qs::gui::LayerPanelState& st, const Shared& s, ImVec2 at) {
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); }, at, false);
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); }, at, true);
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); }, at, false);
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });  // a button acts on release: drawn after
}

}  // namespace

TEST_CASE("method panel: a click on AWQ's loss curve shows the quantization at that ratio and a button goes back") {
    Window win;
    const Shared s = MakeShared({16, 32});
    qs::gui::LayerPanelState st;
    st.settings.inputs.tokens = 64;
    st.show_method = true;
    st.method.method = qs::LayerMethod::Awq;
    Draw(win, st, s);
    const std::shared_ptr<const qs::MethodResult> best = st.method.comparison.results[2];
    REQUIRE(best);
    REQUIRE(best->awq.has_value());
    const std::size_t n = best->awq->losses.size();
    REQUIRE(n == 20);
    REQUIRE(best->awq->ratio != 3.0 / 20.0);  // ratio 3 is another weight than the winner's
    CHECK(st.method.awq_pick == -1);  // the winner until a click
    CHECK(Text(win).find("AWQatthebestr:r") != std::string::npos);
    const ImVec2 p0 = st.method.awq_plot_min, p1 = st.method.awq_plot_max;
    REQUIRE(p1.x - p0.x > 40.0f);
    REQUIRE(p1.y <= static_cast<float>(win.r.height()));
    // Ratio 3 / 20 is drawn at 3 / 20 of the plot's width: a click a little right of it picks it.
    Click(win, st, s, ImVec2(p0.x + (3.2f / 20.0f) * (p1.x - p0.x), (p0.y + p1.y) * 0.5f));
    CHECK(st.method.awq_pick == 3);
    // The quantization at r = 3 / 20, computed in the background: core's AWQ at that ratio, in the maps and numbers.
    qs::gui::FinishLayer(st);
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
    win.save("awq_pick");  // QS_FIGURE_PNG_DIR: the picked ratio drawn
    const qs::Tensor x = qs::generate_layer_inputs(st.settings.inputs, 32);
    qs::MethodConfig m;
    m.method = qs::LayerMethod::Awq;
    m.awq_ratio = 3.0 / 20.0;
    const qs::MethodResult want = qs::run_method(x, *s.tensor, nullptr, qs::make_layer_config(s.config, {}), m);
    REQUIRE(st.method.awq_picked.result);
    CHECK(st.method.awq_picked.pick == 3);
    CHECK(st.method.awq_picked.result->dequantized == want.dequantized);
    CHECK(st.method.awq_picked.result->awq->scales == qs::awq_scales(best->awq->mean_abs_x, 3.0 / 20.0));
    CHECK(want.dequantized != best->dequantized);
    const std::string text = Text(win);
    INFO(text);
    CHECK(text.find("AWQatthepickedratior=0.15:outputMSE" + qs::gui::FormatNumber(want.layer.output.mse)) != std::string::npos);
    CHECK(text.find("AWQatr=0.15:r") != std::string::npos);  // the map's title (the apostrophe starts a "line")
    CHECK(st.method.comparison.results[2] == best);  // the bar and the curve stay the winner's
    // The button goes back to the winner.
    std::optional<ImVec2> back;
    win.r.run([&] { back = qs::gui_test::DrawnAt("Backtothebestr"); });
    REQUIRE(back);
    Click(win, st, s, *back);
    CHECK(st.method.awq_pick == -1);
    const std::string after = Text(win);
    INFO(after);
    CHECK(after.find("AWQatthebestr:r") != std::string::npos);
    CHECK(after.find("AWQatthepickedratio") == std::string::npos);
    // Pick 3 again (shown at once, already computed), then a click on the winner's own point goes back too.
    Click(win, st, s, ImVec2(p0.x + (3.2f / 20.0f) * (p1.x - p0.x), (p0.y + p1.y) * 0.5f));
    CHECK(st.method.awq_pick == 3);
    const double b = best->awq->ratio * 20.0;
    Click(win, st, s, ImVec2(p0.x + static_cast<float>((b + 0.1) / 20.0) * (p1.x - p0.x), (p0.y + p1.y) * 0.5f));
    CHECK(st.method.awq_pick == -1);
    CHECK(!qs::gui::LayerBusy(st));
}

TEST_CASE("method panel: an AWQ ratio set before the first curve (a session's) is shown when the curve comes") {
    Window win;
    const Shared s = MakeShared({16, 32});
    qs::gui::LayerPanelState st;
    st.settings.inputs.tokens = 64;
    st.show_method = true;
    st.method.method = qs::LayerMethod::Awq;
    st.method.awq_pick = 7;
    Draw(win, st, s);
    CHECK(st.method.awq_pick == 7);
    REQUIRE(st.method.awq_picked.result);
    CHECK(st.method.awq_picked.result->awq->ratio == 7.0 / 20.0);
    CHECK(Text(win).find("AWQatthepickedratior=0.35") != std::string::npos);
    // Another layer (more tokens): its curve's winner.
    st.settings.inputs.tokens = 65;
    Draw(win, st, s);
    CHECK(st.method.awq_pick == -1);
}

// A session opened (File > Open session) in a window whose lab already showed a curve: the session's ratio waits
// for the curve of the session's layer. It was reset to the winner when that curve came (another layer's curve
// than the one on show), so the session's layer.awq_pick was lost unless the window was fresh.
TEST_CASE("method panel: a session's AWQ ratio read while another layer's curve is shown is kept for the next layer") {
    Window win;
    const Shared s = MakeShared({16, 32});
    qs::gui::LayerPanelState st;
    st.settings.inputs.tokens = 64;
    st.show_method = true;
    st.method.method = qs::LayerMethod::Awq;
    Draw(win, st, s);
    REQUIRE(st.method.comparison.results[2]);
    qs::gui::HoldAwqPick(st, 7);  // what the session's layer.awq_pick does
    st.settings.inputs.tokens = 65;  // the session's layer: another one
    Draw(win, st, s);
    CHECK(st.method.awq_pick == 7);
    REQUIRE(st.method.awq_picked.result);
    CHECK(st.method.awq_picked.result->awq->ratio == 7.0 / 20.0);
    // Then another layer again: its winner, as before.
    st.settings.inputs.tokens = 66;
    Draw(win, st, s);
    CHECK(st.method.awq_pick == -1);
}

TEST_CASE("method panel: at a projector's font the method's maps start on the first screen") {
    // The right column of a 1280 x 720 window at font scale 2 is about 850 px wide: the narrow layout. The
    // comparison chart (13 lines) came first and GPTQ's step lines above the scrolled part, so the maps the
    // step asks the class to watch began below the window's edge; now the maps come first.
    Window win(850, 650, 36.0f);
    const Shared s = MakeShared({64, 128});
    for (const qs::LayerMethod method : {qs::LayerMethod::Gptq, qs::LayerMethod::Rotate}) {
        INFO("method " << static_cast<int>(method));
        qs::gui::LayerPanelState st;
        st.settings.inputs.tokens = 64;
        st.show_method = true;
        st.method.method = method;
        st.method.target = 8;  // GPTQ: eight columns done, its step lines shown
        Draw(win, st, s);
        Draw(win, st, s);
        const std::string title = method == qs::LayerMethod::Gptq ? "Wasitwas" : "W[64x128]";
        std::optional<ImVec2> at;
        win.r.run([&] { at = qs::gui_test::DrawnAt(title); });
        INFO(Text(win));
        REQUIRE(at);
        CHECK(at->y < static_cast<float>(win.r.height()) - 36.0f * 3.0f);  // the title and some of the map under it
    }
}
