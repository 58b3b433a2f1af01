// One row per number format (issue 22; the shape of ggml's type_traits): everything the program asks of a
// format is a field or a function of its row, filled by the format's own file in core/formats/src and listed
// once in the table (format_table_rows.cpp). Callers ask the row (format_info(id)); none switches on a format.
// Adding a format: one file that fills a FormatTraits, one line in the table; or register_format() at run
// time (a test's throwaway format), which gives the row the next free FormatId.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "quantscope/number_format.hpp"

namespace qs {

struct QuantConfig;
struct FormatConfig;
using Shape = std::vector<std::int64_t>;

struct GgmlTypeInfo;  // ggml_types.hpp

namespace detail {
struct ElementResult;  // format_kernels.hpp: what one element becomes
struct BlockScale;     // format_kernels.hpp: one block's scale as its recipe computes it
}  // namespace detail

// Where a run of values lies in its tensor, and what a quantizer may weigh besides the values: ggml's
// importance-weighted quantizers read the importance of each column and the row's sum of squares (FORMATS.md
// "llama.cpp (ggml) types"); the other rows read nothing here, or only NVFP4's g.
struct ChunkPlace {
    std::int64_t first = 0;                  // the flat index of the run's first value
    std::int64_t row_length = 0;             // the tensor's last axis
    const float* importance = nullptr;       // row_length weights, one per column; null: none
    const float* row_sum_squares = nullptr;  // with importance: each row's ggml_row_sum_squares, by row
    float global_scale = 1;                  // NVFP4's g (1 otherwise)
    // Rows with `keeps_blocks`: the run's ggml block bytes as the params pass made them, which the pass then
    // decodes instead of quantizing its blocks again (null: quantize them); and, in the params pass, where to
    // keep the bytes it makes (null: nowhere).
    const std::uint8_t* blocks = nullptr;
    std::uint8_t* keep_blocks = nullptr;
};

// How a stored scale is encoded (the Bits view's scale row, --out-packed's bytes).
enum class ScaleEncoding { Float32, E8M0, E4M3, Fp16 };

// The codes a config writes: their width, range and whether they read as two's complement (the npy dtype
// of --out-quantized: int8 / uint8 up to 8 bits, int16 / uint16 beyond).
struct CodeSpace {
    int bits = 0;
    std::int32_t lo = 0, hi = 0;
    bool is_signed = false;
};

// The format's kernels, each a template instance of its own loop: the pass picks the row's function once
// per chunk of values (never per element), so the loops inline their element functions.
struct FormatKernels {
    // The pass over n values: codes and r', each value at its scale in `scale` (per element: an element
    // format's s, MX's X, NVFP4's sb * g). A row with `scale_from_values` computes each block's scale from
    // the values instead (`scale` unused; n a whole number of blocks). Returns how many clipped.
    std::int64_t (*chunk)(const struct FormatTraits& row, const float* r, const float* scale, std::int64_t n,
                          std::int32_t* codes, float* deq, const ChunkPlace& place) = nullptr;
    // One element at its block's scale (b.scale; ggml: also b.inv, b.low, b.offset): traces, the Bits view.
    detail::ElementResult (*element)(const struct FormatTraits& row, float r, const detail::BlockScale& b) = nullptr;
    // Block rows: a block's scale from its n values (g: the per-tensor scale of a row that has one).
    detail::BlockScale (*block_scale)(const struct FormatTraits& row, const float* r, int n, float g) = nullptr;
    // Block rows: the scales of `blocks` whole blocks of r in one loop (the params' pass, once per chunk):
    // each block's scale as used, its stored bits and (`offset` not null) its offset. A row with a
    // per-tensor scale writes each block's max |r| in `scale` instead: scales_from_amax turns them into
    // scales once g is known.
    void (*block_scales)(const struct FormatTraits& row, const float* r, std::int64_t blocks, float* scale,
                         std::uint16_t* stored, float* offset, const ChunkPlace& place) = nullptr;
    // Block rows: one element traced within its whole block (the block's block_size values, the element at
    // `index`), as the pass quantizes it at `place`; `scale` gets what the element was scaled by (ggml's
    // k-quants: its sub-block's d * sc and -dmin * m as scale and offset). Every block row has one: for most
    // it is block_scale then element; ggml's codec rows quantize the block and read the element back.
    detail::ElementResult (*element_in_block)(const struct FormatTraits& row, const float* block, int index,
                                              const ChunkPlace& place, detail::BlockScale& scale) = nullptr;
    // Rows with a per-tensor scale (NVFP4's g): g from the tensor's max |r|, and n blocks' max |r| (in
    // `scale`) made their scales and stored bits at g. Null otherwise.
    float (*global_scale)(float tensor_amax) = nullptr;
    void (*scales_from_amax)(float g, std::int64_t n, float* scale, std::uint16_t* stored) = nullptr;
};

struct FormatTraits {
    FormatId id = FormatId::Int;   // the table gives a registered row its id
    const char* name = "";         // as --dtype spells it (lower case; parsed in any case)
    FormatKind kind = FormatKind::Int;
    FloatSpec element{};           // Float and MX/NVFP4 elements; E = M = 0 otherwise
    int element_bits = 0;          // bits of one code (int<N>: QuantConfig::dtype's)
    int block_size = 0;            // a block format's B elements sharing a scale along the last axis; 0 otherwise
    int scale_bits = 0;            // bits of each block's stored scale(s) (Q4_1: d and m)
    // The grid's largest magnitude: a symmetric scale maps max|r| onto it (s = max|r| / largest), and r / s
    // past it saturates. 0 where the block's recipe, not r / s, decides (ggml).
    double largest = 0;
    bool castable = false;          // takes --mode cast (s = 1): the float formats
    bool scale_from_values = false; // the pass recomputes each block's float32 scale from its values (ggml)
    bool has_offset = false;        // a stored offset per block (Q4_1's fp16 m); int<N>'s z is not asked here: its own pass reads it
    ScaleEncoding scale_encoding = ScaleEncoding::Float32;
    // ggml's block type whose bytes this row's blocks are (q8_0 ... tq2_0): --out-packed writes them, the
    // importance vector applies where the type takes one. Null for the other rows.
    const GgmlTypeInfo* ggml = nullptr;
    // The row's block_scales and chunk run the ggml codec on whole blocks and honour ChunkPlace's blocks and
    // keep_blocks: the params pass can keep the bytes its search made for the pass (the k-quants' and
    // i-quants' searches are most of their time).
    bool keeps_blocks = false;
    // The Bits view: the code row's encoding ("fp8-e4m3", "nf4 index", "int8", "uint4"), the stored scale's
    // and the offset's names ("block scale X", "block scale sb", "d", "absmax s", "scale s"; "m").
    const char* code_encoding = "";
    const char* scale_label = "scale s";
    const char* offset_label = "m";
    // One line for the window's summary after the levels (", the QLoRA NormalFloat codebook in [-1, 1]"),
    // and the symmetric scale's tooltip. Empty: nothing added / the default text.
    const char* description = "";
    const char* symmetric_help = "s = max|r| / largest value of the format";

