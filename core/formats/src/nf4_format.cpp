// NF4 (FORMATS.md "nf4"): QLoRA's 16-level NormalFloat codebook in [-1, 1] at s = max|r| per block (absmax);
// the code is the index of the nearest level.
#include "format_rows.hpp"
#include "format_simd.hpp"

namespace qs::detail {
namespace {

std::vector<float> nf4_grid(const FormatTraits&) { return {nf4_codebook().begin(), nf4_codebook().end()}; }

std::int64_t nf4_chunk(const FormatTraits&, const float* r, const float* scale, std::int64_t n, std::int32_t* codes,
                       float* deq, const ChunkPlace&) {
    static const Nf4Consts nf4;
    return nf4_elements(r, scale, n, nf4, codes, deq);
}

ElementResult nf4_element(const FormatTraits&, float r, const BlockScale& b) { return element_nf4(r, b.scale); }

}  // namespace

FormatTraits nf4_format_row() {
    FormatTraits row;
    row.name = "nf4";
    row.kind = FormatKind::Codebook;
    row.element_bits = 4;
    row.largest = 1.0;  // s = max|r| / 1: the absmax itself
    row.code_encoding = "nf4 index";
    row.scale_label = "absmax s";
    row.description = "the QLoRA NormalFloat codebook in [-1, 1]";
    row.symmetric_help = "s = max|r| (QLoRA's absmax), the codebook spans [-s, s]";
    row.grid = nf4_grid;
    row.code_space = unsigned_code_space;
    row.check = check_element_format;
    row.stored_scale_bits = element_scale_bits;
    row.kernels.chunk = nf4_chunk;
    row.kernels.element = nf4_element;
    return row;
}

}  // namespace qs::detail
