// One block of a per-channel / per-group layout on its own (what the window's histograms show per block).
#include <doctest/doctest.h>

#include <limits>

#include "quantscope/blocks.hpp"
#include "quantscope/error.hpp"
#include "quantscope/params.hpp"

using namespace qs;

TEST_CASE("block elements: channels along axis 1 and groups are gathered in flat order") {
    const std::vector<float> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // 2 x 2 x 3
    QuantConfig c;
    c.granularity = Granularity::Channel;
    c.axis = 1;
    QuantParams p;
    set_block_layout({2, 2, 3}, c, p);
    CHECK(block_elements(v.data(), 12, p, 0) == std::vector<float>{0, 1, 2, 6, 7, 8});
    CHECK(block_elements(v.data(), 12, p, 1) == std::vector<float>{3, 4, 5, 9, 10, 11});
    c.granularity = Granularity::Group;
    c.group_size = 3;
    set_block_layout({2, 2, 3}, c, p);
    CHECK(block_elements(v.data(), 12, p, 3) == std::vector<float>{9, 10, 11});
    const std::vector<std::int32_t> codes = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    CHECK(block_elements(codes.data(), 12, p, 1) == std::vector<std::int32_t>{8, 9, 10});
    CHECK_THROWS_AS(block_elements(v.data(), 12, p, 4), Error);
}

TEST_CASE("count clipped: the values rounding outside the type at a block's s and z") {
    QuantConfig c;  // int8
    CHECK(count_clipped({0.0f, 127.0f, 127.4f, 127.6f, -128.6f, 1000.0f}, 1.0, 0, c) == 3);
    CHECK(count_clipped({0.0f, 127.0f}, 1.0, 1, c) == 1);
    c.overflow = Overflow::Wrap;
    CHECK(count_clipped({300.0f}, 1.0, 0, c) == 1);
}

#include "quantscope/random.hpp"

// The window derives each (s, z) of a per-block layout from the blocks' ranges read once (the bits slider):
// they must be compute_params' pairs to the bit, for every mode and type, and nothing where compute_params
// does not use stored per-block ranges.
TEST_CASE("params from the blocks' ranges equal compute_params") {
    RandomSpec spec;
    spec.shape = {48, 256};
    spec.seed = 9;
    spec.outliers = 4;
    Tensor t = generate_random(spec);
    for (int i = 0; i < 256; ++i) t.values[static_cast<std::size_t>(5 * 256 + i)] = 0.25f + 0.001f * i;  // an all-positive row
    const TensorView view = view_of(t);
    int checked = 0;
    for (const Granularity g : {Granularity::Channel, Granularity::Group, Granularity::Tensor})
        for (const int axis : {0, 1})
            for (const Mode mode : {Mode::Asymmetric, Mode::Symmetric})
                for (const int bits : {2, 4, 8, 16})
                    for (const bool recompute : {false, true}) {
                        QuantConfig c;
                        c.granularity = g;
                        c.axis = axis;
                        c.group_size = 64;
                        c.mode = mode;
                        c.dtype = IntType{true, bits};
                        c.recompute_scale = recompute;
                        if (g != Granularity::Channel && axis == 1) continue;
                        const std::shared_ptr<const BlockRanges> ranges = block_ranges_for(view, c);
                        REQUIRE(static_cast<bool>(ranges));
                        const QuantParams want = compute_params(view, c);
                        const QuantParams got = params_from_ranges(*ranges, t.shape, c);
                        CHECK(got.block_stride == want.block_stride);
                        CHECK(got.block_count == want.block_count);
                        CHECK(got.scale == want.scale);
                        CHECK(got.zero_point == want.zero_point);
                        // Another layout's ranges are refused, not misread.
                        QuantConfig other = c;
                        other.granularity = g == Granularity::Group ? Granularity::Channel : Granularity::Group;
                        other.axis = 0;
                        CHECK_FALSE(ranges_fit(*ranges, t.shape, other));
                        CHECK_THROWS_AS(params_from_ranges(*ranges, t.shape, other), Error);
                        ++checked;
                    }
    CHECK(checked == (2 + 1 + 1) * 2 * 4 * 2);  // channel on two axes, groups and the tensor on one
    QuantConfig manual;
    manual.mode = Mode::Manual;
    CHECK(!block_ranges_for(view, manual));
    QuantConfig percentile;
    percentile.calibration = Calibration::Percentile;
    CHECK(!block_ranges_for(view, percentile));
    Tensor bad = t;
    bad.values[77] = std::numeric_limits<float>::quiet_NaN();
    QuantConfig channel;
    channel.granularity = Granularity::Channel;
    CHECK_THROWS_AS(block_ranges_for(view_of(bad), channel), Error);
}
