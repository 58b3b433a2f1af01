// The layer y = x W^T + b under quantization (SPEC "Layer") against independent float64 computations: the
// codes and scales come from the core's quantize(), the sums from a plain triple loop here.
#include <doctest/doctest.h>

#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/random.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

Tensor make(Shape shape, std::vector<float> values) { return Tensor{std::move(shape), std::move(values)}; }

Tensor randn(Shape shape, std::uint64_t seed, double std = 1.0) {
    RandomSpec spec;
    spec.shape = std::move(shape);
    spec.seed = seed;
    spec.std = std;
    return generate_random(spec);
}

// x with every token's channels `big` scaled by `scale` (LLM activations' outlier columns).
Tensor with_outliers(Tensor x, const std::vector<std::int64_t>& big, float scale) {
    for (std::int64_t t = 0; t < x.rows(); ++t)
        for (std::int64_t k : big) x.values[static_cast<std::size_t>(t * x.cols() + k)] *= scale;
    return x;
}

Tensor columns(const Tensor& m, const std::vector<std::int64_t>& cols, const std::vector<double>& factor, bool divide) {
    Tensor out;
    out.shape = {m.rows(), static_cast<std::int64_t>(cols.size())};
    for (std::int64_t r = 0; r < m.rows(); ++r)
        for (std::int64_t k : cols) {
            double v = m.values[static_cast<std::size_t>(r * m.cols() + k)];
            if (!factor.empty()) v = divide ? v / factor[static_cast<std::size_t>(k)] : v * factor[static_cast<std::size_t>(k)];
            out.values.push_back(static_cast<float>(v));
        }
    return out;
}

// r' of element i as a double: float32(s) (q - z), the dequantized value before its float32 rounding.
double exact_deq(const QuantResult& q, const QuantParams& p, std::int64_t i) {
    const auto b = static_cast<std::size_t>(p.block_of(i));
    return static_cast<double>(static_cast<float>(p.scale[b])) * (q.codes[static_cast<std::size_t>(i)] - p.zero_point[b]);
}

QuantConfig act_config(const LayerConfig& c) {
    QuantConfig a;
    a.dtype = c.act_dtype;
    a.mode = c.act_mode;
    a.granularity = c.act_granularity == ActGranularity::Token ? Granularity::Channel : Granularity::Tensor;
    return a;
}

// The quantized layer computed independently: outlier columns in float64 on the float32 values, the rest
// (smoothed when asked) quantized by quantize() and multiplied in float64 from (s, q, z).
std::vector<double> expected_layer(const Tensor& x, const Tensor& w, const Tensor* b, const LayerConfig& c) {
    std::vector<std::int64_t> out_cols, kept;
    for (std::int64_t k = 0; k < x.cols(); ++k) {
        bool big = false;
        for (std::int64_t t = 0; t < x.rows(); ++t)
            big = big || (c.outlier_threshold && std::abs(x.values[static_cast<std::size_t>(t * x.cols() + k)]) >= *c.outlier_threshold);
        (big ? out_cols : kept).push_back(k);
    }
    std::vector<double> m;
    if (c.smooth_alpha)
        for (std::int64_t k = 0; k < x.cols(); ++k) {
            double ax = 0, aw = 0;
            for (std::int64_t t = 0; t < x.rows(); ++t) ax = std::max(ax, std::abs(double(x.values[t * x.cols() + k])));
            for (std::int64_t o = 0; o < w.rows(); ++o) aw = std::max(aw, std::abs(double(w.values[o * w.cols() + k])));
            m.push_back(ax > 0 && aw > 0 ? std::pow(ax, *c.smooth_alpha) / std::pow(aw, 1 - *c.smooth_alpha) : 1.0);
        }
    const Tensor xk = columns(x, kept, m, true), wk = columns(w, kept, m, false);
    QuantParams px, pw;
    const QuantResult qx = quantize(xk, act_config(c), &px), qw = quantize(wk, c.weights, &pw);
    const auto nk = static_cast<std::int64_t>(kept.size());
    std::vector<double> y;
    for (std::int64_t t = 0; t < x.rows(); ++t)
        for (std::int64_t o = 0; o < w.rows(); ++o) {
            double sum = b ? double(b->values[static_cast<std::size_t>(o)]) : 0.0;
            for (std::int64_t j = 0; j < nk; ++j) sum += exact_deq(qx, px, t * nk + j) * exact_deq(qw, pw, o * nk + j);
            for (std::int64_t k : out_cols) sum += double(x.values[t * x.cols() + k]) * double(w.values[o * w.cols() + k]);
            y.push_back(sum);
        }
    return y;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, double rel) {
    REQUIRE(got.size() == want.size());
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": got " << got[i] << " want " << want[i]);
        CHECK(std::abs(double(got[i]) - want[i]) <= rel * scale + std::abs(want[i]) * 6e-8);
    }
}

