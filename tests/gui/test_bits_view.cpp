// The Bits line of the selected cell's pipeline (issue 12 item 5): the core's fields of its code, printed.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <imgui.h>

#include "gui/panels/pipeline_text.hpp"

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
