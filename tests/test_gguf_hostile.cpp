// GGUF files that lie (issue 23, "Hostile input"): each is refused by `inspect` and `export` with one line naming
// the file and the field, exit 2, nothing written; none costs more than the file's own size in time or memory.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "gguf_writer.hpp"
#include "test_helpers.hpp"

using qs::test::contains;
using qs::test::GgufWriter;
using qs::test::Run;
using qs::test::run;
using qs::test::shell_quote;
using qs::test::TempDir;

namespace {

// Two F32 tensors of 2x32 values: a well-formed file the cases below break one field of.
GgufWriter two_tensors() {
    GgufWriter w;
    w.kv_string("general.architecture", "llama");
    w.tensor("a", {32, 2}, 0, std::string(256, '\1')).tensor("b", {32, 2}, 0, std::string(256, '\2'));
    return w;
}

// `bytes` as a .gguf: inspect (and export of tensor `tensor`) exit 2 with one line naming the file and `field`.
void check_refused(const std::string& bytes, const std::string& field, const std::string& tensor = "a",
                   bool inspect_refuses = true) {
    TempDir dir;
    const std::string path = dir / "hostile.gguf";
    qs::test::write_bytes(path, bytes);
    const std::string out = dir / "out.npy";
    std::vector<std::string> commands = {"export " + shell_quote(path) + " --tensor " + tensor + " --out " + shell_quote(out),
                                         "quantize " + shell_quote(path) + " --tensor " + tensor};
    if (inspect_refuses) {  // a header that lies stops sweep too; a tensor that cannot be read only gets no row
        commands.push_back("sweep " + shell_quote(path));
        commands.push_back("inspect " + shell_quote(path));
        commands.push_back("inspect --json " + shell_quote(path));
    }
    for (const std::string& command : commands) {
        const Run r = run(command, dir, "", 0, 10);
        INFO(command, " -> ", r.err);
        CHECK(r.exit_code == 2);
        CHECK(qs::test::one_line(r.err));
        CHECK(contains(r.err, path));
        CHECK(contains(r.err, field));
        CHECK(r.out.empty());
        CHECK(!std::filesystem::exists(out));
    }
}

std::string with_u64_at(std::string bytes, std::size_t at, std::uint64_t value) {
    bytes.replace(at, 8, GgufWriter::le(value));
    return bytes;
}

}  // namespace

TEST_CASE("gguf hostile: the well-formed base file opens") {
    TempDir dir;
    qs::test::write_bytes(dir / "ok.gguf", two_tensors().build());
    CHECK(run("inspect " + shell_quote(dir / "ok.gguf"), dir).exit_code == 0);
    CHECK(run("export " + shell_quote(dir / "ok.gguf") + " --tensor b --out " + shell_quote(dir / "b.npy"), dir).exit_code == 0);
}

TEST_CASE("gguf hostile: a truncated file") {
    const std::string whole = two_tensors().build();
    check_refused(whole.substr(0, 10), "tensor count");
    check_refused(whole.substr(0, 40), "KV 0 key");                        // inside the key
    check_refused(whole.substr(0, 60), "KV 'general.architecture'");       // inside its value
    check_refused(whole.substr(0, whole.size() - 300), "tensor 'a'");   // the data section cut short
    check_refused(whole.substr(0, whole.size() - 1), "tensor 'b'");
}

TEST_CASE("gguf hostile: counts of 2^60") {
    const std::string whole = two_tensors().build();
    check_refused(with_u64_at(whole, 8, std::uint64_t{1} << 60), "tensor count");
    check_refused(with_u64_at(whole, 16, std::uint64_t{1} << 60), "KV count");
}

TEST_CASE("gguf hostile: a string length past the file") {
    const std::string whole = two_tensors().build();
    check_refused(with_u64_at(whole, 24, std::uint64_t{1} << 62), "KV 0 key");
    GgufWriter w;
    w.kv("k", GgufWriter::STRING, GgufWriter::le<std::uint64_t>(1000) + "short");
    check_refused(w.build(), "KV 'k'");
}

