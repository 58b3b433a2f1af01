// The Bits line of the selected cell's pipeline and the window's Bits tab (issue 12 item 5): the core's fields
// of its code, its block's scale and its packed byte, printed.
#include <doctest/doctest.h>

#include <fstream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <imgui.h>

#include "gui/document/tensor_data.hpp"
#include "gui/panels/bits_panel.hpp"
#include "gui/panels/bits_text.hpp"
#include "gui/panels/figure_panel.hpp"
#include "gui/panels/intents.hpp"
#include "gui/panels/pipeline_text.hpp"
#include "gui/platform/offscreen_renderer.hpp"
#include "gui_test_support.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/presets.hpp"

using namespace qs;
using namespace qs::gui;

namespace {

std::string BitsLineOf(const QuantConfig& config, std::int32_t code) {
    // Symbols() asks the current ImGui font which glyphs it has: a bare context (no font) picks plain ASCII.
    ImGuiContext* context = ImGui::CreateContext();
    QuantView view;
    view.config = &config;
    ElementTrace trace;
    trace.code = code;
    std::string found;
    for (const std::string& line : PipelineLines(view, trace))
        if (line.rfind("bits:", 0) == 0) found = line;
    ImGui::DestroyContext(context);
    return found;
}

}  // namespace

TEST_CASE("bits view: int4 -3 is the two's complement 1101 two codes a byte") {
    QuantConfig config;
    parse_dtype("int4", config);
    const std::string line = BitsLineOf(config, -3);
    INFO(line);
    CHECK(line.find("1101 = -3 (two's complement)") != std::string::npos);
    CHECK(line.find("2 codes a byte, the first in the lowest bits") != std::string::npos);
    parse_dtype("uint8", config);
    CHECK(BitsLineOf(config, 200).find("11001000 = 200 (offset code)") != std::string::npos);
}

TEST_CASE("bits view: fp8-e4m3 448 shows its sign exponent and mantissa fields") {
    QuantConfig config;
    parse_dtype("fp8-e4m3", config);
    const std::string line = BitsLineOf(config, 0x7E);
    INFO(line);
    CHECK(line.find("sign 0 = 1") != std::string::npos);
    CHECK(line.find("exponent 1111 = 2^8") != std::string::npos);
    CHECK(line.find("mantissa 110 = 1.75") != std::string::npos);
    CHECK(line.find("codes a byte") == std::string::npos);  // a whole byte: no packing
}

// ---- the Bits tab in the window (--select a cell, --tab bits, --layout-report prints its lines) -----------

