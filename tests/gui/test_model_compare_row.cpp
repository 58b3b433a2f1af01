// The Model tab's comparison (issue 23 item 6): clicking a row opens A's tensor with B's stored values as its
// quantization: the original panel A's values, the dequantized panel ggml's to_float of B's bytes, the error
// |A - B|, the quantized panel and the Bits view B's stored codes and block fields. B's blocks are made from
// values other than A's, so a window that quantized A with B's type would not show them.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "../gguf_writer.hpp"
#include "cli/options.hpp"
#include "../test_stored16.hpp"
#include "gui/app/app_state.hpp"
#include "gui/app/apply_intents.hpp"
#include "gui/app/export.hpp"
#include "gui/app/gui_options.hpp"
#include "gui/app/session_io.hpp"
#include "gui/panels/model_panel.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui/widgets/style.hpp"
#include "gui_test_support.hpp"
#include "quantscope/cell_bits.hpp"
#include "quantscope/compare.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/ggml_types.hpp"

using namespace qs;
using namespace qs::gui;
using namespace qs::gui_test;
using qs::test::GgufWriter;

namespace {

const GgmlTypeInfo& Q4K() { return *ggml_type_info(static_cast<std::uint32_t>(GgmlType::Q4_K)); }

std::vector<float> Values(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
}

std::string Q4KBytes(const std::vector<float>& values) {
    std::string out(static_cast<std::size_t>(ggml_row_bytes(Q4K(), static_cast<std::int64_t>(values.size()))), '\0');
    ggml_quantize_blocks(Q4K(), values.data(), static_cast<std::int64_t>(values.size()) / 256, nullptr, out.data());
    return out;
}

// A: F32 "attn_q.weight" 4 x 256, "ffn_up.weight" 4 x 256 and "norm.weight" 32. B: the first as Q4_K of A's values
// moved a little (fine-tuned, then quantized), the second of another shape, the third stored as F16 (A's values
// moved, then rounded to half: B stores values, not blocks).
struct Checkpoints {
    TempDir dir;
    std::vector<float> a = Values(4 * 256, 1), b_source = Values(4 * 256, 2), norm = Values(32, 4);
    std::string b_bytes, norm_f16;
    std::string a_path = dir / "a.gguf", b_path = dir / "b.gguf";
    Checkpoints() {
        for (std::size_t k = 0; k < a.size(); ++k) b_source[k] = a[k] + 0.2f * b_source[k];
        b_bytes = Q4KBytes(b_source);
        const std::vector<float> moved = Values(32, 6);
        for (std::size_t k = 0; k < norm.size(); ++k)
            norm_f16 += GgufWriter::raw(std::vector<std::uint16_t>{qs::test16::to_f16(norm[k] + 0.01f * moved[k])});
        GgufWriter wa, wb;
        wa.tensor("attn_q.weight", {256, 4}, 0, GgufWriter::raw(a))
            .tensor("ffn_up.weight", {256, 4}, 0, GgufWriter::raw(Values(4 * 256, 3)))
            .tensor("norm.weight", {32}, 0, GgufWriter::raw(norm));
        wb.tensor("attn_q.weight", {256, 4}, 12, b_bytes)
            .tensor("ffn_up.weight", {256, 8}, 12, Q4KBytes(Values(8 * 256, 5)))
            .tensor("norm.weight", {32}, 1, norm_f16);
        std::ofstream(a_path, std::ios::binary) << wa.build();
        std::ofstream(b_path, std::ios::binary) << wb.build();
    }
};

// Runs update() until the tensor job has been taken, then the recompute.
void WaitForJob(AppState& app) {
    for (int i = 0; i < 20000 && app.doc.busy(); ++i) {
        app.doc.update();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    REQUIRE_FALSE(app.doc.busy());
    app.doc.update();
    app.doc.finish_recompute_now();
}

// The window started as `quantscope gui ARGS`.
void Start(AppState& app, const std::vector<std::string>& args) {
    std::vector<cli::OptionSpec> specs = cli::join(cli::tensor_source_options(), cli::quantize_options());
    specs = cli::join(specs, GuiFileOptionSpecs());
    GuiFileOptions files;
    cli::Input input = LoadGuiInput(cli::parse_args(args, specs), false, files);
    app.doc.force_sync = true;
    StartWithInput(app, input, files);
    app.doc.finish_recompute_now();
}

void OpenAndCompare(AppState& app, const Checkpoints& files) {
    std::string error;
    REQUIRE_MESSAGE(OpenModel(app.model, files.a_path, &error), error);
    REQUIRE_MESSAGE(StartModelCompare(app.model.compare, app.model.checkpoint, files.b_path, &error), error);
    FinishModelCompare(app.model.compare);
    REQUIRE(app.model.compare.has_shown);
    REQUIRE(app.model.compare.shown.rows.size() == 3);
}

}  // namespace

TEST_CASE("model compare: a clicked row shows A as the original and B's stored q4_K as r' with its codes and blocks") {
    const Checkpoints files;
    AppState app;
    app.doc.force_sync = true;
    OpenAndCompare(app, files);

    // The panel drawn headless, one row left by the filter; a click found by moving up from the bottom of the
    // table until the panel asks for something (only a row asks to open a tensor).
    OffscreenRenderer renderer;
    std::string error;
    REQUIRE_MESSAGE(renderer.init(1200, 700, [] { BuildFonts(16.0f); ApplyStyle(true, 1.0f); }, &error),
                    "offscreen rendering failed (EGL surfaceless from Mesa is required): " << error);
    std::snprintf(app.model.filter.InputBuf, sizeof app.model.filter.InputBuf, "attn");
    app.model.filter.Build();
    const auto draw = [&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("model", nullptr, ImGuiWindowFlags_NoDecoration);
        DrawModelPanel(app.model, app.doc.config, app.intents);
        ImGui::End();
    };
    for (int frame = 0; frame < 2; ++frame) renderer.frame(draw);
    for (float y = 690.0f; y > 0.0f && app.intents.empty(); y -= 4.0f) {
        renderer.frame(draw, ImVec2(60.0f, y));
        renderer.frame(draw, ImVec2(60.0f, y), true);
        renderer.frame(draw, ImVec2(60.0f, y));
    }
    REQUIRE_FALSE(app.intents.empty());
    ApplyIntents(app);
    WaitForJob(app);
    REQUIRE_MESSAGE(app.doc.error.empty(), app.doc.error);

    const QuantView qv = app.doc.view();
    REQUIRE(qv.valid());
    REQUIRE(qv.data->stored);
    CHECK(qv.config->format == qv.data->stored->format);
    CHECK(std::string(format_traits(qv.config->format).name) == "q4_k");
    CHECK(app.doc.label.find("attn_q.weight against B's stored Q4_K") != std::string::npos);
    CHECK(app.doc.notice.find("r' is B's stored Q4_K (") != std::string::npos);

    // The four panels at full resolution (4 x 256 fits the overview): A's values, B's decoded bytes, B's codes,
    // the difference.
    std::vector<float> b(files.a.size());
    ggml_dequantize(Q4K(), files.b_bytes.data(), static_cast<std::int64_t>(b.size()), b.data());
    REQUIRE(qv.overview->grid.exact());
    REQUIRE(qv.tensor);
    CHECK(qv.tensor->values == files.a);
    CHECK(qv.overview->dequantized_mean == b);
    GgmlBlockFields fields;
    for (std::size_t k = 0; k < b.size(); ++k) {
        if (k % 256 == 0) ggml_block_fields(Q4K(), files.b_bytes.data() + k / 256 * 144, fields);
        REQUIRE(qv.overview->codes_mean[k] == static_cast<float>(fields.codes[k % 256]));
        REQUIRE(qv.overview->error_max[k] == std::fabs(files.a[k] - b[k]));
    }
    // Not A quantized with B's type: those values differ from B's.
    std::vector<float> requantized(b.size());
    ggml_dequantize(Q4K(), Q4KBytes(files.a).data(), static_cast<std::int64_t>(b.size()), requantized.data());
    CHECK(requantized != b);

    // The Bits view of an element of the third super-block: B's stored d, dmin, sub-block scale and min, code.
    const std::int64_t flat = 2 * 256 + 77;
    const CellBits bits = cell_bits(qv.data->view, *qv.params, *qv.config, flat, qv.data->values.amax());
    ggml_block_fields(Q4K(), files.b_bytes.data() + 2 * 144, fields);
    REQUIRE(bits.ggml.type == &Q4K());
    CHECK(bits.ggml.fields.d_bits == fields.d_bits);
    CHECK(bits.ggml.fields.dmin_bits == fields.dmin_bits);
    CHECK(bits.ggml.fields.sub_scale[2] == fields.sub_scale[2]);
    CHECK(bits.ggml.fields.sub_min[2] == fields.sub_min[2]);
    CHECK(bits.code.bits_value == static_cast<std::uint32_t>(fields.codes[77]));
    CHECK(bits.ggml.dequantized == b[static_cast<std::size_t>(flat)]);
    CHECK(bits.ggml.value == files.a[static_cast<std::size_t>(flat)]);

    // Another type quantizes A's own values; B's type again shows B's.
    const QuantConfig q4k = app.doc.config;
    REQUIRE(app.doc.apply_config(with_format(q4k, FormatId::Int), false));
    app.doc.finish_recompute_now();
    CHECK(app.doc.view().overview->dequantized_mean != b);
    REQUIRE(app.doc.apply_config(q4k, false));
    app.doc.finish_recompute_now();
    CHECK(app.doc.view().overview->dequantized_mean == b);
}

TEST_CASE("model compare: a row whose B has another shape is one line and the window keeps its tensor") {
    const Checkpoints files;
    AppState app;
    app.doc.force_sync = true;
    OpenAndCompare(app, files);
    app.intents.push(CompareTensorJob(app.model, "attn_q.weight", app.doc.config));
    ApplyIntents(app);
    WaitForJob(app);
    REQUIRE(app.doc.error.empty());
    const std::string label = app.doc.label;

    const auto open = [&](const std::string& name) {
        app.intents.push(CompareTensorJob(app.model, name, app.doc.config));
        ApplyIntents(app);
        WaitForJob(app);
        const std::string line = app.doc.error;
        app.doc.error.clear();
        return line;
    };
    const std::string shape = open("ffn_up.weight");
    CHECK(shape == "'ffn_up.weight': B's tensor is 8x256, A's 4x256 (not compared)");
    CHECK(app.doc.label == label);
    CHECK(app.doc.view().data->stored);
    CHECK_THROWS_AS(CompareTensorJob(app.model, "no.such.tensor", app.doc.config), Error);
}

// An F32 A against its F16 B (the commonest pair): the row opens with A as the original, B's values as r' and
// A - B as the error, the metrics `compare`'s row for the tensor; the quantized panel, the pipeline and the Bits
// view say B stores values (no codes) instead of showing codes of 0.
TEST_CASE("model compare: a row whose B stores F16 values opens A against B's values with the metrics of compare's row") {
    const Checkpoints files;
    AppState app;
    app.doc.force_sync = true;
    OpenAndCompare(app, files);
    app.intents.push(CompareTensorJob(app.model, "norm.weight", app.doc.config));
    ApplyIntents(app);
    WaitForJob(app);
    REQUIRE_MESSAGE(app.doc.error.empty(), app.doc.error);
    CHECK(app.doc.label.find("norm.weight against B's F16 values") != std::string::npos);
    CHECK(app.doc.notice.find("B stores values, not quantized blocks") != std::string::npos);

    const QuantView qv = app.doc.view();
    REQUIRE(qv.valid());
    REQUIRE(qv.data->stored);
    CHECK(qv.data->stored->values());
    CHECK(ShowsStoredValues(qv));
    std::vector<float> b(files.norm.size());
    ggml_dequantize(*ggml_type_info(1), files.norm_f16.data(), static_cast<std::int64_t>(b.size()), b.data());
    REQUIRE(qv.overview->grid.exact());
    REQUIRE(qv.tensor);
    CHECK(qv.tensor->values == files.norm);
    CHECK(qv.overview->dequantized_mean == b);
    for (std::size_t k = 0; k < b.size(); ++k)
        REQUIRE(qv.overview->error_max[k] == static_cast<float>(std::fabs(static_cast<double>(files.norm[k]) - b[k])));

    // The metrics are compare's row for norm.weight.
    const CompareRow* row = nullptr;
    for (const CompareRow& r : app.model.compare.shown.rows)
        if (r.name == "norm.weight") row = &r;
    REQUIRE(row != nullptr);
    REQUIRE(row->error.empty());
    const Metrics& m = qv.metrics();
    CHECK(m.mse == doctest::Approx(row->mse).epsilon(1e-12));
    REQUIRE(m.sqnr_db);
    REQUIRE(row->sqnr_db);
    CHECK(*m.sqnr_db == doctest::Approx(*row->sqnr_db).epsilon(1e-12));
    CHECK(m.max_abs_error == row->max_abs_error);
    CHECK(m.levels_total == 0);

    // No codes: the pipeline and the Bits view say so.
    ImGuiContext* context = ImGui::CreateContext();  // Symbols(), FormatNumber: plain ASCII without a font
    const std::vector<std::string> lines = PipelineLines(qv, TraceOf(qv, 5));
    ImGui::DestroyContext(context);
    bool says = false;
    for (const std::string& l : lines) says |= l.find("B stores F16 values: no code") != std::string::npos;
    CHECK(says);
    CHECK(StoredPairText(qv, 0) == "B stores F16 values: no scale");

    // Export tensors: A, B's values and the error; no file of codes (there are none).
    const TensorExport request{files.dir.path, "row", TensorFormat::Npy};
    std::vector<std::string> written;
    std::string error;
    CHECK_FALSE(ExportHasCodes(app));
    REQUIRE_MESSAGE(ExportTensors(app, request, &written, &error), error);
    CHECK(written == TensorExportPaths(request, false));
    REQUIRE(written.size() == 3);
    CHECK_FALSE(file_exists(files.dir / "row_codes.npy"));
    const Tensor deq = read_npy(written[1]);
    CHECK(deq.values == b);
}

// File > Save session on a row opened against B keeps B (its file and a digest of its tensor) and the Model tab's A
// and B: reopened, the same comparison is on screen. A B gone or changed is one banner line; the rest opens.
TEST_CASE("model compare: a session saved on a row against B reopens the same comparison and a missing or changed B is one line") {
    const Checkpoints files;
    for (const std::string name : {"attn_q.weight", "norm.weight"}) {
        CAPTURE(name);
        AppState a;
        a.doc.force_sync = true;
        OpenAndCompare(a, files);
        a.intents.push(CompareTensorJob(a.model, name, a.doc.config));
        ApplyIntents(a);
        WaitForJob(a);
        REQUIRE_MESSAGE(a.doc.error.empty(), a.doc.error);
        a.figure.selected = 5;
        const QuantView before = a.doc.view();
        REQUIRE(before.data->stored);
        const std::vector<float> deq = before.overview->dequantized_mean;
        const double mse = before.metrics().mse;
        const std::string session = files.dir / "s.json";
        std::string error;
        REQUIRE_MESSAGE(SaveSession(a, session, &error), error);
        const std::string json = read_file(session);
        CHECK(json.find("\"compare.b\": \"b.gguf\"") != std::string::npos);  // relative to the session
        CHECK(json.find("\"model.compare\": \"b.gguf\"") != std::string::npos);

        const auto check_reopened = [&](AppState& b) {
            CHECK(b.doc.error.empty());
            const QuantView qv = b.doc.view();
            REQUIRE(qv.valid());
            REQUIRE(qv.data->stored);
            CHECK(qv.config->format == qv.data->stored->format);
            CHECK(qv.overview->dequantized_mean == deq);
            CHECK(qv.metrics().mse == mse);
            CHECK(b.doc.label == a.doc.label);
            CHECK(b.figure.selected == 5);
            CHECK(b.model.path == files.a_path);
            CHECK(b.model.compare.path_b == files.b_path);
            FinishModelCompare(b.model.compare);
            CHECK(b.model.compare.shown.rows.size() == 3);
        };
        AppState b;
        Start(b, {session});
        check_reopened(b);
        // File > Open session the same; and saved again, it still keeps B.
        AppState c;
        Start(c, {"--preset", "lesson"});
        OpenSession(c, session);
        WaitForJob(c);
        check_reopened(c);
        REQUIRE_MESSAGE(SaveSession(c, files.dir / "again.json", &error), error);
        CHECK(read_file(files.dir / "again.json").find("\"compare.b\": \"b.gguf\"") != std::string::npos);
    }

    // B changed since (attn_q.weight's blocks made from other values), then gone: one banner line each, and A's
    // tensor still opens with the session's settings and view.
    AppState a;
    a.doc.force_sync = true;
    OpenAndCompare(a, files);
    a.intents.push(CompareTensorJob(a.model, "attn_q.weight", a.doc.config));
    ApplyIntents(a);
    WaitForJob(a);
    a.figure.selected = 9;
    const std::string session = files.dir / "s.json";
    std::string error;
    REQUIRE_MESSAGE(SaveSession(a, session, &error), error);
    GgufWriter changed;
    changed.tensor("attn_q.weight", {256, 4}, 12, Q4KBytes(Values(4 * 256, 9)))
        .tensor("ffn_up.weight", {256, 8}, 12, Q4KBytes(Values(8 * 256, 5)))
        .tensor("norm.weight", {32}, 1, files.norm_f16);
    std::ofstream(files.b_path, std::ios::binary | std::ios::trunc) << changed.build();
    for (const char* what : {"changed since the session was saved", "b.gguf"}) {
        AppState b;
        Start(b, {session});
        CAPTURE(b.doc.error);
        CHECK(b.doc.error.find("the session's B (") == 0);
        CHECK(b.doc.error.find(what) != std::string::npos);
        CHECK(b.doc.error.find('\n') == std::string::npos);
        const QuantView qv = b.doc.view();
        REQUIRE(qv.valid());
        CHECK_FALSE(qv.data->stored);
        CHECK(qv.tensor->values == files.a);
        CHECK(b.figure.selected == 9);
        CHECK(b.model.path == files.a_path);
        std::remove(files.b_path.c_str());  // then gone
    }
}

// A session whose B does not attach (gone) shows A alone under A's own name: the saved label ("... against B's
// stored Q4_K") named the comparison, and stayed in the title over A quantized with the session's settings.
// A label of the user's own is kept.
TEST_CASE("model compare: a session whose B is gone does not keep the comparison's label") {
    const Checkpoints files;
    AppState a;
    a.doc.force_sync = true;
    OpenAndCompare(a, files);
    a.intents.push(CompareTensorJob(a.model, "attn_q.weight", a.doc.config));
    ApplyIntents(a);
    WaitForJob(a);
    REQUIRE(a.doc.label.find("against B") != std::string::npos);
    const std::string session = files.dir / "s.json";
    std::string error;
    REQUIRE_MESSAGE(SaveSession(a, session, &error), error);
    std::remove(files.b_path.c_str());
    AppState b;
    Start(b, {session});
    CHECK(b.doc.error.find("the session's B (") == 0);
    CHECK(b.doc.label.find("against B") == std::string::npos);
    CHECK(b.doc.label == a.doc.label.substr(0, a.doc.label.find(" against B")));
    AppState c;  // File > Open session the same
    Start(c, {"--preset", "lesson"});
    OpenSession(c, session);
    WaitForJob(c);
    CHECK(c.doc.error.find("the session's B (") == 0);
    CHECK(c.doc.label == b.doc.label);
    CHECK(ApplySessionView(c, {{"label", "my own against B's"}}).empty());
    CHECK(c.doc.label == "my own against B's");
}

// A script's --save-session saves what its screenshot shows: the row opened against B once its job is done (it was
// saved at the first frame, before the row opened: A's tensor alone, int8, no B).
TEST_CASE("model compare: a scripted --save-session with --compare keeps the row opened against B") {
    REQUIRE_MESSAGE(have_xvfb(), "xvfb-run not found: install xvfb and xauth");
    const Checkpoints files;
    const std::string png = files.dir / "shot.png", session = files.dir / "row.json";
    const Run r = run(files.dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + files.a_path +
                                     "' --tensor norm.weight --compare '" + files.b_path +
                                     "' --size 1280x720 --screenshot '" + png + "' --save-session '" + session + "'");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const std::string json = read_file(session);
    CHECK(json.find("\"compare.b\": \"b.gguf\"") != std::string::npos);
    CHECK(json.find("norm.weight against B's F16 values") != std::string::npos);
    AppState b;
    Start(b, {session});
    CHECK(b.doc.error.empty());
    REQUIRE(b.doc.view().valid());
    REQUIRE(b.doc.view().data->stored);
    CHECK(b.doc.view().data->stored->values());
}

namespace {

// A .safetensors file of one F32 tensor `name` of `n` values: `values` when given, else sparse (zeros, no disk).
void WriteF32Safetensors(const std::string& path, const std::string& name, std::int64_t n, const std::vector<float>& values = {}) {
    const std::string header = "{\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[" + std::to_string(n) +
                               "],\"data_offsets\":[0," + std::to_string(4 * n) + "]}}";
    {
        std::ofstream out(path, std::ios::binary);
        const std::uint64_t len = header.size();
        char le[8];
        for (int i = 0; i < 8; ++i) le[i] = static_cast<char>((len >> (8 * i)) & 0xff);
        out.write(le, 8);
        out << header;
        out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(4 * values.size()));
    }
    std::filesystem::resize_file(path, 8 + header.size() + static_cast<std::uintmax_t>(4 * n));
}

long MaxRssKib() {
    struct rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

constexpr std::int64_t kHugeB = std::int64_t{1} << 27;  // 512 MB of float32, sparse

}  // namespace

// A session's compare.b names a file whose tensor of A's name is of another shape and huge (here a sparse 512 MB
// F32 safetensors): it is refused from its header, before its bytes are read. It was read whole into memory (the
// shape compared after), so a hostile session's B cost its tensor's size in memory.
TEST_CASE("model compare: a session's B of another shape is refused before its bytes are read") {
    TempDir dir;
    WriteF32Safetensors(dir / "huge.safetensors", "w", kHugeB);
    Tensor t;
    t.shape = {4};
    t.values = {1, 2, 3, 4};
    std::shared_ptr<const TensorData> data = MakeTensorData(std::make_shared<const Tensor>(t));
    const std::shared_ptr<const TensorData> a = data;
    const ViewSettings view{{"compare.b", "huge.safetensors"}};
    const long before = MaxRssKib();
    std::string b_path;
    const std::string problem = AttachSessionB(data, view, dir / "s.json", "w", &b_path);
    const long after = MaxRssKib();
    CAPTURE(problem);
    CHECK(problem.find("the session's B (") == 0);
    CHECK(problem.find("its tensor 'w' is now 134217728, A's 4") != std::string::npos);
    CHECK(problem.find('\n') == std::string::npos);
    CHECK(data == a);  // A's tensor alone
    CHECK(b_path.empty());
    CHECK(after - before < 64 * 1024);  // KiB: nothing near the tensor's 512 MB
}

// The same for a Model-tab row (and gui A --tensor NAME --compare B): B's tensor of another shape was read whole
// before the shapes were compared.
TEST_CASE("model compare: a row whose B is of another shape is refused before B's bytes are read") {
    TempDir dir;
    WriteF32Safetensors(dir / "a.safetensors", "w", 4, {1, 2, 3, 4});
    WriteF32Safetensors(dir / "huge.safetensors", "w", kHugeB);
    AppState app;
    Start(app, {"--preset", "lesson"});
    std::string error;
    REQUIRE_MESSAGE(OpenModel(app.model, dir / "a.safetensors", &error), error);
    REQUIRE_MESSAGE(StartModelCompare(app.model.compare, app.model.checkpoint, dir / "huge.safetensors", &error), error);
    FinishModelCompare(app.model.compare);
    const long before = MaxRssKib();
    app.intents.push(CompareTensorJob(app.model, "w", app.doc.config));
    ApplyIntents(app);
    WaitForJob(app);
    const long after = MaxRssKib();
    CHECK(app.doc.error == "'w': B's tensor is 134217728, A's 4 (not compared)");
    CHECK(after - before < 64 * 1024);
}

// Another A opened (File > Open, a session's model) drops the comparison with B: its rows were the previous A's,
// and a row clicked opened this A's tensor against B under the previous A's numbers (a session saved then
// named this A and that B).
TEST_CASE("model compare: opening another checkpoint as A drops the comparison of the previous A") {
    const Checkpoints files;
    for (const bool session : {false, true}) {
        CAPTURE(session);
        AppState app;
        Start(app, {"--preset", "lesson"});
        OpenAndCompare(app, files);
        std::string error;
        if (session) {
            CHECK(ApplySessionView(app, {{"model", files.b_path}}).empty());
        } else {
            REQUIRE_MESSAGE(OpenModel(app.model, files.b_path, &error), error);
        }
        CHECK(app.model.path == files.b_path);
        CHECK_FALSE(app.model.compare.checkpoint_b);
        CHECK(app.model.compare.path_b.empty());
        CHECK_FALSE(app.model.compare.has_shown);
        CHECK_FALSE(app.model.compare.on_show);
        CHECK_THROWS(CompareTensorJob(app.model, "attn_q.weight", app.doc.config));
    }
}
