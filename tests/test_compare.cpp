// `quantscope compare A B` (issue 23 item 6): an F32 GGUF against its Q4_K / Q8_0 copy, tensor by tensor. The
// expected numbers are computed here from the values the two files hold (ggml_dequantize of the written blocks),
// in double, as the definition says: mse = mean (a - b)^2, relative_rmse = rmse / rms(a), sqnr = 10 log10(Σa² /
// Σe²), max |a - b|.
#include <doctest/doctest.h>
#include <omp.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "gguf_writer.hpp"
#include "quantscope/checkpoint.hpp"
#include "quantscope/compare.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/number_format.hpp"
#include "test_helpers.hpp"

using namespace qs;
using qs::test::GgufWriter;

namespace {

const GgmlTypeInfo& type_of(GgmlType t) { return *ggml_type_info(static_cast<std::uint32_t>(t)); }

std::vector<float> laplace(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::exponential_distribution<float> e(1.0f);
    std::bernoulli_distribution sign(0.5);
    std::vector<float> v(n);
    for (float& x : v) x = (sign(rng) ? 1.0f : -1.0f) * e(rng) * 0.02f;
    return v;
}

std::string blocks_of(const GgmlTypeInfo& type, const std::vector<float>& values) {
    std::string out(static_cast<std::size_t>(ggml_row_bytes(type, static_cast<std::int64_t>(values.size()))), '\0');
    ggml_quantize_blocks(type, values.data(), static_cast<std::int64_t>(values.size()) / type.block_size, nullptr,
                         out.data());
    return out;
}

std::vector<float> decoded(const GgmlTypeInfo& type, const std::string& bytes, std::size_t n) {
    std::vector<float> out(n);
    ggml_dequantize(type, bytes.data(), static_cast<std::int64_t>(n), out.data());
    return out;
}

struct Expected {
    double mse = 0, relative_rmse = 0, sqnr_db = 0, max_abs_error = 0;
};

Expected expected(const std::vector<float>& a, const std::vector<float>& b) {
    double e2 = 0, s2 = 0, max = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        const double e = static_cast<double>(a[k]) - b[k];
        e2 += e * e;
        s2 += static_cast<double>(a[k]) * a[k];
        max = std::max(max, std::fabs(e));
    }
    const double n = static_cast<double>(a.size());
    return {e2 / n, std::sqrt(e2 / n) / std::sqrt(s2 / n), 10 * std::log10(s2 / e2), max};
}

// A: f32 "w" (300 x 512: more than one tile of 65536 values, not a whole number of tiles), "bias" and "only_a".
// B: "w" as q4_K, "bias" as q8_0 of 64 x 32, "only_b"; "shape" differs.
struct Pair {
    std::vector<float> w = laplace(300 * 512, 1), bias = laplace(64 * 32, 2);
    std::string a, b;
    Pair() {
        GgufWriter wa, wb;
        wa.tensor("w", {512, 300}, 0, GgufWriter::raw(w))
            .tensor("bias", {32, 64}, 0, GgufWriter::raw(bias))
            .tensor("shape", {32, 2}, 0, GgufWriter::raw(laplace(64, 3)))
            .tensor("only_a", {32}, 0, GgufWriter::raw(laplace(32, 4)));
        wb.tensor("only_b", {32}, 0, GgufWriter::raw(laplace(32, 5)))
            .tensor("w", {512, 300}, 12, blocks_of(type_of(GgmlType::Q4_K), w))
            .tensor("bias", {32, 64}, 8, blocks_of(type_of(GgmlType::Q8_0), bias))
            .tensor("shape", {64, 1}, 0, GgufWriter::raw(laplace(64, 3)));
        a = wa.build();
        b = wb.build();
    }
};

// Many tensors, F32 in A and Q8_0 in B, each 512 x 512 (enough for two threads), with a row between them that
// has no values to compare: the threads go from one tensor to the next.
struct ManyPair {
    static constexpr int kTensors = 12;
    qs::test::TempDir dir;
    std::string a_path = dir / "a.gguf", b_path = dir / "b.gguf";
    std::size_t b_first_tensor_end = 0;  // where B's first tensor's bytes end
    ManyPair() {
        GgufWriter wa, wb;
        for (int t = 0; t < kTensors; ++t) {
            const std::vector<float> v = laplace(512 * 512, 100 + static_cast<std::uint32_t>(t));
            const std::string name = "t" + std::to_string(t);
            wa.tensor(name, {512, 512}, 0, GgufWriter::raw(v));
            wb.tensor(name, {512, 512}, 8, blocks_of(type_of(GgmlType::Q8_0), v));
            if (t == 3) wa.tensor("only_a", {32}, 0, GgufWriter::raw(laplace(32, 4)));
        }
        const std::string b = wb.build();
        b_first_tensor_end = b.size() - (kTensors - 1) * 512 * 512 / 32 * 34;
        qs::test::write_bytes(a_path, wa.build());
        qs::test::write_bytes(b_path, b);
    }
};

