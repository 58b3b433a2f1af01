// SPEC "Methods": GPTQ, AWQ and rotation on the layer. Golden cases (GPTQ = RTN where H is a multiple of I,
// AWQ's r = 0 loss = RTN's output MSE), the blocked GPTQ against SPEC's eager loop written out here, property
// tests on random layers with correlated inputs, and every refused input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include <Eigen/Dense>

#include "quantscope/json_reader.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_io.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

Tensor matrix(std::int64_t rows, std::int64_t cols, const std::vector<float>& v) {
    Tensor t;
    t.shape = {rows, cols};
    t.values = v;
    return t;
}

Tensor normal_matrix(std::int64_t rows, std::int64_t cols, unsigned seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, scale);
    std::vector<float> v(static_cast<std::size_t>(rows * cols));
    for (float& x : v) x = n(rng);
    return matrix(rows, cols, v);
}

// Inputs whose channels are correlated (mixed by a random matrix) with a few outlier channels, as LLM
// activations are: where GPTQ's compensation has something to use.
Tensor correlated_inputs(std::int64_t tokens, std::int64_t in, unsigned seed) {
    const Tensor z = normal_matrix(tokens, in, seed), a = normal_matrix(in, in, seed + 1000, 0.3f);
    Eigen::MatrixXf zm = Eigen::Map<const Eigen::Matrix<float, -1, -1, Eigen::RowMajor>>(z.values.data(), tokens, in);
    Eigen::MatrixXf am = Eigen::Map<const Eigen::Matrix<float, -1, -1, Eigen::RowMajor>>(a.values.data(), in, in);
    Eigen::Matrix<float, -1, -1, Eigen::RowMajor> x = zm + zm * am;
    for (std::int64_t k = 0; k < in; k += 7) x.col(k) *= 6.0f;
    return matrix(tokens, in, std::vector<float>(x.data(), x.data() + x.size()));
}

LayerConfig int_config(const char* dtype, Mode mode, Granularity g, std::int64_t group = 0) {
    LayerConfig c;
    c.weights.dtype = IntType::parse(dtype);
    c.weights.mode = mode;
    c.weights.granularity = g;
    c.weights.group_size = group;
    return c;
}

// SPEC's GPTQ, eagerly, in plain loops: every later column updated after each step; a group's pairs from its
// columns' current values when the loop reaches the first of them it processes.
std::vector<std::int32_t> eager_gptq(const Tensor& x, const Tensor& w, const LayerConfig& config, double damp, bool act_order) {
    const std::int64_t t = x.rows(), in = w.cols(), out = w.rows();
    Eigen::MatrixXd h = Eigen::MatrixXd::Zero(in, in), wd(out, in);
    for (std::int64_t i = 0; i < in; ++i)
        for (std::int64_t j = 0; j < in; ++j)
            for (std::int64_t k = 0; k < t; ++k) h(i, j) += 2.0 * x.values[k * in + i] * x.values[k * in + j];
    for (std::int64_t r = 0; r < out; ++r)
        for (std::int64_t c = 0; c < in; ++c) wd(r, c) = w.values[r * in + c];
    for (std::int64_t k = 0; k < in; ++k)
        if (h(k, k) == 0) h(k, k) = 1, wd.col(k).setZero();
    h.diagonal().array() += damp * h.diagonal().mean();
    std::vector<std::int64_t> order(static_cast<std::size_t>(in));
    std::iota(order.begin(), order.end(), 0);
    if (act_order) std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return h(a, a) > h(b, b); });
    Eigen::MatrixXd hp(in, in);
    for (std::int64_t a = 0; a < in; ++a)
        for (std::int64_t b = 0; b < in; ++b) hp(a, b) = h(order[a], order[b]);
    const Eigen::MatrixXd hinv = hp.inverse();
    const Eigen::MatrixXd u = hinv.llt().matrixU();
    const QuantConfig& qc = config.weights;
    const std::int64_t group = qc.granularity == Granularity::Group ? qc.group_size : in;
    std::vector<double> s(static_cast<std::size_t>(out * in)), zf(s.size());
    auto pair = [&](double lo, double hi, double& sc, std::int32_t& z) {
        if (qc.mode == Mode::Symmetric) symmetric_params(std::max(std::fabs(lo), std::fabs(hi)), qc.dtype, sc, z);
        else asymmetric_params(lo, hi, qc.dtype, sc, z);
    };
    std::vector<double> rs(static_cast<std::size_t>(out)), rz(rs.size());
    std::vector<std::vector<double>> gs(static_cast<std::size_t>(out), std::vector<double>(static_cast<std::size_t>(in / group)));
    std::vector<std::vector<std::int32_t>> gz(static_cast<std::size_t>(out), std::vector<std::int32_t>(static_cast<std::size_t>(in / group)));
    std::vector<char> done(static_cast<std::size_t>(in / group), 0);
    if (qc.granularity == Granularity::Tensor) {
        double sc; std::int32_t z;
        pair(wd.minCoeff(), wd.maxCoeff(), sc, z);
        for (std::int64_t r = 0; r < out; ++r) gs[r][0] = sc, gz[r][0] = z;
    } else if (qc.granularity == Granularity::Channel) {
        for (std::int64_t r = 0; r < out; ++r) pair(wd.row(r).minCoeff(), wd.row(r).maxCoeff(), gs[r][0], gz[r][0]);
    }
    std::vector<std::int32_t> codes(static_cast<std::size_t>(out * in));
    for (std::int64_t p = 0; p < in; ++p) {
        const std::int64_t j = order[p], g = j / group;
        if (qc.granularity == Granularity::Group && !done[g]) {
            done[g] = 1;
            for (std::int64_t r = 0; r < out; ++r) {
                const auto span = wd.row(r).segment(g * group, group);
                pair(span.minCoeff(), span.maxCoeff(), gs[r][g], gz[r][g]);
            }
        }
        Eigen::VectorXd e(out);
        for (std::int64_t r = 0; r < out; ++r) {
            const double sc = static_cast<float>(gs[r][g]);
            const std::int32_t z = gz[r][g];
            const double q = std::clamp<double>(std::nearbyint(wd(r, j) / sc + z), qc.dtype.q_min(), qc.dtype.q_max());
            codes[static_cast<std::size_t>(r * in + j)] = static_cast<std::int32_t>(q);
            const double v = sc * (q - z);
            e(r) = (wd(r, j) - v) / u(p, p);
            wd(r, j) = v;
        }
        for (std::int64_t l = p + 1; l < in; ++l) wd.col(order[l]) -= e * u(p, l);
    }
    return codes;
}

