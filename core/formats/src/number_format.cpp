// The formats' names and grids (asked of their rows, format_table_rows.cpp), float codes and the NF4 codebook.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/number_format.hpp"

namespace qs {

const char* format_name(FormatId id) { return format_info(id).name; }

bool has_float_element(FormatId id) { return format_traits(id).has_float_element(); }

const std::array<float, 16>& nf4_codebook() {
    // QLoRA's NormalFloat4 (bitsandbytes), as FORMATS.md lists it; each literal is the float32 it prints.
    static const std::array<float, 16> codebook = {
        -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f, -0.28444138169288635f,
        -0.18477343022823334f, -0.09105003625154495f, 0.0f, 0.07958029955625534f, 0.16093020141124725f,
        0.24611230194568634f, 0.33791524171829224f, 0.44070982933044434f, 0.5626170039176941f,
        0.7229568362236023f, 1.0f};
    return codebook;
}

std::uint32_t nf4_index(float x, bool* clipped) {
    // The midpoints between neighbours, in double (exact for two float32s): x above midpoint j is nearer
    // entry j + 1; x exactly on it stays with entry j (the lower index).
    static const std::array<double, 15> mid = [] {
        std::array<double, 15> m{};
        for (std::size_t j = 0; j < 15; ++j)
            m[j] = (static_cast<double>(nf4_codebook()[j]) + static_cast<double>(nf4_codebook()[j + 1])) / 2;
        return m;
    }();
    if (clipped) *clipped = std::fabs(x) > 1.0f;
    const double xd = x;
    std::uint32_t index = 0;
    for (double m : mid) index += xd > m ? 1u : 0u;
    return index;
}

std::vector<float> format_grid(FormatId id) {
    const FormatTraits& row = format_traits(id);
    return row.grid(row);
}

// Every code that stands for a number is one value of the grid (a float grid has both zeros, one per code).
std::int64_t format_levels(FormatId id) { return static_cast<std::int64_t>(format_grid(id).size()); }

}  // namespace qs
