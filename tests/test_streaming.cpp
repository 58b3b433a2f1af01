// Cost follows the work: the one-pass path (a view of the stored bytes, results streamed a batch at a
// time, only the outputs asked for) gives exactly the bits of the full-buffer path on a float32 copy.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <random>

#include "quantscope/atomic_file.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/tensor_view.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

std::vector<QuantConfig> configs_for(const Shape& shape) {
    std::vector<QuantConfig> out;
    QuantConfig c;
    out.push_back(c);
    c.dtype = {true, 4};
    c.mode = Mode::Symmetric;
    out.push_back(c);
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        QuantConfig ch;
        ch.granularity = Granularity::Channel;
        ch.axis = axis;
        ch.rounding = axis % 2 ? Rounding::HalfAway : Rounding::HalfEven;
        out.push_back(ch);
    }
    for (std::int64_t g : {1, 8, 64, 128}) {
        if (shape.back() % g) continue;
        QuantConfig gr;
        gr.granularity = Granularity::Group;
        gr.group_size = g;
        gr.dtype = {false, 3};
        out.push_back(gr);
    }
    QuantConfig manual;
    manual.mode = Mode::Manual;
    manual.manual_scale = 0.05;
    manual.manual_zero_point = 3;
    out.push_back(manual);  // clips: the clipped count and the clamp go through the stream too
    return out;
}

template <class T>
bool same_bits(const T* a, const T* b, std::size_t n) {
    return std::memcmp(a, b, n * sizeof(T)) == 0;
}

void check_same_metrics(const Metrics& a, const Metrics& b) {
    CHECK(std::memcmp(&a.mse, &b.mse, sizeof(double)) == 0);
    CHECK(std::memcmp(&a.mae, &b.mae, sizeof(double)) == 0);
    CHECK(a.max_abs_error == b.max_abs_error);
    CHECK(std::memcmp(&a.l2_error, &b.l2_error, sizeof(double)) == 0);
    CHECK(a.sqnr_db.has_value() == b.sqnr_db.has_value());
    if (a.sqnr_db && b.sqnr_db) CHECK(std::memcmp(&*a.sqnr_db, &*b.sqnr_db, sizeof(double)) == 0);
    CHECK(a.clipped == b.clipped);
    CHECK(a.levels_used == b.levels_used);
    CHECK(a.sum == b.sum);
    CHECK(a.signal_energy == b.signal_energy);
    CHECK(a.error_energy == b.error_energy);
}

// A bf16/f16 tensor with one (s, z): quantize takes its sums from the bit patterns' counts, the same terms
// added in pattern order (test_bit_patterns.cpp), so its sums are the float32 pass's to the rounding of a sum
// of at most 65536 positive terms (1e-11 relative) and everything else is the same.
void check_close_metrics(const Metrics& a, const Metrics& b) {
    CHECK(a.mse == doctest::Approx(b.mse).epsilon(1e-11));
    CHECK(a.mae == doctest::Approx(b.mae).epsilon(1e-11));
    CHECK(a.max_abs_error == b.max_abs_error);
    CHECK(a.signal_energy == doctest::Approx(b.signal_energy).epsilon(1e-11));
    CHECK(a.sqnr_db.has_value() == b.sqnr_db.has_value());
    CHECK(a.clipped == b.clipped);
    CHECK(a.levels_used == b.levels_used);
}

}  // namespace

