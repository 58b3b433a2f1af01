// Issue 23's window parts: the Bits view of a ggml k-quant cell (its nesting, read from core's
// ggml_block_fields of the block's bytes), the importance vector as part of the document (the toggle, undo,
// the session file) and the k-quants lesson.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <imgui.h>

#include "cli/options.hpp"
#include "gui/app/analysis_tabs.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/open_importance.hpp"
#include "gui/app/session_io.hpp"
#include "gui/panels/bits_text.hpp"
#include "gui/widgets/text.hpp"
#include "gui_test_support.hpp"
#include "quantscope/cell_bits.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/lesson.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/params.hpp"
#include "quantscope/tensor_view.hpp"

using namespace qs;
using namespace qs::gui;
using namespace qs::gui_test;

namespace {

// rows x 256 values: a smooth pattern with a few large columns, so sub-blocks get different scales.
Tensor Weights(std::int64_t rows) {
    Tensor t;
    t.shape = {rows, 256};
    for (std::int64_t i = 0; i < rows * 256; ++i) {
        const std::int64_t c = i % 256;
        float v = std::sin(0.37f * static_cast<float>(i)) * (0.2f + 0.1f * static_cast<float>(c / 32));
        if (c == 7 || c == 100 || c == 201) v *= 12.0f;
        t.values.push_back(v);
    }
    return t;
}

std::vector<float> Importance256() {
    std::vector<float> w(256);
    for (int c = 0; c < 256; ++c) w[static_cast<std::size_t>(c)] = (c % 16 == 3) ? 50.0f : 0.05f + 0.01f * static_cast<float>(c % 7);
    return w;
}

void WriteNpy(const std::string& path, const std::vector<float>& w) {
    std::ofstream out(path, std::ios::binary);
    out << npy_header_bytes("<f4", {static_cast<std::int64_t>(w.size())});
    out.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
}

QuantConfig Dtype(const char* name) {
    QuantConfig c;
    parse_dtype(name, c);
    return with_format(c, c.format);  // as the window's type list sets it
}

QuantConfig Q4K() { return Dtype("q4_k"); }

// The block of element `flat` quantized by core's codec directly (ggml_quantize_blocks), read field by field.
GgmlBlockFields FieldsOfBlock(const Tensor& t, std::int64_t flat, const std::vector<float>* importance) {
    const GgmlTypeInfo& type = *ggml_type_named("q4_k");
    const std::int64_t start = flat / 256 * 256;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(type.type_size));
    if (importance) {
        const GgmlImportance imp{importance->data(), ggml_row_sum_squares(t.values.data() + start, 256), 256};
        ggml_quantize_blocks(type, t.values.data() + start, 1, &imp, bytes.data());
    } else {
        ggml_quantize_blocks(type, t.values.data() + start, 1, nullptr, bytes.data());
    }
    GgmlBlockFields f;
    ggml_block_fields(type, bytes.data(), f);
    return f;
}

const BitRow* RowOf(const CellBits& b, BitRowRole role) {
    for (const BitRow& r : b.scales)
        if (r.role == role) return &r;
    return nullptr;
}

void Start(AppState& app, const std::vector<std::string>& args) {
    std::vector<cli::OptionSpec> specs = cli::join(cli::tensor_source_options(), cli::quantize_options());
    specs = cli::join(specs, GuiFileOptionSpecs());
    GuiFileOptions files;
    cli::Input input = LoadGuiInput(cli::parse_args(args, specs), false, files);
    app.doc.force_sync = true;
    StartWithInput(app, input, files);
    app.doc.finish_recompute_now();
}

}  // namespace