LayerConfig w8a8(Granularity wg = Granularity::Tensor, ActGranularity ag = ActGranularity::Tensor) {
    LayerConfig c;
    c.weights.mode = Mode::Symmetric;
    c.weights.granularity = wg;
    c.quantize_activations = true;
    c.act_granularity = ag;
    return c;
}

}  // namespace

TEST_CASE("layer golden: the course's W8A32 example") {
    const Tensor x = make({3}, {1, 2, 3});
    const Tensor w = make({3, 3}, {-2, -1.13f, 0.42f, -1.51f, 0.25f, 1.62f, 0.23f, 1.35f, 2.15f});
    LayerConfig c;
    c.weights.mode = Mode::Symmetric;
    c.keep_used_factors = true;
    const LayerResult r = run_layer(x, w, nullptr, c);
    CHECK(r.output_shape == Shape{3});
    REQUIRE(r.weights.params.scale.size() == 1);
    CHECK(r.weights.params.scale[0] == 0.016929134609192376);
    QuantParams p;
    const QuantResult q = quantize(w, c.weights, &p);
    test::check_equal(q.codes, std::vector<int>{-118, -67, 25, -89, 15, 96, 14, 80, 127});
    const std::vector<double> y{-2.9965, 3.8768, 9.3957}, ref{-3.0, 3.85, 9.38};
    for (int i = 0; i < 3; ++i) {
        CHECK(r.y[i] == doctest::Approx(y[i]).epsilon(2e-5));
        CHECK(r.reference[i] == doctest::Approx(ref[i]).epsilon(1e-6));
    }
    CHECK(r.path == LayerPath::Float);
    CHECK(r.output.mse > 0);
    CHECK(!r.inputs.has_value());
}

TEST_CASE("layer W-only against float64 on the dequantized weights") {
    const Tensor x = randn({5, 24}, 1), w = randn({7, 24}, 2), b = randn({7}, 3);
    LayerConfig c;
    c.weights.dtype = IntType::parse("int4");
    c.weights.granularity = Granularity::Channel;
    QuantParams p;
    const QuantResult q = quantize(w, c.weights, &p);
    std::vector<double> want, ref;
    for (std::int64_t t = 0; t < 5; ++t)
        for (std::int64_t o = 0; o < 7; ++o) {
            double s = b.values[o], e = b.values[o];
            for (std::int64_t k = 0; k < 24; ++k) {
                s += double(x.values[t * 24 + k]) * q.dequantized[o * 24 + k];
                e += double(x.values[t * 24 + k]) * w.values[o * 24 + k];
            }
            want.push_back(s), ref.push_back(e);
        }
    const LayerResult r = run_layer(x, w, &b, c);
    check_close(r.y, want, 1e-6);
    for (std::size_t i = 0; i < ref.size(); ++i) CHECK(r.reference[i] == static_cast<float>(ref[i]));
    CHECK(r.weights.metrics.mse == doctest::Approx(q.metrics.mse));
}

TEST_CASE("layer integer path against float64 for every factoring granularity") {
    const Tensor x = randn({9, 96}, 4), w = randn({67, 96}, 5, 0.1), b = randn({67}, 6);
    for (bool plain : {false, true}) {
        use_plain_integer_kernel(plain);
        for (const char* wd : {"int8", "int4", "uint8"})
            for (Granularity wg : {Granularity::Tensor, Granularity::Channel, Granularity::Group})
                for (std::int64_t group : {16, 32, 8, 4, 96})
                    for (ActGranularity ag : {ActGranularity::Tensor, ActGranularity::Token})
                        for (Mode am : {Mode::Symmetric, Mode::Asymmetric}) {
                            if (wg != Granularity::Group && group != 16) continue;
                            LayerConfig c = w8a8(wg, ag);
                            c.weights.dtype = IntType::parse(wd);
                            c.weights.mode = c.weights.dtype.is_signed ? Mode::Symmetric : Mode::Asymmetric;
                            c.weights.group_size = group;
                            c.act_mode = am;
                            INFO(plain << " " << wd << " " << to_string(wg) << " " << group << " " << to_string(ag) << " "
                                       << to_string(am));
                            const LayerResult r = run_layer(x, w, &b, c);
                            CHECK(r.path == LayerPath::Integer);
                            check_close(r.y, expected_layer(x, w, &b, c), 1e-12);
                        }
    }
    use_plain_integer_kernel(false);
}

