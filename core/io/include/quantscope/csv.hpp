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

// A table written piece by piece as its values are computed: append() in flat order, rows ending by
// themselves. Rank 1 is one row, rank 2 rows; rank 3 is refused on construction (before anything is
// written). Floats are written as the shortest text that reads back as the same float32 (at most 9
// significant digits, like "%.9g"); codes as integers. Comma separated, '\n' line ends, written to `out`
// (its target names the file in messages); the caller commits.
// RFC 4180: a field with a comma, a quote, a tab or a line break goes in quotes, its quotes doubled (sweep's
// and compare's CSV rows).
std::string csv_field(const std::string& text);
// A tensor name from a file for such a CSV (then csv_field): escaped as printable() does (a raw ESC or line
// break would act on a terminal or split the row), bounded but long enough for any real tensor name, and as
// `quantize --tensor` takes it back wherever that is safe: a tab stays a tab (it acts on no terminal and is
// plain text in a quoted field; printable would write the two characters \t, another name).
std::string csv_name(const std::string& name);

class CsvTableWriter {
public:
    CsvTableWriter(AtomicFileWriter& out, const Shape& shape);
    void append(const float* values, std::int64_t count);
    void append(const std::int32_t* codes, std::int64_t count);

private:
    AtomicFileWriter& out_;
    std::int64_t cols_ = 0;
    std::int64_t column_ = 0;  // of the next value
};

}  // namespace qs
