// `quantscope sweep` (SPEC "Sweep"): every floating tensor of a checkpoint, row by row, exactly what
// `quantize --tensor NAME` gives; a bad shard or a lying index stops the run before any row.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "cli/bench_file.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/element_type.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/sweep.hpp"
#include "test_helpers.hpp"

using namespace qs;

namespace {

struct StoredTensor {
    std::string name, dtype;
    Shape shape;
    std::string bytes;
};

std::string shape_json(const Shape& shape) {
    std::string out = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
    return out + "]";
}

// A .safetensors file whose data region holds the tensors in reverse header order, so that file order (by
// data offset) differs from header order.
std::string shard_bytes(const std::vector<StoredTensor>& tensors) {
    std::string header = "{", data;
    for (auto t = tensors.rbegin(); t != tensors.rend(); ++t) {
        const std::size_t begin = data.size();
        data += t->bytes;
        header += (header.size() > 1 ? "," : "") + std::string("\"") + t->name + "\":{\"dtype\":\"" + t->dtype +
                  "\",\"shape\":" + shape_json(t->shape) + ",\"data_offsets\":[" + std::to_string(begin) + "," +
                  std::to_string(data.size()) + "]}";
    }
    return test::safetensors_file(header + "}", data);
}

StoredTensor random_tensor(const std::string& name, ElementType type, const Shape& shape, std::uint64_t seed) {
    static const std::map<ElementType, std::string> names = {
        {ElementType::F32, "F32"}, {ElementType::F16, "F16"}, {ElementType::BF16, "BF16"}, {ElementType::F64, "F64"}};
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return {name, names.at(type), shape, test::random_elements(type, n, seed)};
}

// Two shards; the index names the second shard first, so it is swept first.
struct SmallCheckpoint {
    test::TempDir dir;
    std::vector<StoredTensor> first = {random_tensor("layer.0.w", ElementType::F32, {4, 8}, 1),
                                       random_tensor("layer.0.b", ElementType::F16, {8, 4}, 2),
                                       {"steps", "I64", {3}, std::string(24, '\1')},
                                       random_tensor("scale", ElementType::F32, {1}, 3)};
    std::vector<StoredTensor> second = {random_tensor("layer.1.w", ElementType::BF16, {2, 16}, 4),
                                        random_tensor("layer.1.v", ElementType::F64, {32}, 5),
                                        random_tensor("norm", ElementType::F32, {6}, 6)};
    std::string index = dir / "model.safetensors.index.json";

    SmallCheckpoint() {
        test::write_bytes(dir / "a.safetensors", shard_bytes(first));
        test::write_bytes(dir / "b.safetensors", shard_bytes(second));
        write_index({{"layer.1.w", "b"}, {"layer.0.w", "a"}, {"layer.0.b", "a"}, {"steps", "a"}, {"scale", "a"},
                     {"layer.1.v", "b"}, {"norm", "b"}});
    }
    void write_index(const std::vector<std::pair<std::string, std::string>>& map) const {
        std::string json = "{\"metadata\": {}, \"weight_map\": {";
        for (std::size_t i = 0; i < map.size(); ++i)
            json += (i ? ", \"" : "\"") + map[i].first + "\": \"" + map[i].second + ".safetensors\"";
        test::write_bytes(index, json + "}}");
    }
};

// The rows in file order: shard b (first in the index), by data offset (reverse header order), then shard a.
const std::vector<std::string> kFileOrder = {"norm", "layer.1.v", "layer.1.w", "layer.0.b", "layer.0.w"};

const char* const kOptions = " --dtype int4 --granularity group --group-size 4";

JsonValue parse(const std::string& text) { return parse_json(text, "output"); }

}  // namespace

