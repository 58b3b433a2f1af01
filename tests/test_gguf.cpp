// Reading GGUF (issue 23 item 4): fixtures from tests/gguf_writer.hpp read back by GgufFile, `inspect`,
// `export`, `quantize --tensor` and `sweep`: metadata of every value type, shapes as numpy shows them, and
// values equal to the bytes written (F32/F16/BF16/F64) or to ggml_dequantize of them (quantized types).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "gguf_writer.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/tensor_io.hpp"
#include "test_helpers.hpp"

using namespace qs;
using qs::test::GgufWriter;

namespace {

std::vector<float> random_floats(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = normal(rng);
    return v;
}

std::vector<std::uint16_t> to_f16(const std::vector<float>& v) {
    std::vector<std::uint16_t> out;
    for (const float x : v) {
        std::uint32_t bits;
        std::memcpy(&bits, &x, 4);
        out.push_back(qs::test::half_bits(bits));
    }
    return out;
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
    std::vector<std::uint16_t> out;
    for (const float x : v) {
        std::uint32_t bits;
        std::memcpy(&bits, &x, 4);
        out.push_back(static_cast<std::uint16_t>(bits >> 16));  // truncation: exact for what it keeps
    }
    return out;
}

// ggml_quantize_blocks' bytes for `values`, rows of `row` values.
std::string quantized(const GgmlTypeInfo& type, const std::vector<float>& values) {
    std::string out(static_cast<std::size_t>(ggml_row_bytes(type, static_cast<std::int64_t>(values.size()))), '\0');
    ggml_quantize_blocks(type, values.data(), static_cast<std::int64_t>(values.size()) / type.block_size, nullptr,
                         out.data());
    return out;
}

std::vector<float> dequantized(const GgmlTypeInfo& type, const std::string& bytes, std::size_t n) {
    std::vector<float> out(n);
    ggml_dequantize(type, bytes.data(), static_cast<std::int64_t>(n), out.data());
    return out;
}

const GgmlTypeInfo& type_of(GgmlType t) { return *ggml_type_info(static_cast<std::uint32_t>(t)); }

// Every KV value type, and the four stored float types of one 2x64 tensor each.
struct Fixture {
    std::vector<float> values = random_floats(128, 7);
    std::string bytes;

    Fixture() {
        GgufWriter w;
        w.kv("k.u8", GgufWriter::U8, GgufWriter::le<std::uint8_t>(200))
            .kv("k.i8", GgufWriter::I8, GgufWriter::le<std::int8_t>(-5))
            .kv("k.u16", GgufWriter::U16, GgufWriter::le<std::uint16_t>(60000))
            .kv("k.i16", GgufWriter::I16, GgufWriter::le<std::int16_t>(-30000))
            .kv_u32("k.u32", 4000000000u)
            .kv("k.i32", GgufWriter::I32, GgufWriter::le<std::int32_t>(-2000000000))
            .kv("k.f32", GgufWriter::F32, GgufWriter::le<float>(0.5f))
            .kv("k.bool", GgufWriter::BOOL, GgufWriter::le<std::uint8_t>(1))
            .kv_string("general.name", "tiny \"llama\"")
            .kv("k.u64", GgufWriter::U64, GgufWriter::le<std::uint64_t>(18000000000000000000ull))
            .kv("k.i64", GgufWriter::I64, GgufWriter::le<std::int64_t>(-9000000000000000000ll))
            .kv("k.f64", GgufWriter::F64, GgufWriter::le<double>(-0.25))
            .kv_u32("general.alignment", 64);
        std::string scores;
        for (int i = 0; i < 100; ++i) scores += GgufWriter::le<float>(static_cast<float>(i));
        w.kv("tokenizer.scores", GgufWriter::ARRAY, GgufWriter::array(GgufWriter::F32, 100, scores));
        std::string tokens;
        for (int i = 0; i < 20; ++i) tokens += GgufWriter::str("t" + std::to_string(i));
        w.kv("tokenizer.tokens", GgufWriter::ARRAY, GgufWriter::array(GgufWriter::STRING, 20, tokens));
        const std::string inner = GgufWriter::array(GgufWriter::I32, 2, GgufWriter::le<std::int32_t>(1) + GgufWriter::le<std::int32_t>(2));
        w.kv("k.nested", GgufWriter::ARRAY, GgufWriter::array(GgufWriter::ARRAY, 2, inner + inner));
        w.alignment = 64;
        std::vector<double> f64(values.begin(), values.end());
        w.tensor("f32", {64, 2}, 0, GgufWriter::raw(values))
            .tensor("f16", {64, 2}, 1, GgufWriter::raw(to_f16(values)))
            .tensor("bf16", {64, 2}, 30, GgufWriter::raw(to_bf16(values)))
            .tensor("f64", {64, 2}, 28, GgufWriter::raw(f64))
            .tensor("q8_0", {64, 2}, 8, quantized(type_of(GgmlType::Q8_0), values))
            .tensor("iq2_xxs", {256, 1}, 16, std::string(66, '\0'))
            .tensor("future", {64, 2}, 99, "");
        bytes = w.build();
    }
};

}  // namespace

