// read_gguf_imatrix: llama-imatrix's NAME.in_sum2 / NAME.counts as one importance per column (per matrix for
// merged experts), and the lies it refuses with one message naming the file and the tensor.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "gguf_writer.hpp"
#include "quantscope/gguf_imatrix.hpp"
#include "test_helpers.hpp"

using qs::test::GgufWriter;

namespace {

std::string imatrix(const std::vector<float>& sums, std::uint64_t columns, const std::vector<float>& counts) {
    GgufWriter w;
    w.kv_string("general.type", "imatrix");
    w.tensor("blk.0.ffn_up.weight.in_sum2", {columns, sums.size() / columns}, 0, GgufWriter::raw(sums))
        .tensor("blk.0.ffn_up.weight.counts", {1, counts.size()}, 0, GgufWriter::raw(counts));
    return w.build();
}

}  // namespace

TEST_CASE("gguf imatrix: in_sum2 over counts per matrix and 1 for a matrix that saw nothing") {
    qs::test::TempDir dir;
    const std::string path = dir / "imatrix.gguf";
    qs::test::write_bytes(path, imatrix({2, 4, 6, 8, 1, 3, 5, 7, 9, 9, 9, 9}, 4, {2, 4, 0}));
    const qs::GgufImportance im = qs::read_gguf_imatrix(path, "blk.0.ffn_up.weight", 4);
    CHECK(im.columns == 4);
    CHECK(im.matrices == 3);
    CHECK(im.weights == std::vector<float>{1, 2, 3, 4, 0.25f, 0.75f, 1.25f, 1.75f, 1, 1, 1, 1});
}

TEST_CASE("gguf imatrix: a length that does not match NaN and negative values are refused") {
    qs::test::TempDir dir;
    const std::string path = dir / "imatrix.gguf";
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const auto refused = [&](const std::string& bytes, std::int64_t columns, const char* message) {
        qs::test::write_bytes(path, bytes);
        const std::string expected = path + ": tensor 'blk.0.ffn_up.weight." + message;
        CHECK_THROWS_WITH(qs::read_gguf_imatrix(path, "blk.0.ffn_up.weight", columns), doctest::Contains(expected.c_str()));
    };
    refused(imatrix({1, 2, 3, 4}, 4, {1}), 8, "in_sum2': 4 columns, the weight has 8");
    refused(imatrix({1, 2, 3, 4}, 2, {1}), 2, "counts': 1 counts for 2 matrices");
    refused(imatrix({1, nan, 3, 4}, 4, {1}), 4, "in_sum2': value 1 is NaN");
    refused(imatrix({1, 2, -3, 4}, 4, {1}), 4, "in_sum2': value 2 is -3");
    refused(imatrix({1, 2, 3, 4}, 4, {nan}), 4, "counts': count 0 is NaN");
    refused(imatrix({1, 2, 3, 4}, 4, {-1}), 4, "counts': count 0 is -1");
    // Denormals: a negative one was printed by std::to_string as -0.000000 (a count that looked allowed), and a
    // positive count's quotient past float32's range was blamed on its sum ("value 0 is 1.000000").
    refused(imatrix({1, 2, 3, 4}, 4, {-1e-40f}), 4, "counts': count 0 is -1e-40 (must be finite and >= 0)");
    refused(imatrix({1, 2, -1e-40f, 4}, 4, {1}), 4, "in_sum2': value 2 is -1e-40 (importance must be");
    refused(imatrix({1, 2, 3, 4}, 4, {1e-40f}), 4, "in_sum2': value 0 over count 0 (1 / 1e-40) is beyond float32's range");
    refused(imatrix({}, 4, {}), 4, "in_sum2': holds no values (shape 0x4)");
    qs::test::write_bytes(path, imatrix({1, 2, 3, 4}, 4, {1}));
    CHECK_THROWS_WITH(qs::read_gguf_imatrix(path, "other.weight", 4), doctest::Contains("'other.weight.in_sum2': not in the file"));
}
