// What the panels' intents do once applied (app/apply_intents.cpp): a landscape point, a tool's row and a
// followed element, which main_window.cpp used to convert from the panels' own result structs.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/random.hpp"

namespace {

std::unique_ptr<qs::gui::AppState> Opened(const std::string& preset) {
    auto app = std::make_unique<qs::gui::AppState>();
    app->doc.force_sync = true;
    const qs::Preset p = qs::make_preset(preset);
    REQUIRE(app->doc.apply_tensor(std::make_shared<qs::Tensor>(p.tensor), p.name, &p.config));
    app->doc.update();
    return app;
}

}  // namespace

TEST_CASE("panel intents: a landscape point sets manual s and z for the whole tensor as one undo step") {
    auto app = Opened("outliers-4x128x256");
    qs::QuantConfig channel = app->doc.config;
    channel.granularity = qs::Granularity::Channel;
    REQUIRE(app->doc.apply_config(channel, false));
    const bool could_undo = app->doc.history.can_undo();
    app->intents.push(qs::gui::PickManualIntent{0.25, 3});
    qs::gui::ApplyIntents(*app);
    const qs::QuantConfig& c = app->doc.config;
    CHECK(c.mode == qs::Mode::Manual);
    CHECK(c.granularity == qs::Granularity::Tensor);
    CHECK(c.calibration == qs::Calibration::MinMax);
    CHECK(c.manual_scale == 0.25);
    CHECK(c.manual_zero_point == 3);
    CHECK(c.dtype == channel.dtype);  // the rest is the document's
    CHECK(could_undo);
    app->doc.undo();
    CHECK(app->doc.config == channel);
}

TEST_CASE("panel intents: a tool's row applies unless a tensor job runs and a checked one names what does not fit") {
    auto app = Opened("lesson");
    qs::QuantConfig row = app->doc.config;
    row.mode = qs::Mode::Symmetric;
    // While a tensor job runs the row is of the tensor being replaced: dropped.
    std::atomic<bool> release{false};
    app->doc.start_tensor_job("waiting", [&release](qs::gui::TaskProgress& p) {
        while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        return qs::gui::FinishTensorJob(qs::make_preset("lesson").tensor, qs::QuantConfig{}, "again", p);
    });
    REQUIRE(app->doc.busy());
    app->intents.push(qs::gui::PickConfigIntent{row});
    qs::gui::ApplyIntents(*app);
    CHECK(app->doc.config.mode == qs::Mode::Asymmetric);
    release = true;
    for (int i = 0; i < 20000 && app->doc.busy(); ++i) {
        app->doc.update();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE_FALSE(app->doc.busy());
    app->intents.push(qs::gui::PickConfigIntent{row});
    qs::gui::ApplyIntents(*app);
    CHECK(app->doc.config.mode == qs::Mode::Symmetric);
    // A formats row is checked against the tensor: groups of 5 do not divide a 3x3 tensor's rows.
    qs::QuantConfig groups = app->doc.config;
    groups.granularity = qs::Granularity::Group;
    groups.group_size = 5;
    app->intents.push(qs::gui::PickConfigIntent{groups, true});
    qs::gui::ApplyIntents(*app);
    CHECK(app->doc.config.mode == qs::Mode::Symmetric);
    CHECK(app->doc.config.granularity == qs::Granularity::Tensor);
    CHECK_FALSE(app->doc.error.empty());
}

TEST_CASE("panel intents: a followed element is selected and its slice shown") {
    auto app = std::make_unique<qs::gui::AppState>();
    app->doc.force_sync = true;
    qs::RandomSpec spec;
    spec.shape = {3, 4, 5};
    REQUIRE(app->doc.apply_tensor(std::make_shared<qs::Tensor>(qs::generate_random(spec)), "random"));
    app->doc.update();
    app->intents.push(qs::gui::SelectElementIntent{2 * 20 + 7});
    qs::gui::ApplyIntents(*app);
    CHECK(app->figure.selected == 47);
    CHECK(app->figure.slice == 2);
}