TEST_CASE("streamed results equal the full-buffer results bit for bit") {
    // {1100, 1000} is more than one streamed batch; odd sizes leave tails in every chunk.
    const std::vector<Shape> shapes{{7}, {3, 3}, {130, 70}, {5, 4096}, {3, 257, 128}, {1100, 1000}};
    std::uint64_t seed = 1;
    int checked = 0;
    for (const Shape& shape : shapes)
        for (ElementType type : {ElementType::F32, ElementType::F16, ElementType::BF16, ElementType::F64}) {
            const std::int64_t n = checked_numel(shape);
            const std::string bytes = test::random_elements(type, n, seed++);
            TensorView view;
            view.shape = shape;
            view.type = type;
            view.data = reinterpret_cast<const std::uint8_t*>(bytes.data());
            const Tensor copy = materialize(view);  // the old path: a float32 tensor in memory
            for (const QuantConfig& config : configs_for(shape)) {
                CAPTURE(shape_to_string(shape));
                CAPTURE(static_cast<int>(type));
                CAPTURE(std::string(to_string(config.granularity)));
                CAPTURE(config.axis);
                CAPTURE(config.group_size);
                QuantParams full_params;
                const QuantResult full = quantize(copy, config, &full_params);

                std::vector<std::int32_t> codes(static_cast<std::size_t>(n));
                std::vector<float> deq(codes.size()), err(codes.size());
                std::int64_t next = 0;
                bool in_order = true;
                std::mutex mutex;
                const ResultSink sink = [&](std::int64_t first, std::int64_t count, const QuantOutputs& batch) {
                    {
                        const std::lock_guard<std::mutex> lock(mutex);
                        if (batch.codes) std::copy(batch.codes, batch.codes + count, codes.begin() + first);
                        if (batch.dequantized)
                            std::copy(batch.dequantized, batch.dequantized + count, deq.begin() + first);
                        if (batch.error) {  // one kind's batches come in flat order
                            in_order = in_order && first == next;
                            next = first + count;
                            std::copy(batch.error, batch.error + count, err.begin() + first);
                        }
                    }
                };
                const Quantization streamed = quantize_checked(view, config, {true, true, true}, sink);
                CHECK(in_order);
                CHECK(next == n);
                CHECK(streamed.params.scale == full_params.scale);
                CHECK(streamed.params.zero_point == full_params.zero_point);
                CHECK(same_bits(codes.data(), full.codes.data(), codes.size()));
                CHECK(same_bits(deq.data(), full.dequantized.data(), deq.size()));
                CHECK(same_bits(err.data(), full.error.data(), err.size()));
                const bool by_patterns = (type == ElementType::F16 || type == ElementType::BF16) &&
                                         config.granularity == Granularity::Tensor;
                if (by_patterns) check_close_metrics(streamed.metrics, full.metrics);
                else check_same_metrics(streamed.metrics, full.metrics);

                // Metrics only: nothing delivered, the same numbers.
                const Quantization alone = quantize_checked(view, config);
                check_same_metrics(alone.metrics, streamed.metrics);
                ++checked;
            }
        }
    CHECK(checked > 150);
}

TEST_CASE("the metrics are the same bits on one thread and on all of them") {
    RandomSpec spec;
    spec.shape = {1500, 777};
    spec.seed = 5;
    const Tensor t = generate_random(spec);
    QuantConfig per_group;
    per_group.granularity = Granularity::Group;
    per_group.group_size = 7;
    for (const QuantConfig& config : {QuantConfig{}, per_group}) {
        const int threads = omp_get_max_threads();
        omp_set_num_threads(1);
        const QuantResult one = quantize(t, config);
        omp_set_num_threads(std::max(threads, 3));  // more threads than tiles would split the same way
        const QuantResult many = quantize(t, config);
        omp_set_num_threads(threads);
        check_same_metrics(one.metrics, many.metrics);
    }
}

TEST_CASE("the view path reads every stored type as load_tensor does") {
    // A NaN, an Inf, a float64 beyond float32: the same messages through the view as through the loader.
    test::TempDir dir;
    const auto write_npy = [&](const std::string& name, const std::string& descr, const std::string& data, const Shape& shape) {
        test::write_bytes(dir / name, npy_header_bytes(descr, shape) + data);
        return dir / name;
    };
    double big[3] = {1, 1e300, 2};
    const std::string f64 = write_npy("big.npy", "<f8", std::string(reinterpret_cast<const char*>(big), 24), {3});
    float nan[4] = {1, 2, NAN, 4};
    const std::string f32 = write_npy("nan.npy", "<f4", std::string(reinterpret_cast<const char*>(nan), 16), {2, 2});
    for (const std::string& path : {f64, f32}) {
        const std::string loaded = test::error_of([&] { load_tensor(path); });
        const TensorFile file(path, "");
        const std::string viewed = test::error_of([&] { quantize_checked(file.view(), QuantConfig{}); });
        CHECK(loaded == viewed);
        CHECK(test::contains(viewed, path));
    }
    CHECK(test::contains(test::error_of([&] { load_tensor(f64); }), "1.0000000000000001e+300 at index [1] is outside the float32 range"));
}