TEST_CASE("sweep rows are the quantize results of every floating tensor in file order") {
    SmallCheckpoint c;
    const test::Run sweep = test::run("sweep " + test::shell_quote(c.index) + kOptions, c.dir);
    INFO("stderr: " << sweep.err);
    REQUIRE(sweep.exit_code == 0);
    CHECK(sweep.err.empty());  // progress only on a terminal
    const JsonValue doc = parse(sweep.out);
    const JsonValue& rows = *doc.find("tensors");
    REQUIRE(rows.items.size() == kFileOrder.size());
    std::int64_t elements = 0;
    double weighted_mse = 0;
    for (std::size_t i = 0; i < rows.items.size(); ++i) {
        const JsonValue& row = rows.items[i];
        const std::string name = row.find("name")->text;
        CHECK(name == kFileOrder[i]);
        std::vector<std::string> keys;
        for (const auto& member : row.members) keys.push_back(member.first);
        CHECK(keys == std::vector<std::string>{"name", "shape", "dtype", "elements", "min", "max", "mean", "std",
                                               "max_over_std", "mse", "rmse", "mae", "max_abs_error", "sqnr_db",
                                               "clipped", "bits_per_weight", "error"});
        if (name == "norm") {  // 6 elements: the group size 4 cannot apply
            CHECK(test::contains(row.find("error")->text, "group size 4 does not divide the last dimension 6"));
            CHECK(row.find("mse")->is_null());
            continue;
        }
        CHECK(row.find("error")->is_null());
        const std::string shard = name.rfind("layer.1", 0) == 0 ? "b.safetensors" : "a.safetensors";
        const test::Run one =
            test::run("quantize " + test::shell_quote(c.dir / shard) + " --tensor " + name + kOptions, c.dir);
        REQUIRE(one.exit_code == 0);
        const JsonValue want = parse(one.out);
        for (const char* key : {"mse", "rmse", "mae", "max_abs_error", "sqnr_db", "clipped", "bits_per_weight"}) {
            INFO(name << " " << key);
            CHECK(row.find(key)->text == want.find(key)->text);
        }
        elements += static_cast<std::int64_t>(row.find("elements")->number);
        weighted_mse += row.find("mse")->number * row.find("elements")->number;
        // int4 in groups of 4: 4 bits plus a float32 scale and a float32 zero point per 4 elements (FORMATS.md).
        CHECK(row.find("bits_per_weight")->number == 4 + 64.0 / 4);
    }
    CHECK(rows.items[2].find("dtype")->text == "BF16");
    CHECK(rows.items[1].find("shape")->items.size() == 1);
    const JsonValue& total = *doc.find("total");
    CHECK(total.find("elements")->number == elements);
    CHECK(total.find("bytes_in")->number == 32 * 4 + 32 * 2 + 32 * 2 + 32 * 8);
    CHECK(total.find("sqnr_db")->is_number());
    CHECK(total.find("bytes_quantized")->number == 4 * (32 * 20 / 8));
    CHECK(total.find("mse")->number == doctest::Approx(weighted_mse / static_cast<double>(elements)).epsilon(1e-12));
    std::vector<std::string> keys;
    for (const auto& member : total.members) keys.push_back(member.first);
    CHECK(keys == std::vector<std::string>{"elements", "bytes_in", "bytes_quantized", "mse", "sqnr_db", "seconds", "gb_per_s"});
}

TEST_CASE("sweep with a block format: a tensor its block does not fit is a row's error and not the run's") {
    SmallCheckpoint c;  // nvfp4's block of 16 fits [2, 16] and [32], not [6], [8, 4] or [4, 8]
    const test::Run sweep = test::run("sweep " + test::shell_quote(c.index) + " --dtype nvfp4", c.dir);
    INFO("stderr: " << sweep.err);
    REQUIRE(sweep.exit_code == 0);
    const JsonValue doc = parse(sweep.out);
    const JsonValue& rows = *doc.find("tensors");
    REQUIRE(rows.items.size() == kFileOrder.size());
    for (const JsonValue& row : rows.items) {
        const std::string name = row.find("name")->text;
        INFO(name);
        if (name == "layer.1.w" || name == "layer.1.v") {  // last axis 16 and 32
            CHECK(row.find("error")->is_null());
            CHECK(row.find("bits_per_weight")->number > 4.5);
        } else {  // last axis 6, 4 and 8
            CHECK(test::contains(row.find("error")->text, "nvfp4: its block of 16 elements must divide the last axis"));
        }
    }
}

