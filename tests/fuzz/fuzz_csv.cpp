// libFuzzer target: any byte string given to the CSV reader ends in a 2-D tensor or one qs::Error.
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const qs::Tensor tensor = qs::parse_csv(reinterpret_cast<const char*>(data), size, "fuzz.csv");
        if (tensor.rank() != 2 || tensor.shape[0] * tensor.shape[1] != tensor.numel()) std::abort();
        for (const float v : tensor.values) {
            if (!std::isfinite(v)) std::abort();
        }
    } catch (const qs::Error&) {
    }
    return 0;
}