double output_mse(const MethodResult& r) { return r.layer.output.mse; }
// Each `base + args` is refused: exit 2, one line containing `part`, nothing on stdout.
void check_refused(const std::string& base, const test::TempDir& dir,
                   const std::vector<std::pair<std::string, std::string>>& cases) {
    for (const auto& [args, part] : cases) {
        CAPTURE(args);
        const test::Run r = test::run(base + args, dir);
        CHECK(r.exit_code == 2);
        CHECK(test::one_line(r.err));
        CHECK(r.err.find(part) != std::string::npos);
        CHECK(r.out.empty());
    }
}


}  // namespace

TEST_CASE("methods golden: GPTQ's codes are RTN's when x^T x is a multiple of I") {
    // x = Q / sqrt(2) with Q's columns orthonormal: H = 2 x^T x = I, and damping keeps it a multiple of I, so
    // U is diagonal and no column's error reaches another.
    const std::int64_t tokens = 64, in = 32, out = 16;
    const Tensor z = normal_matrix(tokens, in, 3);
    Eigen::MatrixXd zm = Eigen::Map<const Eigen::Matrix<float, -1, -1, Eigen::RowMajor>>(z.values.data(), tokens, in).cast<double>();
    const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(zm).householderQ() * Eigen::MatrixXd::Identity(tokens, in);
    Eigen::Matrix<float, -1, -1, Eigen::RowMajor> xf = (q / std::sqrt(2.0)).cast<float>();
    const Tensor x = matrix(tokens, in, std::vector<float>(xf.data(), xf.data() + xf.size()));
    const Tensor w = normal_matrix(out, in, 4);
    for (const Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Group}) {
        const LayerConfig c = int_config("int4", Mode::Asymmetric, g, 8);
        MethodConfig m;
        m.method = LayerMethod::Gptq;
        const MethodResult r = run_method(x, w, nullptr, c, m);
        CHECK(r.codes == quantize(w, c.weights).codes);
    }
}