TEST_CASE("sweep statistics are the tensor's min max mean population std and outlier ratio") {
    SmallCheckpoint c;
    Checkpoint checkpoint = open_checkpoint(c.index);
    std::vector<SweepRow> rows;
    sweep_checkpoint(checkpoint, {}, [&](const SweepRow& row) { rows.push_back(row); });
    REQUIRE(rows.size() == kFileOrder.size());
    const StoredTensor& f64 = c.second[1];
    const SweepRow& row = rows[1];
    REQUIRE(row.name == f64.name);
    std::vector<float> values(32);
    decode_elements(ElementType::F64, reinterpret_cast<const std::uint8_t*>(f64.bytes.data()), 32, values.data());
    double sum = 0, lo = values[0], hi = values[0];
    for (float v : values) sum += v, lo = std::min<double>(lo, v), hi = std::max<double>(hi, v);
    const double mean = sum / 32;
    double sq = 0;
    for (float v : values) sq += (v - mean) * (v - mean);
    const double sd = std::sqrt(sq / 32);
    CHECK(row.min == lo);
    CHECK(row.max == hi);
    CHECK(row.mean == doctest::Approx(mean).epsilon(1e-12));
    CHECK(row.std == doctest::Approx(sd).epsilon(1e-9));
    CHECK(*row.max_over_std == doctest::Approx(std::max(std::fabs(lo), std::fabs(hi)) / sd).epsilon(1e-9));
    // int8 per tensor, asymmetric: 8 bits plus one float32 scale and one float32 zero point over 32 elements.
    CHECK(row.bits_per_weight == 8 + 64.0 / 32);
}

TEST_CASE("sweep --filter keeps the tensors whose name contains a match") {
    SmallCheckpoint c;
    const test::Run r = test::run("sweep " + test::shell_quote(c.index) + " --filter '0\\.[wb]$'", c.dir);
    REQUIRE(r.exit_code == 0);
    const JsonValue doc = parse(r.out);
    const JsonValue& rows = *doc.find("tensors");
    REQUIRE(rows.items.size() == 2);
    CHECK(rows.items[0].find("name")->text == "layer.0.b");
    CHECK(rows.items[1].find("name")->text == "layer.0.w");
    const test::Run none = test::run("sweep " + test::shell_quote(c.index) + " --filter nothing", c.dir);
    REQUIRE(none.exit_code == 0);
    CHECK(parse(none.out).find("tensors")->items.empty());
    const test::Run bad = test::run("sweep " + test::shell_quote(c.index) + " --filter '('", c.dir);
    CHECK(bad.exit_code == 2);
    CHECK(test::contains(bad.err, "--filter"));
}

TEST_CASE("sweep --csv prints a header and one line a row with empty fields for null") {
    SmallCheckpoint c;
    const test::Run r = test::run("sweep " + test::shell_quote(c.dir / "b.safetensors") + kOptions + " --csv", c.dir);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> lines;
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] ==
          "name,shape,dtype,elements,min,max,mean,std,max_over_std,mse,rmse,mae,max_abs_error,sqnr_db,clipped,"
          "bits_per_weight,error");
    CHECK(lines[1].rfind("norm,6,F32,6,,,,,,,,,,,,,", 0) == 0);
    CHECK(test::contains(lines[1], "does not divide"));
    CHECK(lines[3].rfind("layer.1.w,2x16,BF16,32,", 0) == 0);
    CHECK(lines[3].back() == ',');  // no error
    CHECK(std::count(lines[3].begin(), lines[3].end(), ',') == 16);
}

