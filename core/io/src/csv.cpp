#include "quantscope/csv.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool is_separator(char c) { return c == ',' || is_space(c); }

class CsvParser {
public:
    CsvParser(const char* data, std::size_t size, const std::string& name) : data_(data), size_(size), name_(name) {}

    Tensor parse() {
        std::size_t pos = 0;
        if (size_ >= 3 && std::memcmp(data_, "\xEF\xBB\xBF", 3) == 0) pos = 3;  // UTF-8 BOM (Excel writes one)
        std::size_t line_number = 0;
        while (pos < size_) {
            ++line_number;
            const std::size_t end = line_end(pos);
            parse_line(data_ + pos, end - pos, line_number);
            pos = end + (end + 1 < size_ && data_[end] == '\r' && data_[end + 1] == '\n' ? 2 : 1);
        }
        if (rows_ == 0) throw Error(printable(name_) + ": no numbers in the file (it is empty or blank)");
        Tensor tensor;
        tensor.shape = {rows_, cols_};
        tensor.values = std::move(values_);
        try {
            check_tensor(tensor);
        } catch (const Error& error) {
            throw Error(printable(name_) + ": " + error.what());
        }
        return tensor;
    }

private:
    // Where the line starting at `pos` ends: at '\n', '\r' (CRLF counts once; old Mac and some spreadsheet
    // exports end lines with a lone CR) or the end of the data.
    std::size_t line_end(std::size_t pos) const {
        while (pos < size_ && data_[pos] != '\n' && data_[pos] != '\r') ++pos;
        return pos;
    }

    [[noreturn]] void fail_at(std::size_t line, std::size_t column, const std::string& what) const {
        throw Error(printable(name_) + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + what);
    }

    void parse_line(const char* line, std::size_t length, std::size_t line_number) {
        std::size_t i = 0;
        while (i < length && is_space(line[i])) ++i;
        if (i == length || line[i] == '#') return;  // blank or comment
        std::int64_t count = 0;
        while (true) {
            if (line[i] == ',') {
                fail_at(line_number, i + 1, "empty field (a comma with no number before it)");
            }
            const std::size_t start = i;
            while (i < length && !is_separator(line[i])) ++i;
            values_.push_back(number(line + start, line + i, line_number, start + 1));
            ++count;
            while (i < length && is_space(line[i])) ++i;
            if (i == length) break;
            if (line[i] == ',') {
                const std::size_t comma = i++;
                while (i < length && is_space(line[i])) ++i;
                if (i == length) fail_at(line_number, comma + 1, "trailing comma (an empty last field)");
            }
        }
        if (rows_ == 0) {
            cols_ = count;
            first_row_line_ = line_number;
        } else if (count != cols_) {
            throw Error(printable(name_) + ":" + std::to_string(line_number) + ": " + std::to_string(count) + " value" +
                        (count == 1 ? "" : "s") + ", expected " + std::to_string(cols_) + " (as on line " +
                        std::to_string(first_row_line_) + ")");
        }
        ++rows_;
    }

    float number(const char* begin, const char* end, std::size_t line, std::size_t column) {
        // kMaxElements bounds memory; every value needs at least 2 bytes of file, so this is also
        // reached only by a file of half a gigabyte or more.
        if (static_cast<std::int64_t>(values_.size()) >= kMaxElements) {
            fail_at(line, column, "more than " + std::to_string(kMaxElements) + " values");
        }
        const auto field = [&] { return quoted_text(std::string_view(begin, static_cast<std::size_t>(end - begin))); };
        const char* first = begin;
        // from_chars takes '-' but not '+'; numbers written as "+1.5" are common enough to accept.
        if (first < end && *first == '+' && first + 1 < end && first[1] != '-' && first[1] != '+') ++first;
        double value = 0;
        const auto result = std::from_chars(first, end, value);
        if (result.ec == std::errc::result_out_of_range && result.ptr == end) {
            fail_at(line, column, field() + " is out of range");
        }
        if (result.ec != std::errc() || result.ptr != end) {
            fail_at(line, column, field() + " is not a number");
        }
        if (!std::isfinite(value)) {
            fail_at(line, column, field() + " is not a finite number (NaN and Inf are not allowed)");
        }
        const float f = static_cast<float>(value);
        if (!std::isfinite(f)) fail_at(line, column, field() + " is outside the float32 range");
        return f;
    }

    const char* data_;
    std::size_t size_;
    const std::string& name_;
    std::vector<float> values_;
    std::int64_t rows_ = 0;
    std::int64_t cols_ = 0;
    std::size_t first_row_line_ = 0;
};

// Rows and columns of the CSV layout, checked before anything is written.
void csv_layout(const std::string& path, const Shape& shape, std::int64_t& rows, std::int64_t& cols) {
    if (shape.size() == 3) {
        throw Error(printable(path) + ": cannot write a 3-D tensor (" + shape_to_string(shape) + ") as CSV; use .npy");
    }
    try {
        checked_numel(shape);
    } catch (const Error& error) {
        throw Error(printable(path) + ": " + error.what());
    }
    rows = shape.size() == 1 ? 1 : shape[0];
    cols = shape.back();
}

template <typename T>
void append_csv(AtomicFileWriter& writer, std::int64_t cols, std::int64_t& column, const T* values, std::int64_t count) {
    std::string text;
    char number[64];
    for (std::int64_t i = 0; i < count; ++i) {
        if (column > 0) text += ',';
        // to_chars is locale-independent (a GUI may have set a decimal comma) and, for float without a
        // precision, gives the shortest text that parses back to the same float32.
        const auto result = std::to_chars(number, number + sizeof number, values[i]);
        text.append(number, result.ptr);
        if (++column == cols) {
            text += '\n';
            column = 0;
        }
        if (text.size() >= (std::size_t{1} << 16)) {
            writer.write(text);
            text.clear();
        }
    }
    writer.write(text);
}

}  // namespace

Tensor parse_csv(const char* data, std::size_t size, const std::string& name) {
    return CsvParser(data, size, name).parse();
}

Tensor read_csv(const std::string& path) { return read_csv(MappedFile(path)); }

Tensor read_csv(const MappedFile& file) {
    return file.read_guarded(
        [&] { return parse_csv(reinterpret_cast<const char*>(file.data()), file.size(), file.path()); });
}

CsvTableWriter::CsvTableWriter(AtomicFileWriter& out, const Shape& shape) : out_(out) {
    std::int64_t rows = 0;
    csv_layout(out.target(), shape, rows, cols_);
}

void CsvTableWriter::append(const float* values, std::int64_t count) { append_csv(out_, cols_, column_, values, count); }

void CsvTableWriter::append(const std::int32_t* codes, std::int64_t count) {
    append_csv(out_, cols_, column_, codes, count);
}

std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\t\r\n") == std::string::npos) return text;
    std::string out = "\"";
    for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string csv_name(const std::string& name) {
    constexpr std::size_t kCsvNameChars = 4096;
    if (name.size() > kCsvNameChars) return printable(name, kCsvNameChars);
    std::string out;
    std::size_t at = 0;
    while (true) {
        const std::size_t tab = name.find('\t', at);
        out += printable(std::string_view(name).substr(at, tab == std::string::npos ? std::string::npos : tab - at),
                         kCsvNameChars);
        if (tab == std::string::npos) return out;
        out += '\t';
        at = tab + 1;
    }
}

}  // namespace qs
