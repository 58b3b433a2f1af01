// Shared helpers of the tests: element-wise comparison that prints both tensors on failure, temporary
// directories and files, qs::Error messages, and running the built binary.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "quantscope/element_type.hpp"
#include "quantscope/error.hpp"

namespace qs::test {

template <class A, class B>
std::string side_by_side(const std::vector<A>& got, const std::vector<B>& want) {
    std::ostringstream out;
    out.precision(9);
    out << "\n  index:    got | want | diff\n";
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
        out << "  [" << i << "] " << got[i] << " | " << want[i] << " | " << (double(got[i]) - double(want[i])) << "\n";
    return out.str();
}

// Exact equality of two sequences; on failure prints both and their difference.
template <class A, class B>
void check_equal(const std::vector<A>& got, const std::vector<B>& want) {
    bool same = got.size() == want.size();
    for (std::size_t i = 0; same && i < got.size(); ++i) same = double(got[i]) == double(want[i]);
    INFO(side_by_side(got, want));
    CHECK(same);
}

// A fresh directory per use, removed with everything in it.
struct TempDir {
    std::filesystem::path path;
    TempDir() {
        static int counter = 0;
        std::random_device random;
        path = std::filesystem::temp_directory_path() /
               ("quantscope_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
                std::to_string(random()));
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string operator/(const std::string& name) const { return (path / name).string(); }
    // The names in the directory, sorted.
    std::vector<std::string> files() const {
        std::vector<std::string> names;
        for (const auto& entry : std::filesystem::directory_iterator(path))
            names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        return names;
    }
};

inline std::string read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// float32 bits to float16 bits, truncating (good enough for test data): tiny values become 0, huge ones
// the largest exponent; never Inf or NaN.
inline std::uint16_t half_bits(std::uint32_t fb) {
    const int exponent = static_cast<int>((fb >> 23) & 0xff) - 112;
    const auto sign = static_cast<std::uint16_t>((fb >> 16) & 0x8000);
    if (exponent < 1) return sign;
    return static_cast<std::uint16_t>(sign | std::min(exponent, 30) << 10 | ((fb >> 13) & 0x3ff));
}

// Random finite elements of `type` as little-endian bytes: normal values with a few outliers, and for the
// 16-bit types random bit patterns (every exponent but the Inf/NaN one, subnormals included).
inline std::string random_elements(qs::ElementType type, std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.5, 3.0);
    std::string bytes;
    for (std::int64_t i = 0; i < n; ++i) {
        double v = normal(rng) * (i % 997 == 0 ? 40.0 : 1.0);
        switch (type) {
            case qs::ElementType::F32: {
                const float f = static_cast<float>(v);
                bytes.append(reinterpret_cast<const char*>(&f), 4);
                break;
            }
            case qs::ElementType::F64:
                bytes.append(reinterpret_cast<const char*>(&v), 8);
                break;
            case qs::ElementType::F16:
            case qs::ElementType::BF16: {
                std::uint16_t bits = static_cast<std::uint16_t>(rng());
                const int exponent_shift = type == qs::ElementType::F16 ? 10 : 7;
                const std::uint16_t exponent_mask = type == qs::ElementType::F16 ? 0x7c00 : 0x7f80;
                if ((bits & exponent_mask) == exponent_mask) bits ^= static_cast<std::uint16_t>(1u << exponent_shift);
                if (type == qs::ElementType::BF16) bits &= 0xbfff;  // |v| < 2: far from float32's limits
                // Keep most values within a few orders of magnitude so the quantization is not all zeros.
                if (rng() % 4 != 0) {
                    const float f = static_cast<float>(v);
                    std::uint32_t fb;
                    std::memcpy(&fb, &f, 4);
                    bits = type == qs::ElementType::BF16 ? static_cast<std::uint16_t>(fb >> 16) : half_bits(fb);
                }
                bytes.append(reinterpret_cast<const char*>(&bits), 2);
                break;
            }
        }
    }
    return bytes;
}

// A .safetensors file: 8-byte little-endian header length, the JSON header, the data.
inline std::string safetensors_file(const std::string& header, const std::string& data) {
    std::string out;
    const std::uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
    return out + header + data;
}

// The message of the qs::Error `f` throws; "<no error>" when it returns.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const qs::Error& error) {
        return error.what();
    }
    return "<no error>";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// What main() prints for a qs::Error: one line "quantscope: error: ...".
inline bool one_line(const std::string& err) {
    return err.rfind("quantscope: error: ", 0) == 0 && std::count(err.begin(), err.end(), '\n') == 1;
}

#define CHECK_ERROR_HAS(expr, part)                                              \
    do {                                                                         \
        const std::string message_ = qs::test::error_of([&] { (void)(expr); }); \
        INFO("message: " << message_);                                           \
        CHECK(qs::test::contains(message_, part));                               \
    } while (0)

inline std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

struct Run {
    int exit_code;  // the shell's: 128 + N when the binary died of signal N
    std::string out, err;
};

#ifdef QS_BINARY
// Runs the built binary with `args` (shell syntax) and `env` (NAME=value ... for the binary alone), stdout
// and stderr captured in files in `dir`. A run that takes more than `seconds` (a minute unless told) is
// killed and fails (exit code 124): no test waits forever. `address_space_kb` > 0 caps the child's virtual memory (RLIMIT_AS, through
// the shell's ulimit -v): a memory bound checked by failing allocations, not by timing.
inline Run run(const std::string& args, const TempDir& dir, const std::string& env = "",
               long long address_space_kb = 0, int seconds = 60) {
    const std::string out = dir / "stdout.txt", err = dir / "stderr.txt";
    const std::string limit = address_space_kb > 0 ? "ulimit -v " + std::to_string(address_space_kb) + " && " : "";
    const std::string cmd = limit + "timeout -k 5 " + std::to_string(seconds) + " env " + env + " " + shell_quote(QS_BINARY) + " " + args + " >" +
                            shell_quote(out) + " 2>" + shell_quote(err);
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_bytes(out), read_bytes(err)};
}
#endif

}  // namespace qs::test