TEST_CASE("a bad shard or a lying index stops the sweep before any row with one line naming the file") {
    SmallCheckpoint c;
    const auto check_refused = [&](const std::string& path, const std::string& named) {
        const test::Run r = test::run("sweep " + test::shell_quote(path), c.dir);
        INFO("stderr: " << r.err);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(test::contains(r.err, named));
    };
    SUBCASE("a truncated shard") {
        const std::string bytes = test::read_bytes(c.dir / "a.safetensors");
        test::write_bytes(c.dir / "a.safetensors", bytes.substr(0, bytes.size() - 10));
        check_refused(c.index, "a.safetensors");
    }
    SUBCASE("a missing shard") {
        std::filesystem::remove(c.dir / "a.safetensors");
        check_refused(c.index, "a.safetensors");
    }
    SUBCASE("a tensor in two shards") {
        c.second.push_back(c.first[0]);
        test::write_bytes(c.dir / "b.safetensors", shard_bytes(c.second));
        check_refused(c.index, "layer.0.w");
    }
    SUBCASE("a tensor named twice in the index") {
        test::write_bytes(c.index, "{\"weight_map\": {\"norm\": \"b.safetensors\", \"norm\": \"b.safetensors\"}}");
        check_refused(c.index, "model.safetensors.index.json");
    }
    SUBCASE("a tensor the index puts in another shard") {
        c.write_index({{"layer.1.w", "a"}, {"layer.0.w", "a"}, {"layer.0.b", "a"}, {"steps", "a"}, {"scale", "a"},
                       {"layer.1.v", "b"}, {"norm", "b"}});
        check_refused(c.index, "b.safetensors");
    }
    SUBCASE("a tensor the index lists but no shard holds") {
        c.write_index({{"layer.1.w", "b"}, {"layer.0.w", "a"}, {"layer.0.b", "a"}, {"steps", "a"}, {"scale", "a"},
                       {"layer.1.v", "b"}, {"norm", "b"}, {"ghost", "b"}});
        check_refused(c.index, "ghost");
    }
    SUBCASE("a shard outside the index's folder") {
        c.write_index({{"layer.1.w", "../b"}});
        check_refused(c.index, "../b.safetensors");
    }
    SUBCASE("a shard that is not a .safetensors file") {
        // Every reader picks a file's kind by its name: a valid shard named x.gguf was checked as a .safetensors
        // file, then read as a GGUF one ("magic: not a GGUF file"), and the index itself was read as a shard.
        std::filesystem::copy_file(c.dir / "b.safetensors", c.dir / "b.gguf");
        test::write_bytes(c.index, "{\"weight_map\": {\"layer.1.w\": \"b.gguf\", \"layer.1.v\": \"b.gguf\", "
                                   "\"norm\": \"b.gguf\"}}");
        check_refused(c.index, "shard 'b.gguf' of 'layer.1.w' is not a .safetensors file");
        test::write_bytes(c.index, "{\"weight_map\": {\"norm\": \"model.safetensors.index.json\"}}");
        check_refused(c.index, "shard 'model.safetensors.index.json' of 'norm' is not a .safetensors file");
    }
    SUBCASE("offsets beyond the file") {
        const std::string header = "{\"x\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[8,24]}}";
        test::write_bytes(c.dir / "short.safetensors", test::safetensors_file(header, std::string(16, '\0')));
        check_refused(c.dir / "short.safetensors", "short.safetensors");
    }
    SUBCASE("a file that is not a checkpoint") {
        test::write_bytes(c.dir / "w.npy", "\x93NUMPY");
        check_refused(c.dir / "w.npy", "w.npy");
    }
    SUBCASE("an index without a weight map") {
        test::write_bytes(c.index, "{\"metadata\": {}}");
        check_refused(c.index, "weight_map");
    }
    SUBCASE("an unsupported dtype") {
        const std::string header = "{\"x\":{\"dtype\":\"Q4_K\",\"shape\":[4],\"data_offsets\":[0,4]}}";
        test::write_bytes(c.dir / "q.safetensors", test::safetensors_file(header, std::string(4, '\0')));
        check_refused(c.dir / "q.safetensors", "q.safetensors");
    }
}

