// The ggml codec rows through the command line (FORMATS.md "llama.cpp (ggml) types"): every type's JSON,
// codes, packed blocks and dequantized values against the codec called directly (ggml_types.hpp), the
// importance vector switching the quantizer, and the refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "gguf_writer.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/npy.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

JsonValue parse(const std::string& text) { return parse_json(text, "output"); }

// A float32 .npy of `values` with `shape` (any value: NaN too).
void write_npy(const std::string& path, const Shape& shape, const std::vector<float>& values) {
    std::string bytes = npy_header_bytes("<f4", shape);
    bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    test::write_bytes(path, bytes);
}

// The last n items of an .npy file.
template <class T>
std::vector<T> npy_tail(const std::string& path, std::size_t n) {
    const std::string bytes = test::read_bytes(path);
    std::vector<T> out(n);
    std::memcpy(out.data(), bytes.data() + bytes.size() - n * sizeof(T), n * sizeof(T));
    return out;
}

// Normal values with a few outliers, rows x cols.
std::vector<float> test_values(std::int64_t rows, std::int64_t cols, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = normal(rng) * (i % 97 == 5 ? 25.0f : 1.0f);
    return v;
}

std::vector<float> test_importance(std::int64_t cols, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 4.0f);
    std::vector<float> w(static_cast<std::size_t>(cols));
    for (float& x : w) x = u(rng) * u(rng);
    w[3] = 0;  // a column that does not matter
    return w;
}

// ggml_quantize_blocks row by row, with importance (and each row's sum of squares) where given.
std::string codec_bytes(const GgmlTypeInfo& type, const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                        const std::vector<float>* importance) {
    std::string bytes(static_cast<std::size_t>(ggml_row_bytes(type, cols) * rows), '\0');
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * cols;
        GgmlImportance weights{importance ? importance->data() : nullptr, ggml_row_sum_squares(row, cols), cols};
        ggml_quantize_blocks(type, row, cols / type.block_size, importance ? &weights : nullptr,
                             bytes.data() + r * ggml_row_bytes(type, cols));
    }
    return bytes;
}

struct TypeCase {
    const char* dtype;  // as a user may spell it
    double bits_per_weight;
    bool stores_min;
    bool signed_codes;
    int sub_blocks;     // per block, 0 where none
};

constexpr TypeCase kTypes[] = {
    {"q8_0", 8.5, false, true, 0},     {"q4_0", 4.5, false, false, 0},   {"Q4_1", 5.0, true, false, 0},
    {"q5_0", 5.5, false, false, 0},    {"Q5_1", 6.0, true, false, 0},    {"q2_K", 2.625, true, false, 16},
    {"q3_k", 3.4375, false, true, 16}, {"Q4_K", 4.5, true, false, 8},    {"q5_k", 5.5, true, false, 8},
    {"q6_k", 6.5625, false, true, 16}, {"IQ4_NL", 4.5, false, false, 0}, {"iq4_xs", 4.25, false, false, 8},
    {"tq1_0", 1.6875, false, true, 0}, {"TQ2_0", 2.0625, false, true, 0},
};

}  // namespace

