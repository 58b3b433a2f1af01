// libFuzzer target: any byte string given to the .npy reader ends in a tensor or one qs::Error.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "quantscope/error.hpp"
#include "quantscope/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const qs::Tensor tensor = qs::parse_npy(data, size, "fuzz.npy");
        // What a caller relies on: a checked shape that matches the values, all finite.
        if (qs::checked_numel(tensor.shape) != tensor.numel()) std::abort();
        for (const float v : tensor.values) {
            if (!std::isfinite(v)) std::abort();
        }
    } catch (const qs::Error&) {
    }
    return 0;
}
