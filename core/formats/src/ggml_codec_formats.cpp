// ggml's codec rows (FORMATS.md "llama.cpp (ggml) types"): q5_0, q5_1, the k-quants q2_k ... q6_k, iq4_nl,
// iq4_xs, tq1_0 and tq2_0. Each block is quantized whole by its ggml codec (ggml_types.hpp), with the
// importance vector where the config gives one; r' is the type's to_float of those bytes and each code is
// read back from the block, so the rows hold the codecs' bits whatever the codecs are.
#include <algorithm>
#include <cmath>

#include "format_rows.hpp"
#include "quantscope/config.hpp"
#include "quantscope/error.hpp"
#include "quantscope/ggml_rows.hpp"

namespace qs {

void ggml_quantize_at(const GgmlTypeInfo& type, const float* r, std::int64_t n, const ChunkPlace& place, void* out) {
    const int size = type.block_size;
    auto* bytes = static_cast<std::uint8_t*>(out);
    if (!place.importance || !type.takes_importance) return ggml_quantize_blocks(type, r, n / size, nullptr, bytes);
    for (std::int64_t k = 0; k < n;) {  // each row's part with its own columns' weights and sum of squares
        const std::int64_t at = place.first + k, column = at % place.row_length;
        const std::int64_t run = std::min(n - k, place.row_length - column);
        const GgmlImportance importance{place.importance + column, place.row_sum_squares[at / place.row_length],
                                        place.row_length};
        ggml_quantize_blocks(type, r + k, run / size, &importance, bytes + k / size * type.type_size);
        k += run;
    }
}

}  // namespace qs