TEST_CASE("methods golden: AWQ's loss at r = 0 is RTN's output MSE") {
    const Tensor x = correlated_inputs(48, 64, 5), w = normal_matrix(24, 64, 6, 0.1f);
    const LayerConfig c = int_config("int4", Mode::Symmetric, Granularity::Channel);
    MethodConfig m;
    m.method = LayerMethod::Awq;
    const MethodResult r = run_method(x, w, nullptr, c, m);
    REQUIRE(r.awq.has_value());
    REQUIRE(r.awq->losses.size() == 20);
    // The same quantized W (m = 1); RTN's y is float32, the loss float64: equal to float32's rounding.
    CHECK(r.awq->losses[0] == doctest::Approx(r.rtn_output.mse).epsilon(1e-4));
    CHECK(*std::min_element(r.awq->losses.begin(), r.awq->losses.end()) <= r.awq->losses[0]);
    CHECK(output_mse(r) <= r.rtn_output.mse * (1 + 1e-4));
}

TEST_CASE("methods: blocked GPTQ gives the eager loop's codes for every layout and block size") {
    const Tensor x = correlated_inputs(40, 48, 7), w = normal_matrix(12, 48, 8);
    for (const Granularity g : {Granularity::Tensor, Granularity::Channel, Granularity::Group})
        for (const bool act_order : {false, true})
            for (const std::int64_t block : {std::int64_t{1}, std::int64_t{5}, std::int64_t{16}, std::int64_t{128}}) {
                CAPTURE(static_cast<int>(g));
                CAPTURE(act_order);
                CAPTURE(block);
                const LayerConfig c = int_config("int3", g == Granularity::Tensor ? Mode::Symmetric : Mode::Asymmetric, g, 12);
                MethodConfig m;
                m.method = LayerMethod::Gptq;
                m.act_order = act_order;
                m.block = block;
                const MethodResult r = run_method(x, w, nullptr, c, m);
                CHECK(r.codes == eager_gptq(x, w, c, m.damp, act_order));
            }
}

TEST_CASE("methods property: GPTQ's output MSE is at most RTN's on random layers with correlated inputs") {
    int better = 0, seeds = 0;
    for (unsigned seed = 0; seed < 40; ++seed, ++seeds) {
        const Tensor x = correlated_inputs(96, 64, 100 + seed), w = normal_matrix(32, 64, 200 + seed, 0.05f);
        const LayerConfig c = int_config("int4", Mode::Asymmetric, seed % 2 ? Granularity::Group : Granularity::Channel, 32);
        MethodConfig m;
        m.method = LayerMethod::Gptq;
        m.act_order = seed % 3 == 0;
        const MethodResult r = run_method(x, w, nullptr, c, m);
        better += output_mse(r) < r.rtn_output.mse;  // strictly: a GPTQ that compensates nothing equals RTN
    }
    MESSAGE("GPTQ's output MSE < RTN's on " << better << " of " << seeds << " random layers");
    CHECK(better >= seeds * 95 / 100);  // measured: 40 of 40 (100 %), strictly better
}

TEST_CASE("methods property: the rotation is orthogonal and loses nothing with int16 weights") {
    const std::int64_t n = 64;
    for (const bool random : {false, true}) {
        const Tensor w = normal_matrix(8, n, 9);
        std::vector<double> v(w.values.begin(), w.values.end()), back = v;
        const std::vector<double> signs = rotation_signs(n, 11);
        hadamard_rows(back.data(), 8, n, random ? &signs : nullptr);
        double moved = 0;
        for (std::size_t i = 0; i < v.size(); ++i) moved = std::max(moved, std::fabs(back[i] - v[i]));
        CHECK(moved > 0.01);
        inverse_hadamard_rows(back.data(), 8, n, random ? &signs : nullptr);  // W H H^T = W
        for (std::size_t i = 0; i < v.size(); ++i) CHECK(std::fabs(back[i] - v[i]) <= 1e-12);
    }
    const Tensor x = correlated_inputs(32, n, 12), w = normal_matrix(16, n, 13);
    MethodConfig m;
    m.method = LayerMethod::Rotate;
    m.rotation = RotationKind::RandomHadamard;
    const MethodResult r = run_method(x, w, nullptr, int_config("int16", Mode::Symmetric, Granularity::Channel), m);
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < r.layer.y.size(); ++i) {
        err += std::pow(r.layer.y[i] - r.layer.reference[i], 2.0);
        ref += std::pow(r.layer.reference[i], 2.0);
    }
    CHECK(std::sqrt(err / ref) <= 1e-4);
    REQUIRE(r.rotate.has_value());
    CHECK(r.rotate->kurtosis_before > 0);
}

