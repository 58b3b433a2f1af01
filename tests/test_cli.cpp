// The command line end to end: runs the built binary on temporary files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "test_helpers.hpp"

namespace fs = std::filesystem;

namespace {

using qs::test::Run;
using qs::test::TempDir;
using qs::test::run;
using qs::test::shell_quote;
using qs::test::read_bytes;
using qs::test::write_bytes;
using qs::test::safetensors_file;

// The value of "key": in a one-line JSON object (numbers, strings and arrays as text).
std::string json_value(const std::string& json, const std::string& key) {
    const std::string needle = "\"" + key + "\": ";
    const auto start = json.find(needle);
    if (start == std::string::npos) return "<missing>";
    auto pos = start + needle.size();
    auto end = json[pos] == '[' ? json.find(']', pos) + 1 : json.find_first_of(",}", pos);
    return json.substr(pos, end - pos);
}

// A little-endian .npy v1.0 writer for test inputs.
std::string npy(const std::string& descr, const std::string& shape, const std::string& data, bool fortran = false) {
    std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                         ", 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::string out = "\x93NUMPY";
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    return out + header + data;
}

std::string floats(std::initializer_list<float> values) {
    std::string out;
    for (float v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
    return out;
}

const char* kLessonCsv = "191.6, -13.5, 728.6\n92.14, 295.5, -184\n0, 684.6, 245.5\n";

}  // namespace

TEST_CASE("quantize prints the SPEC keys and the golden values") {
    TempDir dir;
    write_bytes(dir / "t.csv", kLessonCsv);
    Run r = run("quantize " + shell_quote(dir / "t.csv"), dir);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    // SPEC's keys, plus "calibration" (issue 5) and FORMATS.md's format_kind, bits_per_weight, bytes.
    const std::vector<std::string> keys{"shape", "dtype", "q_min", "q_max", "mode", "granularity", "calibration", "scale",
                                        "zero_point", "mse", "rmse", "mae", "max_abs_error", "l2_error", "sqnr_db",
                                        "clipped", "levels_used", "format_kind", "bits_per_weight", "bytes"};
    std::size_t previous = 0;
    for (const auto& k : keys) {
        CAPTURE(k);
        const std::size_t at = r.out.find("\"" + k + "\"");
        CHECK(at != std::string::npos);
        CHECK(at >= previous);  // in this order
        previous = at;
    }
    // Exactly these keys: count them.
    std::size_t colons = 0;
    for (std::size_t p = r.out.find("\": "); p != std::string::npos; p = r.out.find("\": ", p + 1)) ++colons;
    CHECK(colons == keys.size());
    CHECK(json_value(r.out, "shape") == "[3, 3]");
    CHECK(json_value(r.out, "dtype") == "\"int8\"");
    CHECK(json_value(r.out, "q_min") == "-128");
    CHECK(json_value(r.out, "q_max") == "127");
    CHECK(json_value(r.out, "mode") == "\"asymmetric\"");
    CHECK(json_value(r.out, "granularity") == "\"tensor\"");
    CHECK(json_value(r.out, "calibration") == "\"minmax\"");
    const std::string scale = json_value(r.out, "scale");
    CHECK(std::stod(scale.substr(1)) == 3.578823433670343);  // printed to round-trip
    CHECK(json_value(r.out, "zero_point") == "[-77]");
    CHECK(std::stod(json_value(r.out, "mse")) == doctest::Approx(1.5730).epsilon(1e-4));
    CHECK(json_value(r.out, "clipped") == "0");
    CHECK(json_value(r.out, "levels_used") == "9");

    r = run("quantize --preset lesson --scale 3.5 --zero-point -70", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "mode") == "\"manual\"");
    CHECK(json_value(r.out, "scale") == "[3.5]");
    CHECK(json_value(r.out, "zero_point") == "[-70]");
    CHECK(std::stod(json_value(r.out, "mse")) == doctest::Approx(170.8753).epsilon(1e-6));
    CHECK(std::stod(json_value(r.out, "l2_error")) == doctest::Approx(39.2158).epsilon(1e-6));
    CHECK(json_value(r.out, "clipped") == "1");