    // The values the codes stand for before the block's scale, ascending (int<N>: none listed).
    std::vector<float> (*grid)(const FormatTraits& row) = nullptr;
    // The codes a config of this format writes (int<N>: from the config's dtype).
    CodeSpace (*code_space)(const FormatTraits& row, const QuantConfig& config) = nullptr;
    // Throws qs::Error naming the format when it cannot take the config on this shape (check_format_config).
    void (*check)(const FormatTraits& row, const FormatConfig& config, const Shape& shape) = nullptr;
    // The stored bits of scales and offsets (the cost ledger, FORMATS.md "bits_per_weight"): for n elements
    // in `blocks` blocks of the config's layout.
    double (*stored_scale_bits)(const FormatTraits& row, const QuantConfig& config, std::int64_t n,
                                std::int64_t blocks) = nullptr;
    FormatKernels kernels{};

    bool is_int() const { return kind == FormatKind::Int; }
    bool own_blocks() const { return block_size > 0; }                  // its own block scale (no --mode ...)
    bool has_float_element() const { return element.exponent_bits > 0; }
    bool has_global_scale() const { return kernels.global_scale != nullptr; }
};

// The row of a format (the int<N> row for FormatId::Int); a row for every id the table gave out.
const FormatTraits& format_traits(FormatId id);
// Whether a config quantizes through int<N>'s own pass (quantize.cpp) rather than a format's.
// The int<N> row is the table's first and only one of its kind (register_format refuses another), so this
// is a compare and not a look-up: it is asked per element where a window of cells is traced (trace_value).
inline bool is_int_format(FormatId id) { return id == FormatId::Int; }

// The kinds in the order the window and FORMATS.md list them: int, float, codebook, block.
const std::vector<FormatKind>& format_kinds();
// The formats of one kind in the table's order, registered ones last (the window's type list, by kind).
std::vector<FormatId> formats_of_kind(FormatKind kind);

// Adds a row at run time (a test's throwaway format) and returns its id, the next free one. Not while
// another thread reads the table: at start-up, before any pass. Throws qs::Error for a name already taken.
FormatId register_format(FormatTraits row);
// Takes a registered row out of the lists again (all_formats, --dtype names); its id stays taken and its
// row readable. For a test that must leave the table as it found it. A built-in row cannot be removed.
void unregister_format(FormatId id);

// A float format's row (fp16 ... fp4-e2m1 are such rows): the element `spec` scaled per block or cast, its
// pass the generic float loop. For a format defined outside the table (the registry test's).
FormatTraits float_format_row(const char* name, const FloatSpec& spec, const char* description = "");

}  // namespace qs
