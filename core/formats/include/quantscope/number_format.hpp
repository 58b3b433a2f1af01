// Number formats as first-class things (FORMATS.md): what each format can represent (its grid), how one value
// rounds onto it and saturates, the bit pattern of a code, and what the format costs in bits. Linear int<N>
// is one kind among them (its grid is the integers q_min..q_max; its pass lives in quantize.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qs {

enum class FormatKind { Int, Float, Codebook, Block };

enum class FormatId : std::uint8_t {
    Int,  // int<N> / uint<N> (QuantConfig::dtype says which)
    Fp16, Bf16, Fp8E4M3, Fp8E5M2, Fp6E3M2, Fp6E2M3, Fp4E2M1,
    Nf4,
    MxFp8E4M3, MxFp8E5M2, MxFp6E3M2, MxFp6E2M3, MxFp4, NvFp4,
    Q8_0, Q4_0, Q4_1,
    Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Iq4_NL, Iq4_XS, Tq1_0, Tq2_0,  // ggml's codec rows
};

// Which codes of a float format are not numbers.
enum class FloatSpecials {
    Ieee,    // exponent field all ones is Inf / NaN (fp16, bf16, E5M2)
    E4M3Fn,  // only S.1111.111 is NaN (OCP E4M3): the top binade keeps its first seven codes
    None,    // every code is a number (OCP MX FP6 / FP4)
};

// A binary floating-point element: sign, E exponent bits, M mantissa bits, bias.
struct FloatSpec {
    int exponent_bits = 0, mantissa_bits = 0, bias = 0;
    FloatSpecials specials = FloatSpecials::None;

    int bits() const { return 1 + exponent_bits + mantissa_bits; }
    int min_exponent() const { return 1 - bias; }  // of the smallest normal, 2^(1 - bias)
    double largest() const;                        // the largest finite magnitude
    double smallest_subnormal() const { return ldexp2(min_exponent() - mantissa_bits); }
    int max_normal_exponent() const;               // emax: the exponent of the largest normal

    static double ldexp2(int e);
};

// A format's row in the table (format_traits.hpp): the one place that knows the format.
struct FormatTraits;
using FormatInfo = FormatTraits;

// Every format of the table (not Int), in the order of FORMATS.md's tables, then the registered ones.
const std::vector<FormatId>& all_formats();
const FormatTraits& format_info(FormatId id);  // format_traits(id)
const char* format_name(FormatId id);  // "fp8-e4m3", ...; "int" for Int
const char* to_string(FormatKind kind);  // "int", "float", "codebook", "block"
// A --dtype name other than int<N>/uint<N>, case-insensitive; empty when it names none.
std::optional<FormatId> parse_format_name(const std::string& text);
// The element format of an element or block format (fp8-e4m3 for mxfp8-e4m3, E2M1 for nvfp4 and mxfp4).
bool has_float_element(FormatId id);

// ---- float elements (FloatSpec) -------------------------------------------------------------------------
// x rounded to the nearest value of the format, a tie to the value whose last mantissa bit is 0; a magnitude
// above the largest finite value saturates to +-largest and sets *clipped (x is finite; +-Inf saturates too).
// The sign of zero is kept (-1e-30 gives -0, as PyTorch's casts do).
float round_to_float(float x, const FloatSpec& spec, bool* clipped = nullptr);
// The bit pattern (sign, exponent, mantissa; spec.bits() wide) of a value on the format's grid.
std::uint32_t float_code(float value_on_grid, const FloatSpec& spec);
// The value a bit pattern stands for (NaN for a NaN code, +-Inf for an Inf code).
float float_from_code(std::uint32_t code, const FloatSpec& spec);
// Every finite value of the format, ascending, -0 and +0 both present.
std::vector<float> float_grid(const FloatSpec& spec);

// fp16 storage as ggml does it, saturating: the nearest half (ties to even), +-65504 beyond it.
std::uint16_t fp16_bits_saturating(float x);

// ---- NF4 --------------------------------------------------------------------------------------------------
const std::array<float, 16>& nf4_codebook();
// The index of the nearest codebook entry (a tie goes to the lower index); |x| > 1 sets *clipped.
std::uint32_t nf4_index(float x, bool* clipped = nullptr);

// ---- the grid a format's codes stand for (before the block's scale) -----------------------------------------
// The row's grid: float_grid; NF4: the codebook; block formats: their element grid (Q8_0: -127..127,
// Q4_0: -8..7, Q4_1: 0..15). Int is not covered (its grid is q_min..q_max).
std::vector<float> format_grid(FormatId id);
// How many codes stand for numbers (the levels a tensor can use): the grid's size, 254 for fp8-e4m3, ...
std::int64_t format_levels(FormatId id);

}  // namespace qs

#include "quantscope/format_traits.hpp"