    r = run("quantize --preset lesson-manual", dir);
    CHECK(json_value(r.out, "zero_point") == "[-70]");
    r = run("quantize --preset lesson-manual --mode asymmetric", dir);
    CHECK(json_value(r.out, "zero_point") == "[-77]");
}

TEST_CASE("quantize --overflow wrap and --recipe naive-max255 give the lessons' naive numbers") {
    TempDir dir;
    Run r = run("quantize --preset lesson --scale 3.5 --zero-point -70 --overflow wrap --out-quantized " +
                    shell_quote(dir / "q.npy"),
                dir);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(json_value(r.out, "overflow") == "\"wrap\"");
    CHECK(json_value(r.out, "clipped") == "1");
    // The lesson's pre-clamp 138, stored by the cast as -118 (the codes file holds the wrapped code).
    CHECK(r.out.find("728.6 at s = 3.5, z = -70 rounds to 138 and the int8 cast wraps it to -118") != std::string::npos);
    CHECK(r.out.find("WRONG") != std::string::npos);
    const std::string q = read_bytes(dir / "q.npy");
    REQUIRE(q.size() >= 9);
    CHECK(static_cast<signed char>(q[q.size() - 9 + 2]) == -118);

    // The notebook's "Naive approach with max": codes 67 -5 -1 / 32 103 -64 / 0 -16 86, norm 1033.6320.
    r = run("quantize " + shell_quote(dir / "t.csv") + " --recipe naive-max255 --out-quantized " +
                shell_quote(dir / "naive.npy"),
            dir);
    CHECK(r.exit_code == 2);  // no t.csv yet: the recipe does not invent a tensor
    write_bytes(dir / "t.csv", kLessonCsv);
    r = run("quantize " + shell_quote(dir / "t.csv") + " --recipe naive-max255 --out-quantized " +
                shell_quote(dir / "naive.npy"),
            dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "recipe") == "\"naive-max255\"");
    CHECK(json_value(r.out, "overflow") == "\"wrap\"");
    CHECK(json_value(r.out, "dtype") == "\"int8\"");
    CHECK(json_value(r.out, "mode") == "\"manual\"");
    CHECK(json_value(r.out, "zero_point") == "[0]");
    CHECK(std::stod(json_value(r.out, "scale").substr(1)) == doctest::Approx(728.6 / 255).epsilon(1e-7));
    CHECK(std::stod(json_value(r.out, "l2_error")) == doctest::Approx(1033.6320).epsilon(1e-6));
    CHECK(json_value(r.out, "clipped") == "2");
    CHECK(r.out.find("728.6 at s = 2.85725, z = 0 rounds to 255 and the int8 cast wraps it to -1") != std::string::npos);
    const std::string naive = read_bytes(dir / "naive.npy");
    REQUIRE(naive.size() >= 9);
    const signed char lesson_codes[9] = {67, -5, -1, 32, 103, -64, 0, -16, 86};
    for (int i = 0; i < 9; ++i) {
        CAPTURE(i);
        CHECK(static_cast<signed char>(naive[naive.size() - 9 + i]) == lesson_codes[i]);
    }

    // The clamp stays SPEC's default and prints no overflow key; the recipe's own choices cannot be mixed.
    r = run("quantize --preset lesson --recipe naive-max255 --overflow clamp", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "overflow") == "<missing>");
    CHECK(json_value(r.out, "recipe") == "\"naive-max255\"");
    for (const char* bad : {"--recipe naive-max255 --dtype int4", "--recipe naive-max255 --scale 1 --zero-point 0",
                            "--recipe naive-max255 --mode symmetric", "--recipe max255", "--overflow saturate",
                            "--overflow", "--recipe"}) {
        CAPTURE(bad);
        r = run(std::string("quantize --preset lesson ") + bad, dir);
        CHECK(r.exit_code == 2);
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());
    }
}

