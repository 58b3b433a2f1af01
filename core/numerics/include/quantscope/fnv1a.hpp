// FNV-1a (64 bit): a small, fast and stable hash for cache keys and file checksums. Not for security.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace qs {

class Fnv1a {
public:
    void add_bytes(const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) {
            h_ ^= p[i];
            h_ *= 1099511628211ull;
        }
    }
    // The object representation of a plain value (a number, an enum, a struct of numbers without padding).
    template <typename T>
    void add(const T& v) {
        static_assert(std::is_trivially_copyable_v<T>, "hash plain values only");
        add_bytes(&v, sizeof v);
    }
    std::uint64_t value() const { return h_; }

private:
    std::uint64_t h_ = 1469598103934665603ull;
};

}  // namespace qs