TEST_CASE("methods: a rotation spreads an outlier column of W so its max over std drops") {
    Tensor w = normal_matrix(16, 64, 14, 0.1f);
    for (std::int64_t r = 0; r < 16; ++r) w.values[static_cast<std::size_t>(r * 64 + 5)] = 4.0f;
    const Tensor x = normal_matrix(32, 64, 15);
    MethodConfig m;
    m.method = LayerMethod::Rotate;
    const MethodResult r = run_method(x, w, nullptr, int_config("int4", Mode::Symmetric, Granularity::Channel), m);
    REQUIRE(r.rotate.has_value());
    CHECK(r.rotate->max_over_std_after < r.rotate->max_over_std_before / 2);
    CHECK(output_mse(r) < r.rtn_output.mse);
}

TEST_CASE("methods refuse: bad methods and options are one line naming them") {
    const Tensor x = normal_matrix(8, 96, 16), w = normal_matrix(4, 96, 17);
    MethodConfig m;
    m.method = LayerMethod::Rotate;
    const LayerConfig c = int_config("int4", Mode::Symmetric, Granularity::Channel);
    CHECK(test::error_of([&] { check_method(x, w, nullptr, c, m); }).find("rotation needs in = 2^k, got in = 96") != std::string::npos);
    m.method = LayerMethod::Gptq;
    for (const double damp : {0.0, -1.0, std::nan(""), HUGE_VAL, 1e308, kMaxGptqDamp * 2}) {
        CAPTURE(damp);
        m.damp = damp;
        // The range itself, not a Hessian "singular" from an overflowing damping (what 1e308 gave).
        CHECK(test::error_of([&] { check_method(x, w, nullptr, c, m); }).find("--damp must be > 0 and at most 1e+06") !=
              std::string::npos);
    }
    m.damp = kMaxGptqDamp;  // the largest accepted: finite codes, RTN's to 6 digits
    CHECK_NOTHROW(check_method(x, w, nullptr, c, m));
    m.damp = 0.01;
    m.block = 0;
    CHECK(test::error_of([&] { check_method(x, w, nullptr, c, m); }).find("--block") != std::string::npos);
    m.block = 128;
    LayerConfig act = c;
    act.quantize_activations = true;
    act.act_dtype = IntType::parse("int8");
    CHECK(test::error_of([&] { check_method(x, w, nullptr, act, m); }).find("--activations none") != std::string::npos);
    LayerConfig fmt = c;
    parse_dtype("q4_0", fmt.weights);
    fmt.weights = with_format(fmt.weights, fmt.weights.format);
    CHECK(test::error_of([&] { check_method(x, w, nullptr, fmt, m); }).find("not q4_0") != std::string::npos);
    m.method = LayerMethod::Awq;
    m.grid = 0;
    CHECK(test::error_of([&] { check_method(x, w, nullptr, c, m); }).find("--grid") != std::string::npos);
    m.grid = kMaxAwqGrid + 1;
    CHECK(test::error_of([&] { check_method(x, w, nullptr, c, m); }).find("--grid") != std::string::npos);
    CHECK(test::error_of([&] { parse_layer_method("gptqq"); }).find("gptqq") != std::string::npos);
}

TEST_CASE("methods refuse: a Hessian singular even after damping is an error and never NaN codes") {
    // Two tokens for 16 inputs: H has rank 2; a damping of 1e-300 leaves it singular in float64.
    const Tensor x = normal_matrix(2, 16, 18), w = normal_matrix(4, 16, 19);
    MethodConfig m;
    m.method = LayerMethod::Gptq;
    m.damp = 1e-300;
    const std::string e = test::error_of([&] { run_method(x, w, nullptr, int_config("int4", Mode::Symmetric, Granularity::Channel), m); });
    CHECK(e.find("singular") != std::string::npos);
}