TEST_CASE("quantize writes outputs with the input's shape and the right dtypes") {
    TempDir dir;
    write_bytes(dir / "t.npy", npy("<f4", "(3, 3)", floats({191.6f, -13.5f, 728.6f, 92.14f, 295.5f, -184, 0, 684.6f, 245.5f})));
    Run r = run("quantize " + shell_quote(dir / "t.npy") + " --scale 3.5 --zero-point -70 --out-quantized " +
                    shell_quote(dir / "q.npy") + " --out-dequantized " + shell_quote(dir / "d.npy") +
                    " --out-error " + shell_quote(dir / "e.csv"),
                dir);
    REQUIRE(r.exit_code == 0);
    const std::string q = read_bytes(dir / "q.npy");
    CHECK(q.find("'descr': '|i1'") != std::string::npos);
    CHECK(q.find("'shape': (3, 3)") != std::string::npos);
    REQUIRE(q.size() >= 9);
    const std::string codes = q.substr(q.size() - 9);
    CHECK(static_cast<signed char>(codes[0]) == -15);
    CHECK(static_cast<signed char>(codes[2]) == 127);
    CHECK(static_cast<signed char>(codes[5]) == -123);
    const std::string d = read_bytes(dir / "d.npy");
    CHECK(d.find("'descr': '<f4'") != std::string::npos);
    float first;
    std::memcpy(&first, d.data() + d.size() - 36, 4);
    CHECK(first == 192.5f);
    const std::string e = read_bytes(dir / "e.csv");
    CHECK(std::count(e.begin(), e.end(), '\n') == 3);

    r = run("quantize --preset randn-4x4 --dtype uint12 --out-quantized " + shell_quote(dir / "q16.npy"), dir);
    REQUIRE(r.exit_code == 0);
    CHECK(read_bytes(dir / "q16.npy").find("'descr': '<u2'") != std::string::npos);
    r = run("quantize --preset outliers-4x128x256 --dtype int16 --granularity channel --axis 2 --out-quantized " +
                shell_quote(dir / "q3.npy"),
            dir);
    REQUIRE(r.exit_code == 0);
    const std::string q3 = read_bytes(dir / "q3.npy");
    CHECK(q3.find("'descr': '<i2'") != std::string::npos);
    CHECK(q3.find("'shape': (4, 128, 256)") != std::string::npos);
    CHECK(std::count(r.out.begin(), r.out.end(), ',') > 256 * 2);  // 256 scales and zero points
}

TEST_CASE("calibrators from the command line") {
    TempDir dir;
    Run r = run("quantize --preset outliers-4x128x256 --calibrate percentile:99.9", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "calibration") == "\"percentile:99.9\"");
    CHECK(std::stoll(json_value(r.out, "clipped")) > 0);
    const double minmax_mse = std::stod(json_value(run("quantize --random normal --shape 64x64 --dtype int4", dir).out, "mse"));
    r = run("quantize --random normal --shape 64x64 --dtype int4 --calibrate mse", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "calibration") == "\"mse\"");
    CHECK(std::stod(json_value(r.out, "mse")) < minmax_mse);
    r = run("quantize --random uniform --low 10 --high 20 --shape 8x8 --dtype uint8 --recompute-scale", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "zero_point") == "[0]");
    CHECK(json_value(r.out, "clipped") == "0");
}

TEST_CASE("many outliers cost a bit an element and not a hash set entry") {
#if !defined(__SANITIZE_ADDRESS__)
    // Every element of 4096 x 4096 an outlier: a hash set and a list of positions took ~1 GB and 20 s; the
    // bitmap takes 2 MB. 400 MB of address space is the tensor, its outputs and the threads' stacks.
    TempDir dir;
    const Run r = run("quantize --random normal --shape 4096x4096 --outliers 16777216 --outlier-scale 2", dir, "", 400 * 1024);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(json_value(r.out, "shape") == "[4096, 4096]");
#endif
}