// A shard rewritten between open_checkpoint and the sweep (another model saved over it): the rows' names, shapes
// and places come from the checkpoint, so the sweep stops rather than give b's old rows the new file's numbers.
TEST_CASE("a shard that changed since the checkpoint was opened stops the sweep") {
    SmallCheckpoint c;
    const Checkpoint checkpoint = open_checkpoint(c.index);
    std::vector<StoredTensor> other = c.second;
    other[2] = random_tensor("norm", ElementType::F32, {3}, 7);  // same names, one shape fewer bytes
    test::write_bytes(c.dir / "b.safetensors", shard_bytes(other));
    std::vector<SweepRow> rows;
    CHECK_THROWS_WITH_AS(sweep_checkpoint(checkpoint, {}, [&](const SweepRow& row) { rows.push_back(row); }),
                         doctest::Contains("b.safetensors: the file changed since it was opened"), Error);
    CHECK(rows.empty());
}

// Memory follows one shard's mapping and one tensor's work, not the checkpoint: four shards of 24 MB swept
// under an address-space cap of 1.3x one shard + 50 MB, less than the checkpoint alone.
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer reserves terabytes of address space: no address-space cap
TEST_CASE("sweep memory is bounded by a shard and not the checkpoint") {
    test::TempDir dir;
    const std::int64_t rows = 1536, cols = 4096;
    std::string values(static_cast<std::size_t>(rows * cols * 4), '\0');
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        const float v = static_cast<float>((i * 7919) % 2001 - 1000) * 1e-3f;
        std::memcpy(&values[static_cast<std::size_t>(i) * 4], &v, 4);
    }
    std::string index = "{\"weight_map\": {";
    for (int s = 0; s < 4; ++s) {
        const std::string name = "layer." + std::to_string(s);
        test::write_bytes(dir / (name + ".safetensors"), shard_bytes({{name, "F32", {rows, cols}, values}}));
        index += (s ? ", \"" : "\"") + name + "\": \"" + name + ".safetensors\"";
    }
    test::write_bytes(dir / "m.index.json", index + "}}");
    const long long shard_kb = static_cast<long long>(values.size() / 1024);
    const long long cap_kb = shard_kb * 13 / 10 + 50 * 1024;
    REQUIRE(cap_kb < 4 * shard_kb);
    const test::Run r = test::run("sweep " + test::shell_quote(dir / "m.index.json"), dir, "OMP_NUM_THREADS=2", cap_kb);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(parse(r.out).find("tensors")->items.size() == 4);
}
#endif

TEST_CASE("sweep progress goes to stderr only when it is a terminal") {
    SmallCheckpoint c;
    const std::string captured = c.dir / "terminal.txt";
    // script(1) gives the command a terminal; stdout is sent away inside it, so only stderr is captured.
    const std::string inner = test::shell_quote(QS_BINARY) + " sweep " + test::shell_quote(c.index) + " 2>&1 >/dev/null";
    const std::string command = "timeout -k 5 60 script -qec " + test::shell_quote(inner) + " /dev/null >" +
                                test::shell_quote(captured) + " 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    const std::string shown = test::read_bytes(captured);
    INFO("terminal: " << shown);
    CHECK(test::contains(shown, "sweep: 100%"));
    CHECK(test::contains(shown, "\x1b[K"));  // the progress line is cleared at the end
}

TEST_CASE("a cancelled sweep stops between tensors and says so") {
    SmallCheckpoint c;
    std::atomic<bool> cancel{false};
    std::vector<std::string> names;
    std::vector<std::uint64_t> progress;
    const SweepTotal total = sweep_checkpoint(
        open_checkpoint(c.index), {},
        [&](const SweepRow& row) {
            names.push_back(row.name);
            cancel = names.size() == 2;
        },
        [&](std::uint64_t done, std::uint64_t all) {
            progress.push_back(done);
            CHECK(all == 6 * 4 + 32 * 8 + 32 * 2 + 32 * 2 + 32 * 4);
        },
        &cancel);
    CHECK(names == std::vector<std::string>{"norm", "layer.1.v"});
    CHECK(progress == std::vector<std::uint64_t>{6 * 4, 6 * 4 + 32 * 8});
    CHECK(total.cancelled);
    CHECK(total.tensors == 2);
}