TEST_CASE("methods command: layer --method prints method and rtn_output and writes the method's codes") {
    test::TempDir dir;
    const Tensor w = normal_matrix(16, 64, 21, 0.1f);
    save_floats((dir.path / "w.npy").string(), w.shape, w.values.data());
    const std::string base = "layer --weights " + test::shell_quote((dir.path / "w.npy").string()) +
                             " --random-inputs normal --tokens 32 --outlier-channels 4 --outlier-scale 10 --dtype int4 --mode symmetric --granularity channel";
    const test::Run plain = test::run(base, dir);
    REQUIRE(plain.exit_code == 0);
    CHECK(plain.out.find("\"method\"") == std::string::npos);  // without --method: the JSON of before
    for (const char* m : {"rtn", "gptq --act-order --block 8", "awq --grid 10", "rotate --rotation random-hadamard --seed 3", "rotate+gptq"}) {
        CAPTURE(m);
        const test::Run r = test::run(base + " --method " + m + " --out-quantized " + test::shell_quote((dir.path / "q.csv").string()) +
                                          " --out-dequantized " + test::shell_quote((dir.path / "d.npy").string()),
                                      dir);
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        const JsonValue json = parse_json(r.out, "stdout");
        REQUIRE(json.find("method") != nullptr);
        CHECK(json.find("method")->find("name")->text.find(std::string(m).substr(0, std::string(m).find(' '))) != std::string::npos);
        REQUIRE(json.find("rtn_output") != nullptr);
        CHECK(json.find("rtn_output")->find("sqnr_db")->number > 0);
        const Tensor q = load_tensor((dir.path / "q.csv").string()), d = load_tensor((dir.path / "d.npy").string());
        CHECK(q.shape == w.shape);
        CHECK(d.shape == w.shape);
        for (const float c : q.values) CHECK((c >= -8 && c <= 7));
    }
    const test::Run awq = test::run(base + " --method awq --grid 10", dir);
    const JsonValue json = parse_json(awq.out, "stdout");
    CHECK(json.find("method")->find("losses")->items.size() == 10);
    CHECK(json.find("method")->find("scales")->find("min") != nullptr);

    check_refused(base, dir, {
             {" --method gptq --activations int8", "--activations none"},
             {" --method awq --grid 0", "--grid"},
             {" --method gptq --grid 5", "--grid needs --method awq"},
             {" --method rtn --damp 0.1", "--damp needs"},
             {" --method gptq --damp nan", "--damp"},
             {" --method rotate --rotation haar", "haar"},
             {" --method quarot", "quarot"}});
}

TEST_CASE("methods: GPTQ's dead columns are zeroed and counted and the blocked loop still gives the eager codes") {
    // Inputs 3 and 17 are never used (x[:, k] = 0, H[k, k] = 0): W[:, k] is set to 0 before anything else, so
    // its codes dequantize to 0 and no error flows from them.
    Tensor x = correlated_inputs(40, 32, 31);
    for (std::int64_t t = 0; t < 40; ++t) x.values[static_cast<std::size_t>(t * 32 + 3)] = x.values[static_cast<std::size_t>(t * 32 + 17)] = 0;
    const Tensor w = normal_matrix(10, 32, 32);
    for (const Granularity g : {Granularity::Channel, Granularity::Group})
        for (const bool act_order : {false, true}) {
            CAPTURE(static_cast<int>(g));
            CAPTURE(act_order);
            const LayerConfig c = int_config("int4", Mode::Asymmetric, g, 8);
            MethodConfig m;
            m.method = LayerMethod::Gptq;
            m.act_order = act_order;
            m.block = 6;
            const MethodResult r = run_method(x, w, nullptr, c, m);
            REQUIRE(r.gptq.has_value());
            CHECK(r.gptq->dead_columns == 2);
            CHECK(r.codes == eager_gptq(x, w, c, m.damp, act_order));
            for (std::int64_t o = 0; o < 10; ++o)
                for (const std::int64_t k : {3, 17}) CHECK(r.dequantized[static_cast<std::size_t>(o * 32 + k)] == 0.0f);
            if (act_order) CHECK(std::set<std::int64_t>(r.gptq->order.end() - 2, r.gptq->order.end()) == std::set<std::int64_t>{3, 17});
        }
}

TEST_CASE("methods: cancelling stops every method with MethodCancelled and progress never goes back") {
    const Tensor x = correlated_inputs(32, 64, 33), w = normal_matrix(16, 64, 34);
    const LayerConfig c = int_config("int4", Mode::Symmetric, Granularity::Group, 16);
    for (const LayerMethod method : {LayerMethod::Gptq, LayerMethod::Awq, LayerMethod::Rotate, LayerMethod::RotateGptq}) {
        CAPTURE(to_string(method));
        MethodConfig m;
        m.method = method;
        m.block = 8;
        std::vector<double> seen;
        MethodControl watch;
        watch.progress = [&](double f) { seen.push_back(f); };
        run_method(x, w, nullptr, c, m, watch);
        REQUIRE(seen.size() >= 2);
        CHECK(std::is_sorted(seen.begin(), seen.end()));
        CHECK(seen.back() == 1.0);
        // Cancelled at the second poll: the method stops there, nothing returned.
        int polls = 0;
        MethodControl cancel;
        cancel.cancelled = [&] { return ++polls >= 2; };
        bool cancelled = false;
        try {
            run_method(x, w, nullptr, c, m, cancel);
        } catch (const MethodCancelled&) {
            cancelled = true;
        }
        CHECK(cancelled);
        CHECK(polls == 2);
    }
}