std::vector<CompareRow> rows_with_threads(const ManyPair& m, int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<CompareRow> rows;
    compare_checkpoints(open_checkpoint(m.a_path), open_checkpoint(m.b_path),
                        [&](const CompareRow& r) { rows.push_back(r); });
    omp_set_num_threads(before);
    return rows;
}

}  // namespace

TEST_CASE("compare: many tensors give the same rows to the bit on one thread and on two") {
    const ManyPair m;
    const std::vector<CompareRow> one = rows_with_threads(m, 1), two = rows_with_threads(m, 2);
    REQUIRE(one.size() == ManyPair::kTensors + 1);
    REQUIRE(two.size() == one.size());
    for (std::size_t r = 0; r < one.size(); ++r) {
        INFO("row " << r << ": " << one[r].name);
        CHECK(two[r].name == one[r].name);
        CHECK(two[r].error == one[r].error);
        CHECK(two[r].mse == one[r].mse);
        CHECK(two[r].relative_rmse == one[r].relative_rmse);
        CHECK(two[r].max_abs_error == one[r].max_abs_error);
    }
    CHECK(one[4].name == "only_a");
    CHECK(one[4].error == "not in B");
    CHECK(one[5].name == "t4");
    CHECK(one[5].mse > 0);
}

TEST_CASE("compare: a cancel stops the rows after the one during which it came") {
    const ManyPair m;
    for (const int threads : {1, 2}) {
        const int before = omp_get_max_threads();
        omp_set_num_threads(threads);
        std::atomic<bool> cancel{false};
        std::vector<std::string> names;
        const CompareTotal total = compare_checkpoints(
            open_checkpoint(m.a_path), open_checkpoint(m.b_path),
            [&](const CompareRow& r) {
                names.push_back(r.name);
                if (names.size() == 3) cancel.store(true);
            },
            nullptr, &cancel);
        omp_set_num_threads(before);
        CHECK(total.cancelled);
        CHECK(names == std::vector<std::string>{"t0", "t1", "t2"});
        CHECK(total.tensors == 3);
    }
}

// Hostile input: B shrinks (truncated by another process) after its first tensor was compared. The missing bytes
// read as zeros under the mapping's guard, and compare stops with one line naming the file: no row of zeros.
TEST_CASE("compare: a file that shrinks while its tensors are compared stops with its one-line error") {
    for (const int threads : {1, 2}) {
        const ManyPair m;
        const int before = omp_get_max_threads();
        omp_set_num_threads(threads);
        std::size_t rows = 0;
        std::vector<CompareRow> emitted;
        std::string message;
        try {
            compare_checkpoints(open_checkpoint(m.a_path), open_checkpoint(m.b_path), [&](const CompareRow& row) {
                emitted.push_back(row);
                if (++rows == 1) REQUIRE(::truncate(m.b_path.c_str(), static_cast<off_t>(m.b_first_tensor_end)) == 0);
            });
        } catch (const Error& e) {
            message = e.what();
        }
        omp_set_num_threads(before);
        INFO("threads " << threads << ", rows " << rows);
        if (threads == 1 || !message.empty()) {
            CHECK(qs::test::contains(message, "the file shrank while it was being read"));
            CHECK(qs::test::contains(message, "b.gguf"));
            CHECK(rows < ManyPair::kTensors + 1);
            // One thread: the next tensor is read after the truncation, so its row (of zeros in B) never comes out.
            if (threads == 1) CHECK(rows == 1);
        } else {
            // The other thread had read every tensor before the first row came out (a loaded machine): all rows
            // are of values read before the file shrank.
            WARN_MESSAGE(false, "every tensor was read before B shrank: nothing to check");
        }
        // Every row that came out is of values both files held: Q8_0 of these values is about 40 dB; a B read as
        // zeros would be 0 dB (its error equals the signal).
        for (const CompareRow& row : emitted) {
            INFO("row " << row.name);
            if (row.error.empty()) CHECK((row.sqnr_db && *row.sqnr_db > 20.0));
        }
    }
}