TEST_CASE("random tensors from the command line") {
    TempDir dir;
    Run r = run("quantize --random uniform --shape 8x16 --seed 3 --low -1 --high 2 --granularity group --group-size 4", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "shape") == "[8, 16]");
    CHECK(json_value(r.out, "granularity") == "\"group\"");
    Run again = run("quantize --random uniform --shape 8x16 --seed 3 --low -1 --high 2 --granularity group --group-size 4", dir);
    CHECK(again.out == r.out);
    r = run("quantize --random normal --shape 100 --mean 5 --std 0.1 --outliers 2 --mode symmetric", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "shape") == "[100]");
    // Real outliers: 2 values at 5 +- 10 x 0.1 (the default scale), so max|r| is 6 when one is positive.
    r = run("quantize --random normal --shape 1000 --mean 0 --std 1 --outliers 1 --outlier-scale 20 --mode symmetric", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(std::stod(json_value(r.out, "scale").substr(1)) == doctest::Approx(20.0 / 127));
    // The lesson's recipe pins the range without outliers.
    r = run("quantize --random uniform --low -50 --high 150 --shape 4x128x256 --pin-range", dir);
    REQUIRE(r.exit_code == 0);
    Run preset = run("quantize --preset outliers-4x128x256", dir);
    CHECK(json_value(preset.out, "scale") == json_value(r.out, "scale"));
    for (const char* bad : {"--outlier-scale 3", "--outliers 2 --outlier-scale 0", "--outliers 2 --outlier-scale nan",
                            "--outliers 2 --outlier-scale 1e40"}) {
        r = run(std::string("quantize --random normal --shape 10 ") + bad, dir);
        CHECK(r.exit_code == 2);
        CHECK(qs::test::one_line(r.err));
    }
    CHECK(run("quantize --preset lesson --pin-range", dir).exit_code == 2);
    // Fewer than the three elements the recipe sets: one line that names the recipe and the tensor's size.
    for (const char* shape : {"1", "2", "1x2"}) {
        r = run(std::string("quantize --random normal --pin-range --shape ") + shape, dir);
        INFO(shape << ": " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(qs::test::one_line(r.err));
        CHECK(r.err.find("--pin-range sets the first 3 elements") != std::string::npos);
        CHECK(r.err.find("has only") != std::string::npos);
    }
}

TEST_CASE("every bad input or option: exit 2 / one clear line / the output file unchanged") {
    TempDir dir;
    write_bytes(dir / "good.csv", kLessonCsv);
    write_bytes(dir / "nan.csv", "1, 2\nnan, 4\n");
    write_bytes(dir / "inf.csv", "1, 2\n3, inf\n");
    write_bytes(dir / "empty.csv", "");
    write_bytes(dir / "ragged.csv", "1, 2, 3\n4, 5\n");
    write_bytes(dir / "text.csv", "1, 2\n3, abc\n");
    const std::string good = npy("<f4", "(2, 2)", floats({1, 2, 3, 4}));
    write_bytes(dir / "truncated.npy", good.substr(0, good.size() - 3));
    write_bytes(dir / "huge.npy", npy("<f4", "(1000000000, 1000000000)", floats({1, 2, 3, 4})));
    write_bytes(dir / "wrongtype.npy", npy("<i4", "(2, 2)", floats({1, 2, 3, 4})));
    write_bytes(dir / "bigendian.npy", npy(">f4", "(2, 2)", floats({1, 2, 3, 4})));
    const std::string existing = "precious bytes, not a tensor";
    const fs::path out = dir / "out.npy";
    const std::string good_csv = shell_quote(dir / "good.csv");

    struct Bad {
        std::string args, expect;
    };
    const std::vector<Bad> bad{
        {shell_quote(dir / "nan.csv"), "NaN"},
        {shell_quote(dir / "inf.csv"), "Inf"},
        {shell_quote(dir / "empty.csv"), "empty"},
        {shell_quote(dir / "ragged.csv"), "ragged.csv"},
        {shell_quote(dir / "text.csv"), "abc"},
        {shell_quote(dir / "truncated.npy"), "truncated.npy"},
        {shell_quote(dir / "huge.npy"), "huge.npy"},
        {shell_quote(dir / "wrongtype.npy"), "<i4"},
        {shell_quote(dir / "bigendian.npy"), ">f4"},
        {shell_quote(dir / "missing.npy"), "missing.npy"},
        {good_csv + " --frobnicate", "unknown option '--frobnicate'"},
        {good_csv + " --dtype", "--dtype needs a value"},
        {good_csv + " --dtype int17", "int17"},
        {good_csv + " --scale 0 --zero-point 0", "scale"},
        {good_csv + " --scale -2 --zero-point 0", "scale"},
        {good_csv + " --scale nan --zero-point 0", "scale"},
        {good_csv + " --scale 1.5x --zero-point 0", "'1.5x' is not a number"},
        {good_csv + " --scale 1 --zero-point 1.5", "--zero-point"},
        {good_csv + " --scale 1 --zero-point 300", "zero point 300 is outside [-128, 127]"},
        {good_csv + " --scale 1", "--zero-point"},
        {good_csv + " --granularity group --group-size 2", "does not divide"},
        {good_csv + " --granularity channel --axis 2", "axis 2 is out of range"},
        {good_csv + " --granularity channel --axis 99999999999", "axis 99999999999 is out of range"},
        {good_csv + " --granularity channel --axis=-5", "axis -5 is out of range"},
        {good_csv + " --scale 1 --zero-point 0x10", "'0x10' is not an integer"},
        {good_csv + " --scale 1 --zero-point 1e1", "'1e1' is not an integer"},
        {good_csv + " --scale 1 --zero-point 99999999999", "zero point 99999999999 is outside [-128, 127]"},
        {good_csv + " --mode symmetric --dtype uint8", "signed"},
        {good_csv + " --mode sideways", "sideways"},
        {good_csv + " --rounding up", "up"},
        {good_csv + " --axis 1", "--granularity channel"},
        {good_csv + " --calibrate percentile:50", "(50, 100]"},
        {good_csv + " --calibrate percentile:abc", "(50, 100]"},
        {good_csv + " --calibrate best", "best"},
        {good_csv + " --scale 1 --zero-point 0 --calibrate mse", "manual"},
        {good_csv + " extra.csv", "extra.csv"},
        {"--preset nope", "nope"},
        {"--random normal", "--shape"},
        {"--random normal --shape 4x0", "4x0"},
        {"--random normal --shape 100000x100000x100000", "elements"},
        {"--random normal --shape 4x4 --std 0", "std"},
        {"--random cauchy --shape 4x4", "cauchy"},
        {"--shape 4x4", "--random"},
        {"", "no input"},
        {"--preset outliers-4x128x256 --out-dequantized " + shell_quote(dir / "d.csv"), "CSV"},
        {good_csv + " --out-error " + shell_quote(dir / "no/such/dir/e.npy"), "--out-error: cannot write"},
        {good_csv + " --out-error " + shell_quote(dir / "e.txt"), ".npy or .csv"},
    };
    for (const Bad& b : bad) {
        CAPTURE(b.args);
        write_bytes(out, existing);
        const Run r = run("quantize " + b.args + " --out-quantized " + shell_quote(out.string()), dir);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find(b.expect) != std::string::npos);
        CHECK(read_bytes(out) == existing);
    }
    // Nothing else was left behind (no temporary files).
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir / "")) files += entry.is_regular_file();
    CHECK(files == 10 + 2 + 1);  // inputs + stdout/stderr + out.npy
}

