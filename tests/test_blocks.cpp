// One block of a per-channel / per-group layout on its own (what the window's histograms show per block).
#include <doctest/doctest.h>

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