TEST_CASE("ggml rows cli: every type's JSON codes packed blocks and dequantized values are its codec's") {
    test::TempDir dir;
    const std::int64_t rows = 3, cols = 512;
    const std::vector<float> x = test_values(rows, cols, 7);
    write_npy(dir / "x.npy", {rows, cols}, x);
    for (const TypeCase& t : kTypes) {
        CAPTURE(std::string(t.dtype));
        const GgmlTypeInfo& type = *ggml_type_named(t.dtype);
        const test::Run r = test::run("quantize " + test::shell_quote(dir / "x.npy") + " --dtype " + t.dtype +
                                          " --all-params --out-quantized " + test::shell_quote(dir / "q.npy") +
                                          " --out-packed " + test::shell_quote(dir / "p.bin") + " --out-dequantized " +
                                          test::shell_quote(dir / "d.npy"),
                                      dir);
        REQUIRE(r.exit_code == 0);
        const JsonValue doc = parse(r.out);
        const std::int64_t blocks = rows * cols / type.block_size;
        CHECK(doc.find("format_kind")->text == "block");
        CHECK(doc.find("block_size")->number == type.block_size);
        CHECK(doc.find("bits_per_weight")->number == t.bits_per_weight);
        CHECK(doc.find("bytes")->number == static_cast<double>(blocks * type.type_size));
        CHECK(doc.find("scale")->items.size() == static_cast<std::size_t>(blocks));
        CHECK(doc.find("zero_point")->items.size() == (t.stores_min ? static_cast<std::size_t>(blocks) : 0u));

        // The packed file is the codec's blocks; r' its to_float; the codes and scales its fields.
        const std::string want = codec_bytes(type, x, rows, cols, nullptr);
        const std::string packed = test::read_bytes(dir / "p.bin");
        REQUIRE(packed == want);
        std::vector<float> deq(x.size());
        ggml_dequantize(type, want.data(), static_cast<std::int64_t>(x.size()), deq.data());
        const std::vector<float> got = npy_tail<float>(dir / "d.npy", x.size());
        if (type.type == GgmlType::Q8_0 || type.type == GgmlType::Q4_0 || type.type == GgmlType::Q4_1)
            CHECK(got == deq);  // the first three rows dequantize a zero code to +0 (FORMATS.md "ggml")
        else
            CHECK(std::memcmp(got.data(), deq.data(), deq.size() * sizeof(float)) == 0);  // bit for bit, -0 too
        CHECK(test::contains(test::read_bytes(dir / "q.npy"), t.signed_codes ? "'|i1'" : "'|u1'"));
        std::vector<std::int32_t> codes(x.size()), sub_scales;
        std::vector<double> scales;
        GgmlBlockFields f;
        for (std::int64_t b = 0; b < blocks; ++b) {
            ggml_block_fields(type, want.data() + b * type.type_size, f);
            std::copy_n(f.codes, type.block_size, codes.begin() + b * type.block_size);
            scales.push_back(f.d);
            sub_scales.insert(sub_scales.end(), f.sub_scale, f.sub_scale + f.sub_blocks);
            CHECK(f.sub_blocks == t.sub_blocks);
        }
        if (t.signed_codes) {
            const std::vector<std::int8_t> q = npy_tail<std::int8_t>(dir / "q.npy", x.size());
            CHECK(std::vector<std::int32_t>(q.begin(), q.end()) == codes);
        } else {
            const std::vector<std::uint8_t> q = npy_tail<std::uint8_t>(dir / "q.npy", x.size());
            CHECK(std::vector<std::int32_t>(q.begin(), q.end()) == codes);
        }
        for (std::int64_t b = 0; b < blocks; ++b) CHECK(doc.find("scale")->items[b].number == scales[b]);
        if (t.sub_blocks > 0) {
            REQUIRE(doc.find("sub_scales") != nullptr);
            CHECK(doc.find("sub_scales")->items.size() == sub_scales.size());
            for (std::size_t k = 0; k < sub_scales.size(); ++k) CHECK(doc.find("sub_scales")->items[k].number == sub_scales[k]);
            CHECK((doc.find("sub_mins") != nullptr) == t.stores_min);
        } else {
            CHECK(doc.find("sub_scales") == nullptr);
        }
    }
}

