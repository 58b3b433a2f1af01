// A format registered at run time is in the window's type list (issue 22 item 1): the throwaway 3-bit float
// of tests/test_format_registry.cpp, registered here alone, is listed among the float formats, and the
// Quantize panel draws it chosen (its summary from its row), with the type list open.
#include <doctest/doctest.h>

#include <algorithm>
#include <imgui_internal.h>  // the combo's popup id, to open the type list without a mouse

#include "cli/options.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/gui_options.hpp"
#include "gui/app/session_io.hpp"
#include "gui/panels/controls_panel.hpp"
#include "gui_test_support.hpp"
#include "quantscope/format_traits.hpp"

namespace {

struct ThrowawayFormat {
    qs::FormatId id;
    ThrowawayFormat()
        : id(qs::register_format(qs::float_format_row("fp3-test", qs::FloatSpec{1, 1, 1, qs::FloatSpecials::None},
                                                      "a throwaway 3-bit float"))) {}
    ~ThrowawayFormat() { qs::unregister_format(id); }
};

// In the type list's group of its kind (the list the Quantize panel draws, formats_of_kind).
bool Listed(qs::FormatId id, qs::FormatKind kind) {
    const std::vector<qs::FormatId> ids = qs::formats_of_kind(kind);
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Draws the Quantize panel with its type list opened as a click on it would, and returns the height of the
// list's contents (one Selectable line more for each format listed).
float OpenTypeListHeight(qs::gui::AppState& app) {
    qs::gui_test::PanelWindow window(700, 900);
    float height = 0;
    for (int i = 0; i < 4; ++i)
        window.frame([&] {
            if (i == 1) {
                ImGui::PushID("controls");
                const ImGuiID combo = ImGui::GetID("##type");
                ImGui::PopID();
                ImGui::OpenPopupEx(ImHashStr("##ComboPopup", 0, combo));
            }
            qs::gui::DrawControlsPanel(app.controls, app.doc, app.intents);
            if (const ImGuiWindow* list = ImGui::FindWindowByName("##Combo_00"); list && list->WasActive)
                height = list->ContentSize.y;  // the list drawn the frame before
        });
    return height;
}

}  // namespace

TEST_CASE("format registry: the window's type list lists a registered format with its kind") {
    qs::FormatId registered{};
    {
        const ThrowawayFormat fp3;
        registered = fp3.id;
        CHECK(Listed(fp3.id, qs::format_traits(fp3.id).kind));
        CHECK(Listed(*qs::parse_format_name("nf4"), qs::format_traits(*qs::parse_format_name("nf4")).kind));

        qs::gui::AppState app;
        std::vector<qs::cli::OptionSpec> specs = qs::cli::join(qs::cli::tensor_source_options(), qs::cli::quantize_options());
        specs = qs::cli::join(specs, qs::gui::GuiFileOptionSpecs());
        qs::gui::GuiFileOptions files;
        const std::vector<std::string> args = {"--random", "normal", "--shape", "16x32", "--dtype", "fp3-test"};
        qs::cli::Input input = qs::gui::LoadGuiInput(qs::cli::parse_args(args, specs), false, files);
        app.doc.force_sync = true;
        qs::gui::StartWithInput(app, input, files);
        app.doc.finish_recompute_now();
        REQUIRE(app.doc.error.empty());
        CHECK(app.doc.config.format == fp3.id);

        const float with_fp3 = OpenTypeListHeight(app);
        qs::unregister_format(fp3.id);
        const float without = OpenTypeListHeight(app);
        // The list drawn with the registered format is longer than without it (its one Selectable).
        CHECK(with_fp3 > without);
        CHECK(with_fp3 < without * 1.2f);
        CHECK(app.doc.error.empty());
    }  // unregistered (again: a no-op)
    CHECK_FALSE(Listed(registered, qs::format_traits(registered).kind));  // unregistered: out of the list again
}
