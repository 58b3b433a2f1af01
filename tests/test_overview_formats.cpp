// The window's one-pass overview cuts a large tensor into pieces: a number format's scales must still be
// the whole tensor's (a per-tensor fp8 s, NVFP4's g), so its metrics equal `quantize`'s.
#include <doctest/doctest.h>

#include <cmath>

#include "quantscope/config.hpp"
#include "quantscope/overview.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/random.hpp"

TEST_CASE("overview of a number format over many pieces has the metrics of quantize") {
    qs::RandomSpec spec;
    spec.shape = {512, 1024};  // 4 pieces of 2^17 elements
    spec.seed = 4;
    qs::Tensor t = qs::generate_random(spec);
    t.values[7] = 40.0f;  // the largest magnitude sits in the first piece only
    const qs::TensorView view = qs::view_of(t);
    for (const char* dtype : {"fp8-e4m3", "nf4", "fp4-e2m1", "nvfp4", "mxfp4", "q4_0"}) {
        CAPTURE(dtype);
        qs::QuantConfig config;
        qs::parse_dtype(dtype, config);
        config = qs::with_format(config, config.format);
        const qs::Quantization whole = qs::quantize_checked(view, config);
        const qs::QuantParams params = qs::compute_params(view, config);
        const qs::QuantOverview o = qs::quantize_overview(view, params, config, qs::overview_grid(t.shape, 4096));
        CHECK(o.metrics.mse == doctest::Approx(whole.metrics.mse).epsilon(1e-9));
        CHECK(o.metrics.max_abs_error == whole.metrics.max_abs_error);
        CHECK(o.metrics.clipped == whole.metrics.clipped);
    }
}