// Resident memory follows one tensor, not the file: six tensors of 16 MB in one .safetensors file are swept
// with a peak below one tensor + 50 MB (the whole file is 96 MB). Measured on the child as the kernel counts it.
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer's shadow and quarantine memory: resident sizes mean nothing
TEST_CASE("sweep resident memory is bounded by a tensor and not the file") {
    test::TempDir dir;
    const std::int64_t rows = 1024, cols = 4096;
    std::vector<StoredTensor> tensors;
    {
        std::string values(static_cast<std::size_t>(rows * cols * 4), '\0');
        for (std::int64_t i = 0; i < rows * cols; ++i) {
            const float v = static_cast<float>((i * 7919) % 2001 - 1000) * 1e-3f;
            std::memcpy(&values[static_cast<std::size_t>(i) * 4], &v, 4);
        }
        for (int t = 0; t < 6; ++t) tensors.push_back({"w" + std::to_string(t), "F32", {rows, cols}, values});
        test::write_bytes(dir / "m.safetensors", shard_bytes(tensors));
    }
    const std::uint64_t tensor_mib = static_cast<std::uint64_t>(rows * cols * 4) >> 20;
    tensors.clear();
    tensors.shrink_to_fit();
    const cli::ProcessRun run = cli::run_process({QS_BINARY, "sweep", dir / "m.safetensors"});
    CHECK(run.peak_mib < static_cast<double>(tensor_mib + 50));
}
#endif

TEST_CASE("a checkpoint index must map names to shard file names in its folder") {
    test::TempDir dir;
    const auto index_error = [&](const std::string& json) {
        test::write_bytes(dir / "i.json", json);
        return test::error_of([&] { read_checkpoint_index(dir / "i.json"); });
    };
    CHECK(test::contains(index_error("[]"), "not an object"));
    CHECK(test::contains(index_error("{\"weight_map\": {}}"), "empty"));
    CHECK(test::contains(index_error("{\"weight_map\": {\"a\": 1}}"), "not a shard file name"));
    CHECK(test::contains(index_error("{\"weight_map\": {\"a\": \"/etc/x.safetensors\"}}"), "not a file name"));
    CHECK(test::contains(index_error("{\"weight_map\": {\"a\": \"..\"}}"), "not a file name"));
    CHECK(test::contains(index_error("{\"weight_map\": {\"a\": \"2.st\"}}"), "is not a .safetensors file"));
    test::write_bytes(dir / "i.json", "{\"weight_map\": {\"a\": \"2.safetensors\", \"b\": \"1.safetensors\", \"c\": \"2.safetensors\"}}");
    const CheckpointIndex index = read_checkpoint_index(dir / "i.json");
    CHECK(index.shards == std::vector<std::string>{"2.safetensors", "1.safetensors"});
    CHECK(index.weight_map.size() == 3);
}

TEST_CASE("sweep bits per weight is the FORMATS.md count quantize prints: float32 s and z stored") {
    QuantConfig config;  // int8 per tensor, asymmetric: 8 + 64/n
    CHECK(sweep_bits_per_weight(config, 1, 32) == 8 + 64.0 / 32);
    config.mode = Mode::Symmetric;  // symmetric stores no z: 8 + 32/n
    CHECK(sweep_bits_per_weight(config, 1, 32) == 8 + 32.0 / 32);
    parse_dtype("int4", config);
    config.mode = Mode::Asymmetric;  // int4 in 8 groups of 4
    CHECK(sweep_bits_per_weight(config, 8, 32) == 4 + 64.0 / 4);
}