namespace {

using namespace qs::gui_test;

// The window on a one-row CSV with `options`, the Bits tab in front: its --layout-report line.
std::string BitsReport(const std::string& csv, const std::string& options) {
    TempDir dir;
    {
        std::ofstream out(dir.path + "/w.csv");
        out << csv << "\n";
    }
    const Run r = run(dir, std::string(kXvfb) + "'" QS_BINARY "' gui '" + dir.path + "/w.csv' " + options +
                               " --tab bits --screenshot '" + dir.path + "/shot.png' --layout-report");
    INFO("stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(file_exists(dir.path + "/shot.png"));
    return r.out;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("bits tab: fp8-e4m3 448 shows its fields and value and the float32 scale") {
    REQUIRE(have_xvfb());
    const std::string out = BitsReport("448, -3, 0.5, 1", "--dtype fp8-e4m3 --select 0,0");
    INFO(out);
    CHECK(Has(out, "\"bits\": [\"code (fp8-e4m3): 0 1111 110 "));
    CHECK(Has(out, " 1.75 = 448\""));
    CHECK(Has(out, "scale s (float32): 0 01111111 00000000000000000000000"));
    CHECK(!Has(out, "of --out-packed"));  // a code of 8 bits packs into whole bytes
}

TEST_CASE("bits tab: int4 -3 is 1101 in a byte shared with the code before it") {
    REQUIRE(have_xvfb());
    const std::string out = BitsReport("7, -3, 1, 0", "--dtype int4 --mode symmetric --select 0,1");
    INFO(out);
    CHECK(Has(out, "code (int4): 1101 "));
    CHECK(Has(out, "3 (two's complement)"));
    CHECK(Has(out, "byte 0 of --out-packed = 215 = 0b11010111: codes 7 -3 of [0, 0] to [0, 1]"));
}

TEST_CASE("bits tab: the course's uint2 codes 1 0 3 2 pack into the byte 177") {
    REQUIRE(have_xvfb());
    const std::string out = BitsReport("1, 0, 3, 2", "--dtype uint2 --select 0,2");
    INFO(out);
    CHECK(Has(out, "code (uint2): 11 "));
    CHECK(Has(out, "byte 0 of --out-packed = 177 = 0b10110001: codes 1 0 3 2 of [0, 0] to [0, 3], the first in the lowest bits"));
}

TEST_CASE("bits tab: the packed byte's line says its number is the byte's offset in --out-packed") {
    // The file's second byte: codes 2 3 0 1, the first in the lowest bits, are 2 + 3*4 + 0*16 + 1*64 = 78.
    REQUIRE(have_xvfb());
    const std::string out = BitsReport("1, 0, 3, 2, 2, 3, 0, 1", "--dtype uint2 --select 0,5");
    INFO(out);
    CHECK(Has(out, "byte 1 of --out-packed = 78 = 0b01001110: codes 2 3 0 1 of [0, 4] to [0, 7]"));
}

TEST_CASE("bits tab: an mxfp4 cell shows its block's E8M0 scale 124 = 2^-3 at a projector's text size") {
    REQUIRE(have_xvfb());
    std::string csv = "0.75";
    for (int i = 1; i < 32; ++i) csv += ", 0.01";
    const std::string out = BitsReport(csv, "--dtype mxfp4 --select 0,0 --size 1280x720 --font-scale 2 --panels histogram");
    INFO(out);
    CHECK(Has(out, "code (fp4-e2m1): 0 11 1 "));
    CHECK(Has(out, "block scale X (E8M0): 01111100 "));
    CHECK(Has(out, " 0.125\""));
    CHECK(Has(out, "byte 0 of --out-packed = "));
    CHECK(Has(out, "\"overflowing_windows\": 0"));
}

TEST_CASE("--select names an element of the tensor or is one line") {
    TempDir dir;
    const Run r = run(dir, "'" QS_BINARY "' render --preset lesson --select 3,0 --out '" + dir.path + "/f.png'");
    CHECK(r.exit_code == 2);
    CHECK(Has(r.err, "--select: '3,0' is not an element of the 3x3 tensor"));
    CHECK(run(dir, "'" QS_BINARY "' render --preset lesson --select 1,2 --out '" + dir.path + "/f.png'").exit_code == 0);
}

TEST_CASE("the figure reserves every line the selected cell's pipeline wraps to") {
    // Narrow figure: the lesson's pipeline wraps to more than the two lines a figure reserves without a
    // selection; the extra lines used to be drawn over whatever followed the figure.
    Preset p = make_preset("lesson");
    auto data = MakeTensorData(std::make_shared<const Tensor>(std::move(p.tensor)));
    QuantParams params;
    quantize(*data->floats, p.config, &params);
    const QuantOverview overview = quantize_overview(data->view, params, p.config, data->values.grid);
    QuantView view;
    view.data = data.get();
    view.tensor = data->floats.get();
    view.config = &p.config;
    view.params = &params;
    view.overview = &overview;
    view.generation = 1;
    OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(500, 400, nullptr, &error), error);
    FigurePanelState st;
    float none = 0, selected = 0, minimum = 0, line = 0;
    r.frame([&] {
        line = ImGui::GetTextLineHeightWithSpacing();
        none = FigurePanelHeight(st, view, 420.0f);
        st.selected = 2;
        selected = FigurePanelHeight(st, view, 420.0f);
        minimum = FigurePanelMinHeight(st, view, 420.0f);
    });
    CHECK(selected >= none + 2.0f * line);  // at 420 px the lesson's steps take at least four lines
    CHECK(minimum < selected);  // the heatmaps may shrink, the pipeline's lines may not
    CHECK(minimum >= selected - none);
}

TEST_CASE("bits panel: a covered code stays hidden and a click on a packed code follows its element") {
    Tensor t;
    t.shape = {1, 4};
    t.values = {1.0f, 0.0f, 3.0f, 2.0f};
    QuantConfig config;
    parse_dtype("uint2", config);  // asymmetric over [0, 3]: s = 1, z = 0, codes = values
    auto data = MakeTensorData(std::make_shared<const Tensor>(std::move(t)));
    QuantParams params;
    quantize(*data->floats, config, &params);
    const QuantOverview overview = quantize_overview(data->view, params, config, data->values.grid);
    QuantView view;
    view.data = data.get();
    view.tensor = data->floats.get();
    view.config = &config;
    view.params = &params;
    view.overview = &overview;
    view.generation = 1;
    OffscreenRenderer r;
    std::string error;
    REQUIRE_MESSAGE(r.init(900, 700, nullptr, &error), error);
    BitsPanelState st;
    std::int64_t follow = -1;
    bool hidden = true;
    auto draw = [&] {
        ImGui::SetNextWindowPos(ImVec2(0, 0));
        ImGui::SetNextWindowSize(ImGui::GetIO().DisplaySize);
        ImGui::Begin("bits", nullptr, ImGuiWindowFlags_NoDecoration);
        qs::gui::Intents out;
        DrawBitsPanel(st, view, 2, hidden, out);
        for (const qs::gui::Intent& i : out.take())
            if (const auto* select = std::get_if<qs::gui::SelectElementIntent>(&i)) follow = select->flat;
        ImGui::End();
    };
    r.frame(draw);
    CHECK(st.report.empty());  // a lesson's "predict, then reveal": no bits before R
    hidden = false;
    r.frame(draw);
    REQUIRE(st.report.size() == 4);  // code, s, z, packed byte
    CHECK(st.report[0].find("code (uint2): 11 ") == 0);
    CHECK(st.report[0].find("= 3 (unsigned)") != std::string::npos);
    CHECK(st.report[3].find("byte 0 of --out-packed = 177 = 0b10110001") == 0);
    REQUIRE(st.packed_rects.size() == 4);  // the four codes, the first (element 0) in the lowest bits: right
    CHECK(st.packed_rects[0].x > st.packed_rects[3].x);
    const ImVec4 first = st.packed_rects[0];
    const ImVec2 at((first.x + first.z) * 0.5f, (first.y + first.w) * 0.5f);
    r.frame(draw, at, false);
    r.frame(draw, at, true);
    r.frame(draw, at, false);
    CHECK(follow == 0);
}

TEST_CASE("pipeline: a value that rounds to zero from below reads round(...) = 0 and not -0") {
    // d-randn-4x4's last step follows [1, 0]: r / s + z = -0.129804, whose round is the float -0; the trace read
    // "round(-0.129804) = -0 -> q = clamp(-0, -128, 127) = 0".
    ImGuiContext* context = ImGui::CreateContext();
    QuantConfig config;
    QuantView view;
    view.config = &config;
    ElementTrace trace;
    trace.r = 0.2167;
    trace.scale = 0.0156234;
    trace.zero_point = -14;
    trace.scaled = -0.129804;
    trace.rounded = -0.0;
    trace.code = 0;
    std::string all;
    for (const std::string& line : PipelineLines(view, trace)) all += line + "\n";
    ImGui::DestroyContext(context);
    INFO(all);
    CHECK(all.find("round(-0.129804) = 0\n") != std::string::npos);
    CHECK(all.find("clamp(0, -128, 127) = 0") != std::string::npos);
    CHECK(all.find("clamp(-0,") == std::string::npos);
}

namespace {

// An integer code's Bits row as cell_bits makes it (each bit's weight, the top one negative when signed), decoded.
std::string DecodedIntCode(const std::string& encoding, std::int32_t code) {
    const int bits = encoding.back() == '4' ? 4 : 8;
    const bool is_signed = encoding[0] == 'i';
    BitRow row;
    row.encoding = encoding;
    row.fields = int_bit_fields(code, bits, is_signed);
    row.bits_value = row.fields[0].raw;
    row.value = row.fields[0].value;
    for (int b = bits - 1; b >= 0; --b) row.weights.push_back((is_signed && b == bits - 1 ? -1.0 : 1.0) * static_cast<double>(1 << b));
    ImGuiContext* context = ImGui::CreateContext();
    const std::string text = BitRowDecoded(row);
    ImGui::DestroyContext(context);
    return text;
}

}  // namespace

TEST_CASE("bits view: a code with one set bit or none reads as its number without a sum") {
    // The compact look leaves the bits out of the decoded line: int8 code 2 read "-> 2 = 2 (two's complement)".
    CHECK(DecodedIntCode("int8", 2) == "2 (two's complement)");
    CHECK(DecodedIntCode("int8", 0) == "0 (two's complement)");
    CHECK(DecodedIntCode("int8", -128) == "-128 (two's complement)");
    CHECK(DecodedIntCode("uint8", 64) == "64 (unsigned)");
    CHECK(DecodedIntCode("uint8", 0) == "0 (unsigned)");
    // Two set bits or more: the weights summed, as before.
    CHECK(DecodedIntCode("int8", -126) == "-128 + 2 = -126 (two's complement)");
    CHECK(DecodedIntCode("int4", -3) == "-8 + 4 + 1 = -3 (two's complement)");
    CHECK(DecodedIntCode("uint8", 3) == "2 + 1 = 3 (unsigned)");
}
