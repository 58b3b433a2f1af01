// The words and numbers of the Bits view (issue 12 item 5): each row's name, its bits field by field and
// what they decode to, and the packed byte's line. The panel draws boxes around these; tests and
// --layout-report read the same lines.
#pragma once

#include <string>
#include <vector>

#include "quantscope/cell_bits.hpp"
#include "quantscope/config.hpp"

namespace qs::gui {

// "code (fp8-e4m3)", "block scale X (E8M0)", "block scale sb (E4M3)", "tensor scale g (float32)", "d (fp16)",
// "m (fp16)", "scale s (float32)", "absmax s (float32)", "zero point z (float32)", "sub-block 1 scale sc (uint6)";
// `in_sub_block`: drawn under its sub-block's line, which says which one: "scale sc (uint6)".
std::string BitRowTitle(const BitRow& row, const QuantConfig& config, bool in_sub_block = false);
// The bits with a space between fields: "0 1111 110", "1101".
std::string BitRowBits(const BitRow& row);
// What they stand for: "+1 × 2^8 × 1.75 = 448", "+1 × 2^-6 × 0.125 = 0.00195312 (subnormal)", "NaN",
// "-8 + 4 + 1 = -3 (two's complement)", "2 (two's complement)" (one set bit: no sum), "0 + 0 + 1 + 0 = 2 → level -0.525073",
// "2^(124 - 127) = 2^-3 = 0.125".
std::string BitRowDecoded(const BitRow& row);
// The name under a float's field, longest first, then shorter ones for a narrow field ("exponent", "exp", "e").
std::vector<std::string> FieldNames(BitFieldKind kind);

// "byte 0 of --out-packed = 177 = 0b10110001: codes 1 0 3 2 of [0, 0] to [0, 3], the first in the lowest bits".
// The number after "byte" is the byte's offset in the file, named as such: "packed byte 68 = 3" read as a value.
std::string PackedByteLine(const PackedByte& packed, const Shape& shape);

// A ggml type's nesting (CellBits::ggml), outside in. "super-block 3 (256 values in 144 bytes: bytes 432 to 575
// of --out-packed)"; "sub-block 2 of 8 (values 64 to 95 of the super-block)" (empty without sub-blocks);
// "r′ = d×sc × q − dmin×m = 0.455 × 7 − 0.094 = 3.09  (r = 3.1)" with the numbers core computed.
std::string GgmlBlockLine(const GgmlCellBits& g, const CellBits& bits);
std::string GgmlSubBlockLine(const GgmlCellBits& g);
std::string GgmlWorkedLine(const GgmlCellBits& g);

// Every line the view shows, "<title>: <bits> → <decoded>", then the packed byte's line (if any).
std::vector<std::string> BitsReportLines(const CellBits& bits, const QuantConfig& config, const Shape& shape);

}  // namespace qs::gui