#ifdef QS_BINARY
TEST_CASE("quantize streams its output files with exactly the full-buffer bytes") {
    test::TempDir dir;
    const Shape shape{1031, 1029};  // > one batch; rows not a multiple of 8
    const std::int64_t n = checked_numel(shape);
    for (ElementType type : {ElementType::F32, ElementType::F64, ElementType::F16}) {
        const char* descr = type == ElementType::F32 ? "<f4" : type == ElementType::F64 ? "<f8" : "<f2";
        const std::string input = dir / (std::string("in_") + (descr + 1) + ".npy");
        test::write_bytes(input, npy_header_bytes(descr, shape) + test::random_elements(type, n, 77));
        for (const std::string options : {"--dtype int4 --granularity group --group-size 7", "--granularity channel --axis 1"}) {
            CAPTURE(descr);
            CAPTURE(options);
            const test::Run r = test::run("quantize " + test::shell_quote(input) + " " + options +
                                              " --out-quantized " + test::shell_quote(dir / "q.npy") +
                                              " --out-dequantized " + test::shell_quote(dir / "d.npy") +
                                              " --out-error " + test::shell_quote(dir / "e.csv"),
                                          dir);
            REQUIRE(r.exit_code == 0);
            // The old way: the whole tensor in float32, every result in a full buffer, then saved.
            QuantConfig config;
            if (options[2] == 'd') {
                config.dtype = {true, 4};
                config.granularity = Granularity::Group;
                config.group_size = 7;
            } else {
                config.granularity = Granularity::Channel;
                config.axis = 1;
            }
            const Tensor t = load_tensor(input);
            const QuantResult full = quantize(t, config);
            save_codes(dir / "q_full.npy", shape, full.codes.data(), config.dtype.bits <= 8 ? NpyDtype::I1 : NpyDtype::I2);
            save_floats(dir / "d_full.npy", shape, full.dequantized.data());
            save_floats(dir / "e_full.csv", shape, full.error.data());
            CHECK(test::read_bytes(dir / "q.npy") == test::read_bytes(dir / "q_full.npy"));
            CHECK(test::read_bytes(dir / "d.npy") == test::read_bytes(dir / "d_full.npy"));
            CHECK(test::read_bytes(dir / "e.csv") == test::read_bytes(dir / "e_full.csv"));
            const JsonValue json = parse_json(r.out, "stdout");
            CHECK(json.find("mse")->number == full.metrics.mse);
            CHECK(json.find("sqnr_db")->number == *full.metrics.sqnr_db);
            CHECK(json.find("levels_used")->number == full.metrics.levels_used);
        }
    }
}