TEST_CASE("help / version and unknown commands") {
    TempDir dir;
    Run r = run("--help", dir);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("quantize") != std::string::npos);
    r = run("quantize --help", dir);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("--zero-point") != std::string::npos);
    r = run("--version", dir);
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("quantscope ", 0) == 0);
    r = run("frobnicate", dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown command") != std::string::npos);
}

TEST_CASE("bench prints its JSON") {
    TempDir dir;
    // The whole-process rows make their file in a temporary folder under TMPDIR and leave nothing there.
    const std::string tmp = dir / "tmp";
    std::filesystem::create_directories(tmp);
    // A small layer: the default [512 x 4096] . [4096 x 4096]^T (17 GFLOP) took past five minutes under
    // AddressSanitizer beside other tests (CI at aefbde3).
    Run r = run("bench --shape 64x64 --layer-shape 8x64x32 --repeats 3", dir, "TMPDIR=" + shell_quote(tmp));
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "layer_shape") == "\"[8x64].[32x64]^T\"");
    for (const char* key : {"elements", "pipeline_ms", "memcpy_ms", "ratio_to_memcpy", "params_ms",
                            "params_ratio_to_memcpy", "naive_ms", "cp_file_ms", "quantize_file_ms",
                            "quantize_file_ratio_to_cp", "quantize_file_peak_mib",
                            "quantize_file_outputs_ms", "quantize_file_outputs_ratio_to_cp", "sweep_ms", "sweep_gb_per_s",
                            "sweep_ratio_to_cp"})
        CHECK(json_value(r.out, key) != "<missing>");
    CHECK(std::filesystem::is_empty(tmp));
    CHECK(json_value(r.out, "elements") == "4096");
    CHECK(run("bench --shape 64x64 --repeats 0", dir).exit_code == 2);
    // Each of the two prints its rows alone: both at once is a mistake, not the first one winning.
    for (const char* two : {"--layer-only --formats-only", "--methods-only --layer-only", "--formats-only --methods-only",
                            "--pipeline-only --layer-only"}) {
        const Run both = run(std::string("bench ") + two, dir);
        CHECK(both.exit_code == 2);
        CHECK(both.err.find("--layer-only, --formats-only, --methods-only and --pipeline-only do not go together") !=
              std::string::npos);
    }
    // The pipeline's rows alone: the Python module's bench reads pipeline_ms from them.
    const Run pipeline = run("bench --pipeline-only --shape 64x64 --repeats 2", dir);
    CHECK(pipeline.exit_code == 0);
    for (const char* key : {"elements", "threads", "repeats", "pipeline_ms", "memcpy_ms"})
        CHECK(json_value(pipeline.out, key) != "<missing>");
    CHECK(json_value(pipeline.out, "elements") == "4096");
    // The methods' rows, on a small layer (the default is 2048 x 4096 x 4096 and takes a minute).
    const Run methods = run("bench --methods-only --layer-shape 64x128x64", dir);
    INFO(methods.err);
    REQUIRE(methods.exit_code == 0);
    for (const char* key : {"method_rtn_eval_ms", "method_gptq_ms", "method_gptq_hessian_ms", "method_gptq_inverse_ms",
                            "method_gptq_loop_ms", "method_awq_ms", "method_awq_ratio_to_rtn_eval", "method_rotate_ms",
                            "method_rotate_gptq_ms"})
        CHECK(json_value(methods.out, key) != "<missing>");
    for (const char* bad : {"8x64", "8x64x32x2", "0x64x32", "8xx32", "1000000x1000000x1000000"}) {
        const Run b = run(std::string("bench --layer-only --layer-shape ") + bad, dir);
        CHECK_MESSAGE(b.exit_code == 2, bad);
        CHECK_MESSAGE(b.err.find("--layer-shape") != std::string::npos, bad, ": ", b.err);
    }
}