TEST_CASE("gguf: metadata of every value type and tensor infos read back") {
    const Fixture f;
    const GgufFile file(reinterpret_cast<const std::uint8_t*>(f.bytes.data()), f.bytes.size(), "fixture.gguf");
    CHECK(file.version() == 3);
    CHECK(file.alignment() == 64);
    CHECK(file.data_offset() % 64 == 0);
    const auto shown = [&](const char* key) { return file.find_kv(key)->shown; };
    CHECK(shown("k.u8") == "200");
    CHECK(shown("k.i8") == "-5");
    CHECK(shown("k.u16") == "60000");
    CHECK(shown("k.i16") == "-30000");
    CHECK(shown("k.u32") == "4000000000");
    CHECK(shown("k.i32") == "-2000000000");
    CHECK(shown("k.f32") == "0.5");
    CHECK(shown("k.bool") == "true");
    CHECK(shown("general.name") == "\"tiny \\\"llama\\\"\"");
    CHECK(shown("k.u64") == "18000000000000000000");
    CHECK(shown("k.i64") == "-9000000000000000000");
    CHECK(shown("k.f64") == "-0.25");
    const GgufKv* scores = file.find_kv("tokenizer.scores");
    CHECK(scores->count == 100);
    CHECK(scores->item_type == GgufValueType::F32);
    CHECK(scores->shown == "[0, 1, 2, 3, 4, 5, 6, 7]");
    CHECK(file.find_kv("tokenizer.tokens")->shown == "[\"t0\", \"t1\", \"t2\", \"t3\", \"t4\", \"t5\", \"t6\", \"t7\"]");
    CHECK(file.find_kv("k.nested")->shown == "[[1, 2], [1, 2]]");

    REQUIRE(file.list().size() == 7);
    const GgufTensor& q = *file.find("q8_0");
    CHECK(q.shape() == Shape{2, 64});  // ne {64, 2} reversed
    CHECK(q.bytes == 2 * 2 * 34);
    CHECK(gguf_type_label(q) == "Q8_0");
    CHECK(file.find("future")->type == nullptr);
    CHECK(gguf_type_label(*file.find("future")) == "type 99");
    for (const GgufTensor& t : file.list()) CHECK(t.offset % 64 == 0);
}

TEST_CASE("gguf: stored floats and q8_0 read as their to_float values") {
    const Fixture f;
    const GgufFile file(reinterpret_cast<const std::uint8_t*>(f.bytes.data()), f.bytes.size(), "fixture.gguf");
    const Tensor f32 = file.read("f32");
    CHECK(f32.shape == Shape{2, 64});
    CHECK(f32.values == f.values);
    const Tensor f64 = file.read("f64");
    CHECK(f64.values == f.values);
    const std::vector<std::uint16_t> halves = to_f16(f.values);
    const Tensor f16 = file.read("f16");
    for (std::size_t i = 0; i < halves.size(); ++i) CHECK(f16.values[i] == half_to_float(halves[i]));
    const Tensor bf16 = file.read("bf16");
    for (std::size_t i = 0; i < f.values.size(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &f.values[i], 4);
        bits &= 0xffff0000u;
        float expected;
        std::memcpy(&expected, &bits, 4);
        CHECK(bf16.values[i] == expected);
    }
    const GgmlTypeInfo& q8 = type_of(GgmlType::Q8_0);
    CHECK(file.read("q8_0").values == dequantized(q8, quantized(q8, f.values), f.values.size()));
}