TEST_CASE("ggml rows cli: importance switches the weighted types to their weighted quantizer bit for bit") {
    test::TempDir dir;
    // Rows of 256 (a chunk of 4096 spans 16 rows) and rows of 8192 (a row spans two chunks).
    for (const std::int64_t cols : {std::int64_t{256}, std::int64_t{8192}}) {
        const std::int64_t rows = 4096 * 3 / cols + 1;
        const std::vector<float> x = test_values(rows, cols, 11), w = test_importance(cols, 12);
        write_npy(dir / "x.npy", {rows, cols}, x);
        write_npy(dir / "w.npy", {cols}, w);
        for (const TypeCase& t : kTypes) {
            CAPTURE(std::string(t.dtype));
            CAPTURE(cols);
            const GgmlTypeInfo& type = *ggml_type_named(t.dtype);
            const std::string base = "quantize " + test::shell_quote(dir / "x.npy") + " --dtype " + t.dtype +
                                     " --out-packed " + test::shell_quote(dir / "p.bin") + " --out-dequantized " +
                                     test::shell_quote(dir / "d.npy");
            const test::Run r = test::run(base + " --importance " + test::shell_quote(dir / "w.npy"), dir);
            REQUIRE(r.exit_code == 0);
            const std::string want = codec_bytes(type, x, rows, cols, &w);
            CHECK(test::read_bytes(dir / "p.bin") == want);
            std::vector<float> deq(x.size());
            ggml_dequantize(type, want.data(), static_cast<std::int64_t>(x.size()), deq.data());
            CHECK(npy_tail<float>(dir / "d.npy", x.size()) == deq);  // == : the first three rows' +0
            // Σ w e² / Σ w per row, averaged over the rows.
            double mean = 0;
            for (std::int64_t row = 0; row < rows; ++row) {
                double we = 0, ws = 0;
                for (std::int64_t c = 0; c < cols; ++c) {
                    const auto i = static_cast<std::size_t>(row * cols + c);
                    const double e = std::fabs(x[i] - deq[i]);
                    we += w[static_cast<std::size_t>(c)] * e * e, ws += w[static_cast<std::size_t>(c)];
                }
                mean += we / ws / static_cast<double>(rows);
            }
            const JsonValue doc = parse(r.out);
            REQUIRE(doc.find("importance_weighted_mse") != nullptr);
            CHECK(doc.find("importance_weighted_mse")->number == doctest::Approx(mean).epsilon(1e-12));
            // The weighted quantizer gives other blocks than the reference one; q8_0 and tq* ignore importance.
            REQUIRE(test::run(base, dir).exit_code == 0);
            CHECK((test::read_bytes(dir / "p.bin") != want) == type.takes_importance);
        }
    }
}

TEST_CASE("ggml rows cli: a bad importance or a row length off the block is one line and exit 2") {
    test::TempDir dir;
    const std::vector<float> x = test_values(2, 256, 3);
    write_npy(dir / "x.npy", {2, 256}, x);
    std::vector<float> nan = test_importance(256, 1), negative = nan, zero(256, 0.0f);
    nan[9] = NAN;
    negative[200] = -1;
    write_npy(dir / "short.npy", {255}, test_importance(255, 1));
    write_npy(dir / "nan.npy", {256}, nan);
    write_npy(dir / "negative.npy", {256}, negative);
    write_npy(dir / "zero.npy", {256}, zero);
    write_npy(dir / "matrix.npy", {2, 256}, x);
    const std::pair<const char*, const char*> cases[] = {
        {"short.npy", "255 weights for 256 columns"},
        {"nan.npy", "NaN"},
        {"negative.npy", "negative"},
        {"zero.npy", "0 in every column"},
        {"matrix.npy", "rank 1"},
        {"missing.npy", "missing.npy"},
    };
    for (const auto& [file, why] : cases) {
        for (const char* dtype : {"q4_K", "int8"}) {
            CAPTURE(std::string(file));
            CAPTURE(std::string(dtype));
            const test::Run r = test::run("quantize " + test::shell_quote(dir / "x.npy") + " --dtype " + dtype +
                                              " --importance " + test::shell_quote(dir / file) + " --out-packed " +
                                              test::shell_quote(dir / "p.bin"),
                                          dir);
            CHECK(r.exit_code == 2);
            CHECK(test::one_line(r.err));
            CHECK(test::contains(r.err, file));
            CHECK(test::contains(r.err, why));
            CHECK_FALSE(std::filesystem::exists(dir / "p.bin"));
        }
    }
    for (const char* dtype : {"q5_0", "q5_1", "iq4_nl"}) {
        const test::Run r = test::run(std::string("quantize --random normal --shape 2x48 --dtype ") + dtype, dir);
        CHECK(r.exit_code == 2);
        CHECK(test::one_line(r.err));
        CHECK(test::contains(r.err, std::string(dtype) + ": its block of 32 elements must divide the last axis (48)"));
    }
    for (const char* dtype : {"q2_k", "q6_k", "iq4_xs", "tq1_0", "tq2_0"}) {
        const test::Run r = test::run(std::string("quantize --random normal --shape 2x384 --dtype ") + dtype, dir);
        CHECK(r.exit_code == 2);
        CHECK(test::one_line(r.err));
        CHECK(test::contains(r.err, std::string(dtype) + ": its block of 256 elements must divide the last axis (384)"));
    }
}