TEST_CASE("compare: each tensor's numbers are those of the values both files hold") {
    const Pair p;
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "a.gguf", p.a);
    qs::test::write_bytes(dir / "b.gguf", p.b);
    std::vector<CompareRow> rows;
    const CompareTotal total = compare_checkpoints(open_checkpoint(dir / "a.gguf"), open_checkpoint(dir / "b.gguf"),
                                                   [&](const CompareRow& r) { rows.push_back(r); });
    REQUIRE(rows.size() == 5);
    // A's file order, then what only B has.
    CHECK(rows[0].name == "w");
    CHECK(rows[1].name == "bias");
    CHECK(rows[2].name == "shape");
    CHECK(rows[3].name == "only_a");
    CHECK(rows[4].name == "only_b");

    const std::vector<float> w_b = decoded(type_of(GgmlType::Q4_K), blocks_of(type_of(GgmlType::Q4_K), p.w), p.w.size());
    const Expected ew = expected(p.w, w_b);
    CHECK(rows[0].error.empty());
    CHECK(rows[0].dtype_a == "F32");
    CHECK(rows[0].dtype_b == "Q4_K");
    CHECK(rows[0].shape == Shape{300, 512});
    CHECK(rows[0].bits_per_weight_a == 32.0);
    CHECK(rows[0].bits_per_weight_b == 4.5);
    CHECK(rows[0].mse == doctest::Approx(ew.mse).epsilon(1e-12));
    CHECK(*rows[0].relative_rmse == doctest::Approx(ew.relative_rmse).epsilon(1e-12));
    CHECK(*rows[0].sqnr_db == doctest::Approx(ew.sqnr_db).epsilon(1e-12));
    CHECK(rows[0].max_abs_error == ew.max_abs_error);  // a maximum: exact

    const std::vector<float> bias_b = decoded(type_of(GgmlType::Q8_0), blocks_of(type_of(GgmlType::Q8_0), p.bias), p.bias.size());
    const Expected eb = expected(p.bias, bias_b);
    CHECK(rows[1].dtype_b == "Q8_0");
    CHECK(rows[1].bits_per_weight_b == 8.5);
    CHECK(rows[1].mse == doctest::Approx(eb.mse).epsilon(1e-12));
    CHECK(rows[1].max_abs_error == eb.max_abs_error);

    CHECK(qs::test::contains(rows[2].error, "shapes differ: 2x32 in A, 1x64 in B"));
    CHECK(rows[3].error == "not in B");
    CHECK(rows[3].dtype_b.empty());
    CHECK(rows[4].error == "not in A");
    CHECK(rows[4].dtype_a.empty());

    CHECK(total.tensors == 2);
    CHECK(total.error_rows == 3);
    CHECK(total.elements == static_cast<std::int64_t>(p.w.size() + p.bias.size()));
    const double n = static_cast<double>(total.elements);
    CHECK(total.mse == doctest::Approx((ew.mse * p.w.size() + eb.mse * p.bias.size()) / n).epsilon(1e-12));
    CHECK(total.bits_per_weight_b == doctest::Approx((p.w.size() * 4.5 + p.bias.size() * 8.5) / n).epsilon(1e-15));
    CHECK(total.max_abs_error == std::max(ew.max_abs_error, eb.max_abs_error));
}

TEST_CASE("compare: a file against itself loses nothing and a type that does not decode is a row's error") {
    GgufWriter w;
    const std::vector<float> v = laplace(256, 9);
    w.tensor("v", {256}, 0, GgufWriter::raw(v)).tensor("iq2", {256}, 16, std::string(66, '\0'));
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "a.gguf", w.build());
    std::vector<CompareRow> rows;
    const Checkpoint a = open_checkpoint(dir / "a.gguf");
    const CompareTotal total = compare_checkpoints(a, a, [&](const CompareRow& r) { rows.push_back(r); });
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].mse == 0);
    CHECK(!rows[0].sqnr_db);  // no error: no finite SQNR
    CHECK(*rows[0].relative_rmse == 0);
    CHECK(rows[1].error == "A stores it as IQ2_XXS, which QuantScope does not decode");
    CHECK(total.tensors == 1);
}