TEST_CASE("inspect lists a checkpoint and quantize picks one tensor with --tensor") {
    TempDir dir;
    // "w" is F32 2x2x1x2 (rank 4, folded to 4x1x2), "b" is BF16 [2]: 1.0 and -2.0.
    const std::string data = floats({1, 2, 3, 4, 5, 6, 7, 8}) + std::string("\x80\x3f\x00\xc0", 4);
    const std::string header =
        R"({"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [2, 2, 1, 2], "data_offsets": [0, 32]},)"
        R"( "b": {"dtype": "BF16", "shape": [2], "data_offsets": [32, 36]}})";
    write_bytes(dir / "m.safetensors", safetensors_file(header, data));
    const std::string file = shell_quote(dir / "m.safetensors");
    Run r = run("inspect " + file, dir);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("w     F32    2x2x1x2") != std::string::npos);
    CHECK(r.out.find("b     BF16   2") != std::string::npos);
    r = run("inspect --json " + file, dir);
    CHECK(r.out.find(R"({"name": "w", "dtype": "F32", "shape": [2, 2, 1, 2]})") != std::string::npos);

    r = run("quantize " + file + " --tensor w", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "shape") == "[4, 1, 2]");
    r = run("quantize " + file + " --tensor b --mode symmetric", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "shape") == "[2]");
    CHECK(std::stod(json_value(r.out, "scale").substr(1)) == doctest::Approx(2.0 / 127));

    r = run("quantize " + file, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--tensor") != std::string::npos);
    r = run("quantize " + file + " --tensor nope", dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("nope") != std::string::npos);
    r = run("quantize --preset lesson --tensor w", dir);
    CHECK(r.exit_code == 2);
    write_bytes(dir / "bad.safetensors", safetensors_file(header, data.substr(0, 20)));
    r = run("inspect " + shell_quote(dir / "bad.safetensors"), dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
}

TEST_CASE("a failing 2nd or 3rd output leaves every output untouched") {
    TempDir dir;
    // A name longer than NAME_MAX: the directory exists, so only the write itself fails (even as root).
    const std::string too_long = shell_quote(dir / (std::string(300, 'a') + ".npy"));
    const fs::path q = dir / "q.npy", d = dir / "d.npy";
    const std::string existing = "precious bytes, not a tensor";
    for (const std::string& failing : {"--out-dequantized " + too_long, "--out-error " + too_long}) {
        CAPTURE(failing);
        // The first output does not exist yet: it must not be created.
        fs::remove(q);
        Run r = run("quantize --preset lesson --out-quantized " + shell_quote(q.string()) + " " + failing, dir);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(!fs::exists(q));
        // It exists: it must keep its bytes.
        write_bytes(q, existing);
        write_bytes(d, existing);
        r = run("quantize --preset lesson --out-quantized " + shell_quote(q.string()) + " --out-dequantized " +
                    shell_quote(d.string()) + " --out-error " + too_long,
                dir);
        CHECK(r.exit_code == 2);
        CHECK(read_bytes(q) == existing);
        CHECK(read_bytes(d) == existing);
    }
    // No staging or temporary file is left behind.
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir / "")) files += entry.is_regular_file();
    CHECK(files == 2 + 2);  // q.npy, d.npy + stdout/stderr
    // And a successful run still writes all three.
    const Run ok = run("quantize --preset lesson --out-quantized " + shell_quote(q.string()) + " --out-dequantized " +
                           shell_quote(d.string()) + " --out-error " + shell_quote(dir / "e.npy"),
                       dir);
    REQUIRE(ok.exit_code == 0);
    CHECK(read_bytes(q).rfind("\x93NUMPY", 0) == 0);
    CHECK(read_bytes(d).rfind("\x93NUMPY", 0) == 0);
    CHECK(fs::exists(dir / "e.npy"));
}