// A 100 MB key or tensor name (the file holds it) was read and copied into every listing and row: compare of
// such a file with itself took 1 GB. The GGUF spec bounds a key at 65535 bytes, ggml a name under 64.
TEST_CASE("gguf hostile: a key or tensor name of megabytes") {
    GgufWriter key = two_tensors();
    key.kv_string(std::string(65536, 'k'), "v");
    check_refused(key.build(), "KV 1 key: 65536 bytes, longer than GGUF's 65535 for a key");
    GgufWriter name = two_tensors();
    name.tensor(std::string(1 << 20, 'n'), {32}, 0, std::string(128, '\0'));
    check_refused(name.build(), "tensor 2 name: 1048576 bytes, longer than the 4096 QuantScope reads");
    GgufWriter longest = two_tensors();
    longest.kv_string(std::string(65535, 'k'), "v").tensor(std::string(4096, 'n'), {32}, 0, std::string(128, '\0'));
    TempDir dir;
    qs::test::write_bytes(dir / "ok.gguf", longest.build());
    CHECK(run("inspect " + shell_quote(dir / "ok.gguf"), dir).exit_code == 0);
}

TEST_CASE("gguf hostile: tensor offsets past the end unaligned or overlapping") {
    GgufWriter past = two_tensors();
    past.tensor("c", {32, 1}, 0, "", std::uint64_t{1} << 40);
    check_refused(past.build(), "tensor 'c': offset 1099511627776");
    GgufWriter unaligned = two_tensors();
    unaligned.tensor("c", {32, 1}, 0, std::string(128, '\0'), 520);
    check_refused(unaligned.build(), "tensor 'c': offset 520 is not a multiple of the alignment 32");
    GgufWriter overlap;
    overlap.tensor("a", {32, 2}, 0, std::string(256, '\1')).tensor("b", {32, 2}, 0, std::string(256, '\2'), 128);
    check_refused(overlap.build(), "tensor 'b': overlaps tensor 'a'");
}

TEST_CASE("gguf hostile: an element count that overflows and a row that is not whole blocks") {
    GgufWriter big;
    big.tensor("a", {std::uint64_t{1} << 32, std::uint64_t{1} << 32}, 0, "");
    check_refused(big.build(), "tensor 'a': the element count of ne [4294967296, 4294967296] overflows");
    GgufWriter negative;
    negative.tensor("a", {~std::uint64_t{0}}, 0, "");
    check_refused(negative.build(), "overflows");
    GgufWriter rows;
    rows.tensor("a", {48, 2}, 8, std::string(102, '\0'));  // q8_0: blocks of 32
    check_refused(rows.build(), "tensor 'a': a row of 48 values is not a multiple of Q8_0's block of 32");
    GgufWriter dims;
    dims.tensor("a", {1, 1, 1, 1, 1}, 0, std::string(4, '\0'));
    check_refused(dims.build(), "tensor 'a': 5 dimensions");
}

TEST_CASE("gguf hostile: an unknown type id is listed and refused when opened") {
    GgufWriter w;
    w.tensor("a", {32, 2}, 77, "");
    TempDir dir;
    qs::test::write_bytes(dir / "u.gguf", w.build());
    const Run listed = run("inspect " + shell_quote(dir / "u.gguf"), dir);
    CHECK(listed.exit_code == 0);
    CHECK(contains(listed.out, "type 77"));
    check_refused(w.build(), "tensor 'a' has type id 77, which ggml does not define", "a", false);
    GgufWriter lattice;
    lattice.tensor("a", {256, 1}, 19, std::string(50, '\0'));  // iq1_s: listed, not decoded
    check_refused(lattice.build(), "tensor 'a' has type IQ1_S", "a", false);
}