TEST_CASE("bits view: a q4_k cell's rows are ggml_block_fields of its block with and without importance") {
    const Tensor t = Weights(2);
    const std::vector<float> w = Importance256();
    ImGuiContext* context = ImGui::CreateContext();  // Symbols(), FormatNumber: plain ASCII without a font
    for (bool weighted : {false, true}) {
        QuantConfig c = Q4K();
        if (weighted) c.importance = std::make_shared<const std::vector<float>>(w);
        const QuantParams p = compute_params(t, c);
        for (std::int64_t flat : {std::int64_t{1}, std::int64_t{40}, std::int64_t{256 + 100}, std::int64_t{511}}) {
            INFO("weighted " << weighted << " element " << flat);
            const CellBits b = cell_bits(view_of(t), p, c, flat, -1.0f);
            const GgmlBlockFields f = FieldsOfBlock(t, flat, weighted ? &w : nullptr);
            const int index = static_cast<int>(flat % 256), j = index / 32;
            REQUIRE(b.ggml.type != nullptr);
            CHECK(b.ggml.weighted == weighted);
            CHECK(b.ggml.index == index);
            CHECK(b.ggml.sub_block == j);
            CHECK(b.ggml.byte_offset == flat / 256 * 144);
            REQUIRE(RowOf(b, BitRowRole::BlockScale));
            CHECK(RowOf(b, BitRowRole::BlockScale)->bits_value == f.d_bits);
            CHECK(RowOf(b, BitRowRole::BlockScale)->value == static_cast<double>(f.d));
            REQUIRE(RowOf(b, BitRowRole::Offset));
            CHECK(RowOf(b, BitRowRole::Offset)->bits_value == f.dmin_bits);
            REQUIRE(RowOf(b, BitRowRole::SubScale));
            CHECK(RowOf(b, BitRowRole::SubScale)->bits_value == static_cast<std::uint32_t>(f.sub_scale[j]));
            CHECK(RowOf(b, BitRowRole::SubScale)->fields[0].bits == 6);
            REQUIRE(RowOf(b, BitRowRole::SubMin));
            CHECK(RowOf(b, BitRowRole::SubMin)->bits_value == static_cast<std::uint32_t>(f.sub_min[j]));
            CHECK(b.code.bits_value == static_cast<std::uint32_t>(f.codes[index]));
            CHECK(b.code.fields[0].bits == 4);
            CHECK(b.ggml.fields.sub_scale_used[j] == f.sub_scale_used[j]);
            CHECK(b.ggml.fields.sub_min_used[j] == f.sub_min_used[j]);
            // r' is to_float's: d*sc * q - dmin*m in float32, and the trace's.
            CHECK(b.ggml.dequantized == f.sub_scale_used[j] * static_cast<float>(f.codes[index]) - f.sub_min_used[j]);
            CHECK(b.ggml.dequantized == trace_element(view_of(t), p, c, flat).dequantized);
            CHECK(b.packed.offset == -1);

            const std::vector<std::string> lines = BitsReportLines(b, c, t.shape);
            std::string all;
            for (const std::string& l : lines) all += l + "\n";
            INFO(all);
            CHECK(all.find("super-block " + std::to_string(flat / 256) + " (256 values in 144 bytes") != std::string::npos);
            CHECK(all.find("sub-block " + std::to_string(j) + " of 8") != std::string::npos);
            CHECK(all.find("sub-block " + std::to_string(j) + " scale sc (uint6)") != std::string::npos);
            CHECK(all.find("sub-block " + std::to_string(j) + " min m (uint6)") != std::string::npos);
            CHECK(all.find("d x sc = " + FormatNumber(f.sub_scale_used[j])) != std::string::npos);
            CHECK(all.find("dmin (fp16)") != std::string::npos);
            CHECK(all.find("r' = dxsc x q - dminxm = ") != std::string::npos);
            CHECK(all.find(FormatNumber(b.ggml.dequantized) + "  (r = ") != std::string::npos);
        }
    }
    ImGui::DestroyContext(context);
}

TEST_CASE("bits view: q6_k shows its stored q + 32 and int8 sub-block scale and iq4_nl its grid value") {
    const Tensor t = Weights(1);
    const QuantConfig c = Dtype("q6_k");
    const QuantParams p = compute_params(t, c);
    const CellBits b = cell_bits(view_of(t), p, c, 7, -1.0f);
    CHECK(b.code.bits_value == static_cast<std::uint32_t>(b.ggml.fields.codes[7] + 32));
    CHECK(b.code.value == b.ggml.fields.codes[7]);
    REQUIRE(RowOf(b, BitRowRole::SubScale));
    CHECK(RowOf(b, BitRowRole::SubScale)->encoding == "int8");
    CHECK(RowOf(b, BitRowRole::SubMin) == nullptr);
    const QuantConfig nl = Dtype("iq4_nl");
    const QuantParams pn = compute_params(t, nl);
    const CellBits n = cell_bits(view_of(t), pn, nl, 7, -1.0f);
    ImGuiContext* context = ImGui::CreateContext();
    const std::string code = BitRowDecoded(n.code);
    const std::string grid = "grid value " + FormatNumber(n.code.value);
    ImGui::DestroyContext(context);
    CHECK(n.ggml.sub_block == -1);
    CHECK(code.find(grid) != std::string::npos);
    CHECK(n.code.value == n.ggml.code_value);
}

