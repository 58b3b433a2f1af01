// The layer lab (issue 13): drawn offscreen on a random W, its layer and alpha curve finished in the background
// and checked against the core's run_layer; and the window opened on it under Xvfb.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>
#include <imgui_internal.h>  // the tables drawn (ImGuiContext::Tables)

#include "drawn_text.hpp"
#include "gui/panels/layer_panel.hpp"
#include "gui/widgets/text.hpp"
#include "gui/widgets/widgets.hpp"
#include "gui_test_support.hpp"
#include "quantscope/lesson.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

namespace {

using Shared = qs::gui_test::SharedQuant;
using Window = qs::gui_test::PanelWindow;

// A seeded normal W quantized symmetric per channel.
Shared MakeShared(qs::Shape shape) {
    qs::RandomSpec spec;
    spec.shape = std::move(shape);
    spec.seed = 5;
    qs::QuantConfig config;
    config.mode = qs::Mode::Symmetric;
    config.granularity = qs::Granularity::Channel;
    return qs::gui_test::MakeSharedQuant(qs::generate_random(spec), config);
}

}  // namespace

TEST_CASE("layer panel: the shown layer and the alpha curve are the core's") {
    Window win;
    const Shared s = MakeShared({24, 32});
    qs::gui::LayerPanelState st;
    st.settings.inputs.outlier_channels = 3;
    st.settings.inputs.outlier_scale = 30;
    const auto draw = [&] {
        for (int i = 0; i < 3; ++i) win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
        qs::gui::FinishLayer(st);
        win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
    };
    draw();
    REQUIRE(st.has_shown);
    CHECK(st.shown.error_text.empty());
    qs::LayerConfig config = qs::gui::MakeLayerConfig(st.settings, s.config);
    const qs::Tensor x = qs::generate_layer_inputs(st.settings.inputs, 32);
    const qs::LayerResult want = qs::run_layer(x, *s.tensor, nullptr, config);
    CHECK(st.shown.result.y == want.y);
    CHECK(st.shown.result.path == qs::LayerPath::Integer);
    REQUIRE(st.curve.mse.size() == 21);
    CHECK(st.curve.plain_mse == want.output.mse);
    CHECK(*std::min_element(st.curve.mse.begin(), st.curve.mse.end()) < st.curve.plain_mse);  // a sweet spot exists
    config.smooth_alpha = 0.5;
    CHECK(st.curve.mse[10] == qs::run_layer(x, *s.tensor, nullptr, config).output.mse);

    // The split marks columns and keeps the curve's key apart; W-only has no curve to compute.
    st.settings.split = true;
    st.settings.threshold = 10;
    draw();
    CHECK(st.shown.result.outlier_columns == qs::outlier_channels(st.settings.inputs, 32));
    st.settings.activation_bits = 0;
    draw();
    CHECK(st.shown.result.path == qs::LayerPath::Float);
    CHECK(!qs::gui::LayerBusy(st));
}

TEST_CASE("layer panel: a lesson's layer is the same config in the window and in lesson check") {
    // The case where the two builders once disagreed: float activations with a threshold and an alpha left
    // set (the window dropped them, the lesson passed them on and the core refused the layer).
    qs::QuantConfig weights;
    weights.mode = qs::Mode::Symmetric;
    for (int bits : {0, 8, 4}) {
        CAPTURE(bits);
        qs::LessonLayer layer;
        layer.activation_bits = bits;
        layer.act_granularity = qs::ActGranularity::Token;
        layer.act_mode = qs::Mode::Asymmetric;
        layer.outlier_threshold = 6.0;
        layer.smooth_alpha = 0.5;
        const qs::LayerConfig lesson = qs::lesson_layer_config(layer, weights);
        const qs::LayerConfig window = qs::gui::MakeLayerConfig(qs::gui::LayerSettingsFromLesson(layer), weights);
        CHECK(lesson.weights == window.weights);
        CHECK(lesson.quantize_activations == window.quantize_activations);
        CHECK(lesson.act_dtype.bits == window.act_dtype.bits);
        CHECK(lesson.act_dtype.is_signed == window.act_dtype.is_signed);
        CHECK(lesson.act_mode == window.act_mode);
        CHECK(lesson.act_granularity == window.act_granularity);
        CHECK(lesson.outlier_threshold == window.outlier_threshold);
        CHECK(lesson.smooth_alpha == window.smooth_alpha);
        CHECK(lesson.outlier_threshold.has_value() == (bits > 0));
        CHECK(lesson.smooth_alpha.has_value() == (bits > 0));
    }
}

