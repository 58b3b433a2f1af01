// A format added at run time (issue 22 item 1): a throwaway 3-bit float registered here, in this file
// alone, shows in the table of formats, in `quantscope formats`, in --dtype (quantize's JSON and files)
// and in --help, with no other edit. The window's type list is tests/gui/test_format_registry_gui.cpp's.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iostream>

#include "cli/commands.hpp"
#include "quantscope/format_quantize.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/format_traits.hpp"
#include "test_helpers.hpp"

namespace {

// fp3: sign, 1 exponent bit, 1 mantissa bit, bias 1: +-{0, 0.5, 1, 1.5}, every code a number.
constexpr qs::FloatSpec kFp3{1, 1, 1, qs::FloatSpecials::None};

// Registered for one test's length, then taken out of the lists again (the other tests see the table as built).
struct ThrowawayFormat {
    qs::FormatId id;
    ThrowawayFormat() : id(qs::register_format(qs::float_format_row("fp3-test", kFp3, "a throwaway 3-bit float"))) {}
    ~ThrowawayFormat() { qs::unregister_format(id); }
};

// What a command prints on stdout (printf and std::cout), and its exit code.
std::string captured_stdout(const std::function<int()>& command, int& exit_code) {
    const qs::test::TempDir dir;
    const std::string path = (dir.path / "stdout").string();
    std::fflush(stdout);
    std::cout.flush();
    const int saved = ::dup(1);
    std::FILE* file = std::fopen(path.c_str(), "wb");
    REQUIRE(file != nullptr);
    ::dup2(::fileno(file), 1);
    exit_code = command();
    std::fflush(stdout);
    std::cout.flush();
    ::dup2(saved, 1);
    ::close(saved);
    std::fclose(file);
    return qs::test::read_bytes(path);
}

}  // namespace

TEST_CASE("format registry: a registered format gets the next free id and its row answers") {
    const std::size_t before = qs::all_formats().size();
    {
        const ThrowawayFormat fp3;
        CHECK(static_cast<int>(fp3.id) > static_cast<int>(qs::FormatId::Q4_1));  // past the built-in rows
        CHECK(qs::all_formats().size() == before + 1);
        CHECK(qs::parse_format_name("FP3-Test") == fp3.id);
        CHECK(qs::format_levels(fp3.id) == 8);  // +-0, +-0.5, +-1, +-1.5
        CHECK(qs::format_traits(fp3.id).largest == 1.5);
        CHECK_THROWS_AS(qs::register_format(qs::float_format_row("fp3-test", kFp3)), qs::Error);
        CHECK_THROWS_AS(qs::register_format(qs::float_format_row("int3", kFp3)), qs::Error);
    }
    CHECK(qs::all_formats().size() == before);
    CHECK_FALSE(qs::parse_format_name("fp3-test"));
}

TEST_CASE("format registry: a row a pass could not run is refused when it is registered") {
    const std::size_t before = qs::all_formats().size();
    qs::FormatTraits no_kernel = qs::float_format_row("fp3-nokernel", kFp3);
    no_kernel.kernels.chunk = nullptr;
    CHECK_THROWS_AS(qs::register_format(no_kernel), qs::Error);
    // A block format whose block does not divide the passes' chunks of 4096 values.
    qs::FormatTraits odd_block = qs::format_traits(qs::FormatId::MxFp4);
    odd_block.name = "mxfp4-48";
    odd_block.block_size = 48;
    CHECK_THROWS_AS(qs::register_format(odd_block), qs::Error);
    qs::FormatTraits int_row = qs::format_traits(qs::FormatId::Int);
    int_row.name = "fixed3";
    CHECK_THROWS_AS(qs::register_format(int_row), qs::Error);
    CHECK(qs::all_formats().size() == before);
}

TEST_CASE("format registry: the throwaway format is a row of the formats table and of `quantscope formats`") {
    const ThrowawayFormat fp3;
    const qs::Shape shape{8, 64};
    bool found = false;
    for (const qs::QuantConfig& c : qs::format_table_configs(shape)) found = found || c.format == fp3.id;
    CHECK(found);

    int code = -1;
    const std::string table = captured_stdout(
        [] { return qs::cli::run_formats({"--random", "normal", "--shape", "8x64", "--seed", "3"}); }, code);
    CHECK(code == 0);
    CHECK(qs::test::contains(table, "fp3-test     tensor"));
    const std::string json = captured_stdout(
        [] { return qs::cli::run_formats({"--random", "normal", "--shape", "8x64", "--seed", "3", "--json"}); }, code);
    CHECK(qs::test::contains(json, "\"format\": \"fp3-test\""));
    CHECK(qs::test::contains(qs::cli::quantize_help(), "fp4-e2m1, nf4, fp3-test; block formats"));
}

TEST_CASE("format registry: quantize --dtype names the throwaway format in its JSON and its code files") {
    const ThrowawayFormat fp3;
    const qs::test::TempDir dir;
    const std::string codes = (dir.path / "q.npy").string(), packed = (dir.path / "q.bin").string();
    int exit_code = -1;
    const std::string json = captured_stdout(
        [&] {
            return qs::cli::run_quantize({"--random", "normal", "--shape", "4x8", "--seed", "1", "--dtype", "FP3-TEST",
                                          "--out-quantized", codes, "--out-packed", packed});
        },
        exit_code);
    CHECK(exit_code == 0);
    CHECK(qs::test::contains(json, "\"dtype\": \"fp3-test\""));
    CHECK(qs::test::contains(json, "\"format_kind\": \"float\""));
    CHECK(qs::test::contains(json, "\"levels_used\": "));
    // 32 codes of 3 bits: 12 bytes packed, then the per-tensor float32 s.
    CHECK(qs::test::read_bytes(packed).size() == 12 + 4);
    const std::string npy = qs::test::read_bytes(codes);
    CHECK(qs::test::contains(npy, "'descr': '|u1'"));
    for (std::size_t i = npy.size() - 32; i < npy.size(); ++i) CHECK(static_cast<unsigned char>(npy[i]) < 8);

    // What it refuses is its row's: a float format takes cast, nothing of int<N>'s.
    const std::string refused = captured_stdout(
        [&] {
            try {
                return qs::cli::run_quantize({"--random", "normal", "--shape", "4x8", "--dtype", "fp3-test",
                                              "--mode", "asymmetric"});
            } catch (const qs::Error& e) {
                std::printf("%s\n", e.what());
                return 2;
            }
        },
        exit_code);
    CHECK(exit_code == 2);
    CHECK(qs::test::contains(refused, "fp3-test has no zero point"));
}