TEST_CASE("compare: the command's JSON CSV and table and its refusals") {
    const Pair p;
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "a.gguf", p.a);
    qs::test::write_bytes(dir / "b.gguf", p.b);
    const std::string args = " " + qs::test::shell_quote(dir / "a.gguf") + " " + qs::test::shell_quote(dir / "b.gguf");
    qs::test::Run r = qs::test::run("compare --json" + args, dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "{\"tensors\": [\n{\"name\": \"w\", \"shape\": [300, 512], \"dtype_a\": \"F32\", "
                                    "\"dtype_b\": \"Q4_K\", \"elements\": 153600, \"bits_per_weight_a\": 32, "
                                    "\"bits_per_weight_b\": 4.5, \"mse\": "));
    CHECK(qs::test::contains(r.out, "\"error\": \"not in A\"}\n], \"total\": {\"tensors\": 2, \"error_rows\": 3"));
    r = qs::test::run("compare --csv" + args, dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "name,shape,dtype_a,dtype_b,elements,bits_per_weight_a,bits_per_weight_b,mse,"));
    CHECK(qs::test::contains(r.out, "\nonly_b,32,,F32,32,,32,,,,,not in A\n"));
    r = qs::test::run("compare" + args, dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "F32      Q4_K      32.000   4.500"));
    CHECK(qs::test::contains(r.out, "total"));

    // Refusals: one line, exit 2.
    for (const std::string& bad : {std::string("compare") + " " + qs::test::shell_quote(dir / "a.gguf"),
                                   "compare --json --csv" + args,
                                   "compare" + args + " " + qs::test::shell_quote(dir / "a.gguf"),
                                   "compare " + qs::test::shell_quote(dir / "a.gguf") + " " +
                                       qs::test::shell_quote(dir / "missing.gguf")}) {
        r = qs::test::run(bad, dir);
        CHECK(r.exit_code == 2);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    }
}