// A name with a tab, printed by the CSV, is the name `quantize --tensor` takes (printable wrote "a\tb", two
// characters, another name); a control character that acts on a terminal stays escaped.
TEST_CASE("sweep --csv prints a tab in a name as a tab that quantize --tensor takes back") {
    test::TempDir dir;
    test::write_bytes(dir / "t.safetensors",
                      shard_bytes({random_tensor("a\\tb", ElementType::F32, {2, 8}, 1),
                                   random_tensor("c\\u001bd", ElementType::F32, {2, 8}, 2)}));
    const test::Run r = test::run("sweep " + test::shell_quote(dir / "t.safetensors") + " --csv", dir);
    REQUIRE(r.exit_code == 0);
    CHECK(test::contains(r.out, "\n\"a\tb\",2x8,F32,16,"));
    CHECK(test::contains(r.out, "\nc\\x1bd,2x8,F32,16,"));
    const test::Run back = test::run("quantize " + test::shell_quote(dir / "t.safetensors") + " --tensor " +
                                         test::shell_quote("a\tb"), dir);
    CHECK(back.exit_code == 0);
}

// --overflow wrap is the lessons' pitfall: each row says so as quantize's JSON does (the numbers are wrong on
// purpose), and the CSV, which has no column for it, once on stderr.
TEST_CASE("sweep --overflow wrap rows carry quantize's warning") {
    test::TempDir dir;
    test::write_bytes(dir / "t.safetensors", shard_bytes({random_tensor("w", ElementType::F32, {4, 8}, 3)}));
    const std::string base = "sweep " + test::shell_quote(dir / "t.safetensors") + " --scale 0.001 --zero-point 0 --overflow wrap";
    const test::Run json = test::run(base, dir);
    REQUIRE(json.exit_code == 0);
    const test::Run quantize = test::run("quantize " + test::shell_quote(dir / "t.safetensors") +
                                             " --tensor w --scale 0.001 --zero-point 0 --overflow wrap", dir);
    const JsonValue q = parse_json(quantize.out, "quantize");
    const JsonValue s = parse_json(json.out, "sweep");
    REQUIRE(q.find("warning"));
    const JsonValue* row = &s.find("tensors")->items.at(0);
    REQUIRE(row->find("warning"));
    CHECK(row->find("warning")->text == q.find("warning")->text);
    const test::Run csv = test::run(base + " --csv", dir);
    CHECK(csv.exit_code == 0);
    CHECK(test::contains(csv.err, "warning: the naive cast without the clamp is WRONG"));
    CHECK(std::count(csv.err.begin(), csv.err.end(), '\n') == 1);
    CHECK(!test::contains(test::run("sweep " + test::shell_quote(dir / "t.safetensors"), dir).out, "warning"));
}

TEST_CASE("quantize --tensor NAME of a sharded index reads the shard its weight_map names") {
    // A .json input was always taken as a session: "--tensor does not apply to a session file".
    SmallCheckpoint c;
    const test::Run from_index = test::run("quantize " + test::shell_quote(c.index) + " --tensor layer.1.w" + kOptions, c.dir);
    INFO("stderr: " << from_index.err);
    REQUIRE(from_index.exit_code == 0);
    const test::Run from_shard =
        test::run("quantize " + test::shell_quote(c.dir / "b.safetensors") + " --tensor layer.1.w" + kOptions, c.dir);
    REQUIRE(from_shard.exit_code == 0);
    CHECK(from_index.out == from_shard.out);
    const test::Run no_name = test::run("quantize " + test::shell_quote(c.index) + kOptions, c.dir);
    CHECK(no_name.exit_code == 2);
    CHECK(test::contains(no_name.err, "a sharded checkpoint's index needs --tensor NAME"));
    const test::Run unknown = test::run("quantize " + test::shell_quote(c.index) + " --tensor nope" + kOptions, c.dir);
    CHECK(unknown.exit_code == 2);
    CHECK(test::contains(unknown.err, "the index names no tensor 'nope'"));
}