TEST_CASE("gguf hostile: an alignment of 0 or not a power of two") {
    for (const std::uint32_t alignment : {0u, 3u, 48u}) {
        GgufWriter w = two_tensors();
        w.kv_u32("general.alignment", alignment);
        check_refused(w.build(), "KV 'general.alignment'");
    }
    GgufWriter wrong_type = two_tensors();
    wrong_type.kv("general.alignment", GgufWriter::U64, GgufWriter::le<std::uint64_t>(32));
    check_refused(wrong_type.build(), "must be a u32");
}

TEST_CASE("gguf hostile: arrays nested 1000 deep") {
    std::string value;
    for (int depth = 0; depth < 1000; ++depth) value += GgufWriter::le<std::uint32_t>(GgufWriter::ARRAY) + GgufWriter::le<std::uint64_t>(1);
    value += GgufWriter::le<std::uint32_t>(GgufWriter::U8) + GgufWriter::le<std::uint64_t>(0);
    GgufWriter w;
    w.kv("deep", GgufWriter::ARRAY, value);
    check_refused(w.build(), "KV 'deep': arrays nested more than 8 deep");
}

TEST_CASE("gguf hostile: version 1 and a big-endian file are refused by name") {
    GgufWriter v1 = two_tensors();
    v1.version = 1;
    check_refused(v1.build(), "version: GGUF version 1");
    GgufWriter big_endian = two_tensors();
    big_endian.version = 0x03000000u;
    check_refused(big_endian.build(), "version: a big-endian GGUF file");
    check_refused("GGUX" + two_tensors().build().substr(4), "magic");
}

