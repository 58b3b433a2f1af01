// Internal to gguf.cpp and checkpoint.cpp: the checks of a GGUF header's whole tensor list, made once every tensor
// info is read (each tensor's own fields are the parser's): no name twice, the data section inside the file, each
// tensor's offset aligned and its bytes inside the data section, no two tensors' bytes overlapping. A GgufFile
// checks its own list with it, and open_checkpoint the list it makes reading the header tensor by tensor (no
// GgufFile list beside it), so both say the same of the same file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::detail {

// What the checks read of a tensor.
struct GgufListed {
    std::string_view name;
    std::uint64_t offset = 0;  // relative to the data section
    std::uint64_t bytes = 0;
};

// `at(i)` gives the GgufListed of tensor i, for i < count in header order. `by_name` receives the indices sorted by
// name. Throws qs::Error "<file>: tensor '<name>': ..." for the first fault in the order above.
template <class At>
void check_gguf_tensor_list(const std::string& file, std::size_t count, const At& at, std::uint64_t alignment,
                            std::uint64_t data_start, std::uint64_t file_size, std::vector<std::uint32_t>& by_name) {
    const auto fail = [&](std::string_view name, const std::string& what) {
        throw Error(printable(file) + ": tensor " + quoted_text(std::string(name)) + ": " + what);
    };
    by_name.resize(count);
    for (std::size_t i = 0; i < count; ++i) by_name[i] = static_cast<std::uint32_t>(i);
    std::sort(by_name.begin(), by_name.end(), [&](std::uint32_t a, std::uint32_t b) { return at(a).name < at(b).name; });
    for (std::size_t i = 1; i < count; ++i)
        if (at(by_name[i]).name == at(by_name[i - 1]).name) fail(at(by_name[i]).name, "the name appears twice");

    if (count > 0 && data_start > file_size)
        throw Error(printable(file) + ": data section: starts at " + std::to_string(data_start) +
                    ", past the end of the file (" + std::to_string(file_size) + " bytes; truncated)");
    const std::uint64_t data_size = data_start <= file_size ? file_size - data_start : 0;
    for (std::size_t i = 0; i < count; ++i) {
        const GgufListed t = at(i);
        if (t.offset % alignment != 0)
            fail(t.name, "offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                             std::to_string(alignment));
        if (t.offset > data_size || t.bytes > data_size - t.offset)
            fail(t.name, "offset " + std::to_string(t.offset) + " and " + std::to_string(t.bytes) +
                             " bytes run past the end of the data section (" + std::to_string(data_size) + " bytes)");
    }

    // Overlapping tensors would alias each other's bytes: a malformed (or malicious) file.
    std::vector<std::uint32_t> order;
    order.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
        if (at(i).bytes > 0) order.push_back(static_cast<std::uint32_t>(i));
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return at(a).offset < at(b).offset; });
    for (std::size_t i = 1; i < order.size(); ++i) {
        const GgufListed previous = at(order[i - 1]);
        const GgufListed current = at(order[i]);
        if (current.offset < previous.offset + previous.bytes)
            fail(current.name, "overlaps tensor " + quoted_text(std::string(previous.name)) + " (bytes " +
                                   std::to_string(current.offset) + " to " +
                                   std::to_string(std::min(previous.offset + previous.bytes, current.offset + current.bytes)) +
                                   ")");
    }
}

}  // namespace qs::detail