TEST_CASE("an error quoting a line break is still one line") {
    TempDir dir;
    for (const std::string& args : {"quantize " + shell_quote(dir / "two\nlines.npy"),
                                    std::string("quantize --preset lesson --dtype ") + shell_quote("int8\nint4"),
                                    std::string("quantize --preset lesson --mode ") + shell_quote("a\rb")}) {
        CAPTURE(args);
        const Run r = run(args, dir);
        CHECK(r.exit_code == 2);
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find('\r') == std::string::npos);
        CHECK(r.err.back() == '\n');
    }
}

TEST_CASE("values at float32's limits: an overflowing r' is an error / not null metrics") {
    TempDir dir;
    // Asymmetric: s = 2 FLT_MAX / 255 and z = 0, so r' = s (-128 - 0) is beyond -FLT_MAX: -Inf in float32.
    write_bytes(dir / "big.csv", "-3.4028234e38, 3.4028234e38, 0, 1\n");
    const fs::path out = dir / "q.npy";
    for (const char* mode : {"", " --mode symmetric"}) {
        CAPTURE(mode);
        const Run r = run("quantize " + shell_quote(dir / "big.csv") + std::string(mode) + " --out-quantized " +
                              shell_quote(out.string()),
                          dir);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("quantscope: error: ", 0) == 0);
        CHECK(r.err.find("index [0, 0]") != std::string::npos);
        CHECK(!fs::exists(out));
    }
    // A wide range that stays inside float32 still works, with finite metrics.
    write_bytes(dir / "wide.csv", "-3e38, 3e38, 0, 1\n");
    const Run r = run("quantize " + shell_quote(dir / "wide.csv"), dir);
    REQUIRE(r.exit_code == 0);
    CHECK(json_value(r.out, "mse").find("null") == std::string::npos);
}
