// Plain-text tables of numbers: one row per line, values separated by a comma and/or spaces and tabs.
// Reading always gives a 2-D tensor (rows x cols). Numbers are parsed in the C locale, whole field or error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "quantscope/tensor.hpp"

namespace qs {

class AtomicFileWriter;
class MappedFile;

// Accepted: a UTF-8 BOM, LF, CRLF or CR line ends, blank lines and lines starting with '#' (skipped, as
// numpy.loadtxt does), leading '+' signs. Errors name line and column: an empty field (",," or a leading or
// trailing comma), a non-number, NaN/Inf, a value outside the float32 range, rows of different lengths,
// no numbers at all, more than kMaxElements values. The result passed check_tensor.
Tensor parse_csv(const char* data, std::size_t size, const std::string& name);

// parse_csv on a memory-mapped file (a file that shrinks while it is read is an error, not a crash).
Tensor read_csv(const std::string& path);
Tensor read_csv(const MappedFile& file);

// Rank 1 as one row, rank 2 as rows; rank 3 is refused (before any file is touched). Floats are written as
// the shortest text that reads back as the same float32 (at most 9 significant digits, like "%.9g");
// codes as integers. Comma separated, '\n' line ends, written to `out` (its target names the file in
// messages); the caller commits.
void write_csv_floats(AtomicFileWriter& out, const Shape& shape, const float* values);
void write_csv_codes(AtomicFileWriter& out, const Shape& shape, const std::int32_t* codes);

}  // namespace qs