TEST_CASE("layer integer path with 16-bit codes and int4 activations") {
    const Tensor x = randn({6, 40}, 7), w = randn({10, 40}, 8);
    LayerConfig c = w8a8(Granularity::Channel, ActGranularity::Token);
    c.weights.dtype = IntType::parse("int16");
    c.weights.mode = Mode::Asymmetric;
    c.act_dtype = IntType::parse("uint16");
    c.act_mode = Mode::Asymmetric;
    check_close(run_layer(x, w, nullptr, c).y, expected_layer(x, w, nullptr, c), 1e-12);
    c.act_dtype = IntType::parse("int4");
    c.act_mode = Mode::Symmetric;
    check_close(run_layer(x, w, nullptr, c).y, expected_layer(x, w, nullptr, c), 1e-12);
}

TEST_CASE("layer with weights per input channel takes the dequantized path") {
    const Tensor x = randn({4, 12}, 9), w = randn({5, 12}, 10);
    LayerConfig c = w8a8(Granularity::Channel);
    c.weights.axis = 1;
    const LayerResult r = run_layer(x, w, nullptr, c);
    CHECK(r.path == LayerPath::Dequantized);
    check_close(r.y, expected_layer(x, w, nullptr, c), 1e-7);  // r' rounded to float32 first
}

TEST_CASE("layer LLM.int8 split and SmoothQuant against float64") {
    const Tensor x = with_outliers(randn({16, 64}, 11), {3, 17, 40}, 60.0f), w = randn({24, 64}, 12, 0.05), b = randn({24}, 13);
    for (ActGranularity ag : {ActGranularity::Tensor, ActGranularity::Token}) {
        LayerConfig c = w8a8(Granularity::Channel, ag);
        c.outlier_threshold = 20.0;
        const LayerResult split = run_layer(x, w, &b, c);
        CHECK(split.outlier_columns == std::vector<std::int64_t>{3, 17, 40});
        CHECK(split.weights.shape == Shape{24, 61});
        check_close(split.y, expected_layer(x, w, &b, c), 1e-12);
        c.outlier_threshold.reset();
        const LayerResult plain = run_layer(x, w, &b, c);
        CHECK(split.output.mse < plain.output.mse / 10);  // the split removes most of the outliers' damage
        for (double alpha : {0.0, 0.5, 0.85, 1.0}) {
            c.smooth_alpha = alpha;
            CAPTURE(alpha);
            const LayerResult smooth = run_layer(x, w, &b, c);
            check_close(smooth.y, expected_layer(x, w, &b, c), 1e-12);
            c.outlier_threshold = 20.0;
            check_close(run_layer(x, w, &b, c).y, expected_layer(x, w, &b, c), 1e-12);
            c.outlier_threshold.reset();
        }
        c.smooth_alpha = 0.5;
        CHECK(run_layer(x, w, &b, c).output.mse < plain.output.mse);  // migration helps per-tensor activations
    }
}

TEST_CASE("layer property: W-only tends to the reference as s goes to 0") {
    const Tensor x = randn({8, 32}, 14), w = randn({12, 32}, 15);
    double previous = 1e300;
    for (const char* dtype : {"int4", "int8", "int12", "int16"}) {
        LayerConfig c;
        c.weights.dtype = IntType::parse(dtype);
        c.weights.mode = Mode::Symmetric;
        const LayerResult r = run_layer(x, w, nullptr, c);
        CAPTURE(dtype);
        CHECK(r.output.max_abs_error < previous / 8);
        previous = r.output.max_abs_error;
    }
    CHECK(previous < 1e-3);
}

TEST_CASE("layer property: alpha 0 equals plain W8A8 when every column of W peaks at 1") {
    // SPEC's m_k = max|x_k|^a / max|W_k|^(1-a): at a = 0 it is 1 / max|W_k|, the identity exactly when every
    // column's max |W| is 1 (in general alpha 0 moves all of the range into the activations).
    Tensor w = randn({6, 20}, 16);
    for (std::int64_t k = 0; k < 20; ++k) w.values[static_cast<std::size_t>(k)] = 1.0f + 0.0f * k, w.values[20 + k] = 0;
    for (std::int64_t o = 2; o < 6; ++o)
        for (std::int64_t k = 0; k < 20; ++k) w.values[o * 20 + k] = std::clamp(w.values[o * 20 + k], -0.99f, 0.99f);
    const Tensor x = with_outliers(randn({5, 20}, 17), {2}, 30.0f);
    for (ActGranularity ag : {ActGranularity::Tensor, ActGranularity::Token}) {
        LayerConfig c = w8a8(Granularity::Tensor, ag);
        const LayerResult plain = run_layer(x, w, nullptr, c);
        c.smooth_alpha = 0.0;
        const LayerResult alpha0 = run_layer(x, w, nullptr, c);
        CHECK(alpha0.y == plain.y);
        CHECK(alpha0.smooth_factors == std::vector<double>(20, 1.0));
    }
}

