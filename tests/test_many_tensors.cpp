// A checkpoint of many tensors or many shards costs time linear in their number (issue 25, item 12): a
// linear search per tensor made a 100k-tensor sweep take 13-15 s and a 100k-shard index over 20 s before
// its first error. Not a timed assertion: the names share a long prefix and have one length, so that each
// comparison of a linear search reads it all; then the quadratic code runs for minutes and the CLI
// runner kills it (exit 124), while the linear code needs a few seconds, even in the sanitizer build.
#include <doctest/doctest.h>

#include <string>

#include "test_helpers.hpp"

namespace {

constexpr int kTensors = 130000;  // a header holds at most 1M JSON values, 7 a tensor
constexpr int kShards = 200000;
constexpr int kRunnerSeconds = 120;

// "<prefix><200 x><6 digits>": every name of one length, the first 200 bytes the same.
std::string long_name(const std::string& prefix, int i) {
    const std::string digits = std::to_string(i);
    return prefix + std::string(200, 'x') + std::string(6 - digits.size(), '0') + digits;
}

}  // namespace

TEST_CASE("sweep of one file with 130k tensors is linear in their number") {
    qs::test::TempDir dir;
    std::string header = "{";
    for (int i = 0; i < kTensors; ++i)
        header += (i ? ",\"" : "\"") + long_name("t", i) + "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[" +
                  std::to_string(8 * i) + "," + std::to_string(8 * i + 8) + "]}";
    std::string data(8 * static_cast<std::size_t>(kTensors), '\0');
    for (std::size_t i = 0; i < data.size(); i += 8) data[i + 3] = '\x3f';  // 0.5f, 0: a row, not an error
    const std::string file = dir / "many.safetensors";
    qs::test::write_bytes(file, qs::test::safetensors_file(header + "}", data));
    const qs::test::Run r =
        qs::test::run("sweep " + qs::test::shell_quote(file) + " --csv --dtype int4", dir, "", 0, kRunnerSeconds);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    std::size_t lines = 0;
    for (const char c : r.out) lines += c == '\n';
    CHECK(lines == kTensors + 1);
    CHECK(qs::test::contains(r.out, "\n" + long_name("t", kTensors - 1) + ",2,F32,2,"));
}

TEST_CASE("an index of 200k shards reports its first missing shard in time linear in its size") {
    qs::test::TempDir dir;
    std::string json = "{\"metadata\": {}, \"weight_map\": {";
    for (int i = 0; i < kShards; ++i)
        json += (i ? ", \"t" : "\"t") + std::to_string(i) + "\": \"" + long_name("shard-", i) + ".safetensors\"";
    const std::string index = dir / "model.safetensors.index.json";
    qs::test::write_bytes(index, json + "}}");
    const qs::test::Run r = qs::test::run("sweep " + qs::test::shell_quote(index), dir, "", 0, kRunnerSeconds);
    CHECK(r.exit_code == 2);
    // The first shard in the index's order, its long path shortened in the message.
    CHECK(qs::test::contains(r.err, "quantscope: error: cannot read '"));
    CHECK(qs::test::contains(r.err, "xxx000000.safetensors': No such file or directory\n"));
}
