// libFuzzer target: any byte string typed or pasted as a tensor (a notebook's tensor(...) / array(...) / [[...]]
// or a table) ends in a tensor of rank 1 to 3 with finite values, or one qs::Error.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "quantscope/error.hpp"
#include "quantscope/tensor_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const qs::Tensor t = qs::parse_tensor_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
        if (t.rank() < 1 || t.rank() > 3) std::abort();
        std::int64_t n = 1;
        for (const std::int64_t d : t.shape) n *= d;
        if (n != t.numel()) std::abort();
        for (const float v : t.values)
            if (!std::isfinite(v)) std::abort();
    } catch (const qs::Error&) {
    }
    return 0;
}