TEST_CASE("layer property: a threshold above every |x| equals no split") {
    const Tensor x = with_outliers(randn({7, 33}, 18), {5}, 10.0f), w = randn({9, 33}, 19);
    LayerConfig c = w8a8(Granularity::Channel, ActGranularity::Token);
    const LayerResult plain = run_layer(x, w, nullptr, c);
    c.outlier_threshold = 1e6;
    const LayerResult split = run_layer(x, w, nullptr, c);
    CHECK(split.outlier_columns.empty());
    CHECK(split.y == plain.y);
    c.outlier_threshold = 5.0;
    CHECK(run_layer(x, w, nullptr, c).y != plain.y);  // the test can fail: a real split changes y
}

TEST_CASE("layer property: per token on a single token equals per tensor") {
    const Tensor w = randn({11, 30}, 20), x1 = randn({30}, 21);
    const Tensor x2 = make({1, 30}, x1.values);
    for (Mode am : {Mode::Symmetric, Mode::Asymmetric}) {
        LayerConfig c = w8a8(Granularity::Channel, ActGranularity::Tensor);
        c.act_mode = am;
        const LayerResult tensor = run_layer(x2, w, nullptr, c);
        c.act_granularity = ActGranularity::Token;
        const LayerResult token = run_layer(x2, w, nullptr, c);
        CHECK(token.y == tensor.y);
        const LayerResult one = run_layer(x1, w, nullptr, c);  // a 1-D x is one token and gives a 1-D y
        CHECK(one.output_shape == Shape{11});
        CHECK(one.y == tensor.y);
    }
}

TEST_CASE("layer error contributions add up to the output error") {
    const Tensor x = with_outliers(randn({4, 16}, 22), {6}, 40.0f), w = randn({3, 16}, 23);
    LayerConfig c = w8a8();
    c.keep_used_factors = true;
    c.outlier_threshold = 30.0;
    const LayerResult r = run_layer(x, w, nullptr, c);
    const auto all = channel_contributions(r, x, w, 2, 1, 16);
    REQUIRE(all.size() == 16);
    double sum = 0;
    for (const auto& e : all) sum += e.error;
    CHECK(sum == doctest::Approx(double(r.y[2 * 3 + 1]) - r.reference[2 * 3 + 1]).epsilon(1e-4));
    for (const auto& e : all)
        if (e.channel == 6) CHECK(e.error == doctest::Approx(0.0));  // the split column is exact
    CHECK(std::abs(all[0].error) >= std::abs(all[1].error));
    CHECK(channel_contributions(r, x, w, 2, 1, 3).size() == 3);
}

TEST_CASE("layer smooth alpha curve matches single runs") {
    const Tensor x = with_outliers(randn({8, 24}, 24), {1, 9}, 50.0f), w = randn({6, 24}, 25);
    const LayerConfig c = w8a8();
    const std::vector<double> alphas{0.0, 0.25, 0.5, 0.75, 1.0};
    const std::vector<double> curve = smooth_alpha_curve(x, w, nullptr, c, alphas);
    REQUIRE(curve.size() == alphas.size());
    for (std::size_t i = 0; i < alphas.size(); ++i) {
        LayerConfig one = c;
        one.smooth_alpha = alphas[i];
        CHECK(curve[i] == run_layer(x, w, nullptr, one).output.mse);
    }
    CHECK(smooth_alpha_curve(x, w, nullptr, c, alphas, [] { return true; }).empty());
}

