// `quantscope layer` end to end: SPEC's JSON keys and golden example, outputs, generators, hostile input.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "quantscope/json_reader.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_inputs.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"
#include "test_helpers.hpp"

namespace {

using qs::test::run;
using qs::test::Run;
using qs::test::TempDir;
using qs::test::shell_quote;

std::vector<std::string> keys(const qs::JsonValue& object) {
    std::vector<std::string> k;
    for (const auto& m : object.members) k.push_back(m.first);
    return k;
}

// Writes the course's W and x as CSV files in `dir`.
void course_files(const TempDir& dir) {
    qs::test::write_bytes(dir.path / "w.csv", "-2,-1.13,0.42\n-1.51,0.25,1.62\n0.23,1.35,2.15\n");
    qs::save_floats((dir.path / "x.npy").string(), {3}, std::vector<float>{1, 2, 3}.data());
}

std::string path(const TempDir& dir, const char* name) { return shell_quote((dir.path / name).string()); }

void check_error(const Run& r, const std::string& part) {
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(qs::test::one_line(r.err));
    CHECK(r.err.find(part) != std::string::npos);
    CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("layer command: the course example with SPEC's keys and outputs") {
    TempDir dir;
    course_files(dir);
    const Run r = run("layer --weights " + path(dir, "w.csv") + " --inputs " + path(dir, "x.npy") +
                          " --mode symmetric --out-output " + path(dir, "y.npy") + " --out-reference " + path(dir, "r.npy"),
                      dir);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const qs::JsonValue json = qs::parse_json(r.out, "stdout");
    CHECK(keys(json) == std::vector<std::string>{"weights", "inputs", "output"});
    CHECK(json.find("inputs")->is_null());
    const qs::JsonValue& w = *json.find("weights");
    CHECK(keys(w) == std::vector<std::string>{"shape", "dtype", "q_min", "q_max", "mode", "granularity", "calibration",
                                              "scale", "zero_point", "mse", "rmse", "mae", "max_abs_error", "l2_error",
                                              "sqnr_db", "clipped", "levels_used", "format_kind", "bits_per_weight",
                                              "bytes"});
    // Exactly the object `quantize` prints for W with the same options.
    const Run q = run("quantize " + path(dir, "w.csv") + " --mode symmetric", dir);
    REQUIRE(q.exit_code == 0);
    const qs::JsonValue quantized = qs::parse_json(q.out, "quantize");
    CHECK(keys(w) == keys(quantized));
    for (const auto& [key, value] : quantized.members) CHECK(w.find(key)->text == value.text);
    CHECK(w.find("scale")->items.at(0).text == "0.016929134609192376");
    const qs::JsonValue& out = *json.find("output");
    CHECK(keys(out) == std::vector<std::string>{"mse", "rmse", "mae", "max_abs_error", "sqnr_db", "outlier_columns",
                                                "bits_per_weight"});
    CHECK(out.find("bits_per_weight")->number == doctest::Approx(8 + 32.0 / 9));
    const qs::Tensor y = qs::load_tensor((dir.path / "y.npy").string()), ref = qs::load_tensor((dir.path / "r.npy").string());
    CHECK(y.shape == qs::Shape{3});  // a 1-D x gives a 1-D y
    const std::vector<double> want{-2.9965, 3.8768, 9.3957}, want_ref{-3.0, 3.85, 9.38};
    for (int i = 0; i < 3; ++i) {
        CHECK(y.values[i] == doctest::Approx(want[i]).epsilon(2e-5));
        CHECK(ref.values[i] == doctest::Approx(want_ref[i]).epsilon(1e-6));
    }
}

TEST_CASE("layer command: the weights object is the one quantize prints for every kind of format") {
    TempDir dir;
    std::vector<float> w(4 * 64), x(2 * 64);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((static_cast<int>(i * 37 % 101) - 50) / 10.0);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((static_cast<int>(i * 13 % 29) - 14) / 7.0);
    qs::save_floats((dir.path / "w.npy").string(), {4, 64}, w.data());
    qs::save_floats((dir.path / "x.npy").string(), {2, 64}, x.data());
    for (const std::string dtype : {"int8", "int4 --granularity group --group-size 16", "fp8-e4m3", "fp8-e4m3 --mode cast",
                                    "nf4 --granularity channel --axis 0", "q4_0", "q4_1", "nvfp4", "mxfp4"}) {
        CAPTURE(dtype);
        const Run q = run("quantize " + path(dir, "w.npy") + " --dtype " + dtype, dir);
        const Run l = run("layer --weights " + path(dir, "w.npy") + " --inputs " + path(dir, "x.npy") + " --dtype " + dtype, dir);
        REQUIRE(q.exit_code == 0);
        REQUIRE(l.exit_code == 0);
        const qs::JsonValue want = qs::parse_json(q.out, "quantize"), got = qs::parse_json(l.out, "layer");
        const qs::JsonValue& weights = *got.find("weights");
        REQUIRE(keys(weights) == keys(want));
        for (const auto& [key, value] : want.members) {
            CAPTURE(key);
            if (value.is_array() || value.is_object()) continue;
            CHECK(weights.find(key)->text == value.text);
        }
    }
}

TEST_CASE("layer command: activations and the split and smoothing from generated inputs") {
    TempDir dir;
    std::vector<float> w(64 * 96);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(((i * 7919) % 201) - 100) / 1000.0f;
    qs::save_floats((dir.path / "w.npy").string(), {64, 96}, w.data());
    const std::string base = "layer --weights " + path(dir, "w.npy") +
                             " --random-inputs normal --tokens 16 --seed 3 --outlier-channels 3 --outlier-scale 50"
                             " --mode symmetric --granularity channel --activations int8";
    const auto mse = [&](const std::string& extra, std::int64_t* outliers = nullptr) {
        const Run r = run(base + extra, dir);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const qs::JsonValue json = qs::parse_json(r.out, "stdout");
        REQUIRE(json.find("inputs")->is_object());
        if (outliers) json.find("output")->find("outlier_columns")->to_int64(*outliers);
        return json.find("output")->find("mse")->number;
    };
    std::int64_t split_columns = -1;
    const double per_tensor = mse(""), per_token = mse(" --act-granularity token");
    const double split = mse(" --outlier-threshold 10", &split_columns), smooth = mse(" --smooth-alpha 0.5");
    CHECK(per_token < per_tensor);
    CHECK(split < per_token / 10);
    CHECK(split_columns == 3);
    CHECK(smooth < per_tensor / 4);
    // relu inputs are >= 0 apart from the scaled channels' sign (F > 0 keeps them positive).
    const Run relu = run("layer --weights " + path(dir, "w.npy") + " --random-inputs relu --tokens 4 --activations int8"
                         " --act-mode asymmetric --out-output " + path(dir, "y.npy"), dir);
    CHECK(relu.exit_code == 0);
    qs::LayerInputSpec spec;
    spec.distribution = qs::InputDistribution::Relu;
    spec.tokens = 4;
    for (float v : qs::generate_layer_inputs(spec, 96).values) CHECK(v >= 0);
}

// Type names are read in any case wherever a type is named (--dtype INT8 was taken, --activations INT8 not).
TEST_CASE("layer command: the activations' type and none in any case") {
    TempDir dir;
    course_files(dir);
    const std::string base = "layer --weights " + path(dir, "w.csv") + " --random-inputs normal --tokens 4";
    const Run lower = run(base + " --activations int8", dir);
    REQUIRE(lower.exit_code == 0);
    const Run upper = run(base + " --activations INT8", dir);
    INFO(upper.err);
    CHECK(upper.exit_code == 0);
    CHECK(upper.out == lower.out);
    const Run none = run(base + " --activations NONE", dir);
    CHECK(none.exit_code == 0);
    CHECK(none.out == run(base, dir).out);
    CHECK(run(base + " --activations Int4 --dtype UINT8", dir).exit_code == 0);
}

TEST_CASE("layer command: seeded outlier channels are distinct and reproducible") {
    qs::LayerInputSpec spec;
    spec.tokens = 3;
    spec.seed = 9;
    spec.outlier_channels = 5;
    spec.outlier_scale = 100;
    const auto channels = qs::outlier_channels(spec, 20);
    REQUIRE(channels.size() == 5);
    for (std::size_t i = 1; i < channels.size(); ++i) CHECK(channels[i - 1] < channels[i]);
    // Pinned: the picks are SplitMix64 over the seed (random.hpp's), the same on every run and machine.
    CHECK(channels == std::vector<std::int64_t>{3, 4, 14, 18, 19});
    CHECK(qs::outlier_channels(spec, 1000000) == std::vector<std::int64_t>{210454, 542873, 573790, 711543, 853482});
    CHECK(qs::outlier_channels(spec, 20) == channels);
    spec.seed = 10;
    CHECK(qs::outlier_channels(spec, 20) != channels);
    spec.outlier_channels = 20;
    CHECK(qs::outlier_channels(spec, 20).size() == 20);
    spec.seed = 9;
    spec.outlier_channels = 5;
    const qs::Tensor x = qs::generate_layer_inputs(spec, 20);
    spec.outlier_channels = 0;
    const qs::Tensor plain = qs::generate_layer_inputs(spec, 20);
    qs::RandomSpec normal;  // the inputs are random.hpp's normal tensor of the same seed, not a copy of it
    normal.shape = {3, 20};
    normal.seed = 9;
    CHECK(plain.values == qs::generate_random(normal).values);
    qs::LayerInputSpec ramp;  // the course's x = [1, 2, 3] for in = 3, in every token
    ramp.distribution = qs::InputDistribution::Ramp;
    ramp.tokens = 2;
    CHECK(qs::generate_layer_inputs(ramp, 3).values == std::vector<float>{1, 2, 3, 1, 2, 3});
    for (std::int64_t t = 0; t < 3; ++t)
        for (std::int64_t k = 0; k < 20; ++k) {
            const bool big = std::find(channels.begin(), channels.end(), k) != channels.end();
            CHECK(x.values[t * 20 + k] == plain.values[t * 20 + k] * (big ? 100.0f : 1.0f));
        }
}

TEST_CASE("layer command: hostile input is one line and exit 2") {
    TempDir dir;
    course_files(dir);
    const std::string w = " --weights " + path(dir, "w.csv");
    qs::test::write_bytes(dir.path / "nan.csv", "1,nan,3\n");
    qs::save_floats((dir.path / "w1.npy").string(), {3}, std::vector<float>{1, 2, 3}.data());
    qs::save_floats((dir.path / "x4.npy").string(), {2, 4}, std::vector<float>(8, 1.0f).data());
    check_error(run("layer" + w + " --inputs " + path(dir, "x4.npy"), dir), "in = 3");
    check_error(run("layer --weights " + path(dir, "w1.npy") + " --inputs " + path(dir, "x.npy"), dir), "must be 2-D");
    check_error(run("layer --weights " + path(dir, "w1.npy") + " --random-inputs normal --tokens 2", dir), "must be 2-D");
    check_error(run("layer" + w + " --inputs " + path(dir, "nan.csv"), dir), "NaN");
    check_error(run("layer" + w + " --inputs " + path(dir, "x.npy") + " --activations int8 --outlier-threshold nan", dir),
                "finite number > 0");
    check_error(run("layer" + w + " --inputs " + path(dir, "x.npy") + " --outlier-threshold 3", dir), "needs --activations");
    check_error(run("layer" + w + " --inputs " + path(dir, "x.npy") + " --activations int8 --smooth-alpha 2", dir), "[0, 1]");
    check_error(run("layer" + w + " --bias " + path(dir, "w.csv") + " --inputs " + path(dir, "x.npy"), dir), "bias");
    check_error(run("layer" + w + " --inputs " + path(dir, "x.npy") + " --random-inputs normal --tokens 2", dir), "give the inputs");
    check_error(run("layer" + w + " --random-inputs normal", dir), "--tokens");
    check_error(run("layer" + w + " --random-inputs cauchy --tokens 2", dir), "cauchy");
    check_error(run("layer" + w + " --random-inputs normal --tokens 2 --outlier-channels 4 --outlier-scale 10", dir),
                "--outlier-channels");
    check_error(run("layer" + w + " --random-inputs normal --tokens 2 --outlier-channels 1 --outlier-scale 1e39", dir),
                "float32");
    check_error(run("layer" + w + " --inputs " + path(dir, "x.npy") + " --out-output " + path(dir, "x.npy"), dir), "--out-output");
    check_error(run("layer --inputs " + path(dir, "x.npy"), dir), "--weights");
    // A block format after the outlier split: the kept channels named, not a "last axis" the user never gave.
    std::vector<float> w64(4 * 64, 0.5f), x64(2 * 64, 1.0f);
    x64[3] = 100;
    qs::save_floats((dir.path / "w64.npy").string(), {4, 64}, w64.data());
    qs::save_floats((dir.path / "x64.npy").string(), {2, 64}, x64.data());
    check_error(run("layer --weights " + path(dir, "w64.npy") + " --inputs " + path(dir, "x64.npy") +
                        " --dtype q4_0 --activations int8 --outlier-threshold 50", dir),
                "the outlier split keeps 63 input channels, not a multiple of q4_0's block of 32");
    qs::save_floats((dir.path / "xbig.npy").string(), {3}, std::vector<float>{3.4e38f, 3.4e38f, 1}.data());
    check_error(run("layer" + w + " --inputs " + path(dir, "xbig.npy") + " --out-output " + path(dir, "y.npy"), dir),
                "beyond float32's range");
#if !defined(__SANITIZE_ADDRESS__)
    // A huge token count is refused from the shapes, before memory is taken (capped at 1 GiB of address space).
    check_error(run("layer" + w + " --random-inputs normal --tokens 9223372036854775807", dir, "", 1 << 20), "too large");
    check_error(run("layer" + w + " --random-inputs normal --tokens 100000000", dir, "", 1 << 20), "2^28 elements");
#endif
    CHECK(!std::filesystem::exists(dir.path / "y.npy"));
}