namespace qs::detail {
namespace {

// Values quantized at a time into a fixed scratch: a multiple of every block, the bytes of the widest type
// (q8_0: 34 bytes per 32 values) bound it.
constexpr std::int64_t kRun = 4096;
constexpr std::int64_t kRunBytes = kRun / 32 * 34;

// ggml's iq4_nl grid (ggml-common.h's kvalues_iq4nl): the values iq4_nl's and iq4_xs's indices stand for.
constexpr float kIq4Grid[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void quantize_run(const GgmlTypeInfo& type, const float* r, std::int64_t len, const ChunkPlace& place,
                  std::uint8_t* out) {
    ggml_quantize_at(type, r, len, place, out);
}

// What the element at `j` of a block was scaled by (to_float: r' = grid * scale + offset).
float scale_of(const GgmlBlockFields& f, int j) { return f.sub_blocks > 0 ? f.sub_scale_used[j / f.sub_size] : f.d; }
float offset_of(const GgmlBlockFields& f, int j) {
    if (f.sub_blocks > 0) return -f.sub_min_used[j / f.sub_size];  // 0 where no min is stored
    return f.has_dmin ? f.dmin : 0.0f;                                // q5_1's m
}

// The value the code stands for before the scales.
float grid_value(const FormatTraits& row, std::int32_t code) {
    if (row.id == FormatId::Iq4_NL || row.id == FormatId::Iq4_XS) return kIq4Grid[code & 15];
    if (row.id == FormatId::Q4_0) return static_cast<float>(code - 8);  // its weighted path runs here too
    return static_cast<float>(row.id == FormatId::Q5_0 ? code - 16 : code);
}

// Whether the clamp changed the element's code: its code is the grid's outermost and r lies past it by more
// than half the outermost step, outward (the nearest code would lie outside the grid), as Q4_0's count.
bool clamped(const FormatTraits& row, const CodeSpace& codes, float r, float deq, float scale, std::int32_t code) {
    if (scale == 0 || (code != codes.lo && code != codes.hi)) return false;
    const std::int32_t inner = code == codes.hi ? code - 1 : code + 1;
    const float step = (grid_value(row, code) - grid_value(row, inner)) * scale;  // outward
    return step > 0 ? r - deq > step / 2 : r - deq < step / 2;
}

CodeSpace code_space_of(const FormatTraits& row) { return row.code_space(row, QuantConfig{}); }

// The grid's outermost steps, outward (`clamped`'s grid differences, once per chunk instead of per value).
struct OuterSteps {
    float hi, lo;
};
OuterSteps outer_steps(const FormatTraits& row, const CodeSpace& space) {
    return {grid_value(row, space.hi) - grid_value(row, space.hi - 1),
            grid_value(row, space.lo) - grid_value(row, space.lo + 1)};
}

// The elements of n values whose clamp changed their code (`clamped` of each, in one loop a scale group at a
// time): codes at the grid's ends only, the group's outward step times its used scale and r - r', the same
// float32 values as `clamped`'s. Its two comparisons (past > step / 2 for an upward step, else past <
// step / 2) are one here, both sides times the step's sign (exact), so that the loop vectorizes.
std::int64_t count_clamped(const float* r, const float* deq, const std::int32_t* codes, std::int64_t n, int group,
                           const float* group_scale, const CodeSpace& space, const OuterSteps& outer) {
    std::int64_t clipped = 0;
    for (std::int64_t g = 0; g < n / group; ++g) {
        const float scale = group_scale[g];
        if (scale == 0) continue;
        const float step_hi = outer.hi * scale, step_lo = outer.lo * scale;
        const float sign_hi = step_hi > 0 ? 1.0f : -1.0f, sign_lo = step_lo > 0 ? 1.0f : -1.0f;
        const float bound_hi = step_hi / 2 * sign_hi, bound_lo = step_lo / 2 * sign_lo;
        const std::int32_t hi = space.hi, lo = space.lo;
        int count = 0;
        for (std::int64_t j = g * group; j < (g + 1) * group; ++j) {
            const float past = r[j] - deq[j];
            count += (codes[j] == hi) & (past * sign_hi > bound_hi);
            count += (codes[j] == lo) & (past * sign_lo > bound_lo);
        }
        clipped += count;
    }
    return clipped;
}

}  // namespace

std::int64_t codec_chunk(const FormatTraits& row, const float* r, const float*, std::int64_t n, std::int32_t* codes,
                         float* deq, const ChunkPlace& place) {
    const GgmlTypeInfo& type = *row.ggml;
    const int size = type.block_size, group = ggml_scale_group(type);
    const CodeSpace space = code_space_of(row);
    const OuterSteps outer = outer_steps(row, space);
    std::uint8_t bytes[kRunBytes];
    float group_scale[kRun / 16];  // the smallest scale group is 16 values
    std::int64_t clipped = 0;
    for (std::int64_t k = 0; k < n; k += kRun) {
        const std::int64_t len = std::min(kRun, n - k);
        const std::uint8_t* run = place.blocks ? place.blocks + k / size * type.type_size : bytes;
        if (!place.blocks) {
            ChunkPlace at = place;
            at.first += k;
            quantize_run(type, r + k, len, at, bytes);
        }
        ggml_dequantize(type, run, len, deq + k);
        ggml_block_codes(type, run, len / size, codes + k, group_scale);
        clipped += count_clamped(r + k, deq + k, codes + k, len, group, group_scale, space, outer);
    }
    return clipped;
}

// Each block's d as used (fp16 decoded), its stored bits and its dmin (m) where one is stored.
void codec_block_scales(const FormatTraits& row, const float* r, std::int64_t blocks, float* scale,
                        std::uint16_t* stored, float* offset, const ChunkPlace& place) {
    const GgmlTypeInfo& type = *row.ggml;
    const std::int64_t per_run = kRun / type.block_size;
    std::uint8_t bytes[kRunBytes];
    float dmin[kRun / 32];  // where no offset is wanted
    for (std::int64_t b0 = 0; b0 < blocks; b0 += per_run) {
        const std::int64_t count = std::min(per_run, blocks - b0);
        const std::uint8_t* run = place.blocks ? place.blocks + b0 * type.type_size : bytes;
        if (!place.blocks) {
            std::uint8_t* made = place.keep_blocks ? place.keep_blocks + b0 * type.type_size : bytes;
            ChunkPlace at = place;
            at.first += b0 * type.block_size;
            quantize_run(type, r + b0 * type.block_size, count * type.block_size, at, made);
            run = made;
        }
        ggml_block_scales(type, run, count, scale + b0, stored + b0, offset ? offset + b0 : dmin);
    }
}

namespace {

BlockScale codec_block_scale(const FormatTraits& row, const float* r, int, float) {
    BlockScale b;
    float offset = 0;
    codec_block_scales(row, r, 1, &b.scale, &b.stored, &offset, ChunkPlace{});
    b.offset = offset;
    return b;
}

}  // namespace

// One element within its block, quantized as the pass does at `place`.
ElementResult codec_element_in_block(const FormatTraits& row, const float* block, int index, const ChunkPlace& place,
                                     BlockScale& scale) {
    const GgmlTypeInfo& type = *row.ggml;
    std::uint8_t bytes[256 / 32 * 34];  // one block of any of the types (at most 256 values)
    float deq[256];
    GgmlBlockFields fields;
    quantize_run(type, block, type.block_size, place, bytes);
    ggml_dequantize(type, bytes, type.block_size, deq);
    ggml_block_fields(type, bytes, fields);
    scale.scale = scale_of(fields, index);
    scale.offset = offset_of(fields, index);
    scale.stored = fields.d_bits;
    ElementResult e;
    e.code = fields.codes[index];
    e.grid = grid_value(row, e.code);
    e.deq = deq[index];
    e.scaled = scale.scale != 0 ? (block[index] - scale.offset) / scale.scale : 0.0f;
    e.clipped = clamped(row, code_space_of(row), block[index], e.deq, scale.scale, e.code);
    return e;
}

namespace {

// An element at a given scale and offset alone (no block to search): the nearest grid value. The traces
// that know the block use codec_element_in_block instead.
ElementResult codec_element(const FormatTraits& row, float r, const BlockScale& b) {
    ElementResult e;
    if (b.scale == 0) {
        e.deq = b.offset + 0.0f;
        return e;
    }
    const CodeSpace space = code_space_of(row);
    e.scaled = (r - b.offset) / b.scale;
    float best = INFINITY;
    for (std::int32_t code = space.lo; code <= space.hi; ++code) {
        const float distance = std::fabs(grid_value(row, code) - e.scaled);
        if (distance < best) best = distance, e.code = code;
    }
    e.grid = grid_value(row, e.code);
    e.deq = e.grid * b.scale + b.offset + 0.0f;
    e.clipped = clamped(row, space, r, e.deq, b.scale, e.code);
    return e;
}

std::vector<float> codec_grid(const FormatTraits& row) {
    const CodeSpace space = code_space_of(row);
    std::vector<float> grid;
    for (std::int32_t code = space.lo; code <= space.hi; ++code) grid.push_back(grid_value(row, code));
    std::sort(grid.begin(), grid.end());
    return grid;
}

template <std::int32_t Lo, std::int32_t Hi, int Bits>
CodeSpace codes_of(const FormatTraits&, const QuantConfig&) {
    return {Bits, Lo, Hi, Lo < 0};
}

// The type's bytes per block, all of it: the codes' bits counted by code_space, the rest here (a ternary
// code packs tighter than its 2 bits, so for tq1_0 this is negative and the sum is still 54 bytes a block).
double codec_scale_bits(const FormatTraits& row, const QuantConfig& config, std::int64_t n, std::int64_t) {
    const double blocks = static_cast<double>(n / row.block_size);
    return blocks * row.ggml->type_size * 8 - static_cast<double>(n) * row.code_space(row, config).bits;
}

// `name` as --dtype spells it, lower case (ggml writes q4_K; ggml_type_named reads either).
FormatTraits codec_row(const char* name, CodeSpace (*codes)(const FormatTraits&, const QuantConfig&),
                       const char* code_encoding, bool stores_min, const char* description) {
    const GgmlTypeInfo* type = ggml_type_named(name);
    if (!type || !type->quantizes) throw Error(std::string("ggml type ") + name + " has no quantizer");
    FormatTraits row;
    row.name = name;
    row.kind = FormatKind::Block;
    row.ggml = type;
    row.element_bits = codes(row, QuantConfig{}).bits;
    row.block_size = type->block_size;
    row.scale_bits = type->type_size * 8 - type->block_size * row.element_bits;
    row.scale_from_values = true;
    row.has_offset = stores_min;  // q5_1's m, the k-quants' dmin: JSON's zero_point
    row.scale_encoding = ScaleEncoding::Fp16;
    row.code_encoding = code_encoding;
    row.scale_label = "d";
    row.offset_label = type->block_size == 32 ? "m" : "dmin";  // q5_1's m, the k-quants' dmin
    row.description = description;
    row.grid = codec_grid;
    row.code_space = codes;
    row.check = check_block_format;  // the row length a multiple of the block
    row.stored_scale_bits = codec_scale_bits;
    row.kernels.chunk = codec_chunk;
    row.keeps_blocks = true;
    row.kernels.element = codec_element;
    row.kernels.block_scale = codec_block_scale;
    row.kernels.block_scales = codec_block_scales;
    row.kernels.element_in_block = codec_element_in_block;
    return row;
}

}  // namespace

std::vector<FormatTraits> ggml_codec_format_rows() {
    std::vector<FormatTraits> rows = {
        codec_row("q5_0", codes_of<0, 31, 5>, "uint5", false, "ggml's 5-bit blocks of 32 with an fp16 d"),
        codec_row("q5_1", codes_of<0, 31, 5>, "uint5", true, "ggml's 5-bit blocks of 32 with an fp16 d and m"),
        codec_row("q2_k", codes_of<0, 3, 2>, "uint2", true, "ggml's k-quant: 16 sub-blocks with 4-bit scales and mins"),
        codec_row("q3_k", codes_of<-4, 3, 3>, "int3", false, "ggml's k-quant: 16 sub-blocks with 6-bit scales"),
        codec_row("q4_k", codes_of<0, 15, 4>, "uint4", true, "ggml's k-quant: 8 sub-blocks with 6-bit scales and mins"),
        codec_row("q5_k", codes_of<0, 31, 5>, "uint5", true, "ggml's k-quant: 8 sub-blocks with 6-bit scales and mins"),
        codec_row("q6_k", codes_of<-32, 31, 6>, "int6", false, "ggml's k-quant: 16 sub-blocks with int8 scales"),
        codec_row("iq4_nl", codes_of<0, 15, 4>, "iq4 index", false, "ggml's non-uniform 16-value grid in blocks of 32"),
        codec_row("iq4_xs", codes_of<0, 15, 4>, "iq4 index", false, "iq4_nl's grid with 6-bit sub-block scales"),
        codec_row("tq1_0", codes_of<-1, 1, 2>, "ternary", false, "ggml's ternary codes, 5 to a byte"),
        codec_row("tq2_0", codes_of<-1, 1, 2>, "ternary", false, "ggml's ternary codes, 2 bits each"),
    };
    return rows;
}

}  // namespace qs::detail