TEST_CASE("importance: the toggle changes the quantization and undo brings the unweighted one back") {
    AppState app;
    app.doc.force_sync = true;
    REQUIRE(app.doc.apply_tensor(std::make_shared<const Tensor>(Weights(4)), "w"));
    REQUIRE(app.doc.apply_config(Q4K(), false));
    app.doc.finish_recompute_now();
    const double plain = app.doc.overview.metrics.mse;
    CHECK_FALSE(app.doc.importance_mse);

    auto w = std::make_shared<const std::vector<float>>(Importance256());
    std::string message;
    REQUIRE_MESSAGE(app.doc.apply_importance(w, "/x/w.npy", true, &message), message);
    app.doc.finish_recompute_now();
    REQUIRE(app.doc.shown_config.importance);
    CHECK(app.doc.overview.metrics.mse != plain);  // the weighted quantizer chose other scales
    REQUIRE(app.doc.importance_mse);
    CHECK(*app.doc.importance_mse > 0);

    // Off again with the toggle (a config change), on again, then undo both ways.
    QuantConfig off = app.doc.config;
    off.importance = nullptr;
    REQUIRE(app.doc.apply_config(off, false));
    app.doc.finish_recompute_now();
    CHECK(app.doc.overview.metrics.mse == plain);
    CHECK(app.doc.importance);  // still loaded
    app.doc.undo();
    app.doc.finish_recompute_now();
    CHECK(app.doc.config.importance);
    CHECK(app.doc.overview.metrics.mse != plain);
    app.doc.undo();  // before the importance was loaded
    app.doc.finish_recompute_now();
    CHECK_FALSE(app.doc.importance);
    CHECK_FALSE(app.doc.config.importance);
    CHECK(app.doc.overview.metrics.mse == plain);
    CHECK_FALSE(app.doc.importance_mse);
    app.doc.redo();
    app.doc.finish_recompute_now();
    CHECK(app.doc.importance_path == "/x/w.npy");
    CHECK(app.doc.config.importance);
}

TEST_CASE("importance: a file for other columns or with a negative weight is one line and changes nothing") {
    TempDir dir;
    AppState app;
    app.doc.force_sync = true;
    REQUIRE(app.doc.apply_tensor(std::make_shared<const Tensor>(Weights(2)), "w"));
    WriteNpy(dir.path + "/short.npy", std::vector<float>(128, 1.0f));
    std::vector<float> negative(256, 1.0f);
    negative[9] = -1.0f;
    WriteNpy(dir.path + "/negative.npy", negative);
    for (const char* name : {"short.npy", "negative.npy", "missing.npy"}) {
        INFO(name);
        app.doc.error.clear();
        CHECK_FALSE(OpenImportance(app, dir.path + "/" + name));
        CHECK(app.doc.error.rfind("importance ", 0) == 0);
        CHECK(app.doc.error.find('\n') == std::string::npos);
        CHECK_FALSE(app.doc.importance);
        CHECK_FALSE(app.doc.config.importance);
    }
}

TEST_CASE("importance: a session with an importance file reopens weighted by it") {
    TempDir dir;
    WriteNpy(dir.path + "/w.npy", Importance256());
    AppState a;
    Start(a, {"--random", "normal", "--shape", "4x256", "--seed", "3", "--dtype", "q4_k"});
    REQUIRE(OpenImportance(a, dir.path + "/w.npy"));
    a.doc.finish_recompute_now();
    REQUIRE(a.doc.config.importance);
    const double weighted = a.doc.overview.metrics.mse;
    const std::string path = dir.path + "/s.json";
    std::string error;
    REQUIRE_MESSAGE(SaveSession(a, path, &error), error);
    const std::string json = read_file(path);
    CHECK(json.find("\"importance\": \"w.npy\"") != std::string::npos);  // relative to the session

    AppState b;
    Start(b, {path});
    CHECK(b.doc.error.empty());
    REQUIRE(b.doc.importance);
    CHECK(*b.doc.importance == Importance256());
    REQUIRE(b.doc.config.importance);
    CHECK(b.doc.overview.metrics.mse == weighted);

    // Saved with the toggle off: reopens loaded but not weighing.
    QuantConfig off = a.doc.config;
    off.importance = nullptr;
    REQUIRE(a.doc.apply_config(off, false));
    REQUIRE_MESSAGE(SaveSession(a, path, &error), error);
    AppState c;
    Start(c, {path});
    CHECK(c.doc.importance);
    CHECK_FALSE(c.doc.config.importance);
}

TEST_CASE("lesson k-quants: every printed number agrees and a step weighs by its importance") {
    const Lesson lesson = read_lesson(std::string(QS_TESTS_DIR) + "/../assets/lessons/k-quants.json");
    bool weighted = false, bits_tab = false;
    for (std::size_t i = 0; i < lesson.steps.size(); ++i) {
        INFO("step " << i + 1);
        const std::vector<LessonAgreement> a = check_lesson_step(lesson.steps[i]);
        for (const LessonAgreement& x : a) CHECK(x.agrees());
        weighted = weighted || lesson.steps[i].state.config.importance != nullptr;
        bits_tab = bits_tab || lesson.steps[i].state.selected >= 0;
    }
    CHECK(weighted);
    CHECK(bits_tab);
}

TEST_CASE("lesson tab words are the window's analysis tabs") {
    for (const std::string& word : lesson_tab_words()) {
        INFO(word);
        CHECK(AnalysisTabIndex(word) >= 0);
    }
}