TEST_CASE("layer panel: a 3-D tensor says what W must be instead of drawing") {
    Window win;
    const Shared s = MakeShared({2, 3, 4});
    qs::gui::LayerPanelState st;
    win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
    REQUIRE(st.has_shown);
    CHECK(st.shown.error_text.find("2-D tensor as W") != std::string::npos);
}

TEST_CASE("gui: --tab layer opens the layer lab at both font scales") {
    using namespace qs::gui_test;
    REQUIRE(have_xvfb());
    TempDir dir;
    for (const char* extra : {"", " --size 1280x720 --font-scale 2"}) {
        CAPTURE(extra);
        const std::string png = dir.path + "/layer.png";
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --random normal --shape 32x48 --tab layer" + extra +
                                   " --screenshot '" + png + "' --frames 3");
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(file_exists(png));
    }
}

TEST_CASE("gui: the layer lab's split-columns line wraps inside its cell at a projector's font") {
    // The layer-lab lesson's LLM.int8 step draws "N split columns ... stay float32" in the maps' third cell,
    // inside ##layer-scroll: wrapped at a screen x, it ran past the scrolled child by the child's offset.
    using namespace qs::gui_test;
    REQUIRE(have_xvfb());
    TempDir dir;
    const std::string png = dir.path + "/split.png";
    const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --no-settings --lesson layer-lab --step 5 --size 1280x720 "
                                                "--font-scale 2 --screenshot '" + png + "' --layout-report");
    INFO("stderr: " << r.err);
    INFO("layout report: " << r.out);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("\"overflowing\": []") != std::string::npos);
    CHECK(r.out.find("\"cut_text\": []") != std::string::npos);
}

TEST_CASE("layer panel: at a projector's font the metrics table shows whole under the maps or starts below them") {
    // One under the other (narrow): the maps took 0.8 of the height whatever the table needed, so the first
    // screen cut the table in half (1280 x 1400 at font scale 2). A panel as wide as a projector's right column
    // at heights where the two fit and where they do not; and one too narrow for the table's columns even with
    // 3 digits, where the metrics are a wrapped line per operand.
    const struct {
        int width, height;
        bool table, whole;
    } cases[] = {{820, 1200, true, true}, {820, 900, true, false}, {820, 600, true, false}, {560, 1200, false, false}};
    for (const auto& c : cases) {
        CAPTURE(c.width);
        CAPTURE(c.height);
        Window win(c.width, c.height, 36.0f);
        const Shared s = MakeShared({256, 256});
        qs::gui::LayerPanelState st;
        for (int i = 0; i < 3; ++i) win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
        qs::gui::FinishLayer(st);
        int cut = -1, whole = 0, tables = 0, clipped = -1;
        std::vector<std::string> cut_text{"?"};
        for (int i = 0; i < 2; ++i) win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
        win.r.run([&] {
            cut = qs::gui::CountCutTables(nullptr);
            clipped = qs::gui::CountClippedTableColumns(nullptr);
            cut_text = qs::gui::CutTextWindows();
            ImGuiContext& g = *ImGui::GetCurrentContext();
            for (int t = 0; t < g.Tables.GetMapSize(); ++t) {
                const ImGuiTable* tb = g.Tables.TryGetMapData(t);
                if (!tb || tb->LastFrameActive != g.FrameCount) continue;
                ++tables;
                whole += tb->OuterWindow->InnerClipRect.Contains(tb->OuterRect);
            }
        });
        CHECK(tables == (c.table ? 1 : 0));
        CHECK(cut == 0);
        CHECK(clipped == 0);
        CHECK(cut_text.empty());
        // Where the maps and the table fit on one screen, the table is on it.
        if (c.whole) CHECK(whole == 1);
    }
}