TEST_CASE("ggml rows cli: --imatrix reads llama-imatrix's GGUF as --importance reads its .npy") {
    test::TempDir dir;
    const std::vector<float> x = test_values(3, 256, 5);
    write_npy(dir / "x.npy", {3, 256}, x);
    // in_sum2 / counts with a count of 4: powers of two, so the quotient is the weights exactly.
    const std::vector<float> w = test_importance(256, 2);
    std::vector<float> sums;
    for (const float v : w) sums.push_back(v * 4.0f);
    write_npy(dir / "w.npy", {256}, w);
    test::GgufWriter im;
    im.tensor("blk.0.ffn_up.weight.in_sum2", {256, 1}, 0, test::GgufWriter::raw(sums))
        .tensor("blk.0.ffn_up.weight.counts", {1, 1}, 0, test::GgufWriter::raw(std::vector<float>{4.0f}))
        .tensor("experts.in_sum2", {256, 2}, 0, test::GgufWriter::raw(std::vector<float>(512, 1.0f)))
        .tensor("experts.counts", {1, 2}, 0, test::GgufWriter::raw(std::vector<float>{1.0f, 1.0f}));
    test::write_bytes(dir / "im.gguf", im.build());
    const std::string base = "quantize " + test::shell_quote(dir / "x.npy") + " --dtype q4_K --out-packed ";
    const test::Run by_npy = test::run(base + test::shell_quote(dir / "a.bin") + " --importance " + test::shell_quote(dir / "w.npy"), dir);
    const test::Run by_gguf = test::run(base + test::shell_quote(dir / "b.bin") + " --imatrix " +
                                            test::shell_quote(dir / "im.gguf") + " --imatrix-tensor blk.0.ffn_up.weight",
                                        dir);
    REQUIRE(by_npy.exit_code == 0);
    REQUIRE(by_gguf.exit_code == 0);
    CHECK(test::read_bytes(dir / "a.bin") == test::read_bytes(dir / "b.bin"));
    CHECK(by_npy.out == by_gguf.out);
    CHECK(test::contains(by_gguf.out, "importance_weighted_mse"));

    const std::pair<std::string, const char*> refused[] = {
        {" --imatrix " + test::shell_quote(dir / "im.gguf"), "go together"},
        {" --imatrix-tensor blk.0.ffn_up.weight", "go together"},
        {" --imatrix " + test::shell_quote(dir / "im.gguf") + " --imatrix-tensor other.weight", "other.weight.in_sum2"},
        {" --imatrix " + test::shell_quote(dir / "im.gguf") + " --imatrix-tensor experts", "merged experts"},
        {" --imatrix " + test::shell_quote(dir / "im.gguf") + " --imatrix-tensor blk.0.ffn_up.weight --importance " +
             test::shell_quote(dir / "w.npy"),
         "not both"},
    };
    for (const auto& [options, why] : refused) {
        CAPTURE(options);
        const test::Run r = test::run(base + test::shell_quote(dir / "c.bin") + options, dir);
        CHECK(r.exit_code == 2);
        CHECK(test::contains(r.err, why));
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(!std::filesystem::exists(dir / "c.bin"));
    }
}