TEST_CASE("gguf hostile: a file that shrinks while it is mapped") {
    TempDir dir;
    const std::string path = dir / "shrinks.gguf";
    for (const char* command : {"inspect", "export"}) {
        qs::test::write_bytes(path, two_tensors().build());
        const std::string victim = std::filesystem::canonical(path).string();
        const std::string args = std::string(command) + " " + shell_quote(path) +
                                 (std::string(command) == "export" ? " --tensor a --out " + shell_quote(dir / "o.npy") : "");
        const Run r = run(args, dir,
                          "LD_PRELOAD=" + shell_quote(QS_SHRINK_ON_MAP) + " QS_SHRINK_ON_MAP=" + shell_quote(victim) +
                              " ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"");
        CHECK(r.exit_code == 2);
        CHECK(qs::test::one_line(r.err));
        CHECK(contains(r.err, "the file shrank while it was being read"));
        CHECK(!std::filesystem::exists(dir / "o.npy"));
    }
}

// An F64 tensor with a finite value beyond float32's range: quantize refuses it by name, and export wrote it as
// inf (exit 0), another value than the file holds. A stored NaN or inf is the value itself: written as it is.
TEST_CASE("gguf hostile: export refuses an F64 value beyond float32 and keeps a stored inf") {
    TempDir dir;
    std::vector<double> values(32, 0.5);
    values[5] = 1e300;
    const std::string header = "{\"d\": {\"dtype\": \"F64\", \"shape\": [32], \"data_offsets\": [0, 256]}}";
    qs::test::write_bytes(dir / "d.safetensors", qs::test::safetensors_file(header, GgufWriter::raw(values)));
    GgufWriter w;
    w.tensor("d", {32}, 28, GgufWriter::raw(values));  // ggml's F64
    qs::test::write_bytes(dir / "d.gguf", w.build());
    const std::string out = dir / "out.npy";
    for (const char* input : {"d.gguf", "d.safetensors"}) {
        const Run r = run("export " + shell_quote(dir / input) + " --tensor d --out " + shell_quote(out), dir);
        INFO(input, " -> ", r.err);
        CHECK(r.exit_code == 2);
        CHECK(qs::test::one_line(r.err));
        CHECK(contains(r.err, std::string(input) + ": tensor 'd': value 1.0000000000000001e+300 at index [5] is outside the float32 range"));
        CHECK(!std::filesystem::exists(out));
    }
    values[5] = std::numeric_limits<double>::infinity();
    GgufWriter stored_inf;
    stored_inf.tensor("d", {32}, 28, GgufWriter::raw(values));
    qs::test::write_bytes(dir / "d.gguf", stored_inf.build());
    CHECK(run("export " + shell_quote(dir / "d.gguf") + " --tensor d --out " + shell_quote(out), dir).exit_code == 0);
    const std::string written = qs::test::read_bytes(out);  // the header, then 32 little-endian float32
    float fifth = 0;
    std::memcpy(&fifth, written.data() + written.size() - 27 * 4, 4);
    CHECK(std::isinf(fifth));
}

// An index whose shard is named like an output: export checked --out against the index only, so `--out s.npy`
// replaced the shard it read (exit 0, the checkpoint's own file now an .npy). A shard must be a .safetensors
// file, which export never writes.
TEST_CASE("gguf hostile: export cannot write over a shard of the index it reads") {
    TempDir dir;
    const std::string shard = qs::test::safetensors_file(
        "{\"w\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}", std::string(8, '\0'));
    qs::test::write_bytes(dir / "s.npy", shard);
    qs::test::write_bytes(dir / "m.safetensors.index.json", "{\"weight_map\": {\"w\": \"s.npy\"}}");
    const Run r = run("export " + shell_quote(dir / "m.safetensors.index.json") + " --tensor w --out " +
                          shell_quote(dir / "s.npy"), dir);
    CHECK(r.exit_code == 2);
    CHECK(qs::test::one_line(r.err));
    CHECK(contains(r.err, "shard 's.npy' of 'w' is not a .safetensors file"));
    CHECK(qs::test::read_bytes(dir / "s.npy") == shard);
}

// A metadata value of 8 MB (a chat template could be one) was printed whole by inspect --json (a 100 MB one: 723 MB
// resident, 10 s), and arrays of arrays showed 8 items a level, 8^6 here. A string shows its first 200 bytes and
// its length; an array its count and first items, no more than 1 KB of them; inspect's output stays a few KB.
TEST_CASE("gguf hostile: a string value of 8 MB and arrays nested 6 deep are shown cut short") {
    constexpr std::size_t kBig = 8u << 20;
    std::string big(kBig, 'x');
    big.replace(199, 2, "\xc3\xa9");  // é across the cut: the shown text ends before it, not inside it
    std::string nested = GgufWriter::array(GgufWriter::U32, 8, std::string(32, '\1'));
    for (int depth = 1; depth < 6; ++depth) {
        std::string items;
        for (int i = 0; i < 8; ++i) items += nested;
        nested = GgufWriter::array(GgufWriter::ARRAY, 8, items);
    }
    GgufWriter w;
    w.kv_string("chat.template", big).kv("nested", GgufWriter::ARRAY, nested);
    w.kv("strings", GgufWriter::ARRAY, GgufWriter::array(GgufWriter::STRING, 2, GgufWriter::str(big) + GgufWriter::str("ab")));
    w.tensor("a", {32}, 0, std::string(128, '\0'));
    TempDir dir;
    const std::string path = dir / "kv.gguf";
    qs::test::write_bytes(path, w.build());
    const std::string shown = std::string(199, 'x') + "… (" + std::to_string(kBig) + " bytes)\"";
    for (const char* json : {"", "--json "}) {
        const Run r = run(std::string("inspect ") + json + shell_quote(path), dir);
        INFO(json, r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out.size() < 8192);
        CHECK(contains(r.out, "\"" + shown));        // the value
        CHECK(contains(r.out, "[\"" + shown + ", \"ab\"]"));  // the array's first item, then the next
        CHECK(contains(r.out, "[[[[[[16843009, "));
    }
}