TEST_CASE("methods refuse: no tokens and a huge grid") {
    const Tensor w = normal_matrix(4, 16, 35);
    Tensor none;
    none.shape = {0, 16};
    MethodConfig m;
    m.method = LayerMethod::Gptq;
    const LayerConfig c = int_config("int4", Mode::Symmetric, Granularity::Channel);
    CHECK(test::error_of([&] { run_method(none, w, nullptr, c, m); }) != "<no error>");
    m.method = LayerMethod::Awq;
    m.grid = std::numeric_limits<int>::max();
    CHECK(test::error_of([&] { check_method(normal_matrix(8, 16, 36), w, nullptr, c, m); }).find("--grid") != std::string::npos);
}

TEST_CASE("methods command: --out-output writes the method's y and the refusals of the command line") {
    test::TempDir dir;
    const Tensor w = normal_matrix(8, 96, 37, 0.1f);
    save_floats((dir.path / "w.npy").string(), w.shape, w.values.data());
    const std::string base = "layer --weights " + test::shell_quote((dir.path / "w.npy").string()) +
                             " --random-inputs normal --tokens 24 --outlier-channels 3 --outlier-scale 20";
    const std::string y = test::shell_quote((dir.path / "y.npy").string());
    REQUIRE(test::run(base + " --dtype int4 --granularity channel --out-output " + y, dir).exit_code == 0);
    const Tensor rtn_y = load_tensor((dir.path / "y.npy").string());
    REQUIRE(test::run(base + " --dtype int4 --granularity channel --method gptq --out-output " + y, dir).exit_code == 0);
    const Tensor gptq_y = load_tensor((dir.path / "y.npy").string());
    CHECK(gptq_y.shape == rtn_y.shape);
    CHECK(gptq_y.values != rtn_y.values);  // GPTQ's W, not round-to-nearest's
    check_refused(base, dir, {
             {" --method rotate", "rotation needs in = 2^k, got in = 96"},
             {" --method gptq --dtype q4_0", "--method gptq quantizes int<N> weights, not q4_0"},
             {" --method awq --dtype fp8-e4m3", "--method awq quantizes int<N> weights, not fp8-e4m3"},
             {" --method gptq --block 0", "--block"},
             {" --method gptq --damp -1", "--damp"},
             {" --method awq --grid 99999999999", "--grid"},
             {" --method awq --rotation hadamard", "--rotation needs"}});
}

TEST_CASE("methods command: a refused option's value is printed as given and not rounded into the range") {
    // --damp 1000001 was refused with "got 1e+06", which reads as 1e6 (allowed) refused; the layer's other
    // range messages (alpha, threshold) printed their doubles with "%g" too.
    test::TempDir dir;
    const Tensor w = normal_matrix(8, 32, 43, 0.1f);
    save_floats((dir.path / "w.npy").string(), w.shape, w.values.data());
    const std::string base = "layer --weights " + test::shell_quote((dir.path / "w.npy").string()) +
                             " --random-inputs normal --tokens 8 --dtype int4";
    check_refused(base, dir, {
             {" --method gptq --damp 1000001", "; got 1000001"},
             {" --method gptq --damp 1000000.5", "; got 1000000.5"},
             {" --method gptq --damp 1e308", "; got 1e+308"},  // short where "%g" is exact
             {" --activations int8 --smooth-alpha 1.0000001", "must be in [0, 1]; got 1.0000001"},
             {" --activations int8 --outlier-threshold -1.234567e-7", "; got -1.234567e-07"}});
    const LayerConfig c = int_config("int4", Mode::Symmetric, Granularity::Channel);
    MethodConfig m;
    m.method = LayerMethod::Gptq;
    m.damp = std::nextafter(kMaxGptqDamp, HUGE_VAL);
    CHECK(test::error_of([&] { check_method(normal_matrix(8, 32, 44), w, nullptr, c, m); }).find("got 1000000.0000000001") !=
          std::string::npos);
}