TEST_CASE("gguf: a type that does not decode is refused by name") {
    const Fixture f;
    const GgufFile file(reinterpret_cast<const std::uint8_t*>(f.bytes.data()), f.bytes.size(), "fixture.gguf");
    CHECK_THROWS_WITH(file.read("iq2_xxs"), doctest::Contains("tensor 'iq2_xxs' has type IQ2_XXS, which QuantScope cannot decode"));
    CHECK_THROWS_WITH(file.read("future"), doctest::Contains("tensor 'future' has type id 99, which ggml does not define"));
    CHECK_THROWS_WITH(file.read("nope"), doctest::Contains("no tensor named 'nope'"));
}

TEST_CASE("gguf: inspect export quantize and sweep open a .gguf like a .safetensors") {
    const Fixture f;
    qs::test::TempDir dir;
    const std::string path = dir / "m.gguf";
    qs::test::write_bytes(path, f.bytes);

    qs::test::Run r = qs::test::run("inspect " + qs::test::shell_quote(path), dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "GGUF v3, alignment 64"));
    CHECK(qs::test::contains(r.out, "array[f32]     (100) [0, 1, 2, 3, 4, 5, 6, 7]"));
    CHECK(qs::test::contains(r.out, "Q8_0"));
    CHECK(qs::test::contains(r.out, "type 99"));

    r = qs::test::run("inspect --json " + qs::test::shell_quote(path), dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "{\"name\": \"q8_0\", \"dtype\": \"Q8_0\", \"type_id\": 8, \"shape\": [2, 64]"));
    CHECK(qs::test::contains(r.out, "\"bits_per_weight\": 8.5"));
    CHECK(qs::test::contains(r.out, "\"key\": \"tokenizer.tokens\", \"type\": \"array\", \"item_type\": \"string\", \"count\": 20"));

    for (const char* name : {"f32", "f16", "bf16", "f64", "q8_0"}) {
        const std::string out = dir / (std::string(name) + ".npy");
        r = qs::test::run("export " + qs::test::shell_quote(path) + " --tensor " + name + " --out " + qs::test::shell_quote(out), dir);
        REQUIRE(r.exit_code == 0);
        const GgufFile file(path);
        const Tensor exported = read_npy(out);
        CHECK(exported.shape == Shape{2, 64});
        CHECK(exported.values == file.read(name).values);
        CHECK(load_tensor(path, name).values == exported.values);
    }

    // --codes: q8_0's int8 codes as its blocks store them.
    const std::string values = dir / "v.npy", codes = dir / "c.npy";
    r = qs::test::run("export " + qs::test::shell_quote(path) + " --tensor q8_0 --out " + qs::test::shell_quote(values) +
                          " --codes " + qs::test::shell_quote(codes),
                      dir);
    REQUIRE(r.exit_code == 0);
    const std::string code_file = qs::test::read_bytes(codes);
    CHECK(qs::test::contains(code_file, "'descr': '|i1'"));
    const GgmlTypeInfo& q8 = type_of(GgmlType::Q8_0);
    const std::string blocks = quantized(q8, f.values);
    const std::string stored = code_file.substr(code_file.size() - 128);
    for (int b = 0; b < 4; ++b)
        for (int k = 0; k < 32; ++k)
            CHECK(static_cast<std::int8_t>(stored[b * 32 + k]) == static_cast<std::int8_t>(blocks[b * 34 + 2 + k]));

    // --codes of a stored float type: refused, nothing written.
    const std::string refused = dir / "r.npy";
    r = qs::test::run("export " + qs::test::shell_quote(path) + " --tensor f32 --out " + qs::test::shell_quote(refused) +
                          " --codes " + qs::test::shell_quote(dir / "rc.npy"),
                      dir);
    CHECK(r.exit_code == 2);
    CHECK(qs::test::contains(r.err, "stores values, not codes"));
    CHECK(!std::filesystem::exists(refused));

    r = qs::test::run("quantize " + qs::test::shell_quote(path) + " --tensor q8_0 --dtype int8", dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "\"shape\": [2, 64]"));

    r = qs::test::run("sweep --csv " + qs::test::shell_quote(path), dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "\nq8_0,2x64,Q8_0,128,"));
    CHECK(qs::test::contains(r.out, "\nbf16,2x64,BF16,128,"));
    CHECK(!qs::test::contains(r.out, "iq2_xxs"));  // no row for a type QuantScope cannot read
    CHECK(!qs::test::contains(r.out, "future"));
}

