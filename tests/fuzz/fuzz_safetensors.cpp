// libFuzzer target: any byte string opened as .safetensors, and every tensor it lists read, ends in
// tensors or qs::Errors; reads never leave the declared byte ranges (ASan checks the buffer's end).
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "quantscope/error.hpp"
#include "quantscope/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const qs::SafetensorsFile file(data, size, "fuzz.safetensors");
        for (const auto& entry : file.list()) {
            if (entry.begin > entry.end || entry.end > size) std::abort();
            try {
                std::string note;
                const qs::Tensor tensor = file.read(entry.name, &note);
                if (qs::checked_numel(tensor.shape) != tensor.numel()) std::abort();
                for (const float v : tensor.values) {
                    if (!std::isfinite(v)) std::abort();
                }
            } catch (const qs::Error&) {
            }
        }
        file.read("\x01 not a name");
    } catch (const qs::Error&) {
    }
    return 0;
}
