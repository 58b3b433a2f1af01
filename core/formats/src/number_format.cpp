// The table of formats (FORMATS.md), their names, grids and the NF4 codebook.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "quantscope/error.hpp"
#include "quantscope/number_format.hpp"

namespace qs {
namespace {

constexpr FloatSpec kFp16{5, 10, 15, FloatSpecials::Ieee};
constexpr FloatSpec kBf16{8, 7, 127, FloatSpecials::Ieee};
constexpr FloatSpec kE4M3{4, 3, 7, FloatSpecials::E4M3Fn};
constexpr FloatSpec kE5M2{5, 2, 15, FloatSpecials::Ieee};
constexpr FloatSpec kE3M2{3, 2, 3, FloatSpecials::None};
constexpr FloatSpec kE2M3{2, 3, 1, FloatSpecials::None};
constexpr FloatSpec kE2M1{2, 1, 1, FloatSpecials::None};
constexpr FloatSpec kNoFloat{};

const std::vector<FormatInfo>& table() {
    static const std::vector<FormatInfo> formats = {
        {FormatId::Fp16, "fp16", FormatKind::Float, kFp16, 16, 0, 0},
        {FormatId::Bf16, "bf16", FormatKind::Float, kBf16, 16, 0, 0},
        {FormatId::Fp8E4M3, "fp8-e4m3", FormatKind::Float, kE4M3, 8, 0, 0},
        {FormatId::Fp8E5M2, "fp8-e5m2", FormatKind::Float, kE5M2, 8, 0, 0},
        {FormatId::Fp6E3M2, "fp6-e3m2", FormatKind::Float, kE3M2, 6, 0, 0},
        {FormatId::Fp6E2M3, "fp6-e2m3", FormatKind::Float, kE2M3, 6, 0, 0},
        {FormatId::Fp4E2M1, "fp4-e2m1", FormatKind::Float, kE2M1, 4, 0, 0},
        {FormatId::Nf4, "nf4", FormatKind::Codebook, kNoFloat, 4, 0, 0},
        {FormatId::MxFp8E4M3, "mxfp8-e4m3", FormatKind::Block, kE4M3, 8, 32, 8},
        {FormatId::MxFp8E5M2, "mxfp8-e5m2", FormatKind::Block, kE5M2, 8, 32, 8},
        {FormatId::MxFp6E3M2, "mxfp6-e3m2", FormatKind::Block, kE3M2, 6, 32, 8},
        {FormatId::MxFp6E2M3, "mxfp6-e2m3", FormatKind::Block, kE2M3, 6, 32, 8},
        {FormatId::MxFp4, "mxfp4", FormatKind::Block, kE2M1, 4, 32, 8},
        {FormatId::NvFp4, "nvfp4", FormatKind::Block, kE2M1, 4, 16, 8},
        {FormatId::Q8_0, "q8_0", FormatKind::Block, kNoFloat, 8, 32, 16},
        {FormatId::Q4_0, "q4_0", FormatKind::Block, kNoFloat, 4, 32, 16},
        {FormatId::Q4_1, "q4_1", FormatKind::Block, kNoFloat, 4, 32, 32},
    };
    return formats;
}

const FormatInfo kIntInfo{FormatId::Int, "int", FormatKind::Int, kNoFloat, 0, 0, 0};

}  // namespace

const std::vector<FormatId>& all_formats() {
    static const std::vector<FormatId> ids = [] {
        std::vector<FormatId> out;
        for (const FormatInfo& f : table()) out.push_back(f.id);
        return out;
    }();
    return ids;
}

const FormatInfo& format_info(FormatId id) {
    for (const FormatInfo& f : table())
        if (f.id == id) return f;
    return kIntInfo;
}

const char* format_name(FormatId id) { return format_info(id).name; }

const char* to_string(FormatKind kind) {
    switch (kind) {
        case FormatKind::Int: return "int";
        case FormatKind::Float: return "float";
        case FormatKind::Codebook: return "codebook";
        case FormatKind::Block: return "block";
    }
    return "int";
}

std::optional<FormatId> parse_format_name(const std::string& text) {
    std::string lower = text;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const FormatInfo& f : table())
        if (lower == f.name) return f.id;
    return std::nullopt;
}

bool has_float_element(FormatId id) { return format_info(id).element.exponent_bits > 0; }

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
    const FormatInfo& info = format_info(id);
    std::vector<float> grid;
    switch (id) {
        case FormatId::Int: return grid;
        case FormatId::Nf4: return {nf4_codebook().begin(), nf4_codebook().end()};
        case FormatId::Q8_0:
            for (int q = -127; q <= 127; ++q) grid.push_back(static_cast<float>(q));
            return grid;
        case FormatId::Q4_0:
            for (int q = -8; q <= 7; ++q) grid.push_back(static_cast<float>(q));
            return grid;
        case FormatId::Q4_1:
            for (int q = 0; q <= 15; ++q) grid.push_back(static_cast<float>(q));
            return grid;
        default: return float_grid(info.element);
    }
}

std::int64_t format_levels(FormatId id) {
    switch (id) {
        case FormatId::Int: return 0;
        case FormatId::Nf4:
        case FormatId::Q4_0:
        case FormatId::Q4_1: return 16;
        case FormatId::Q8_0: return 255;
        default: break;
    }
    // Every code of the element, less its NaN / Inf codes (float_grid has both zeros, one per code).
    return static_cast<std::int64_t>(float_grid(format_info(id).element).size());
}

}  // namespace qs
