// The model view (issue 10 item 4): a checkpoint swept under the window's settings, the same rows and CSV as
// `quantscope sweep`, a tensor opened from the table, and the panel drawn headless.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gui/panels/model_panel.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/widgets/style.hpp"
#include "gui_test_support.hpp"
#include "quantscope/random.hpp"

namespace {

using namespace qs::gui_test;

// A .safetensors file of F32 tensors named in order, each `rows x cols` of seeded normal values; one of them
// gets a large outlier so that its SQNR stands out.
std::string WriteCheckpoint(const TempDir& dir, const std::vector<std::string>& names, int rows, int cols) {
    std::string header = "{", data;
    for (std::size_t i = 0; i < names.size(); ++i) {
        std::vector<float> v(static_cast<std::size_t>(rows * cols));
        for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::sin(static_cast<float>(k * (i + 3)) * 0.37f);
        if (i == 1) v[5] = 60.0f;
        const std::size_t begin = data.size();
        data.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
        if (i) header += ",";
        header += "\"" + names[i] + "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(rows) + "," + std::to_string(cols) +
                  "],\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(data.size()) + "]}";
    }
    header += "}";
    std::string bytes;
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>((n >> (8 * i)) & 0xff);
    bytes += header + data;
    const std::string path = dir / "model.safetensors";
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

}  // namespace

TEST_CASE("model view: the sweep rows and a tensor opened from the table and the CSV of quantscope sweep") {
    TempDir dir;
    const std::vector<std::string> names = {"layers.0.up_proj", "layers.0.down_proj", "layers.1.up_proj"};
    const std::string path = WriteCheckpoint(dir, names, 16, 32);
    qs::gui::ModelPanelState st;
    std::string error;
    REQUIRE_MESSAGE(qs::gui::OpenModel(st, path, &error), error);
    CHECK(st.checkpoint->tensors.size() == 3);

    qs::QuantConfig config;
    config.dtype.bits = 4;
    qs::gui::StartModelSweep(st, config);
    qs::gui::FinishModelSweep(st);
    REQUIRE(st.has_shown);
    REQUIRE(st.shown.rows.size() == 3);
    for (std::size_t i = 0; i < names.size(); ++i) CHECK(st.shown.rows[i].name == names[i]);
    // The outlier tensor loses most: it has the lowest SQNR.
    CHECK(st.shown.rows[1].metrics.sqnr_db.value() < st.shown.rows[0].metrics.sqnr_db.value());
    CHECK(st.shown.total.tensors == 3);

    // The same numbers as the command line, to the byte: the export is sweep --csv.
    REQUIRE_MESSAGE(qs::gui::ExportModelCsv(st, dir / "rows.csv", &error), error);
    const Run r = run(dir, "'" QS_BINARY "' sweep '" + path + "' --dtype int4 --csv");
    REQUIRE(r.exit_code == 0);
    CHECK(read_file(dir / "rows.csv") == r.out);

    // A row opens its tensor in the four panels: the job reads exactly that tensor.
    const qs::gui::TensorJobIntent job = qs::gui::ModelTensorJob(st, "layers.0.down_proj", config);
    qs::gui::TaskProgress progress;
    const qs::gui::TensorJobResult loaded = job.work(progress);
    REQUIRE(loaded.data);
    REQUIRE(loaded.data->floats);
    CHECK(loaded.data->floats->values.size() == 16u * 32u);
    CHECK(loaded.data->floats->values[5] == 60.0f);
    CHECK_THROWS(qs::gui::ModelTensorJob(st, "no.such.tensor", config));

    // Drawn headless, with a filter: no crash, and the sort/filter order covers the kept rows.
    qs::gui::OffscreenRenderer renderer;
    REQUIRE_MESSAGE(renderer.init(1200, 700, [] { qs::gui::BuildFonts(16.0f); qs::gui::ApplyStyle(true, 1.0f); }, &error),
                    "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
    qs::gui::Intents intents;
    std::snprintf(st.filter.InputBuf, sizeof st.filter.InputBuf, "up_proj");
    st.filter.Build();
    st.order_valid = false;
    for (int frame = 0; frame < 3; ++frame) {
        renderer.frame([&] {
            ImGui::SetNextWindowPos(ImVec2(0, 0));
            ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
            ImGui::Begin("model", nullptr, ImGuiWindowFlags_NoDecoration);
            qs::gui::DrawModelPanel(st, config, intents);
            ImGui::End();
        });
    }
    CHECK(st.order.size() == 2);

    // A file that is not a checkpoint: a message, and the open model stays.
    std::ofstream(dir / "bad.safetensors") << "not a checkpoint";
    CHECK_FALSE(qs::gui::OpenModel(st, dir / "bad.safetensors", &error));
    CHECK_FALSE(error.empty());
    CHECK(st.path == path);
    CHECK(qs::gui::IsCheckpointIndexPath("x/Model.SafeTensors.Index.JSON"));
    CHECK_FALSE(qs::gui::IsCheckpointIndexPath("session.json"));
}
