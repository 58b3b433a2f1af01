// Tensors typed or pasted as a notebook prints them (core/io tensor_text): torch's tensor([[...]]), numpy's
// array([[...]]) and print form, Python lists, keyword suffixes; and the hostile side: elisions, unbalanced
// brackets, ragged rows, depth, NaN, empty lists, a single number, 100 MB of text.
#include <doctest/doctest.h>

#include <string>

#include "quantscope/tensor_text.hpp"
#include "test_helpers.hpp"

namespace {

using qs::test::contains;

qs::Tensor parse(const std::string& text) { return qs::parse_tensor_text(text, "pasted"); }
std::string error(const std::string& text) {
    return qs::test::error_of([&] { parse(text); });
}

}  // namespace

TEST_CASE("tensor text: the forms a notebook prints") {
    const qs::Tensor lesson = parse("tensor([[191.6, -13.5, 728.6],\n     [92.14, 295.5,  -184],\n     [0,     684.6, 245.5]])");
    CHECK(lesson.shape == qs::Shape{3, 3});
    CHECK(lesson.values[2] == 728.6f);
    CHECK(lesson.values[5] == -184.0f);

    const qs::Tensor codes = parse("tensor([[ -15,  -74,  127],\n        [ -44,   14, -123],\n        [ -70,  126,    0]], dtype=torch.int8)");
    CHECK(codes.shape == qs::Shape{3, 3});
    CHECK(codes.values[8] == 0.0f);

    const qs::Tensor repr = parse("array([[1., 2.],\n       [3., 4.]])");
    CHECK(repr.shape == qs::Shape{2, 2});
    CHECK(repr.values[3] == 4.0f);
    const qs::Tensor printed = parse("[[ 1.   -2.5 ]\n [ 3.    4.  ]]");  // print(np_array): no commas
    CHECK(printed.shape == qs::Shape{2, 2});
    CHECK(printed.values[1] == -2.5f);
    CHECK(parse("np.array([1, 2, 3], dtype=np.float32)").shape == qs::Shape{3});
    CHECK(parse("[[191.6, -13.5], [92.14, 295.5]]").shape == qs::Shape{2, 2});
    CHECK(parse("[1, 2, 3,]").shape == qs::Shape{3});  // Python's trailing comma
    const qs::Tensor cube = parse("tensor([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])");
    CHECK(cube.shape == qs::Shape{2, 2, 2});
    CHECK(cube.values[7] == 8.0f);
    CHECK(parse("tensor([1., 2.], device='cuda:0')").shape == qs::Shape{2});
    CHECK(parse("tensor([1., 2.], device='cuda:0', requires_grad=True)").shape == qs::Shape{2});
    CHECK(parse("tensor([0.5, 1.5], grad_fn=<AddBackward0>)").shape == qs::Shape{2});
    const qs::Tensor small = parse("tensor([2.3408e-05, +1e3, -0.])");
    CHECK(small.values[0] == doctest::Approx(2.3408e-05));
    CHECK(small.values[1] == 1000.0f);
    // Not bracketed: rows of numbers, as before.
    CHECK(parse("1, 2\n3, 4\n").shape == qs::Shape{2, 2});
    CHECK(qs::is_bracketed_tensor_text("  tensor ([1])"));
    CHECK(!qs::is_bracketed_tensor_text("1.5, 2"));
}

TEST_CASE("tensor text: elided prints are refused with what to do instead") {
    const std::string torch_elided =
        "tensor([[ 0.1,  0.2,  0.3,  ...,  0.7,  0.8,  0.9],\n        [ 1.0,  1.1,  1.2,  ...,  1.6,  1.7,  1.8]])";
    CHECK(contains(error(torch_elided), "'...' leaves values out"));
    CHECK(contains(error(torch_elided), "np.save"));
    CHECK(contains(error("[[[151.   -51.     0.   ... 133.34 140.58 108.55]\n  ...\n  [1. 2. 3. 4. 5. 6.]]]"), "'...'"));
    CHECK(contains(error("[1, 2, \xE2\x80\xA6, 9]"), "'...'"));  // a typographic ellipsis too
}

TEST_CASE("tensor text: hostile input is one clear error") {
    CHECK(contains(error("[[1, 2], [3, 4]"), "unbalanced brackets: 1 '[' not closed"));
    CHECK(contains(error("[[[1, 2]"), "unbalanced brackets: 2 '[' not closed"));
    CHECK(contains(error("[[1, 2]], [3]]"), "after the tensor"));
    CHECK(contains(error("tensor([[1, 2]]"), "expected ')'"));
    CHECK(contains(error("[[1, 2], [3]]"), "rows of different lengths: this one has 1 item, the first had 2"));
    CHECK(contains(error("[[1, 2], 3]"), "a number where a list was expected"));
    CHECK(contains(error("[1, [2, 3]]"), "a list where a number was expected"));
    CHECK(contains(error("[[[[1]]]]"), "nested deeper than 3 levels"));
    CHECK(contains(error("[nan, 1]"), "'nan' is not a finite number"));
    CHECK(contains(error("tensor([1., inf])"), "'inf' is not a finite number"));
    CHECK(contains(error("[1e39]"), "outside the float32 range"));
    CHECK(contains(error("[1e999]"), "out of range"));
    CHECK(contains(error("[]"), "an empty list"));
    CHECK(contains(error("[[], []]"), "an empty list"));
    CHECK(contains(error("tensor(170.8753)"), "a single number, not a tensor"));
    CHECK(contains(error("[1, , 2]"), "a comma with no value before it"));
    CHECK(contains(error("[1, 2, ,]"), "a comma with no value before it"));
    CHECK(contains(error("[1, 2x]"), "'2x' is not a number"));
    CHECK(contains(error("tensor([1], dtype=(1))"), "unexpected '('"));
    CHECK(contains(error("tensor[1]"), "'tensor[1]' is not a number"));  // not bracketed: read as a table
    // Every message starts with the name and a position.
    CHECK(error("[1, 2").rfind("pasted: at character ", 0) == 0);
}

TEST_CASE("tensor text: 100 MB of text is refused at once and deep nesting is bounded") {
    const std::string huge(100u << 20, '[');
    CHECK(contains(error(huge), "100 MB of text is more than the 32 MB"));
    // Just under the limit, brackets only: refused at the fourth '[' (no recursion, no allocation per level).
    const std::string deep((16u << 20), '[');
    CHECK(contains(error(deep), "nested deeper than 3 levels"));
    // A long row is fine: 2^20 values.
    std::string row = "[";
    for (int i = 0; i < (1 << 20); ++i) row += "1.5, ";
    row += "2]";
    CHECK(parse(row).numel() == (1 << 20) + 1);
}
