// The figures `render` writes are pinned by checksum: a refactor of the drawing code (moving it between
// layers, sharing the plot kit) must give byte-identical PNGs. A deliberate change of the figure updates
// the table below; run this test once and copy the checksums it prints.
//
// Mesa's llvmpipe compiles its shaders for the host CPU, and different vector units may round the last bit
// of a blended pixel differently: the renders here pin it to SSE4.1 with 128-bit vectors so the checksums
// do not depend on the machine that runs the tests.
#include <cstdint>
#include <cstdio>
#include <string>

#include "gui_test_support.hpp"
#include "quantscope/fnv1a.hpp"

namespace {

using namespace qs::gui_test;

std::uint64_t fnv1a(const std::string& bytes) {
    qs::Fnv1a h;
    h.add_bytes(bytes.data(), bytes.size());
    return h.value();
}

struct GoldenFigure {
    const char* name;
    const char* options;
    std::uint64_t checksum;
};

const GoldenFigure kGolden[] = {
    {"lesson", "--preset lesson", 0xea31b250a7cdaff2ull},
    {"lesson grid", "--preset lesson --grid", 0xc1c046870debd00aull},
    {"lesson look", "--preset lesson-manual --lesson-look", 0x82badf659a39a9ccull},
    {"manual int4", "--preset lesson --dtype int4 --scale 2.5 --zero-point -1", 0xe04b5ab511f69a08ull},
    {"randn symmetric viridis", "--preset randn-4x4 --mode symmetric --cmap viridis --annotate on", 0xac251b16c8af8643ull},
    {"channels greys", "--random normal --shape 24x40 --seed 7 --granularity channel --cmap greys --width 1000", 0xde3c4969a30adc90ull},
    {"groups uint4 slice", "--preset outliers-4x128x256 --dtype uint4 --granularity group --group-size 32 --slice 2", 0xbed8f80dfbff9f4cull},
};

}  // namespace

TEST_CASE("render writes the same figure bytes as before") {
    TempDir dir;
    bool all_match = true;
    for (const GoldenFigure& g : kGolden) {
        const std::string out = dir / "figure.png";
        const Run r = run(dir, std::string("GALLIUM_OVERRIDE_CPU_CAPS=sse4.1 LP_NATIVE_VECTOR_WIDTH=128 ") +
                                   QS_BINARY + " render " + g.options + " --out '" + out + "'");
        INFO(std::string(g.name) << ": " << r.err);
        REQUIRE(r.exit_code == 0);
        const std::uint64_t sum = fnv1a(read_file(out));
        if (sum != g.checksum) {
            all_match = false;
            std::printf("    {\"%s\", \"%s\", 0x%016llxull},\n", g.name, g.options, static_cast<unsigned long long>(sum));
        }
        CHECK_MESSAGE(sum == g.checksum, std::string(g.name) << ": the PNG changed");
    }
    if (!all_match) std::printf("(new checksums above: paste them into kGolden if the change is intended)\n");
}