// Resident memory follows what is being read, not the tensor: a tensor's pages leave the process's memory a few
// tiles after they are summed, not once the whole tensor is done (a 1 GB token embedding made the peak 1 GB). An
// F32 A of 64 MiB against its F16 B of 32 MiB in one tensor; the resident size sampled while compare runs may
// grow by a few MiB, never by the tensor's 96 MiB.
TEST_CASE("compare: resident memory stays a few tiles while one large tensor is compared") {
    const std::size_t rows = 4096, cols = 4096;
    std::vector<float> a(rows * cols);
    std::uint32_t state = 12345;
    for (float& x : a) {
        state = state * 1664525u + 1013904223u;
        x = static_cast<float>(static_cast<std::int32_t>(state >> 8) - (1 << 23)) * 0x1p-28f;
    }
    std::string b(a.size() * 2, '\0');
    for (std::size_t k = 0; k < a.size(); ++k) {
        const std::uint16_t h = fp16_bits_saturating(a[k]);
        std::memcpy(&b[2 * k], &h, 2);
    }
    qs::test::TempDir dir;
    GgufWriter wa, wb;
    wa.tensor("big", {cols, rows}, 0, GgufWriter::raw(a));
    wb.tensor("big", {cols, rows}, 1, b);
    qs::test::write_bytes(dir / "a.gguf", wa.build());
    qs::test::write_bytes(dir / "b.gguf", wb.build());
    a = {};
    b = {};
    const auto resident = [] {
        long pages = 0, rss = 0;
        std::FILE* f = std::fopen("/proc/self/statm", "r");
        if (f == nullptr) return 0L;
        if (std::fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
        std::fclose(f);
        return rss * static_cast<long>(sysconf(_SC_PAGESIZE));
    };
    const Checkpoint ca = open_checkpoint(dir / "a.gguf"), cb = open_checkpoint(dir / "b.gguf");
    const long before = resident();
    std::atomic<bool> done{false};
    std::atomic<long> peak{before};
    std::thread sampler([&] {
        while (!done.load()) {
            peak.store(std::max(peak.load(), resident()));
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    std::vector<CompareRow> rows_seen;
    compare_checkpoints(ca, cb, [&](const CompareRow& r) { rows_seen.push_back(r); });
    done.store(true);
    sampler.join();
    REQUIRE(rows_seen.size() == 1);
    CHECK(rows_seen[0].error.empty());
    MESSAGE("resident growth while comparing: " << (peak.load() - before) / 1024 << " KiB");
    // Before compare gave its pages back a few tiles at a time it grew by 99 MiB. Under AddressSanitizer its
    // shadow memory and freed-memory quarantine add their own pages (24-29 MiB seen): a looser bound there.
#if defined(__SANITIZE_ADDRESS__)
    constexpr long kBound = 56L * 1024 * 1024;
#else
    constexpr long kBound = 24L * 1024 * 1024;
#endif
    CHECK(peak.load() - before < kBound);
}

// B (or A) rewritten between open_checkpoint and the compare: the tensors' places come from the checkpoint, so
// reading them in the new file read another tensor's bytes, or past the new file's end (a signal: SIGBUS in
// `compare` and in the window's Model tab). The compare stops with one line naming the file.
TEST_CASE("compare: a file that changed since it was opened is refused and not read at its old offsets") {
    const std::vector<float> v = laplace(4096, 11);
    GgufWriter before, after;
    before.tensor("pad", {4096}, 0, GgufWriter::raw(v)).tensor("w", {4096}, 0, GgufWriter::raw(v));
    // w now q8_0 and first, and the file longer: the old offsets still lie inside it (a wrong read, not a crash).
    after.tensor("w", {4096}, 8, blocks_of(type_of(GgmlType::Q8_0), v))
        .tensor("pad", {4096}, 0, GgufWriter::raw(v))
        .tensor("tail", {4096}, 0, GgufWriter::raw(v));
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "a.gguf", before.build());
    qs::test::write_bytes(dir / "b.gguf", before.build());
    const Checkpoint a = open_checkpoint(dir / "a.gguf"), b = open_checkpoint(dir / "b.gguf");
    for (const char* changed : {"b.gguf", "a.gguf"}) {
        qs::test::write_bytes(dir / changed, after.build());
        std::vector<CompareRow> rows;
        const std::string message = std::string(changed) + ": the file changed since it was opened";
        CHECK_THROWS_WITH_AS(compare_checkpoints(a, b, [&](const CompareRow& r) { rows.push_back(r); }),
                             doctest::Contains(message.c_str()), Error);
        CHECK(rows.empty());
        qs::test::write_bytes(dir / changed, before.build());
    }
    CHECK_NOTHROW(compare_checkpoints(a, b, nullptr));  // the same bytes again: the same header
}

// Only the metadata rewritten (a longer string, as a metadata editor writes the file anew): the same tensors at
// the same offsets of a data region that now starts 64 bytes later. The check of the header's tensors passed, and
// compare read every tensor 64 bytes off (rows of wrong numbers, exit 0). Now refused as a changed file.
TEST_CASE("compare: a file whose data region moved since it was opened is refused") {
    const std::vector<float> v = laplace(4096, 12);
    GgufWriter before, after;
    before.kv_string("general.name", "m").tensor("w", {4096}, 0, GgufWriter::raw(v));
    after.kv_string("general.name", "m" + std::string(64, 'x')).tensor("w", {4096}, 0, GgufWriter::raw(v));
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "a.gguf", before.build());
    qs::test::write_bytes(dir / "b.gguf", before.build());
    const Checkpoint a = open_checkpoint(dir / "a.gguf"), b = open_checkpoint(dir / "b.gguf");
    qs::test::write_bytes(dir / "b.gguf", after.build());
    std::vector<CompareRow> rows;
    CHECK_THROWS_WITH_AS(compare_checkpoints(a, b, [&](const CompareRow& r) { rows.push_back(r); }),
                         doctest::Contains("b.gguf: the file changed since it was opened"), Error);
    CHECK(rows.empty());
}

// A rank-0 tensor's row in the table: its shape printed as nothing left "s " at the line's end; inspect says
// "scalar". The JSON keeps [] and the CSV an empty field.
TEST_CASE("compare: a scalar's row says scalar in the table") {
    GgufWriter w;
    w.tensor("s", {}, 0, GgufWriter::raw(std::vector<float>{3.0f}));
    qs::test::TempDir dir;
    qs::test::write_bytes(dir / "s.gguf", w.build());
    const std::string path = qs::test::shell_quote(dir / "s.gguf");
    const qs::test::Run r = qs::test::run("compare " + path + " " + path, dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::test::contains(r.out, "  s scalar\n"));
    CHECK(qs::test::contains(qs::test::run("compare --json " + path + " " + path, dir).out, "\"shape\": []"));
}