// The streamed path writes its outputs before it has seen every value: a bad value found late, an r' that
// overflows (known only after the pass) or a file that shrinks must still leave no output and no temporary,
// and say so in one line.
TEST_CASE("quantize with streamed outputs: a late NaN / an overflow / a shrinking file leave no file") {
    test::TempDir dir;
    const Shape shape{1031, 1029};  // > one batch
    const std::int64_t n = checked_numel(shape);
    const auto npy_with = [&](const char* name, std::int64_t index, float value) {
        std::vector<float> values(static_cast<std::size_t>(n), 0.25f);
        values[1] = -1.0f;
        values[static_cast<std::size_t>(index)] = value;
        save_floats(dir / name, shape, values.data());
        return dir / name;
    };
    const std::string late_nan = npy_with("late_nan.npy", n - 1, std::nanf(""));
    std::vector<float> limits(static_cast<std::size_t>(n), 0.25f);
    limits[1] = std::numeric_limits<float>::lowest();
    limits[static_cast<std::size_t>(n - 2)] = std::numeric_limits<float>::max();
    save_floats(dir / "limits.npy", shape, limits.data());
    const std::string outputs = " --out-quantized " + test::shell_quote(dir / "q.npy") + " --out-dequantized " +
                                test::shell_quote(dir / "d.npy") + " --out-error " + test::shell_quote(dir / "e.csv");
    const std::vector<std::string> inputs_before = dir.files();
    struct Case {
        std::string args, env, message;
    };
    const Case cases[] = {
        {test::shell_quote(late_nan), "", "NaN at index [1030, 1028]"},
        // Asymmetric over [-FLT_MAX, FLT_MAX]: s = 2 FLT_MAX / 255, z = 0, and s (-128 - 0) is beyond -FLT_MAX.
        {test::shell_quote(dir / "limits.npy"), "", "float32 overflow at index [0, 1]"},
        {test::shell_quote(late_nan), "LD_PRELOAD=" + test::shell_quote(QS_SHRINK_ON_MAP) + " QS_SHRINK_ON_MAP=" +
                                          test::shell_quote(std::filesystem::canonical(late_nan).string()) +
                                          " ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"",
         "the file shrank while it was being read"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const test::Run r = test::run("quantize " + c.args + outputs, dir, c.env);
        CHECK(r.exit_code == 2);
        CHECK(test::one_line(r.err));
        CHECK(test::contains(r.err, c.message));
        std::vector<std::string> left = dir.files();
        left.erase(std::remove_if(left.begin(), left.end(),
                                  [](const std::string& f) { return f == "stdout.txt" || f == "stderr.txt"; }),
                   left.end());
        CHECK(left == inputs_before);
    }
}

// The overflow example of --overflow wrap reads the values again after the pass: the outputs must appear
// only after it (and the JSON) are done. The input shrinks when the first output is renamed into place: if
// anything still read it afterwards, the run would end with exit 2 and its outputs on disk.
TEST_CASE("quantize reads nothing after its outputs appear: a file that shrinks then loses nothing") {
    test::TempDir dir;
    const Shape shape{1031, 1029};
    std::vector<float> values(static_cast<std::size_t>(checked_numel(shape)), 0.25f);
    values[7] = 9.0f;
    save_floats(dir / "in.npy", shape, values.data());
    const std::string input = std::filesystem::canonical(dir / "in.npy").string();
    const test::Run r = test::run(
        "quantize " + test::shell_quote(input) + " --scale 0.01 --zero-point 0 --overflow wrap --out-quantized " +
            test::shell_quote(dir / "q.npy"),
        dir,
        "LD_PRELOAD=" + test::shell_quote(QS_SHRINK_ON_MAP) + " QS_SHRINK_ON_RENAME=" + test::shell_quote(input) +
            " ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"");
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(dir / "q.npy"));
    CHECK(std::filesystem::file_size(input) == 0);  // the shim did shrink it
    const JsonValue json = parse_json(r.out, "stdout");
    CHECK(test::contains(json.find("warning")->text, "9 at s = 0.01, z = 0 rounds to 900"));
}
#endif

// The metrics published before the one-pass path (goldens, saved numbers) came from OpenMP's static split
// of the 4096-element items over the default thread count, each thread summing its items in order: the
// pass keeps exactly that order. Each item's sums come from quantizing that item alone.
TEST_CASE("the metrics keep the summation order of the whole-buffer pass") {
    constexpr std::int64_t kItem = 4096, kItems = 37;
    RandomSpec spec;
    spec.shape = {kItems, kItem};
    spec.seed = 11;
    const Tensor t = generate_random(spec);
    QuantConfig config;
    config.mode = Mode::Manual;
    config.manual_scale = 0.0137;
    config.manual_zero_point = 3;
    const std::int64_t parts = omp_get_num_procs(), per_part = kItems / parts, longer = kItems % parts;
    std::vector<double> sq_err(static_cast<std::size_t>(parts)), sq_r(static_cast<std::size_t>(parts));
    for (std::int64_t i = 0; i < kItems; ++i) {
        Tensor item;
        item.shape = {kItem};
        item.values.assign(t.values.begin() + i * kItem, t.values.begin() + (i + 1) * kItem);
        const Metrics alone = quantize(item, config).metrics;
        const std::int64_t part = i < longer * (per_part + 1) ? i / (per_part + 1)
                                                              : longer + (i - longer * (per_part + 1)) / per_part;
        sq_err[static_cast<std::size_t>(part)] += alone.error_energy;
        sq_r[static_cast<std::size_t>(part)] += alone.signal_energy;
    }
    double expected_err = 0, expected_r = 0;
    for (std::int64_t p = 0; p < parts; ++p) {
        expected_err += sq_err[static_cast<std::size_t>(p)];
        expected_r += sq_r[static_cast<std::size_t>(p)];
    }
    const int threads = omp_get_max_threads();
    for (const int run_on : {1, threads}) {
        omp_set_num_threads(run_on);
        const Metrics whole = quantize(t, config).metrics;
        CHECK(whole.error_energy == expected_err);
        CHECK(whole.signal_energy == expected_r);
    }
    omp_set_num_threads(threads);
}

// Issue 10: quantize of a file holds the file's mapped bytes and a bounded amount besides, never a float32
// copy or full-size results (the old path: 16 bytes per element). Checked under an address-space cap on the
// child, the peak-memory target of 1.3x the file + 50 MB: an allocation beyond it fails. Two threads, so
// that the threads' stacks do not grow the need on a machine with many cores.
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reserves terabytes of address space: no address-space cap
TEST_CASE("quantize of a file stays within 1.3x its size + 50 MB of memory with or without outputs") {
    test::TempDir dir;
    RandomSpec spec;
    spec.shape = {2048, 4096};
    spec.seed = 3;
    const Tensor t = generate_random(spec);
    const std::string input = dir / "w.npy";
    save_floats(input, t.shape, t.values.data());
    const auto file_kb = static_cast<long long>(std::filesystem::file_size(input) / 1024);
    const long long cap_kb = file_kb * 13 / 10 + 50 * 1024;
    const std::string outputs = " --out-quantized " + test::shell_quote(dir / "q.npy") + " --out-dequantized " +
                                test::shell_quote(dir / "d.npy") + " --out-error " + test::shell_quote(dir / "e.npy");
    for (const std::string& extra : {std::string(), outputs}) {
        const test::Run r = test::run("quantize " + test::shell_quote(input) + extra, dir, "OMP_NUM_THREADS=2", cap_kb);
        INFO("options:" << extra << "\nstderr: " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(test::contains(r.out, "\"mse\""));
    }
    CHECK(std::filesystem::file_size(dir / "e.npy") == std::filesystem::file_size(input));
}
#endif