TEST_CASE("gguf: export reads one tensor of a .safetensors file and a sharded index") {
    const std::vector<float> v = random_floats(6, 3);
    const std::string shard = qs::test::safetensors_file(
        "{\"w\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]}}", GgufWriter::raw(v));
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "a.safetensors", shard);
    qs::test::write_bytes(dir / "m.safetensors.index.json", "{\"weight_map\": {\"w\": \"a.safetensors\"}}");
    for (const char* input : {"a.safetensors", "m.safetensors.index.json"}) {
        const std::string out = dir / "w.npy";
        const qs::test::Run r =
            qs::test::run("export " + qs::test::shell_quote(dir / input) + " --tensor w --out " + qs::test::shell_quote(out), dir);
        REQUIRE(r.exit_code == 0);
        CHECK(read_npy(out).values == v);
        std::filesystem::remove(out);
    }
}

// Every type QuantScope quantizes: ggml_quantize_blocks' bytes in a GGUF fixture come back from `export` as
// ggml_dequantize's values, and `--codes` as ggml_block_fields' codes (int8, or uint8 where every code is >= 0).
TEST_CASE("gguf: quantized blocks round trip through a GGUF file and export for every type") {
    const std::vector<float> values = random_floats(2 * 512, 11);
    GgufWriter w;
    std::vector<const GgmlTypeInfo*> types;
    for (std::uint32_t id = 0; id < 64; ++id) {
        const GgmlTypeInfo* t = ggml_type_info(id);
        if (t == nullptr || !t->quantizes) continue;
        types.push_back(t);
        w.tensor(t->name, {512, 2}, id, quantized(*t, values));
    }
    REQUIRE(types.size() >= 14);
    qs::test::TempDir dir;
    const std::string path = dir / "q.gguf";
    qs::test::write_bytes(path, w.build());
    for (const GgmlTypeInfo* t : types) {
        INFO(t->name);
        const std::string out = dir / "v.npy", codes = dir / "c.npy";
        const qs::test::Run r = qs::test::run("export " + qs::test::shell_quote(path) + " --tensor " + t->name + " --out " +
                                                  qs::test::shell_quote(out) + " --codes " + qs::test::shell_quote(codes),
                                              dir);
        REQUIRE(r.exit_code == 0);
        const std::string blocks = quantized(*t, values);
        CHECK(read_npy(out).values == dequantized(*t, blocks, values.size()));
        std::vector<std::int32_t> expected;
        for (std::size_t b = 0; b < values.size() / static_cast<std::size_t>(t->block_size); ++b) {
            GgmlBlockFields fields;
            ggml_block_fields(*t, blocks.data() + b * static_cast<std::size_t>(t->type_size), fields);
            expected.insert(expected.end(), fields.codes, fields.codes + t->block_size);
        }
        const std::string file = qs::test::read_bytes(codes);
        const bool is_signed = qs::test::contains(file, "'descr': '|i1'");
        const std::string stored = file.substr(file.size() - expected.size());
        bool any_negative = false;
        for (std::size_t i = 0; i < expected.size(); ++i) {
            any_negative = any_negative || expected[i] < 0;
            const int code = is_signed ? static_cast<std::int8_t>(stored[i]) : static_cast<std::uint8_t>(stored[i]);
            if (code != expected[i]) {
                CHECK(code == expected[i]);
                break;
            }
        }
        if (any_negative) CHECK(is_signed);
        std::filesystem::remove(out);
        std::filesystem::remove(codes);
    }
}