TEST_CASE("gui: the layer lab's metrics table is not cut at a projector's font (--layout-report)") {
    using namespace qs::gui_test;
    REQUIRE(have_xvfb());
    TempDir dir;
    for (const char* size : {"--size 1280x1400 --font-scale 2", "--size 1280x800 --font-scale 1.5", "--size 1280x720 --font-scale 2",
                             "--size 1600x900", "--size 1280x720"}) {
        const std::string options = size;
        CAPTURE(options);
        const std::string png = dir.path + "/layer.png";
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --no-settings --random normal --shape 256x256 --tab layer " +
                                   size + " --screenshot '" + png + "' --layout-report");
        INFO("stderr: " << r.err);
        INFO("layout report: " << r.out);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("\"cut_tables\": []") != std::string::npos);
        CHECK(r.out.find("\"overflowing\": []") != std::string::npos);
        CHECK(r.out.find("\"clipped_columns\": []") != std::string::npos);
        CHECK(r.out.find("\"cut_text\": []") != std::string::npos);
    }
    // The layer-lab lesson's W8A8 steps at a projector's font: the output column (an SQNR, a 6-digit MSE) ran past
    // its border; the numbers take fewer digits where the columns would not fit.
    for (const char* step : {"4", "5", "6"}) {
        const std::string png = dir.path + "/lesson.png";
        const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui --no-settings --lesson layer-lab --step " + step +
                                   " --size 1280x720 --font-scale 2 --screenshot '" + png + "' --layout-report");
        INFO("step " << std::string(step) << ", layout report: " << r.out);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("\"cut_tables\": []") != std::string::npos);
        CHECK(r.out.find("\"clipped_columns\": []") != std::string::npos);
    }
}


TEST_CASE("layer panel: at a projector's font the maps start in the first screen's upper part") {
    // The right column of a 1280 x 720 window at font scale 2 is about 820 px wide and 600 tall under the lab's
    // title. The inputs' and activations' controls took seven rows there, and the maps began near the bottom
    // edge (560 px of 720). Narrow, the controls fold into one header line that says what they are set to.
    Window win(820, 600, 36.0f);
    const Shared s = MakeShared({64, 128});
    for (const bool method : {false, true}) {
        CAPTURE(method);
        qs::gui::LayerPanelState st;
        st.settings.activation_bits = 8;
        st.show_method = method;
        st.method.method = qs::LayerMethod::Gptq;
        for (int i = 0; i < 3; ++i) win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
        qs::gui::FinishLayer(st);
        for (int i = 0; i < 2; ++i) win.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
        std::optional<ImVec2> at, summary;
        std::string text;
        win.r.run([&] {
            at = qs::gui_test::DrawnAt(method ? "Wasitwas" : "x:inputs");
            summary = qs::gui_test::DrawnAt("16tokens");
            text = qs::gui_test::DrawnText();
        });
        INFO(text);
        REQUIRE(at);
        // Below the radio buttons, the settings' line and (GPTQ) its step controls: the outputs' maps in the
        // upper third, GPTQ's a little past the middle (its three rows of step controls stay).
        CHECK(at->y < static_cast<float>(win.r.height()) * (method ? 0.55f : 0.34f));
        CHECK(summary);  // the folded settings still say what they are
        if (!method) CHECK(text.find("int8pertoken") == std::string::npos);
        if (!method) CHECK(text.find("int8pertensor") != std::string::npos);
    }
    // A window wide or tall for its text keeps the controls open, as before (the second: 1280 x 720's column).
    for (const ImVec2 size : {ImVec2(1400, 800), ImVec2(820, 600)}) {
        CAPTURE(size.x);
        Window normal(static_cast<int>(size.x), static_cast<int>(size.y), 18.0f);
        qs::gui::LayerPanelState st;
        for (int i = 0; i < 3; ++i) normal.frame([&] { qs::gui::DrawLayerPanel(st, s.view(), s.tensor); });
        std::string text;
        normal.r.run([&] { text = qs::gui_test::DrawnText(); });
        CHECK(text.find("LLM.int8split") != std::string::npos);
    }
}
