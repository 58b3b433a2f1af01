// libFuzzer target: any byte string opened as .gguf, and every tensor it lists read, ends in tensors or
// qs::Errors; a header that passes keeps every tensor inside the file (ASan checks the buffer's end).
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const qs::GgufFile file(data, size, "fuzz.gguf");
        if (!file.list().empty() && file.data_offset() > size) std::abort();
        for (const qs::GgufTensor& t : file.list()) {
            if (t.type != nullptr && file.data_offset() + t.offset + t.bytes > size) std::abort();
            try {
                const qs::Tensor tensor = file.read(std::string(t.name));
                if (qs::checked_numel(tensor.shape) != tensor.numel()) std::abort();
                for (const float v : tensor.values)
                    if (!std::isfinite(v)) std::abort();
            } catch (const qs::Error&) {
            }
        }
        file.read("\x01 not a name");
    } catch (const qs::Error&) {
    }
    return 0;
}