TEST_CASE("methods command: layer --help states the --damp range and which method takes --seed") {
    // What the parser accepts (0 < D <= kMaxGptqDamp) and what it refuses --seed for, said where the options are.
    test::TempDir dir;
    const test::Run r = test::run("layer --help", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(kMaxGptqDamp == 1e6);
    CHECK(r.out.find("--damp D                 gptq: H += D * mean(diag H) * I, 0 < D <= 1e6") != std::string::npos);
    CHECK(r.out.find("--seed N                 of the methods, only --rotation random-hadamard takes it") != std::string::npos);
}

TEST_CASE("methods command: --seed is refused where nothing takes it") {
    test::TempDir dir;
    const Tensor w = normal_matrix(8, 32, 41, 0.1f), x = normal_matrix(6, 32, 42);
    save_floats((dir.path / "w.npy").string(), w.shape, w.values.data());
    save_floats((dir.path / "x.npy").string(), x.shape, x.values.data());
    const std::string base = "layer --weights " + test::shell_quote((dir.path / "w.npy").string()) + " --dtype int4";
    const std::string file = base + " --inputs " + test::shell_quote((dir.path / "x.npy").string());
    // Taken: random-hadamard's signs (from a file's inputs too), the random inputs, ramp's outlier channels.
    for (const std::string& used : {file + " --method rotate --rotation random-hadamard --seed 3",
                                    file + " --method rotate+gptq --rotation random-hadamard --seed 3",
                                    base + " --random-inputs normal --tokens 4 --seed 3 --method gptq",
                                    base + " --random-inputs relu --tokens 4 --seed 3 --method rotate",
                                    base + " --random-inputs ramp --tokens 4 --seed 3 --outlier-channels 2 --outlier-scale 5"}) {
        CAPTURE(used);
        const test::Run r = test::run(used, dir);
        INFO(r.err);
        CHECK(r.exit_code == 0);
    }
    const std::string unused = "--seed is unused here: it seeds --random-inputs normal|relu, --outlier-channels and --rotation random-hadamard";
    check_refused(file, dir, {{" --seed 3", unused},
                              {" --seed 3 --method gptq", unused},
                              {" --seed 3 --method awq", unused},
                              {" --seed 3 --method rotate", unused},
                              {" --seed 3 --method rotate --rotation hadamard", unused}});
    check_refused(base, dir, {{" --random-inputs ramp --tokens 4 --seed 3 --method rtn", unused}});
}

TEST_CASE("methods: AWQ's losses and winner are SPEC's search written out in plain loops") {
    // Fewer tokens than inputs (the loss from x) and more (from the Gram matrix x^T x).
    const std::int64_t shapes[2][2] = {{24, 32}, {80, 16}};
    for (const auto& [tokens, in] : shapes) {
        CAPTURE(tokens);
        const std::int64_t out = 6;
        const Tensor x = correlated_inputs(tokens, in, 41), w = normal_matrix(out, in, 42, 0.1f);
        const LayerConfig c = int_config("int3", Mode::Asymmetric, Granularity::Group, 8);
        MethodConfig m;
        m.method = LayerMethod::Awq;
        m.grid = 7;
        const MethodResult r = run_method(x, w, nullptr, c, m);
        REQUIRE(r.awq.has_value());
        REQUIRE(r.awq->losses.size() == 7);
        std::vector<double> a(static_cast<std::size_t>(in), 0.0);
        for (std::int64_t t = 0; t < tokens; ++t)
            for (std::int64_t k = 0; k < in; ++k) a[k] += std::fabs(static_cast<double>(x.values[t * in + k])) / tokens;
        double best = INFINITY, best_r = -1;
        for (int i = 0; i < 7; ++i) {
            const double ratio = i / 7.0;
            std::vector<double> s(static_cast<std::size_t>(in));
            for (std::int64_t k = 0; k < in; ++k) s[k] = std::max(std::pow(a[k], ratio), 1e-4);
            const double norm = std::sqrt(*std::max_element(s.begin(), s.end()) * *std::min_element(s.begin(), s.end()));
            for (double& v : s) v /= norm;
            // W diag(m) quantized per group of 8 along in, then divided back.
            std::vector<double> wr(static_cast<std::size_t>(out * in));
            for (std::int64_t o = 0; o < out; ++o)
                for (std::int64_t g = 0; g < in; g += 8) {
                    double lo = INFINITY, hi = -INFINITY;
                    for (std::int64_t k = g; k < g + 8; ++k) lo = std::min(lo, w.values[o * in + k] * s[k]), hi = std::max(hi, w.values[o * in + k] * s[k]);
                    double sc;
                    std::int32_t z;
                    asymmetric_params(lo, hi, c.weights.dtype, sc, z);
                    sc = static_cast<float>(sc);
                    for (std::int64_t k = g; k < g + 8; ++k) {
                        const double q = std::clamp<double>(std::nearbyint(w.values[o * in + k] * s[k] / sc + z), -4, 3);
                        wr[o * in + k] = sc * (q - z) / s[k];
                    }
                }
            double loss = 0;
            for (std::int64_t t = 0; t < tokens; ++t)
                for (std::int64_t o = 0; o < out; ++o) {
                    double d = 0;
                    for (std::int64_t k = 0; k < in; ++k) d += x.values[t * in + k] * (wr[o * in + k] - w.values[o * in + k]);
                    loss += d * d / (tokens * out);
                }
            CHECK(r.awq->losses[i] == doctest::Approx(loss).epsilon(1e-9));
            if (loss < best) best = loss, best_r = ratio;
        }
        CHECK(r.awq->ratio == doctest::Approx(best_r));
        CHECK(r.awq->ratio > 0);  // outlier inputs: some scaling pays (else the test shows nothing)
    }
}

TEST_CASE("methods: AWQ at a given ratio is the search's W_r for that ratio to the bit") {
    // The window's click on AWQ's loss curve shows the quantization at that ratio: run_method with awq_ratio
    // i / G gives the search's loss for it and its scales, and at the winner the winner's codes and weight.
    for (const auto& [tokens, in] : {std::pair<std::int64_t, std::int64_t>{24, 32}, {80, 16}}) {
        CAPTURE(tokens);
        const Tensor x = correlated_inputs(tokens, in, 51), w = normal_matrix(6, in, 52, 0.1f);
        const LayerConfig c = int_config("int3", Mode::Asymmetric, Granularity::Group, 8);
        MethodConfig m;
        m.method = LayerMethod::Awq;
        m.grid = 7;
        const MethodResult search = run_method(x, w, nullptr, c, m);
        REQUIRE(search.awq.has_value());
        bool some_other = false;
        for (int i = 0; i < 7; ++i) {
            CAPTURE(i);
            m.awq_ratio = static_cast<double>(i) / m.grid;
            const MethodResult at = run_method(x, w, nullptr, c, m);
            REQUIRE(at.awq.has_value());
            CHECK(at.awq->ratio == *m.awq_ratio);
            CHECK(at.awq->losses == std::vector<double>{search.awq->losses[static_cast<std::size_t>(i)]});
            CHECK(at.awq->scales == awq_scales(search.awq->mean_abs_x, *m.awq_ratio));
            CHECK(at.awq->mean_abs_x == search.awq->mean_abs_x);
            CHECK(at.rtn_output.mse == search.rtn_output.mse);
            if (*m.awq_ratio == search.awq->ratio) {
                CHECK(at.codes == search.codes);
                CHECK(at.dequantized == search.dequantized);
                CHECK(at.layer.output.mse == search.layer.output.mse);
            } else if (at.dequantized != search.dequantized) {
                some_other = true;
            }
        }
        CHECK(some_other);  // another ratio is another weight (else the window would show nothing new)
    }
    MethodConfig m;
    m.method = LayerMethod::Awq;
    const Tensor x = normal_matrix(8, 16, 53), w = normal_matrix(4, 16, 54);
    const LayerConfig c = int_config("int4", Mode::Symmetric, Granularity::Channel);
    for (const double r : {-0.5, 1.5, std::nan("")}) {
        m.awq_ratio = r;
        CHECK(test::error_of([&] { check_method(x, w, nullptr, c, m); }).find("ratio r must be in [0, 1]") != std::string::npos);
    }
}

TEST_CASE("methods: hadamard_rows is W H diag(signs) with Sylvester's normalized H") {
    const std::int64_t n = 16;
    const std::vector<double> signs = rotation_signs(n, 5);
    CHECK(std::count(signs.begin(), signs.end(), -1.0) > 0);
    CHECK(std::count(signs.begin(), signs.end(), 1.0) > 0);
    for (const bool random : {false, true}) {
        std::vector<double> eye(static_cast<std::size_t>(n * n), 0.0);
        for (std::int64_t i = 0; i < n; ++i) eye[i * n + i] = 1.0;
        hadamard_rows(eye.data(), n, n, random ? &signs : nullptr);  // the rows of I H diag(s) = H diag(s)
        for (std::int64_t i = 0; i < n; ++i)
            for (std::int64_t j = 0; j < n; ++j) {
                const double h = (__builtin_popcountll(static_cast<unsigned long long>(i & j)) % 2 ? -1.0 : 1.0) / 4.0;
                CHECK(eye[i * n + j] == doctest::Approx(h * (random ? signs[j] : 1.0)).epsilon(1e-15));
            }
    }
}