TEST_CASE("layer refuses bad shapes and options with one line") {
    const Tensor w = randn({4, 6}, 26), x = randn({3, 6}, 27);
    const auto fails = [](const Tensor& xx, const Tensor& ww, const Tensor* b, const LayerConfig& c, const char* part) {
        CAPTURE(part);
        try {
            run_layer(xx, ww, b, c);
            FAIL("no error");
        } catch (const Error& e) {
            const std::string what = e.what();
            CHECK(what.find(part) != std::string::npos);
            CHECK(what.find('\n') == std::string::npos);
        }
    };
    LayerConfig c;
    fails(x, make({6}, std::vector<float>(6, 1)), nullptr, c, "must be 2-D");
    fails(randn({3, 5}, 28), w, nullptr, c, "have in = 6");
    fails(x, w, &x, c, "bias must be 1-D of length out = 4");
    Tensor nan_x = x;
    nan_x.values[4] = std::nanf("");
    fails(nan_x, w, nullptr, c, "inputs: NaN at index [0, 4]");
    c.outlier_threshold = 1.0;
    fails(x, w, nullptr, c, "need quantized activations");
    c = w8a8();
    c.outlier_threshold = std::nan("");
    fails(x, w, nullptr, c, "finite number > 0");
    c.outlier_threshold.reset();
    c.smooth_alpha = 1.5;
    fails(x, w, nullptr, c, "[0, 1]");
    c.smooth_alpha.reset();
    c.act_dtype = IntType::parse("uint8");
    fails(x, w, nullptr, c, "activations:");
    // Shapes alone decide the size: no value is read (these tensors hold none).
    fails(Tensor{{1 << 20, 1 << 12}, {}}, Tensor{{1 << 12, 1 << 12}, {}}, nullptr, w8a8(), "too large");
    LayerConfig group = w8a8(Granularity::Group);
    group.weights.group_size = 3;
    group.outlier_threshold = 50.0;
    Tensor one_big = x;
    one_big.values[0] = 100;  // column 0 alone is split off: 5 kept channels
    fails(one_big, w, nullptr, group, "not a multiple of --group-size 3");
    // Values near FLT_MAX: the float64 sum fits but its float32 output does not (metrics were NaN, printed null).
    Tensor huge_x = x;
    huge_x.values[0] = 3.4e38f;
    huge_x.values[1] = 3.4e38f;
    Tensor ones = make({4, 6}, std::vector<float>(24, 1.0f));
    fails(huge_x, ones, nullptr, LayerConfig{}, "reference output y[0, 0] is beyond float32's range");
    fails(huge_x, ones, nullptr, w8a8(), "reference output y[0, 0] is beyond float32's range");
    Tensor partial = make({1, 6}, {2e38f, 2e38f, -2e38f, 0, 0, 0});  // the sum fits, a float32 partial sum does not
    fails(partial, ones, nullptr, LayerConfig{}, "quantized layer's output y[0, 0] is beyond float32's range");
}

TEST_CASE("layer with weights in a FORMATS.md format uses their dequantized values") {
    const Tensor x = randn({6, 64}, 29), w = randn({5, 64}, 30), b = randn({5}, 31);
    for (FormatId id : {FormatId::Fp8E4M3, FormatId::Nf4, FormatId::Q4_0, FormatId::MxFp4}) {
        LayerConfig c;
        c.weights.format = id;
        c.weights.mode = Mode::Symmetric;
        const FormatConfig f = format_config(c.weights);
        INFO(format_name(id));
        std::vector<float> wd(w.values.size());
        const FormatParams fp = compute_format_params(view_of(w), f);
        quantize_format_view(view_of(w), fp, f, QuantOutputs{nullptr, wd.data(), nullptr});
        std::vector<double> want;
        for (std::int64_t t = 0; t < 6; ++t)
            for (std::int64_t o = 0; o < 5; ++o) {
                double s = b.values[o];
                for (std::int64_t k = 0; k < 64; ++k) s += double(x.values[t * 64 + k]) * wd[o * 64 + k];
                want.push_back(s);
            }
        const LayerResult r = run_layer(x, w, &b, c);
        CHECK(r.path == LayerPath::Float);
        CHECK(r.weights.format.has_value());
        check_close(r.y, want, 1e-6);
        // With int8 activations per token: float64 on both r'.
        c.quantize_activations = true;
        c.act_granularity = ActGranularity::Token;
        QuantParams px;
        const QuantResult qx = quantize(x, act_config(c), &px);
        want.clear();
        for (std::int64_t t = 0; t < 6; ++t)
            for (std::int64_t o = 0; o < 5; ++o) {
                double s = b.values[o];
                for (std::int64_t k = 0; k < 64; ++k) s += double(qx.dequantized[t * 64 + k]) * wd[o * 64 + k];
                want.push_back(s);
            }
        const LayerResult a = run_layer(x, w, &b, c);
        CHECK(a.path == LayerPath::Dequantized);
        check_close(a.y, want, 1e-12);
    }
}
